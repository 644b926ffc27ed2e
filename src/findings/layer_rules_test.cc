// Where layers meet (issue 30): the allowed set in every fix, a container's in-range host number,
// Slurm's global ids under a device cgroup.
#include <gtest/gtest.h>

#include "findings/rules.h"
#include "resolve/base_order.h"
#include "resolve/cuda_rules.h"

namespace gpumap {
namespace {

// Identical GPUs with these minor numbers, numbered 0.. here (PCI order = this order).
Snapshot gpus(const std::vector<uint32_t>& minors) {
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
    g.name = "NVIDIA H200";
    g.compute_capability = "9.0";
    g.minor_number = minors[i];
    s.gpus.push_back(g);
  }
  return s;
}

std::vector<Finding> run(const Snapshot& s, const std::vector<std::string>& vars, bool container = false) {
  Environment env = Environment::from_strings(vars);
  Mapping m;
  m.base_order = pci_order(s);
  m.source = "predicted";
  m.view = predict_cuda_view(m.base_order, env.get("CUDA_DEVICE_ORDER"), env.get("CUDA_VISIBLE_DEVICES"));
  return diagnose({s, env, m, nullptr, container});
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const Finding& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

std::string dump(const std::vector<Finding>& fs) {
  std::string out;
  for (const Finding& f : fs) out += "\n  [" + std::string(severity_name(f.severity)) + "] " + f.id + ": " + f.message + " | fix: " + f.fix;
  return out;
}

const std::vector<uint32_t> kNode = {0, 1, 2, 3, 4, 5, 6, 7};

// Issue 30 item 2: a rewritten list never names a GPU outside the step's allocation.
TEST(LayerRules, FixesKeepToTheAllocation) {
  Snapshot s = gpus(kNode);
  std::vector<Finding> fs = run(s, {"SLURM_JOB_ID=7", "SLURM_STEP_GPUS=2,3", "CUDA_VISIBLE_DEVICES=2,2,5"});
  const Finding* dup = find(fs, "duplicate-gpu");
  ASSERT_TRUE(dup) << dump(fs);
  EXPECT_EQ(dup->fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2  # nvidia-smi GPU 5 left out: outside SLURM_STEP_GPUS=2,3");
  // Every GPU named outside: the allocation instead.
  fs = run(s, {"SLURM_STEP_GPUS=2,3", "CUDA_VISIBLE_DEVICES=5,5"});
  dup = find(fs, "duplicate-gpu");
  ASSERT_TRUE(dup) << dump(fs);
  EXPECT_EQ(dup->fix.rfind("export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,3  # nvidia-smi GPU 5 left out", 0), 0u) << dup->fix;
  // outside-allocation keeps the allocated GPU the list names.
  fs = run(s, {"SLURM_STEP_GPUS=2,3", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=2,5"});
  const Finding* out = find(fs, "outside-allocation");
  ASSERT_TRUE(out) << dump(fs);
  EXPECT_EQ(out->fix.rfind("export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2  #", 0), 0u) << out->fix;
  // NVIDIA_VISIBLE_DEVICES outside a container naming another job's GPU: no export of it.
  fs = run(s, {"SLURM_STEP_GPUS=2,3", "NVIDIA_VISIBLE_DEVICES=5"});
  const Finding* nvd = find(fs, "nvidia-visible-devices-outside-container");
  ASSERT_TRUE(nvd) << dump(fs);
  EXPECT_EQ(nvd->fix, "unset NVIDIA_VISIBLE_DEVICES");
  EXPECT_NE(nvd->note.find("outside SLURM_STEP_GPUS=2,3"), std::string::npos) << nvd->note;
  // uuid-prefix-case keeps only the allocated GPU.
  fs = run(s, {"SLURM_STEP_GPUS=2,3", "CUDA_VISIBLE_DEVICES=gpu-000000a2,gpu-000000a5"});
  const Finding* mc = find(fs, "uuid-prefix-case");
  ASSERT_TRUE(mc) << dump(fs);
  EXPECT_EQ(mc->fix.find("000000a5"), std::string::npos) << mc->fix;
  EXPECT_NE(mc->fix.find("GPU-000000a2"), std::string::npos) << mc->fix;
}

// Issue 30 item 3: NVIDIA_VISIBLE_DEVICES=1,3 CUDA_VISIBLE_DEVICES=1 inside the container.
TEST(LayerRules, AContainersInRangeHostNumberGivesBothReadings) {
  Snapshot inside = gpus({1, 3});  // the container's GPUs 0 and 1 are host GPUs 1 and 3
  std::vector<Finding> fs = run(inside, {"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=1"}, true);
  const Finding* f = find(fs, "container-host-number");
  ASSERT_TRUE(f) << dump(fs);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("1 as the host's number is the container's GPU 0"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("cuda:0 = nvidia-smi GPU 1"), std::string::npos) << f->message;
  EXPECT_EQ(f->fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0");
  EXPECT_NE(f->note.find("CUDA_VISIBLE_DEVICES=" + inside.gpus[1].uuid), std::string::npos) << f->note;
  // Either fix, applied, leaves nothing above info.
  for (const std::string& cvd : {std::string("0"), inside.gpus[1].uuid})
    for (const Finding& g : run(inside, {"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=" + cvd}, true))
      EXPECT_EQ(g.severity, Severity::kInfo) << cvd << dump({g});
  // The container's own numbering, written as such: no warning (0 is no host number here).
  EXPECT_FALSE(find(run(inside, {"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=0,1"}, true), "container-host-number"));
  // Host and container numbers agree: nothing to say.
  Snapshot same = gpus({0, 1});
  EXPECT_FALSE(find(run(same, {"NVIDIA_VISIBLE_DEVICES=0,1", "CUDA_VISIBLE_DEVICES=1"}, true), "container-host-number"));
  // Outside a container the same variables are nvidia-visible-devices-outside-container's.
  EXPECT_FALSE(find(run(inside, {"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=1"}, false), "container-host-number"));
  // A number past the container's GPUs keeps list-cut-short's reading, and both fixes agree.
  fs = run(inside, {"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=3,1"}, true);
  const Finding* cut = find(fs, "list-cut-short");
  ASSERT_TRUE(cut) << dump(fs);
  EXPECT_EQ(cut->fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1,0");
}

// Issue 30 item 4: a step whose device cgroup leaves nvidia4 and nvidia5; the script copied the ids.
TEST(LayerRules, SlurmGlobalIdsUnderADeviceCgroup) {
  Snapshot step = gpus({4, 5});
  std::vector<Finding> fs = run(step, {"SLURM_JOB_ID=7", "SLURM_STEP_GPUS=4,5", "CUDA_VISIBLE_DEVICES=4,5"});
  const Finding* f = find(fs, "slurm-global-id-as-index");
  ASSERT_TRUE(f) << dump(fs);
  EXPECT_EQ(f->severity, Severity::kError);  // CUDA would see no GPU
  EXPECT_NE(f->message.find("4 as Slurm's global id is GPU 0"), std::string::npos) << f->message;
  EXPECT_EQ(f->fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0,1");
  const Finding* cut = find(fs, "list-cut-short");
  if (cut) {
    EXPECT_EQ(cut->fix, f->fix);  // one reading for every fix of the run
  }
  // After the fix: nothing above info.
  for (const Finding& g : run(step, {"SLURM_STEP_GPUS=4,5", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0,1"}))
    EXPECT_EQ(g.severity, Severity::kInfo) << dump({g});
  // In range but read as ids: 1,2 under a cgroup leaving nvidia1 and nvidia2 (1 is GPU 0 here).
  Snapshot other = gpus({1, 2});
  fs = run(other, {"SLURM_STEP_GPUS=1,2", "CUDA_VISIBLE_DEVICES=1,2"});
  f = find(fs, "slurm-global-id-as-index");
  ASSERT_TRUE(f) << dump(fs);
  EXPECT_EQ(f->fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0,1");
  // What Slurm itself sets under cgroups (renumbered from 0) is not the ids: no warning.
  EXPECT_FALSE(find(run(other, {"SLURM_STEP_GPUS=1,2", "CUDA_VISIBLE_DEVICES=0,1"}), "slurm-global-id-as-index"));
  // On the whole node the ids are nvidia-smi's numbers: copying them is right.
  Snapshot node = gpus(kNode);
  for (const Finding& g : run(node, {"SLURM_STEP_GPUS=4,5", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=4,5"}))
    EXPECT_EQ(g.severity, Severity::kInfo) << dump({g});
}

// Under an invalid order no entry is read; its fix also rewrites a list that would trip other rules
// once the order is right, so pasting it leaves nothing (the round trip's case 10, seed 30).
TEST(LayerRules, AnInvalidOrdersFixAlsoMendsTheList) {
  Snapshot s = gpus(kNode);
  const Finding* f = nullptr;
  std::vector<Finding> fs = run(s, {"CUDA_DEVICE_ORDER=PCI", "CUDA_VISIBLE_DEVICES= 0 "});
  ASSERT_TRUE(f = find(fs, "device-order-invalid")) << dump(fs);
  EXPECT_EQ(f->fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0");
  for (const Finding& g : run(s, {"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0"}))
    EXPECT_EQ(g.severity, Severity::kInfo) << dump({g});
  fs = run(s, {"CUDA_DEVICE_ORDER=PCI", "CUDA_VISIBLE_DEVICES=3,1"});  // a clean list stays as written
  ASSERT_TRUE(f = find(fs, "device-order-invalid")) << dump(fs);
  EXPECT_EQ(f->fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID");
  fs = run(s, {"CUDA_DEVICE_ORDER=PCI", "SLURM_STEP_GPUS=2,3", "CUDA_VISIBLE_DEVICES=3,7"});  // and the allocation
  ASSERT_TRUE(f = find(fs, "device-order-invalid")) << dump(fs);
  EXPECT_EQ(f->fix.rfind("export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=3  #", 0), 0u) << f->fix;
}

}  // namespace
}  // namespace gpumap
