#include "findings/process_rules.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "findings/severity.h"

#include "resolve/process_view_testing.h"

namespace gpumap {
namespace {

using testing_ps::kU0;
using testing_ps::kU1;
using testing_ps::two_gpus;

Mapping with(std::vector<std::string> uuids) {
  Mapping m;
  m.view.uuids = std::move(uuids);
  return m;
}

ProcessCudaFacts live_on(std::vector<std::string> live, std::vector<std::string> predicted, const char* now,
                         const char* start) {
  ProcessCudaFacts f;
  f.live = true;
  f.mapping = with(std::move(live));
  f.predicted = with(std::move(predicted));
  if (now) f.now.set("CUDA_VISIBLE_DEVICES", now);
  f.start = Environment();
  if (start) f.start->set("CUDA_VISIBLE_DEVICES", start);
  f.command = {"python3", "train.py", "--name", "it's"};
  return f;
}

TEST(ProcessRules, SetTooLateNamesBothValuesTheRealGpusAndARelaunch) {
  Snapshot s = two_gpus({{}, {}});
  auto f = set_too_late(s, live_on({kU0}, {kU1}, "1", nullptr));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "set-too-late");
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_NE(f->message.find("\"1\" now (at start: unset)"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("really uses cuda:0 = nvidia-smi GPU 0"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("would give cuda:0 = nvidia-smi GPU 1"), std::string::npos) << f->message;
  EXPECT_EQ(f->fix, "CUDA_VISIBLE_DEVICES=1 python3 train.py --name 'it'\\''s'");
}

// Issue 43: a Jupyter kernel or a program read from stdin is restarted, never relaunched by its
// command line (an orphan kernel; a program waiting on stdin).
TEST(ProcessRules, AKernelOrAStdinProgramIsRestartedNotRelaunched) {
  Snapshot s = two_gpus({{}, {}});
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "/root/.local/share/jupyter/runtime/kernel-1.json"},
           {"python3", "-"},
           {"python3", "-u"},
           {"ipython"}}) {
    ProcessCudaFacts facts = live_on({kU0}, {kU1}, "1", nullptr);
    facts.command = cmd;
    auto f = set_too_late(s, facts);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->fix, "") << cmd[1 % cmd.size()];
    EXPECT_EQ(f->note.rfind("restart the kernel (or the interpreter) and set the variables in the first cell, before "
                            "`import torch`: import os; os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"",
                            0),
              0u)
        << f->note;
  }
  // A script, `-c` and `-m module` run again as they were.
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"python3", "-u", "train.py"}, {"python3", "-c", "import train"}, {"python", "-m", "train"}}) {
    ProcessCudaFacts facts = live_on({kU0}, {kU1}, "1", nullptr);
    facts.command = cmd;
    auto f = set_too_late(s, facts);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->fix.rfind("CUDA_VISIBLE_DEVICES=1 python", 0), 0u) << f->fix;
  }
}

