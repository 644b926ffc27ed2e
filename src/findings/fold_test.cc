// One finding per cause (issue 43 item 1): the fold table, and what a diagnosis says for the
// mistakes that used to give two or three findings with one fix.
#include "findings/fold.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "findings/fix_line.h"
#include "findings/rules.h"
#include "resolve/base_order.h"
#include "resolve/cuda_rules.h"

namespace gpumap {
namespace {

Snapshot gpus(const std::vector<uint32_t>& minors, bool mixed = false) {
  Snapshot s;
  for (uint32_t i = 0; i < minors.size(); ++i) {
    Gpu g;
    g.nvml_index = i;
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-%08x-0000-0000-0000-000000000000", 0xa0 + minors[i]);
    g.uuid = uuid;
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x10 + minors[i]);
    g.pci_bus_id = bus;
    g.pci = parse_pci_address(bus);
    g.name = mixed && i == 1 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB";
    g.compute_capability = mixed && i == 1 ? "9.0" : "8.0";
    g.minor_number = minors[i];
    s.gpus.push_back(g);
  }
  return s;
}

std::vector<Finding> run(const Snapshot& s, const std::vector<std::string>& vars, bool mixed = false) {
  Environment env = Environment::from_strings(vars);
  Mapping m;
  std::vector<std::string> pci = pci_order(s), ff = pci;
  if (mixed) std::swap(ff[0], ff[1]);
  bool pci_set = env.get("CUDA_DEVICE_ORDER") == std::optional<std::string>("PCI_BUS_ID");
  m.base_order = pci_set ? pci : ff;
  m.source = "predicted";
  m.view = predict_cuda_view(m.base_order, env.get("CUDA_DEVICE_ORDER"), env.get("CUDA_VISIBLE_DEVICES"));
  const std::vector<std::string>* order = m.view.order.order == DeviceOrder::kFastestFirst ? &ff : nullptr;
  return diagnose({s, env, m, order, false});
}

std::string dump(const std::vector<Finding>& fs) {
  std::string out;
  for (const Finding& f : fs) {
    out += "\n  [" + std::string(severity_name(f.severity)) + "] " + f.id + " | fix: " + f.fix;
    for (const FoldedFinding& a : f.also) out += " | also " + a.id;
  }
  return out;
}

std::vector<Finding> above_info(const std::vector<Finding>& fs) {
  std::vector<Finding> out;
  for (const Finding& f : fs)
    if (f.severity != Severity::kInfo) out.push_back(f);
  return out;
}

std::set<std::string> also_ids(const Finding& f) {
  std::set<std::string> out;
  for (const FoldedFinding& a : f.also) {
    out.insert(a.id);
    EXPECT_FALSE(a.message.empty()) << a.id;
  }
  return out;
}

// What was seen: CUDA_VISIBLE_DEVICES=all on the mixed box gave container-keyword, list-cut-short
// and cuda-init-fails, three errors with one fix.
TEST(Fold, AContainerKeywordIsOneFinding) {
  std::vector<Finding> fs = above_info(run(gpus({0, 1, 2, 3}, true), {"CUDA_VISIBLE_DEVICES=all"}, true));
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].id, "container-keyword");
  EXPECT_EQ(fs[0].severity, Severity::kError);
  EXPECT_EQ(also_ids(fs[0]), (std::set<std::string>{"list-cut-short", "cuda-init-fails"})) << dump(fs);
  EXPECT_EQ(fs[0].fix, "unset CUDA_VISIBLE_DEVICES; export CUDA_DEVICE_ORDER=PCI_BUS_ID");
}

// A Slurm global id used as an index under a device cgroup: slurm-global-id-as-index is the cause.
TEST(Fold, ASlurmGlobalIdAsAnIndexIsOneFinding) {
  std::vector<Finding> fs = above_info(run(gpus({4, 5}), {"SLURM_JOB_ID=7", "SLURM_STEP_GPUS=4,5", "CUDA_VISIBLE_DEVICES=4,5"}));
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].id, "slurm-global-id-as-index");
  EXPECT_EQ(fs[0].severity, Severity::kError);
  EXPECT_TRUE(also_ids(fs[0]).count("cuda-init-fails")) << dump(fs);
}

// A list cut at its first entry: the cut is why cuInit fails.
TEST(Fold, CudaInitFailsFoldsIntoTheCut) {
  std::vector<Finding> fs = above_info(run(gpus({0, 1, 2, 3}), {"CUDA_VISIBLE_DEVICES=4"}));
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].id, "list-cut-short");
  EXPECT_EQ(also_ids(fs[0]), std::set<std::string>{"cuda-init-fails"});
}

