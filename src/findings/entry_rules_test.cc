// The entry rules of issue 52: a keyword judged with its layer (slurm-no-gpu-allocated inside a
// Slurm job, container-keyword outside one; framework-keyword for jina's RR) and misspelled-variable.
#include <gtest/gtest.h>

#include "findings/fix_line.h"
#include "findings/rules.h"
#include "resolve/resolve_mapping.h"

namespace gpumap {
namespace {

Snapshot four_gpus() {
  const char* uuids[] = {"GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2", "GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b",
                         "GPU-35b0fad1-6758-b581-24f3-9f00d2606170", "GPU-b9e1e9b0-68c9-4af0-129d-20f775a395e4"};
  const char* pci[] = {"00000000:3B:00.0", "00000000:5D:00.0", "00000000:AF:00.0", "00000000:D8:00.0"};
  Snapshot s;
  for (uint32_t i = 0; i < 4; ++i) {
    Gpu g;
    g.nvml_index = i;
    g.uuid = uuids[i];
    g.pci_bus_id = pci[i];
    g.pci = parse_pci_address(pci[i]);
    g.name = "NVIDIA A100-SXM4-80GB";
    g.compute_capability = "8.0";
    s.gpus.push_back(g);
  }
  return s;
}

std::vector<Finding> judge(const Environment& env) {
  static const Snapshot s = four_gpus();
  Mapping m;
  m.base_order = pci_order(s);
  m.source = "predicted";
  m.view = predict_cuda_view(m.base_order, env.get("CUDA_DEVICE_ORDER"), env.get("CUDA_VISIBLE_DEVICES"));
  return diagnose({s, env, m, m.view.order.order == DeviceOrder::kFastestFirst ? &m.base_order : nullptr, false});
}

std::vector<Finding> judge(const std::vector<std::string>& vars) { return judge(Environment::from_strings(vars)); }

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const Finding& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

std::string all_text(const std::vector<Finding>& fs) {
  std::string out;
  for (const Finding& f : fs) {
    out += f.id + ": " + f.message + " | " + f.fix + " | " + f.note + "\n";
    for (const FoldedFinding& a : f.also) out += "  also " + a.id + ": " + a.message + "\n";
  }
  return out;
}

TEST(EntryRules, NoDevFilesInsideASlurmJobIsNoGpuAllocatedNeverUnset) {
  std::vector<Finding> fs = judge({"SLURM_JOB_ID=4242", "CUDA_VISIBLE_DEVICES=NoDevFiles", "GPU_DEVICE_ORDINAL=NoDevFiles"});
  ASSERT_EQ(fs.size(), 1u) << all_text(fs);
  EXPECT_EQ(fs[0].id, "slurm-no-gpu-allocated");
  EXPECT_EQ(fs[0].severity, Severity::kWarning);
  EXPECT_NE(fs[0].message.find("no GPU allocated: request --gres=gpu:N / --gpus=N"), std::string::npos) << fs[0].message;
  EXPECT_NE(fs[0].message.find("4242"), std::string::npos);
  EXPECT_TRUE(fs[0].also.empty());
  EXPECT_EQ(all_text(fs).find("unset"), std::string::npos) << all_text(fs);
  EXPECT_EQ(all_text(fs).find("container"), std::string::npos) << all_text(fs);
  EXPECT_TRUE(fs[0].fix.empty());  // a resubmission, not a line for this shell
}

TEST(EntryRules, NoDevFilesOutsideSlurmKeepsTheContainerReading) {
  std::vector<Finding> fs = judge({"CUDA_VISIBLE_DEVICES=NoDevFiles"});
  ASSERT_TRUE(find(fs, "container-keyword")) << all_text(fs);
  EXPECT_FALSE(find(fs, "slurm-no-gpu-allocated"));
  // Another word inside a job is still the container toolkit's.
  EXPECT_TRUE(find(judge({"SLURM_JOB_ID=1", "CUDA_VISIBLE_DEVICES=none"}), "container-keyword"));
}

TEST(EntryRules, JinasRoundRobinIsAFrameworkKeywordNotATypo) {
  for (const char* value : {"RR", "RR0:2", "RR1,3", "RRGPU-28554ffd-acce-bd7e-cb9f-313a72e272e2"}) {
    std::vector<Finding> fs = judge({std::string("CUDA_VISIBLE_DEVICES=") + value});
    ASSERT_EQ(fs.size(), 1u) << value << "\n" << all_text(fs);
    EXPECT_EQ(fs[0].id, "framework-keyword");
    EXPECT_EQ(fs[0].severity, Severity::kInfo);
    EXPECT_NE(fs[0].message.find("jina"), std::string::npos);
    EXPECT_NE(fs[0].message.find("round-robin"), std::string::npos);
    EXPECT_TRUE(fs[0].fix.empty());  // right as it is under jina
  }
  // Letters that are no keyword stay a list that names no GPU.
  std::vector<Finding> typo = judge({"CUDA_VISIBLE_DEVICES=abc"});
  EXPECT_FALSE(find(typo, "framework-keyword"));
  EXPECT_TRUE(find(typo, "list-cut-short")) << all_text(typo);
}

TEST(EntryRules, AMisspelledNameIsRenamedByItsFix) {
  Environment env = Environment::from_strings({"CUDA_VISIBLE=1", "HOME=/root"});
  std::vector<Finding> fs = judge(env);
  const Finding* f = find(fs, "misspelled-variable");
  ASSERT_TRUE(f) << all_text(fs);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("CUDA_VISIBLE is set but nothing reads it"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
  EXPECT_EQ(f->fix, "unset CUDA_VISIBLE; export CUDA_VISIBLE_DEVICES=1");
  // Pasted: the right name, the same value, nothing left to say about names.
  std::optional<std::vector<FixStep>> steps = parse_fix_line(f->fix);
  ASSERT_TRUE(steps);
  Environment fixed = apply_fix_steps(env, *steps);
  EXPECT_EQ(fixed.get("CUDA_VISIBLE_DEVICES"), std::optional<std::string>("1"));
  EXPECT_FALSE(fixed.get("CUDA_VISIBLE"));
  for (const Finding& g : judge(fixed)) EXPECT_EQ(g.severity, Severity::kInfo) << all_text({g});
}

TEST(EntryRules, SeveralMisspellingsAreOneFindingAndOneLine) {
  Environment env = Environment::from_strings({"CUDA_VISIABLE_DEVICES=2,3", "CUDA_DEVICE_ORDR=PCI_BUS_ID"});
  std::vector<Finding> fs = judge(env);
  const Finding* f = find(fs, "misspelled-variable");
  ASSERT_TRUE(f) << all_text(fs);
  EXPECT_NE(f->message.find("also"), std::string::npos) << f->message;
  std::optional<std::vector<FixStep>> steps = parse_fix_line(f->fix);
  ASSERT_TRUE(steps) << f->fix;
  Environment fixed = apply_fix_steps(env, *steps);
  EXPECT_EQ(fixed.get("CUDA_VISIBLE_DEVICES"), std::optional<std::string>("2,3"));
  EXPECT_EQ(fixed.get("CUDA_DEVICE_ORDER"), std::optional<std::string>("PCI_BUS_ID"));
  EXPECT_FALSE(find(judge(fixed), "misspelled-variable"));
}

TEST(EntryRules, TheRightNameSetMeansNoMisspelling) {
  EXPECT_FALSE(find(judge({"CUDA_VISIBLE=1", "CUDA_VISIBLE_DEVICES=1"}), "misspelled-variable"));
  EXPECT_FALSE(find(judge({"CUDA_DEVICE_MAX_CONNECTIONS=1", "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
                           "CUDA_MPS_PIPE_DIRECTORY=/tmp/mps", "CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log"}),
                    "misspelled-variable"));
}

}  // namespace
}  // namespace gpumap
