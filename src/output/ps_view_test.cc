// ps_view: what `gpumap ps` says where its `?` cells are seen (issue 43 item 3): another user's
// environment, unreadable without root, gets the one thing to do under the table and in the JSON
// document, not only in an info finding that the table hides.
#include "output/ps_view.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "resolve/process_view_testing.h"

namespace gpumap {
namespace {

using testing_ps::kU0;
using testing_ps::kU1;

ProcessRow row(uint32_t pid, uint32_t gpu, ProcAccess environ) {
  ProcessRow r;
  r.pid = pid;
  r.nvml_index = gpu;
  r.uuid = gpu ? kU1 : kU0;
  r.type = "compute";
  r.used_memory_mib = 100;
  r.uid = 1000;
  r.user = "alice";
  r.command = "python3 train.py";
  r.environ_access = environ;
  r.environ_known = environ == ProcAccess::kOk;
  if (r.environ_known) {
    r.cuda_visible_devices = "0";
    r.cuda_ordinal = 0;
  }
  return r;
}

PsFrame frame_of(std::vector<ProcessRow> rows) {
  PsFrame f;
  f.proc_root = "/proc";
  f.host = "node1";
  f.result.rows = std::move(rows);
  return f;
}

TEST(PsView, AnotherUsersEnvironmentSaysSudoUnderTheTableAndInJson) {
  Snapshot s = testing_ps::two_gpus({{4001}, {4002, 4003}});
  PsFrame one = frame_of({row(4001, 0, ProcAccess::kOk), row(4002, 1, ProcAccess::kDenied)});
  std::string text = ps_frame_text(s, one, TermStyle{});
  EXPECT_NE(text.find("\n?: another user's environment, which this user cannot read: see it with sudo gpumap ps (pid 4002)\n"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("python3 train.py"), text.find("sudo gpumap ps")) << "under the table\n" << text;
  nlohmann::json j = nlohmann::json::parse(ps_frame_json(s, one, false));
  EXPECT_EQ(j["needs_root"]["pids"], nlohmann::json::array({4002}));
  EXPECT_EQ(j["needs_root"]["command"], "sudo gpumap ps");

  // Several: one line naming them all; a process on two GPUs is named once.
  PsFrame two = frame_of({row(4002, 0, ProcAccess::kDenied), row(4002, 1, ProcAccess::kDenied), row(4003, 1, ProcAccess::kDenied)});
  text = ps_frame_text(s, two, TermStyle{});
  EXPECT_NE(text.find("?: other users' environments, which this user cannot read: see them with sudo gpumap ps (pids 4002, 4003)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(nlohmann::json::parse(ps_frame_json(s, two, true))["needs_root"]["pids"], nlohmann::json::array({4002, 4003}));
}

TEST(PsView, NoSudoLineWhenRootWouldNotHelp) {
  // Readable environments, an exited process, and a read that failed for another reason than
  // permission: nothing for sudo to do.
  Snapshot s = testing_ps::two_gpus({{4001}, {4002, 4003}});
  ProcessRow exited = row(4002, 1, ProcAccess::kGone);
  exited.state = ProcessState::kExited;
  PsFrame f = frame_of({row(4001, 0, ProcAccess::kOk), exited, row(4003, 1, ProcAccess::kError)});
  std::string text = ps_frame_text(s, f, TermStyle{});
  EXPECT_EQ(text.find("sudo"), std::string::npos) << text;
  EXPECT_TRUE(nlohmann::json::parse(ps_frame_json(s, f, false))["needs_root"].is_null());
}

}  // namespace
}  // namespace gpumap
