// The renderings (output/) of `ps` answers, in process: the tests of
// src/session/ps_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// `gpumap ps` as an operation (session/ps.h) in process, on FakeSession hosts with a fixture
// /proc: each process's own cuda:N, the filters and their checks, --pid's and --fail-on's values,
// and the worst finding that --fail-on compares.  Golden cases: tests/golden/ps-*.json.
#include "session/ps.h"

#include <functional>
#include <map>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fake_session.h"
#include "model/error.h"
#include "output/ps_view.h"

namespace gpumap {
namespace {

using testing::FakeProcess;
using testing::FakeSession;

using testing::code_of;

// ---- `gpumap ps`'s JSON and table in process (moved from the black-box CliPs tests, issue 45
// item 5): fixture /proc entries stand for the sleeping children those tests started; what needs
// a process (exit codes, another user, PID namespaces, --watch and signals) stays in tests/cli_ps_test.cc.

const char* kU1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

using nlohmann::json;

/// A process's environment in the fixture /proc, its command `sleep 30` (what CliPs's children ran).
FakeProcess sleeper(uint32_t pid, std::vector<std::string> env) {
  return {.pid = pid, .argv = {"sleep", "30"}, .environ = std::move(env)};
}

json ps_json(FakeSession& f) {
  Session& s = f.session();
  return json::parse(ps_frame_json(s.snapshot(), read_ps_frame(s, PsFilter{}), false));
}

std::string ps_text(FakeSession& f) {
  Session& s = f.session();
  return ps_frame_text(s.snapshot(), read_ps_frame(s, PsFilter{}), TermStyle{});  // a pipe's (or --wide's) table
}

const json& row(const json& j, uint32_t pid, int gpu) {
  for (const json& p : j["processes"])
    if (p["pid"] == pid && p["nvml_index"] == gpu) return p;
  ADD_FAILURE() << "no row for pid " << pid << " on GPU " << gpu << ": " << j.dump();
  static const json empty = json::object();
  return empty;
}

bool has_finding(const json& p, const std::string& id, const std::string& sev) {
  for (const json& f : p["findings"])
    if (f["id"] == id && f["severity"] == sev && !f["message"].get<std::string>().empty() && f.contains("fix"))
      return true;
  return false;
}

size_t count_finding(const json& j, uint32_t pid, const std::string& id) {
  size_t n = 0;
  for (const json& p : j["processes"])
    if (p["pid"] == pid)
      for (const json& f : p["findings"]) n += f["id"] == id;
  return n;
}

TEST(PsAnswer, EachProcessSeesItsOwnCudaOrdinal) {
  const uint32_t full = 5001, swapped = 5002, unset = 5003, outside = 5004;
  FakeSession f("h200x2");
  f.with_process(0, sleeper(swapped, {"CUDA_VISIBLE_DEVICES=1,0"}))
      .with_process(0, sleeper(unset, {"HOME=/"}))
      .with_process(0, sleeper(outside, {"CUDA_VISIBLE_DEVICES=1"}))
      .with_process(1, sleeper(full, {std::string("CUDA_VISIBLE_DEVICES=") + kU1}))
      .with_process(1, sleeper(swapped, {"CUDA_VISIBLE_DEVICES=1,0"}));
  json j = ps_json(f);
  ASSERT_EQ(j["processes"].size(), 5u) << j.dump();

  const json& a = row(j, full, 1);
  EXPECT_EQ(a["cuda_ordinal"], 0);
  EXPECT_EQ(a["uuid"], kU1);
  EXPECT_EQ(a["cuda_visible_devices"], kU1);
  EXPECT_EQ(a["used_memory_mib"], 256);
  EXPECT_EQ(a["command"], "sleep 30");
  EXPECT_EQ(a["user"].is_string(), true);
  EXPECT_EQ(a["state"], "running");
  EXPECT_TRUE(a.contains("lease"));

  EXPECT_EQ(row(j, swapped, 0)["cuda_ordinal"], 1);
  EXPECT_EQ(row(j, swapped, 1)["cuda_ordinal"], 0);

  const json& u = row(j, unset, 0);
  EXPECT_EQ(u["cuda_ordinal"], 0);
  EXPECT_EQ(u["cuda_visible_devices"], nullptr);
  EXPECT_FALSE(has_finding(u, "gpu-shared", "info")) << "the GPU's finding is said once, in the document's findings";
  std::map<std::string, json> of_gpu;  // the findings of its GPU it refers to, by id
  for (const json& k : u["gpu_findings"]) of_gpu[j["findings"][k.get<size_t>()]["id"]] = j["findings"][k.get<size_t>()];
  ASSERT_EQ(of_gpu.count("gpu-shared"), 1u) << u.dump() << j["findings"].dump();
  EXPECT_EQ(of_gpu["gpu-shared"]["nvml_index"], 0);
  EXPECT_EQ(of_gpu["gpu-shared"]["pids"].size(), 3u) << of_gpu["gpu-shared"].dump();
  ASSERT_EQ(of_gpu.count("no-visibility-shared-host"), 1u) << j["findings"].dump();
  EXPECT_EQ(of_gpu["no-visibility-shared-host"]["pids"], json::array({unset}));

  const json& o = row(j, outside, 0);
  EXPECT_EQ(o["cuda_ordinal"], nullptr);
  EXPECT_EQ(o["cuda_visible_devices"], "1");
  EXPECT_TRUE(has_finding(o, "outside-visible-set", "error")) << o.dump();
  EXPECT_FALSE(has_finding(a, "outside-visible-set", "error"));
}

TEST(PsAnswer, BadDeviceOrderAndTable) {
  FakeSession f("h200x2");
  f.with_process(0, sleeper(5011, {"CUDA_DEVICE_ORDER=pci_bus_id"}));
  EXPECT_TRUE(has_finding(row(ps_json(f), 5011, 0), "device-order-breaks-cuda", "error"));
  std::string t = ps_text(f);
  EXPECT_NE(t.find("sleep 30"), std::string::npos) << t;
  EXPECT_NE(t.find("device-order-breaks-cuda"), std::string::npos) << t;
}

TEST(PsAnswer, RanksOnTheWrongGpuAndStrayContextsOncePerProcess) {
  // Local rank 1 seeing both GPUs: on GPU 0 only (its cuda:0), on GPU 1 and GPU 0; and one narrowed to GPU 1.
  const uint32_t wrong = 5021, stray = 5022, bound = 5023;
  FakeSession f("h200x2");
  f.with_process(0, sleeper(wrong, {"LOCAL_RANK=1", "TORCHELASTIC_RUN_ID=t"}))
      .with_process(0, sleeper(stray, {"LOCAL_RANK=1"}), 480)
      .with_process(1, sleeper(stray, {"LOCAL_RANK=1"}))
      .with_process(1, sleeper(bound, {"LOCAL_RANK=1", std::string("CUDA_VISIBLE_DEVICES=") + kU1}));
  json j = ps_json(f);

  const json& w = row(j, wrong, 0);
  EXPECT_EQ(w["rank_variable"], "LOCAL_RANK");
  EXPECT_EQ(w["rank_value"], 1);
  EXPECT_EQ(w["cuda_device_count"], 2);
  EXPECT_EQ(w["rank_nvml_index"], 1);
  ASSERT_TRUE(has_finding(w, "rank-on-wrong-gpu", "error")) << w.dump();
  for (const json& fd : w["findings"])
    if (fd["id"] == "rank-on-wrong-gpu") {
      std::string m = fd["message"];
      EXPECT_NE(m.find("pid " + std::to_string(wrong)), std::string::npos) << m;
      EXPECT_NE(m.find("its cuda:0 (256 MiB)"), std::string::npos) << m;
      EXPECT_NE(m.find(std::string("its cuda:1 is nvidia-smi GPU 1 (") + kU1 + ")"), std::string::npos) << m;
      EXPECT_EQ(fd["fix"], "");
      EXPECT_NE(fd.value("note", "").find("torch.cuda.set_device"), std::string::npos) << fd.dump();
    }

  EXPECT_EQ(count_finding(j, stray, "stray-context"), 1u) << j.dump();
  EXPECT_EQ(count_finding(j, stray, "rank-on-wrong-gpu"), 0u);
  const json& s0 = row(j, stray, 0);
  ASSERT_TRUE(has_finding(s0, "stray-context", "warning"))
      << "on the row of the GPU that is not its own: " << s0.dump();
  for (const json& fd : s0["findings"])
    if (fd["id"] == "stray-context") {
      EXPECT_NE(fd["message"].get<std::string>().find("its cuda:0 (480 MiB)"), std::string::npos) << fd.dump();
    }

  const json& b = row(j, bound, 1);
  EXPECT_EQ(b["cuda_device_count"], 1);
  EXPECT_EQ(b["rank_nvml_index"], nullptr) << "sees one GPU: it has no cuda:1";
  EXPECT_EQ(count_finding(j, bound, "rank-on-wrong-gpu") + count_finding(j, bound, "stray-context"), 0u);

  std::string t = ps_text(f);
  EXPECT_NE(t.find("rank-on-wrong-gpu"), std::string::npos) << t;
  EXPECT_NE(t.find("stray-context"), std::string::npos) << t;
  EXPECT_NE(t.find("note:"), std::string::npos) << t;
}

TEST(PsAnswer, ExitedPidShowsAsExited) {
  // NVML lists a pid that has no /proc entry: it exited in between.
  FakeSession f("h200x2");
  f.host()["gpus"][0]["processes"] = json::array({{{"pid", 5031}, {"used_memory_mib", 256}}});
  json j = ps_json(f);
  const json& r = row(j, 5031, 0);
  EXPECT_EQ(r["state"], "exited");
  EXPECT_EQ(r["user"], nullptr);
  EXPECT_EQ(r["cuda_ordinal"], nullptr);
  EXPECT_TRUE(has_finding(r, "process-exited", "info"));
  std::string t = ps_text(f);
  EXPECT_NE(t.find("(exited)"), std::string::npos) << t;
}

TEST(PsAnswer, NoProcesses) {
  FakeSession f("h200x2");
  std::string t = ps_text(f);
  EXPECT_NE(t.find("No GPU processes"), std::string::npos) << t;
  EXPECT_TRUE(ps_json(f)["processes"].empty());
}

}  // namespace
}  // namespace gpumap
