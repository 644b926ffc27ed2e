#include "formats/cdi_spec.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gpumap {
namespace {

// As `nvidia-ctk cdi generate` writes it (container toolkit 1.14+), cut to two GPUs, a MIG device,
// "all" and the spec-wide edits every device gets.
const char* kNvidiaCtk = R"({
  "cdiVersion": "0.5.0",
  "kind": "nvidia.com/gpu",
  "devices": [
    {"name": "0", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia1"}, {"path": "/dev/dri/card1"}]}},
    {"name": "GPU-11111111-2222-3333-4444-555555555555",
     "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia1"}]}},
    {"name": "1:0", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"},
        {"path": "/dev/nvidia-caps/nvidia-cap12"}, {"path": "/dev/nvidia-caps/nvidia-cap13"}]}},
    {"name": "all", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}, {"path": "/dev/nvidia1"}]}},
    {"name": "in-a-chroot", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0", "hostPath": "/host/dev/nvidia3"}]}}
  ],
  "containerEdits": {
    "env": ["NVIDIA_VISIBLE_DEVICES=void"],
    "deviceNodes": [{"path": "/dev/nvidiactl"}, {"path": "/dev/nvidia-uvm"}]
  }
})";

TEST(CdiSpec, EachDeviceWithItsOwnNodesAndTheSpecsNodes) {
  std::vector<CdiDevice> d = parse_cdi_spec(Json::parse(kNvidiaCtk), "/etc/cdi/nvidia.json");
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].name, "nvidia.com/gpu=0");
  EXPECT_EQ(d[0].device_nodes,
            (std::vector<std::string>{"/dev/nvidia1", "/dev/dri/card1", "/dev/nvidiactl", "/dev/nvidia-uvm"}));
  EXPECT_EQ(d[0].file, "/etc/cdi/nvidia.json");
  EXPECT_EQ(d[1].name, "nvidia.com/gpu=GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(d[2].name, "nvidia.com/gpu=1:0");
  EXPECT_EQ(d[2].device_nodes[1], "/dev/nvidia-caps/nvidia-cap12");
  EXPECT_EQ(d[3].name, "nvidia.com/gpu=all");
  EXPECT_EQ(d[4].device_nodes[0], "/host/dev/nvidia3") << "the host's path, where the spec gives one";
}

TEST(CdiSpec, WhatARuntimeRefusesIsRefusedNamingIt) {
  auto error = [](const std::string& text) {
    try {
      parse_cdi_spec(Json::parse(text), "/var/run/cdi/x.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error(R"([])"), "/var/run/cdi/x.json: not a CDI spec (not an object)");
  EXPECT_NE(error(R"({"devices": []})").find("no \"kind\""), std::string::npos);
  EXPECT_NE(error(R"({"kind": "gpu", "devices": []})").find("is not vendor/class"), std::string::npos);
  EXPECT_NE(error(R"({"kind": "nvidia.com/gpu=0", "devices": []})").find("is not vendor/class"), std::string::npos);
  EXPECT_NE(error(R"({"kind": "nvidia.com/gpu"})").find("no \"devices\""), std::string::npos);
  EXPECT_NE(error(R"({"kind": "nvidia.com/gpu", "devices": [{"containerEdits": {}}]})").find("a device without a name"),
            std::string::npos);
  EXPECT_NE(error(R"({"kind": "nvidia.com/gpu", "devices": [{"name": "a b"}]})").find("\"a b\" has characters"),
            std::string::npos);
  EXPECT_NE(error(R"({"kind": "nvidia.com/gpu", "devices": [{"name": "0", "containerEdits": {"deviceNodes": [{}]}}]})")
                .find("device 0: a device node without a path"),
            std::string::npos);
  EXPECT_NE(error(R"({"kind": "nvidia.com/gpu", "devices": [], "containerEdits": {"deviceNodes": "x"}})")
                .find("deviceNodes is not a list"),
            std::string::npos);
  // A NUL in a refused value is written \0 and the message goes on past it (issue 46, item 12).
  EXPECT_EQ(error(R"({"kind": "nvidia.com/gpu", "devices": [{"name": "0\u0000evil\u001b[2J"}]})"),
            "/var/run/cdi/x.json: device name \"0\\0evil\\x1b[2J\" has characters CDI does not allow");
  EXPECT_NE(error(R"({"kind": "nvidia.com\u0000/gpu", "devices": []})").find("kind \"nvidia.com\\0/gpu\" is not vendor/class"),
            std::string::npos);
  EXPECT_EQ(error(R"({"kind": "k8s.gpu.nvidia.com/device", "devices": [{"name": "gpu-0"}]})"), "accepted")
      << "a device without edits (the DRA driver's names) is a device";
}

TEST(CdiSpec, ALaterFolderWinsAndTwoFilesOfOneFolderConflict) {
  auto one = [](const std::string& file, size_t priority, const std::string& name, const std::string& node) {
    return CdiFileRead{file, priority, {{name, {node}, file}}, ""};
  };
  CdiSpecs m = merge_cdi_files({"/etc/cdi", "/var/run/cdi"},
                               {one("/etc/cdi/a.yaml", 0, "nvidia.com/gpu=0", "/dev/nvidia0"),
                                one("/etc/cdi/b.yaml", 0, "nvidia.com/gpu=1", "/dev/nvidia1"),
                                one("/etc/cdi/c.yaml", 0, "nvidia.com/gpu=1", "/dev/nvidia2"),
                                one("/var/run/cdi/d.json", 1, "nvidia.com/gpu=0", "/dev/nvidia5"),
                                CdiFileRead{"/var/run/cdi/e.json", 1, {}, "not valid JSON"}});
  ASSERT_EQ(m.devices.size(), 1u);
  EXPECT_EQ(m.devices[0].name, "nvidia.com/gpu=0");
  EXPECT_EQ(m.devices[0].device_nodes, (std::vector<std::string>{"/dev/nvidia5"})) << "/var/run/cdi overrides /etc/cdi";
  ASSERT_EQ(m.problems.size(), 2u);
  EXPECT_EQ(m.problems[0].file, "/var/run/cdi/e.json");
  EXPECT_EQ(m.problems[1].file, "/etc/cdi/b.yaml");
  EXPECT_NE(m.problems[1].message.find("also defined in /etc/cdi/c.yaml"), std::string::npos) << m.problems[1].message;
  EXPECT_EQ(m.dirs, (std::vector<std::string>{"/etc/cdi", "/var/run/cdi"}));
}

}  // namespace
}  // namespace gpumap
