// Containers (issue 8, point 13): a simulated host is bare metal whatever this machine is, and
// `--env NVIDIA_VISIBLE_DEVICES=...` predicts what a container started with it sees.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using json = nlohmann::json;

// hosts/seed-mixed.json: GPU 0, 2, 3 are A100s, GPU 1 the H100 (fastest, CUDA's default cuda:0).
const std::string kU0 = "GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2";
const std::string kU1 = "GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b";
const std::string kU2 = "GPU-35b0fad1-6758-b581-24f3-9f00d2606170";

bool has(const json& j, const std::string& id) {
  for (const json& f : j["findings"])
    if (f["id"] == id) return true;
  return false;
}

TEST(CliContainer, ASimulatedHostIgnoresThisMachinesContainerMarks) {
  // `container=` is one of this machine's marks (so is /.dockerenv, present where these tests run).
  CliRun r = gpumap_here({"doctor", "--json", "--simulate", "h200x2"}, {"container=docker", "NVIDIA_VISIBLE_DEVICES=1"});
  json j = json::parse(r.out);
  EXPECT_TRUE(has(j, "nvidia-visible-devices-outside-container")) << r.out;
  EXPECT_FALSE(has(j, "container-renumbered")) << r.out;
}

TEST(CliContainer, EnvNvidiaVisibleDevicesPredictsTheContainersView) {
  CliRun r = gpumap_here({"map", "--json", "--simulate", "seed-mixed", "--env", "NVIDIA_VISIBLE_DEVICES=2,0"});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["gpus"].size(), 2u) << r.out;
  EXPECT_EQ(j["gpus"][0]["nvml_index"], 0);  // renumbered from 0, in the host's PCI order
  EXPECT_EQ(j["gpus"][0]["uuid"], kU0);      // host UUIDs kept
  EXPECT_EQ(j["gpus"][1]["nvml_index"], 1);
  EXPECT_EQ(j["gpus"][1]["uuid"], kU2);
  EXPECT_NE(j["source"].get<std::string>().find("inside a container with NVIDIA_VISIBLE_DEVICES=2,0"), std::string::npos);
  ASSERT_EQ(j["cuda"]["devices"].size(), 2u);
  EXPECT_EQ(j["cuda"]["devices"][0]["uuid"], kU0);
  EXPECT_TRUE(has(j, "container-renumbered")) << r.out;
  EXPECT_FALSE(has(j, "nvidia-visible-devices-outside-container")) << r.out;
  CliRun text = gpumap_here({"map", "--simulate", "seed-mixed", "--env", "NVIDIA_VISIBLE_DEVICES=2,0"});
  EXPECT_NE(text.out.find("PREDICTED: the view inside a container"), std::string::npos) << text.out;
  // With the H100 injected, the driver's FASTEST_FIRST order still puts it first, inside too.
  json mixed = json::parse(gpumap_here({"map", "--json", "--simulate", "seed-mixed", "--env", "NVIDIA_VISIBLE_DEVICES=0,1"}).out);
  ASSERT_EQ(mixed["cuda"]["devices"].size(), 2u) << mixed.dump();
  EXPECT_EQ(mixed["cuda"]["devices"][0]["uuid"], kU1);
  EXPECT_EQ(mixed["cuda"]["devices"][0]["nvml_index"], 1);
}