Finding finding(const std::string& id, Severity sev, const std::string& fix) { return {id, sev, id + " message", fix}; }

// A fold needs the cause present and the same fix (its comment aside); the cause keeps its place,
// takes the worse severity, and a chain folds into its root.
TEST(Fold, OnlyFindingsTheCausesFixClears) {
  std::vector<Finding> fs = fold_by_cause({finding("list-cut-short", Severity::kWarning, "export CUDA_VISIBLE_DEVICES=0"),
                                           finding("container-keyword", Severity::kWarning, "export CUDA_VISIBLE_DEVICES=0  # cuda:0 = x"),
                                           finding("cuda-init-fails", Severity::kError, "export CUDA_VISIBLE_DEVICES=0")});
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].id, "container-keyword");
  EXPECT_EQ(fs[0].severity, Severity::kError);
  ASSERT_EQ(fs[0].also.size(), 2u);
  EXPECT_EQ(fs[0].also[0].id, "list-cut-short");
  EXPECT_EQ(fs[0].also[0].message, "list-cut-short message");
  // Another fix: its own finding.
  fs = fold_by_cause({finding("container-keyword", Severity::kError, "unset CUDA_VISIBLE_DEVICES"),
                      finding("list-cut-short", Severity::kError, "export CUDA_VISIBLE_DEVICES=1")});
  EXPECT_EQ(fs.size(), 2u) << dump(fs);
  // No fix at all: evidence of the cause.
  fs = fold_by_cause({finding("duplicate-gpu", Severity::kError, "export CUDA_VISIBLE_DEVICES=0"),
                      finding("cuda-init-fails", Severity::kError, "")});
  EXPECT_EQ(fs.size(), 1u) << dump(fs);
  // Without its cause a finding stays as it is.
  fs = fold_by_cause({finding("cuda-init-fails", Severity::kError, "unset CUDA_VISIBLE_DEVICES")});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_TRUE(fs[0].also.empty());
}

// docs/findings.md lists every fold (the table is the documentation's).
TEST(Fold, EveryFoldIsDocumented) {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/docs/findings.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  size_t section = doc.find("## One finding per cause");
  ASSERT_NE(section, std::string::npos);
  std::string folds = doc.substr(section);
  for (const Fold& f : fold_table())
    EXPECT_NE(folds.find(std::string("| `") + f.folded + "` | `" + f.cause + "` |"), std::string::npos)
        << f.folded << " -> " << f.cause << " is not in docs/findings.md's fold table";
}

TEST(FixLine, ReadsAppliesAndWritesBack) {
  auto steps = parse_fix_line("unset CUDA_VISIBLE_DEVICES; export CUDA_DEVICE_ORDER=PCI_BUS_ID  # cuda:0 = nvidia-smi GPU 1");
  ASSERT_TRUE(steps);
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_FALSE((*steps)[0].value);
  EXPECT_EQ((*steps)[1].value, std::optional<std::string>("PCI_BUS_ID"));
  Environment from = Environment::from_strings({"CUDA_VISIBLE_DEVICES=all", "NVIDIA_VISIBLE_DEVICES=5"});
  Environment to = apply_fix_steps(from, *steps);
  to = apply_fix_steps(to, *parse_fix_line("unset NVIDIA_VISIBLE_DEVICES && export CUDA_VISIBLE_DEVICES=2,3"));
  EXPECT_EQ(fix_line_between(from, to, {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES"}),
            "unset NVIDIA_VISIBLE_DEVICES; export CUDA_VISIBLE_DEVICES=2,3 CUDA_DEVICE_ORDER=PCI_BUS_ID");
  EXPECT_EQ(fix_line_between(from, from, {"CUDA_VISIBLE_DEVICES"}), "");
  // A command to run, or shell syntax the rules never write: not a line of variables.
  EXPECT_FALSE(parse_fix_line("CUDA_VISIBLE_DEVICES=1 python train.py"));
  EXPECT_FALSE(parse_fix_line("export CUDA_VISIBLE_DEVICES=$(gpumap which 1)"));
  EXPECT_FALSE(parse_fix_line("# nothing"));
  // A value the shell would split is quoted.
  Environment odd = apply_fix_steps(from, {{"CUDA_VISIBLE_DEVICES", std::string("a b")}});
  EXPECT_EQ(fix_line_between(from, odd, {"CUDA_VISIBLE_DEVICES"}), "export CUDA_VISIBLE_DEVICES='a b'");
}

}  // namespace
}  // namespace gpumap