TEST(ProcessRules, AVariableRemovedLateIsRelaunchedWithoutIt) {
  Snapshot s = two_gpus({{}, {}});
  auto f = set_too_late(s, live_on({kU1}, {kU0, kU1}, nullptr, "1"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->fix, "env -u CUDA_VISIBLE_DEVICES python3 train.py --name 'it'\\''s'");
}

TEST(ProcessRules, NoFindingWhenTheLiveGpusAreThePredictedOnesOrCudaIsNotRunning) {
  Snapshot s = two_gpus({{}, {}});
  EXPECT_FALSE(set_too_late(s, live_on({kU1}, {kU1}, "1", "0")));
  ProcessCudaFacts predicted = live_on({kU0}, {kU1}, "1", nullptr);
  predicted.live = false;
  EXPECT_FALSE(set_too_late(s, predicted));
}

TEST(ProcessRules, RankChecksNeedMoreThanOneVisibleGpu) {
  Snapshot s = two_gpus({{}, {}});
  Environment env;
  env.set("LOCAL_RANK", "1");
  ProgramFacts p;
  p.tensor_devices["cuda:0"] = 4;
  auto ids = [&](const std::vector<std::string>& visible) {
    std::vector<std::string> out;
    for (const Finding& f : program_findings(s, visible, env, p)) out.push_back(f.id);
    return out;
  };
  EXPECT_EQ(ids({kU0, kU1}), std::vector<std::string>{"local-rank-device-mismatch"});
  EXPECT_EQ(ids({kU1}), std::vector<std::string>{});  // narrowed to its own GPU: cuda:0 is right
}

TEST(ProcessRules, DeviceOrdinals) {
  EXPECT_EQ(device_ordinal("cuda"), 0u);
  EXPECT_EQ(device_ordinal("cuda:3"), 3u);
  EXPECT_EQ(device_ordinal("7"), 7u);
  EXPECT_FALSE(device_ordinal("cpu"));
  EXPECT_FALSE(device_ordinal("cuda:-1"));
  EXPECT_FALSE(device_ordinal("cuda:1x"));
  EXPECT_FALSE(device_ordinal("cuda:9999999999"));
}

// Issue 30 item 8: diagnose(model, max_memory) checks what it is given as check_device_map does:
// under CUDA_VISIBLE_DEVICES=1 (one GPU, nvidia-smi GPU 1 = cuda:0), hf_device_map {"0": 1} and
// max_memory {1: ...} name cuda:1, which does not exist; the note points at cuda:0.
TEST(ProcessRules, DeviceNotVisibleForDeviceMapValuesAndMaxMemoryKeys) {
  Snapshot s = two_gpus({{}, {}});
  ProgramFacts p;
  p.hf_device_map = std::map<std::string, std::string>{{"0", "1"}, {"lm_head", "cuda:0"}, {"x", "cpu"}};
  p.max_memory = {{"1", "10GiB"}, {"cpu", "100GiB"}};
  std::vector<Finding> fs = program_findings(s, {kU1}, Environment(), p);
  const Finding* f = nullptr;
  for (const Finding& x : fs)
    if (x.id == "device-not-visible") f = &x;
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_NE(f->message.find("hf_device_map[\"0\"] = 1, max_memory key 1: cuda:1 does not exist here (this process "
                            "sees 1 GPU, cuda:0)"),
            std::string::npos)
      << f->message;
  EXPECT_NE(f->note.find("nvidia-smi GPU 1 is cuda:0 here: use 0"), std::string::npos) << f->note;
  // Every key and value a visible ordinal (or cpu/disk): nothing to say.
  p.hf_device_map = std::map<std::string, std::string>{{"0", "0"}, {"x", "disk"}};
  p.max_memory = {{"0", "10GiB"}, {"cpu", "1GiB"}};
  for (const Finding& x : program_findings(s, {kU1}, Environment(), p)) EXPECT_NE(x.id, "device-not-visible");
}

// The program rules are rows (issue 45 item 4): each row fires on its own trigger alone, with the
// row's severity, and docs/findings.md lists it with that severity.  A new row needs its case here.
TEST(ProcessRules, EveryProgramRuleRowFiresAloneWithItsSeverityAndIsDocumented) {
  Snapshot s = two_gpus({{}, {}});
  struct Case {
    std::vector<std::string> visible;
    Environment env;
    ProgramFacts facts;
  };
  std::map<std::string, Case> cases;
  {
    Case& c = cases["stray-context"];  // 500 MiB on cuda:1 while it works on cuda:0
    c.visible = {kU0, kU1};
    c.facts.current_device = 0;
    c.facts.memory_known = true;
    c.facts.memory_mib = {{kU0, 900}, {kU1, 500}};
  }
  {
    Case& c = cases["local-rank-device-mismatch"];  // local rank 1, its model on cuda:0
    c.visible = {kU0, kU1};
    c.env.set("LOCAL_RANK", "1");
    c.facts.tensor_devices["cuda:0"] = 4;
  }
  {
    Case& c = cases["device-not-visible"];  // one GPU, a device map naming cuda:1
    c.visible = {kU1};
    c.facts.hf_device_map = std::map<std::string, std::string>{{"layer", "1"}};
  }
  {
    Case& c = cases["model-on-cpu"];
    c.visible = {kU0};
    c.facts.tensor_devices["cpu"] = 10;
  }
  {
    Case& c = cases["offloaded-modules"];
    c.visible = {kU0};
    c.facts.hf_device_map = std::map<std::string, std::string>{{"a", "0"}, {"b", "cpu"}, {"c", "disk"}};
  }
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/docs/findings.md");
  std::stringstream doc;
  doc << in.rdbuf();
  std::set<std::string> ids;
  for (const ProgramRule& rule : program_rules()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << rule.id << " has two rows";
    auto it = cases.find(rule.id);
    ASSERT_NE(it, cases.end()) << rule.id << ": a row without its case in this test";
    const Case& c = it->second;
    std::vector<Finding> fs = program_findings(s, c.visible, c.env, c.facts);
    ASSERT_EQ(fs.size(), 1u) << rule.id;
    EXPECT_EQ(fs[0].id, rule.id);
    EXPECT_EQ(fs[0].severity, rule.severity) << rule.id;
    EXPECT_FALSE(fs[0].message.empty()) << rule.id;
    EXPECT_FALSE(fs[0].note.empty()) << rule.id;
    EXPECT_TRUE(fs[0].fix.empty()) << rule.id << ": a program rule's advice is code, a note";
    EXPECT_NE(doc.str().find(std::string("| `") + rule.id + "` | " + severity_name(rule.severity) + " |"), std::string::npos)
        << rule.id << " is not in docs/findings.md with severity " << severity_name(rule.severity);
  }
  EXPECT_EQ(ids.size(), cases.size()) << "a case without its row";
  // Nothing to say about a model on its own GPU.
  ProgramFacts fine;
  fine.tensor_devices["cuda:0"] = 4;
  fine.memory_known = true;
  fine.memory_mib = {{kU0, 900}};
  EXPECT_TRUE(program_findings(s, {kU0, kU1}, Environment(), fine).empty());
}

}  // namespace
}  // namespace gpumap