TEST(CliContainer, BadEntriesAndProbeAreRefused) {
  CliRun bad = gpumap_here({"map", "--simulate", "seed-mixed", "--env", "NVIDIA_VISIBLE_DEVICES=7"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("would refuse to start the container"), std::string::npos) << bad.err;
  CliRun probe = gpumap_here({"map", "--simulate", "seed-mixed", "--probe", "--env", "NVIDIA_VISIBLE_DEVICES=0"});
  EXPECT_EQ(probe.code, 2);
  json none = json::parse(gpumap_here({"map", "--json", "--simulate", "seed-mixed", "--env", "NVIDIA_VISIBLE_DEVICES=none"}).out);
  EXPECT_EQ(none["gpus"].size(), 0u);
  json m = json::parse(gpumap_here({"map", "--json", "--simulate", "mig", "--env",
                               "NVIDIA_VISIBLE_DEVICES=MIG-7a360cfe-db46-0c91-2ca2-81816070806d"}).out);
  ASSERT_EQ(m["cuda"]["devices"].size(), 1u) << m.dump();
  EXPECT_EQ(m["cuda"]["devices"][0]["uuid"], "MIG-7a360cfe-db46-0c91-2ca2-81816070806d");
}

TEST(CliContainer, WhichDockerFormRoundTrips) {
  CliRun w = gpumap_here({"which", "--json", "--simulate", "seed-mixed", "2", "0"});
  ASSERT_EQ(w.code, 0) << w.err;
  std::string docker = json::parse(w.out)["docker_run"];
  EXPECT_EQ(docker, "docker run --gpus '\"device=" + kU2 + "," + kU0 + "\"' -e CUDA_VISIBLE_DEVICES=" + kU2 + "," + kU0);
  // Start that container (predicted): cuda:0 is GPU 2, cuda:1 GPU 0, and doctor has nothing to warn about.
  std::vector<std::string> as_docker = {"--env", "NVIDIA_VISIBLE_DEVICES=" + kU2 + "," + kU0, "--env",
                                        "CUDA_VISIBLE_DEVICES=" + kU2 + "," + kU0};
  std::vector<std::string> args = {"map", "--json", "--simulate", "seed-mixed"};
  args.insert(args.end(), as_docker.begin(), as_docker.end());
  json m = json::parse(gpumap_here(args).out);
  ASSERT_EQ(m["cuda"]["devices"].size(), 2u) << m.dump();
  EXPECT_EQ(m["cuda"]["devices"][0]["uuid"], kU2);
  EXPECT_EQ(m["cuda"]["devices"][1]["uuid"], kU0);
  args[0] = "doctor";
  CliRun d = gpumap_here(args);
  EXPECT_EQ(d.code, 0) << d.out;
  const json doc = json::parse(d.out);  // named: a range-for over a temporary's member dangles
  for (const json& f : doc["findings"]) EXPECT_EQ(f["severity"], "info") << f.dump();
  CliRun one = gpumap_here({"which", "--simulate", "seed-mixed", "1"});
  EXPECT_NE(one.out.find("docker run --gpus '\"device=" + kU1 + "\"' IMAGE"), std::string::npos) << one.out;
}

// CUDA_VISIBLE_DEVICES with a host number inside a container (issue 22 point 5): host GPU 3 is
// the container's GPU 1 under NVIDIA_VISIBLE_DEVICES=2,3; the fix says so, and pasted it holds.
TEST(CliContainer, AHostNumberInsideIsSpottedAndTheFixRoundTrips) {
  const std::vector<std::string> in = {"--simulate", "dgx8", "--env", "NVIDIA_VISIBLE_DEVICES=2,3"};
  std::vector<std::string> args = {"doctor", "--json"};
  args.insert(args.end(), in.begin(), in.end());
  args.insert(args.end(), {"--env", "CUDA_VISIBLE_DEVICES=3"});
  CliRun d = gpumap_here(args);
  EXPECT_EQ(d.code, 7) << d.out << d.err;
  const json doc = json::parse(d.out);
  std::string fix;
  for (const json& f : doc["findings"])
    if (f["id"] == "list-cut-short") {
      EXPECT_NE(f["message"].get<std::string>().find("3 is a host number, and host GPU 3 is the container's GPU 1"),
                std::string::npos) << f.dump();
      fix = f["fix"];
    }
  ASSERT_EQ(fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1") << doc.dump();
  // Pasted: cuda:0 is host GPU 3 (the container's GPU 1), and nothing above info is left.
  std::vector<std::string> pasted = {"doctor", "--json"};
  pasted.insert(pasted.end(), in.begin(), in.end());
  pasted.insert(pasted.end(), {"--env", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "--env", "CUDA_VISIBLE_DEVICES=1"});
  CliRun after = gpumap_here(pasted);
  EXPECT_EQ(after.code, 0) << after.out;
  const json again = json::parse(after.out);
  for (const json& f : again["findings"]) EXPECT_EQ(f["severity"], "info") << f.dump();
  pasted[0] = "map";
  const json m = json::parse(gpumap_here(pasted).out);
  ASSERT_EQ(m["cuda"]["devices"].size(), 1u) << m.dump();
  const json host = json::parse(gpumap_here({"list", "--json", "--simulate", "dgx8"}).out);
  EXPECT_EQ(m["cuda"]["devices"][0]["uuid"], host["gpus"][3]["uuid"]);
}

// `which` inside a container lists the container's GPUs, numbered as inside, the host's number
// beside; a host number is said to be one.
TEST(CliContainer, WhichListsTheContainersGpus) {
  const json host = json::parse(gpumap_here({"list", "--json", "--simulate", "dgx8"}).out);
  const std::string u3 = host["gpus"][3]["uuid"];
  CliRun bad = gpumap_here({"which", "--simulate", "dgx8", "--env", "NVIDIA_VISIBLE_DEVICES=2,3", "3"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("there is no GPU 3 inside this container"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("host GPU 3 is the container's GPU 1"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("The container's GPUs"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("GPUs on this host"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("  1  host GPU 3  " + u3), std::string::npos) << bad.err;
  CliRun ok = gpumap_here({"which", "--simulate", "dgx8", "--env", "NVIDIA_VISIBLE_DEVICES=2,3", "1"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("nvidia-smi GPU 1 (" + u3), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("host GPU 3): cuda:1"), std::string::npos) << ok.out;
  // On the host itself: the host's list, as before.
  CliRun plain = gpumap_here({"which", "--simulate", "dgx8", "9"});
  EXPECT_NE(plain.err.find("GPUs on this host"), std::string::npos) << plain.err;
}

}  // namespace
}  // namespace gpumap::testing
