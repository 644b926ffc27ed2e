// One test per rule id (docs/findings.md): the rule fires with its id and severity on a
// crafted environment, and nothing fires on a clean one.
#include "findings/rules.h"

#include <gtest/gtest.h>

#include <regex>

#include "env/launcher.h"
#include "resolve/resolve_mapping.h"

namespace gpumap {
namespace {

const char* kUuids[] = {"GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2", "GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b",
                        "GPU-35b0fad1-6758-b581-24f3-9f00d2606170", "GPU-b9e1e9b0-68c9-4af0-129d-20f775a395e4"};
const char* kPci[] = {"00000000:3B:00.0", "00000000:5D:00.0", "00000000:AF:00.0", "00000000:D8:00.0"};

// Four identical GPUs (CUDA's default order is PCI order), or the first guide's mixed box
// (GPU 1 is newer, so FASTEST_FIRST puts it first), or GPU 0 in MIG mode.
enum class Host { kUniform, kMixed, kMig };

Snapshot host(Host h) {
  Snapshot s;
  for (uint32_t i = 0; i < 4; ++i) {
    Gpu g;
    g.nvml_index = i;
    g.uuid = kUuids[i];
    g.pci_bus_id = kPci[i];
    g.pci = parse_pci_address(kPci[i]);
    g.name = h == Host::kMixed && i == 1 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB";
    g.compute_capability = h == Host::kMixed && i == 1 ? "9.0" : "8.0";
    g.mig_enabled = h == Host::kMig && i == 0;
    if (h == Host::kMig && i == 0) g.mig_devices = {{"MIG-11111111-2222-3333-4444-555555555555", "NVIDIA A100-SXM4-80GB MIG 3g.40gb", 1, 0, 40000, 0}};
    s.gpus.push_back(g);
  }
  return s;
}

struct Diag {
  Snapshot s;
  Environment env;
  Mapping m;
  std::vector<std::string> ff;
  std::vector<Finding> fs;
};

Diag diag(Host h, const std::vector<std::string>& vars, bool container = false) {
  Diag r;
  r.s = host(h);
  r.env = Environment::from_strings(vars);
  std::vector<std::string> pci = pci_order(r.s);
  r.ff = pci;
  if (h == Host::kMixed) std::swap(r.ff[0], r.ff[1]);
  bool pci_set = r.env.get("CUDA_DEVICE_ORDER") == std::optional<std::string>("PCI_BUS_ID");
  r.m.base_order = pci_set ? pci : r.ff;
  r.m.source = "predicted";
  r.m.view = predict_cuda_view(r.m.base_order, r.env.get("CUDA_DEVICE_ORDER"), r.env.get("CUDA_VISIBLE_DEVICES"));
  const std::vector<std::string>* ff = r.m.view.order.order == DeviceOrder::kFastestFirst ? &r.ff : nullptr;
  r.fs = diagnose({r.s, r.env, r.m, ff, container});
  return r;
}

std::string dump(const std::vector<Finding>& fs) {
  std::string out;
  for (const Finding& f : fs) out += std::string("\n  [") + severity_name(f.severity) + "] " + f.id + ": " + f.message;
  return out;
}

// The rule fires with this severity, has a message, and does not fire on a clean environment.
bool has(const Diag& r, const std::string& id, Severity sev) {
  for (const Finding& f : r.fs)
    if (f.id == id && f.severity == sev) return true;
  return false;
}

void expect_rule(Host h, const std::vector<std::string>& vars, const std::string& id, Severity sev, bool container = false) {
  Diag r = diag(h, vars, container);
  bool found = false;
  for (const Finding& f : r.fs) {
    if (f.id == id) {
      found = true;
      EXPECT_EQ(f.severity, sev) << id << dump(r.fs);
      EXPECT_FALSE(f.message.empty());
    }
    // Folded into its cause (findings/fold.h): it fired, and is said as the cause's evidence.
    for (const FoldedFinding& a : f.also)
      if (a.id == id) {
        found = true;
        EXPECT_GE(f.severity, sev) << id << " folded into " << f.id << dump(r.fs);
        EXPECT_FALSE(a.message.empty());
      }
  }
  EXPECT_TRUE(found) << id << " did not fire; got:" << dump(r.fs);
  for (Host clean_host : {Host::kUniform, h}) {
    std::vector<std::string> clean_vars = {"CUDA_DEVICE_ORDER=PCI_BUS_ID"};
    for (const Finding& f : diag(clean_host, clean_vars).fs)
      if (f.id != "mig-enabled") ADD_FAILURE() << id << ": clean environment has " << f.id << dump({f});
    for (const Finding& f : diag(clean_host, {}).fs)
      if (f.id == id && id != "mig-enabled" && id != "order-differs") ADD_FAILURE() << id << " fires with no variables";
  }
}

TEST(Rules, CleanEnvironmentHasNoFindings) {
  EXPECT_TRUE(diag(Host::kUniform, {}).fs.empty()) << dump(diag(Host::kUniform, {}).fs);
  EXPECT_TRUE(diag(Host::kMixed, {"CUDA_DEVICE_ORDER=PCI_BUS_ID"}).fs.empty());
  EXPECT_TRUE(diag(Host::kUniform, {"CUDA_DEVICE_ORDER=FASTEST_FIRST"}).fs.empty());
}

TEST(Rules, DeviceOrderInvalid) { expect_rule(Host::kUniform, {"CUDA_DEVICE_ORDER=pci_bus_id"}, "device-order-invalid", Severity::kError); }
TEST(Rules, UuidWithoutPrefix) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=28554ffd-acce-bd7e-cb9f-313a72e272e2"}, "uuid-without-prefix", Severity::kError);
}
TEST(Rules, PciAddressEntry) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=00000000:5D:00.0"}, "pci-address-entry", Severity::kError);
}
TEST(Rules, MigLegacyForm) {
  expect_rule(Host::kMig, {"CUDA_VISIBLE_DEVICES=MIG-GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2/1/0"}, "mig-legacy-form",
              Severity::kError);
}
TEST(Rules, IndexTrailingText) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0x1"}, "index-trailing-text", Severity::kWarning);
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=1.5"}, "index-trailing-text", Severity::kWarning);
}
TEST(Rules, EntrySeparator) { expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0;1"}, "entry-separator", Severity::kWarning); }
TEST(Rules, ContainerKeyword) { expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=all"}, "container-keyword", Severity::kError); }
TEST(Rules, SpaceBeforeUuid) {
  expect_rule(Host::kUniform,
              {"CUDA_VISIBLE_DEVICES=GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2, GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b"},
              "space-before-uuid", Severity::kError);
}
TEST(Rules, MixedEntryKinds) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,GPU-df9ecf4c"}, "mixed-entry-kinds", Severity::kError);
}
TEST(Rules, DuplicateGpu) { expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,0"}, "duplicate-gpu", Severity::kError); }

// Measured: a CUDA_VISIBLE_DEVICES of 2625 bytes or more, or a CUDA_DEVICE_ORDER of 1024 or more, is
// ignored by cuInit as if unset: every GPU is visible, in the default order.
TEST(Rules, ValuesTooLongForTheDriverAreIgnored) {
  std::string cvd(2624, '0');
  cvd += "1";
  Diag r = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=" + cvd});
  EXPECT_TRUE(has(r, "value-too-long", Severity::kError));
  EXPECT_EQ(r.m.view.uuids.size(), 4u);
  EXPECT_FALSE(has(r, "cuda-init-fails", Severity::kError));
  cvd.pop_back();
  cvd.back() = '1';  // 2624 bytes: read, and index 1 of 4 GPUs exists
  Diag read = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=" + cvd});
  EXPECT_FALSE(has(read, "value-too-long", Severity::kError));
  EXPECT_EQ(read.m.view.uuids.size(), 1u);
  Diag order = diag(Host::kUniform, {"CUDA_DEVICE_ORDER=" + std::string(1024, 'X')});
  EXPECT_TRUE(has(order, "value-too-long", Severity::kWarning));
  EXPECT_EQ(order.m.view.error, CudaInitError::kNone);
}

// `0..7` repeated: 64 992 duplicate-gpu findings (doctor printed 34 MB).  Now each entry rule
// reports once per list, naming a bounded number of the later entries.
TEST(Rules, EntryRulesReportOncePerListWithBoundedQuotes) {
  std::string cvd;
  for (int i = 0; i < 1300; ++i) cvd += (i ? "," : "") + std::to_string(i % 4);  // 2599 bytes: read
  Diag r = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=" + cvd});
  size_t dups = 0, bytes = 0;
  for (const Finding& f : r.fs) {
    bytes += f.message.size();
    if (f.id != "duplicate-gpu") continue;
    ++dups;
    EXPECT_NE(f.message.find("entry 5 `0` names"), std::string::npos) << f.message;
    EXPECT_NE(f.message.find("(the same for 1295 more entries: 6, 7, 8, 9, 10, ...)"), std::string::npos) << f.message;
  }
  EXPECT_EQ(dups, 1u);
  EXPECT_LT(bytes, 4096u);
  // A long entry is quoted up to 64 bytes.
  Diag big = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0, GPU-" + std::string(2000, 'a') + ",-2,-3"});
  for (const Finding& f : big.fs) EXPECT_LT(f.message.size(), 1024u) << f.id;
}
TEST(Rules, ListCutShort) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,7,1"}, "list-cut-short", Severity::kWarning);
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=GPU-dead"}, "list-cut-short", Severity::kError);
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,,1"}, "list-cut-short", Severity::kWarning);  // measured: empty entry cuts
}
TEST(Rules, CudaInitFails) { expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=1,1"}, "cuda-init-fails", Severity::kError); }
TEST(Rules, OrderDiffers) {
  // The first guide's row 1: a mixed host without PCI_BUS_ID, even with CUDA_VISIBLE_DEVICES unset.
  expect_rule(Host::kMixed, {}, "order-differs", Severity::kWarning);
  expect_rule(Host::kMixed, {"CUDA_DEVICE_ORDER=FASTEST_FIRST"}, "order-differs", Severity::kWarning);
}
TEST(Rules, VisibleDevicesWithoutPciOrder) {
  // `1` under FASTEST_FIRST is GPU 0, not nvidia-smi's GPU 1: a warning quoting the real mapping.
  expect_rule(Host::kMixed, {"CUDA_VISIBLE_DEVICES=1"}, "visible-devices-without-pci-order", Severity::kWarning);
  // `2` lands on GPU 2 either way: only a note.
  expect_rule(Host::kMixed, {"CUDA_VISIBLE_DEVICES=2"}, "visible-devices-without-pci-order", Severity::kInfo);
}
TEST(Rules, OrderRulesQuoteTheMappingTheTableShows) {
  // Issue 8: with CUDA_VISIBLE_DEVICES=1, cuda:0 is GPU 0; no finding may say it is GPU 1.
  Diag one = diag(Host::kMixed, {"CUDA_VISIBLE_DEVICES=1"});
  for (const Finding& f : one.fs) EXPECT_NE(f.id, "order-differs") << dump(one.fs);
  // UUID entries do not depend on the order: nothing about the order at all.
  Diag uuid = diag(Host::kMixed, {std::string("CUDA_VISIBLE_DEVICES=") + kUuids[1]});
  for (const Finding& f : uuid.fs) EXPECT_EQ(f.severity, Severity::kInfo) << dump(uuid.fs);
  // Every "cuda:N is/= nvidia-smi GPU M" in any finding agrees with the mapping.
  const std::regex quote("cuda:([0-9]+) (?:is|=) nvidia-smi GPU ([0-9]+)");
  for (const char* cvd : {"", "1", "2", "0,1", "1,0", "3,1,2", "1,1", "0,9", "GPU-df9e,GPU-2855", "-1", "2,x"})
    for (const char* order : {"", "FASTEST_FIRST", "PCI_BUS_ID"}) {
      std::vector<std::string> vars;
      if (*cvd) vars.push_back(std::string("CUDA_VISIBLE_DEVICES=") + cvd);
      if (*order) vars.push_back(std::string("CUDA_DEVICE_ORDER=") + order);
      Diag d = diag(Host::kMixed, vars);
      for (const Finding& f : d.fs)
        for (std::sregex_iterator it(f.message.begin(), f.message.end(), quote), end; it != end; ++it) {
          size_t n = std::stoul((*it)[1]);
          ASSERT_LT(n, d.m.view.uuids.size()) << cvd << " " << order << ": " << f.message;
          EXPECT_EQ(d.s.nvml_index_of(d.m.view.uuids[n]), std::stoi((*it)[2])) << cvd << " " << order << ": " << f.message;
        }
    }
}
TEST(Rules, GpusHiddenOnPurposeIsANoteNotAnError) {
  for (const char* v : {"CUDA_VISIBLE_DEVICES=", "CUDA_VISIBLE_DEVICES=-1", "CUDA_VISIBLE_DEVICES= "}) {
    Diag d = diag(Host::kMixed, {v});
    ASSERT_EQ(d.fs.size(), 1u) << v << dump(d.fs);
    EXPECT_EQ(d.fs[0].id, "gpus-hidden");
    EXPECT_EQ(d.fs[0].severity, Severity::kInfo);
    EXPECT_EQ(d.fs[0].message.find("4294967295"), std::string::npos) << d.fs[0].message;
  }
  // A keyword meant for the container runtime is still an error, and its fix is one gpumap accepts.
  Diag none = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=none"});
  for (const Finding& f : none.fs)
    if (f.id == "container-keyword") {
      EXPECT_EQ(f.fix.rfind("export CUDA_VISIBLE_DEVICES=-1", 0), 0u) << f.fix;
    }
  // A negative entry later in a list is described in words, not as 4294967295.
  for (const Finding& f : diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,-1"}).fs)
    EXPECT_EQ(f.message.find("4294967295"), std::string::npos) << f.message;
}
TEST(Rules, LocalRankInvalid) { expect_rule(Host::kUniform, {"LOCAL_RANK=one"}, "local-rank-invalid", Severity::kError); }
TEST(Rules, LocalRankExceedsVisible) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=2", "LOCAL_RANK=1"}, "local-rank-exceeds-visible", Severity::kError);
}
TEST(Rules, SlurmPerTaskBindingIsNotARankTrap) {
  // srun -n 2 --gpus-per-task=1, task 1: one visible GPU of the node's two; cuda:0 is right.
  Diag r = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=1", "SLURM_LOCALID=1", "SLURM_GPUS_ON_NODE=2"});
  for (const Finding& f : r.fs) EXPECT_NE(f.id, "local-rank-exceeds-visible") << dump(r.fs);
  // srun -n 4 --gres=gpu:2: every task sees both GPUs, tasks 2 and 3 have no cuda:$SLURM_LOCALID.
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,1", "SLURM_LOCALID=2", "SLURM_GPUS_ON_NODE=2"},
              "local-rank-exceeds-visible", Severity::kError);
}
// Issue 52 item 2: per-task binding leaves every task only its own GPU as cuda:0, so
// set_device(SLURM_LOCALID) fails on every task but 0: a warning, with the fixes that work there.
TEST(Rules, SlurmPerTaskBindingWarnsWithTheFixesThatWorkThere) {
  // srun -n 2 --gpus-per-task=1 (slurm-observed.md): task 1 sees CUDA_VISIBLE_DEVICES=1, both tasks SLURM_GPUS_ON_NODE=2.
  std::vector<std::string> task1 = {"CUDA_VISIBLE_DEVICES=1", "SLURM_STEP_GPUS=1", "SLURM_LOCALID=1", "SLURM_GPUS_ON_NODE=2",
                                    "SLURM_JOB_ID=7", "SLURM_STEP_ID=0"};
  expect_rule(Host::kUniform, task1, "slurm-per-task-binding", Severity::kWarning);
  Diag r = diag(Host::kUniform, task1);
  for (const Finding& f : r.fs) {
    EXPECT_EQ(f.note.find("or cuda:$SLURM_LOCALID"), std::string::npos) << f.id << " suggests the call that fails: " << f.note;
    EXPECT_NE(f.id, "local-rank-exceeds-visible") << dump(r.fs);
    if (f.id != "slurm-per-task-binding") continue;
    for (const char* part : {"1 of the step's 2 GPU(s)", "SLURM_GPUS_ON_NODE=2", "cuda:0", "fails here"})
      EXPECT_NE(f.message.find(part), std::string::npos) << part << " in " << f.message;
    for (const char* part : {"torch.cuda.set_device(0)", "% torch.cuda.device_count()", "srun --gpus-per-node=2"})
      EXPECT_NE(f.note.find(part), std::string::npos) << part << " in " << f.note;
    EXPECT_EQ(f.fix, "") << "the fix is in the program or the srun line";
    ASSERT_EQ(f.also.size(), 1u) << dump(r.fs);
    EXPECT_EQ(f.also[0].id, "slurm-global-ids") << "one cause: the task's ids are its own GPU";
  }
  // Task 0 works, by luck of its rank: still the warning, saying where it fails.
  Diag t0 = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0", "SLURM_LOCALID=0", "SLURM_GPUS_ON_NODE=2"});
  bool seen = false;
  for (const Finding& f : t0.fs)
    if (f.id == "slurm-per-task-binding") {
      seen = true;
      EXPECT_NE(f.message.find("works here only because SLURM_LOCALID=0"), std::string::npos) << f.message;
    }
  EXPECT_TRUE(seen) << dump(t0.fs);
  // The round trip: the step started with --gpus-per-node=2 instead gives every task both GPUs, and
  // cuda:$SLURM_LOCALID is then its own: nothing to warn.
  Diag fixed = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,1", "SLURM_STEP_GPUS=0,1", "SLURM_LOCALID=1",
                                     "SLURM_GPUS_ON_NODE=2", "SLURM_JOB_ID=7", "SLURM_STEP_ID=0"});
  for (const Finding& f : fixed.fs) {
    EXPECT_EQ(f.severity, Severity::kInfo) << dump(fixed.fs);
    if (f.id == "slurm-global-ids") {
      EXPECT_NE(f.note.find("cuda:$SLURM_LOCALID for one GPU per task"), std::string::npos) << f.note;
    }
  }
  // gpumap bind's narrowing is bound-rank's, not Slurm's.
  Diag bound = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=1", "GPUMAP_BOUND=1", "SLURM_LOCALID=1", "SLURM_GPUS_ON_NODE=2"});
  for (const Finding& f : bound.fs) EXPECT_NE(f.id, "slurm-per-task-binding") << dump(bound.fs);
  // A value narrowed after Slurm (an export in the batch script) is not Slurm's binding: Slurm's own
  // list for the task still holds both of the node's GPUs, and the rank past them is said instead.
  Diag exported = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0", "SLURM_STEP_GPUS=0,1", "SLURM_LOCALID=1",
                                        "SLURM_GPUS_ON_NODE=2", "SLURM_JOB_ID=7", "SLURM_STEP_ID=0"});
  bool exceeds = false;
  for (const Finding& f : exported.fs) {
    EXPECT_NE(f.id, "slurm-per-task-binding") << "the export narrowed it, not Slurm: " << dump(exported.fs);
    exceeds = exceeds || f.id == "local-rank-exceeds-visible";
  }
  EXPECT_TRUE(exceeds) << dump(exported.fs);
}
// Issue 52 item 2: more ranks than GPUs under torch.distributed.launch (LOCAL_RANK, no
// LOCAL_WORLD_SIZE): the fix is the launcher's count, never gpumap bind.
TEST(Rules, MoreRanksThanGpusIsFixedByTheLaunchersCount) {
  // --nproc-per-node=4 on one node of three visible GPUs: rank 3; WORLD_SIZE on a loopback master.
  std::vector<std::string> rank3 = {"CUDA_VISIBLE_DEVICES=0,1,2", "LOCAL_RANK=3", "RANK=3", "WORLD_SIZE=4",
                                    "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500"};
  expect_rule(Host::kUniform, rank3, "world-size-exceeds-visible", Severity::kError);
  Diag r = diag(Host::kUniform, rank3);
  size_t causes = 0;
  for (const Finding& f : r.fs) {
    if (f.severity == Severity::kInfo) continue;
    ++causes;
    EXPECT_EQ(f.id, "world-size-exceeds-visible") << dump(r.fs);
    EXPECT_NE(f.message.find("WORLD_SIZE=4 with MASTER_ADDR=127.0.0.1 (one node)"), std::string::npos) << f.message;
    EXPECT_NE(f.note.find("--nproc-per-node=3"), std::string::npos) << f.note;
    EXPECT_EQ(f.note.find("start each rank under gpumap bind"), std::string::npos) << f.note;
    ASSERT_EQ(f.also.size(), 1u) << dump(r.fs);
    EXPECT_EQ(f.also[0].id, "local-rank-exceeds-visible");
  }
  EXPECT_EQ(causes, 1u) << "one cause, one finding" << dump(r.fs);
  // A master on another host: WORLD_SIZE counts every node; the rank alone says it, with the launcher's count.
  Diag multi = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,1,2", "LOCAL_RANK=3", "WORLD_SIZE=8", "MASTER_ADDR=10.0.0.5"});
  for (const Finding& f : multi.fs) {
    EXPECT_NE(f.id, "world-size-exceeds-visible") << dump(multi.fs);
    if (f.id == "local-rank-exceeds-visible") {
      EXPECT_NE(f.message.find("at least 4 ranks on this node"), std::string::npos) << f.message;
      EXPECT_NE(f.note.find("torchrun --nproc-per-node=3"), std::string::npos) << f.note;
    }
  }
  // Five ranks on this host of four GPUs: no narrowing gives each its own, the launcher's count is the fix.
  Diag five = diag(Host::kUniform, {"LOCAL_RANK=4", "LOCAL_WORLD_SIZE=5", "MASTER_ADDR=127.0.0.1"});
  bool said = false;
  for (const Finding& f : five.fs)
    if (f.id == "world-size-exceeds-visible") {
      said = true;
      EXPECT_NE(f.note.find("torchrun --nproc-per-node=4"), std::string::npos) << f.note;
      EXPECT_NE(f.note.find("`gpumap bind` cannot give more ranks than GPUs"), std::string::npos) << f.note;
      ASSERT_EQ(f.also.size(), 1u) << dump(five.fs);
      EXPECT_EQ(f.also[0].id, "local-rank-exceeds-visible");
    }
  EXPECT_TRUE(said) << dump(five.fs);
  // The round trip: --nproc-per-node=3 gives ranks 0..2 and LOCAL_WORLD_SIZE=3: nothing to warn.
  for (uint32_t i = 0; i < 3; ++i) {
    Diag ok = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,1,2", "LOCAL_RANK=" + std::to_string(i), "LOCAL_WORLD_SIZE=3",
                                    "WORLD_SIZE=3", "MASTER_ADDR=127.0.0.1"});
    for (const Finding& f : ok.fs) EXPECT_EQ(f.severity, Severity::kInfo) << i << dump(ok.fs);
  }
  EXPECT_TRUE(is_loopback_address("localhost"));
  EXPECT_TRUE(is_loopback_address("127.0.1.1"));
  EXPECT_TRUE(is_loopback_address("::1"));
  EXPECT_FALSE(is_loopback_address("127.0.0"));
  EXPECT_FALSE(is_loopback_address("10.0.0.1"));
}
TEST(Rules, SlurmGlobalIds) {
  // A note, not a warning: nothing in the environment is wrong (the fix for slurm-gpus-not-applied leads here).
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=2,3", "SLURM_STEP_GPUS=2,3"}, "slurm-global-ids", Severity::kInfo);
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,1", "SLURM_JOB_GPUS=0,1"}, "slurm-global-ids", Severity::kInfo);
}
TEST(Rules, SlurmGpusNotApplied) {
  expect_rule(Host::kUniform, {"SLURM_STEP_GPUS=2,3"}, "slurm-gpus-not-applied", Severity::kWarning);
  Diag d = diag(Host::kUniform, {"SLURM_STEP_GPUS=2,3"});
  for (const Finding& f : d.fs)
    if (f.id == "slurm-gpus-not-applied") {
      EXPECT_NE(f.message.find("cuda:0 = nvidia-smi GPU 0"), std::string::npos) << f.message;
      EXPECT_NE(f.message.find("assuming"), std::string::npos) << f.message;  // says what it assumes
      EXPECT_EQ(f.fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,3");
    }
  // Pasting the fix leaves nothing to warn about.
  Diag fixed = diag(Host::kUniform, {"SLURM_STEP_GPUS=2,3", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=2,3"});
  for (const Finding& f : fixed.fs) EXPECT_EQ(f.severity, Severity::kInfo) << dump(fixed.fs);
  // The job's ids when the step's are absent; a device cgroup that shows only the allocation is fine.
  expect_rule(Host::kUniform, {"SLURM_JOB_GPUS=1"}, "slurm-gpus-not-applied", Severity::kWarning);
  EXPECT_TRUE(diag(Host::kUniform, {"SLURM_STEP_GPUS=0-3"}).fs.empty()) << dump(diag(Host::kUniform, {"SLURM_STEP_GPUS=0-3"}).fs);
  Diag cgroup = diag(Host::kUniform, {"SLURM_STEP_GPUS=6,7,8,9"});  // ids past this host's 4 GPUs, 4 allocated
  EXPECT_TRUE(cgroup.fs.empty()) << dump(cgroup.fs);
  expect_rule(Host::kUniform, {"SLURM_STEP_GPUS=6,7"}, "slurm-gpus-not-applied", Severity::kWarning);
}
TEST(Rules, BoundRankIsANoteWithWhatToWrite) {
  // What `gpumap bind` hands rank 1 of 2 (torchrun-style): no error, and the note says cuda:0.
  std::vector<std::string> vars = {"LOCAL_RANK=1", "RANK=1", "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2",
                                   "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1", "GPUMAP_BOUND=1"};
  Diag d = diag(Host::kUniform, vars);
  ASSERT_EQ(d.fs.size(), 2u) << dump(d.fs);  // bound-rank and ordinals-are-relative
  expect_rule(Host::kUniform, vars, "bound-rank", Severity::kInfo);
  for (const Finding& f : d.fs)
    if (f.id == "bound-rank") {
      // Code to write, not a command: a note, and no fix.
      EXPECT_EQ(f.fix, "");
      EXPECT_NE(f.note.find("torch.cuda.set_device(0)"), std::string::npos) << f.note;
      EXPECT_NE(f.note.find("int(os.environ[\"LOCAL_RANK\"]) % torch.cuda.device_count()"), std::string::npos) << f.note;
    }
  // srun-style, with Slurm's ids for the whole step.
  Diag srun = diag(Host::kUniform, {"SLURM_LOCALID=1", "SLURM_PROCID=1", "SLURM_NTASKS=2", "SLURM_STEP_GPUS=0,1",
                                    "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1", "GPUMAP_BOUND=1"});
  for (const Finding& f : srun.fs) EXPECT_EQ(f.severity, Severity::kInfo) << dump(srun.fs);
  // A marker that no longer matches CUDA_VISIBLE_DEVICES proves nothing: the usual error.
  vars[6] = "GPUMAP_BOUND=0";
  expect_rule(Host::kUniform, vars, "local-rank-exceeds-visible", Severity::kError);
}
TEST(Rules, KeepVisibleBoundRankIsToldCudaZeroAndNeverItsRank) {
  // bind --keep-visible hands rank 1 of 2 every GPU, its own first.
  std::vector<std::string> vars = {"LOCAL_RANK=1", "RANK=1", "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2",
                                   "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1,2,3,0",
                                   "GPUMAP_BOUND=1,2,3,0", "GPUMAP_BOUND_OWN=1"};
  Diag d = diag(Host::kUniform, vars);
  for (const Finding& f : d.fs) EXPECT_EQ(f.severity, Severity::kInfo) << dump(d.fs);
  expect_rule(Host::kUniform, vars, "bound-rank", Severity::kInfo);
  for (const Finding& f : d.fs)
    if (f.id == "bound-rank") {
      // Code, not a shell command: a note (issue 22.1), and only set_device(0): LOCAL_RANK %
      // device_count() is another rank's GPU here.
      EXPECT_EQ(f.fix, "");
      EXPECT_EQ(f.note, "in the program: torch.cuda.set_device(0)");
      EXPECT_NE(f.message.find("GPUMAP_BOUND_OWN=1"), std::string::npos) << f.message;
      EXPECT_NE(f.message.find("never cuda:$LOCAL_RANK"), std::string::npos) << f.message;
    }
}
TEST(Rules, NvidiaVisibleDevicesOutsideContainer) {
  expect_rule(Host::kUniform, {"NVIDIA_VISIBLE_DEVICES=2"}, "nvidia-visible-devices-outside-container", Severity::kWarning);
  // Issue 43: set for a container this shell starts, `unset` is not the answer: what the container
  // will see comes first in the note.
  Diag d = diag(Host::kUniform, {"NVIDIA_VISIBLE_DEVICES=2"});
  for (const Finding& f : d.fs)
    if (f.id == "nvidia-visible-devices-outside-container") {
      EXPECT_EQ(f.note.rfind("if it is for a container, keep it: gpumap map --env NVIDIA_VISIBLE_DEVICES=2 shows what the "
                             "container will see", 0),
                0u)
          << f.note;
    }
}
TEST(Rules, ContainerRenumbered) {
  expect_rule(Host::kUniform, {"NVIDIA_VISIBLE_DEVICES=2,3"}, "container-renumbered", Severity::kInfo, true);
}
// Inside a container, a host number past its GPUs: the cut is said to be one, and the fix names
// that GPU by its number inside (host GPUs 2, 3, 5, 6 are the container's 0..3).
TEST(Rules, ContainerHostNumberIsTheContainersGpu) {
  const std::vector<std::string> vars = {"NVIDIA_VISIBLE_DEVICES=2,3,5,6", "CUDA_VISIBLE_DEVICES=5,6"};
  Diag in = diag(Host::kUniform, vars, true);
  const Finding* cut = nullptr;
  for (const Finding& f : in.fs)
    if (f.id == "list-cut-short") cut = &f;
  ASSERT_NE(cut, nullptr) << dump(in.fs);
  EXPECT_NE(cut->message.find("5 is a host number, and host GPU 5 is the container's GPU 2"), std::string::npos) << cut->message;
  // By UUID: the indices 2,3 would themselves read as host GPUs 2 and 3 (the container's 0 and 1),
  // and container-host-number would say so after the paste.
  EXPECT_EQ(cut->fix, std::string("export CUDA_VISIBLE_DEVICES=") + kUuids[2] + "," + kUuids[3]);
  for (const Finding& f : in.fs)
    if (!f.fix.empty()) { EXPECT_EQ(f.fix, cut->fix) << f.id; }  // one reading for the run
  // Outside a container, or with NVIDIA_VISIBLE_DEVICES by UUID, nothing says so.
  for (const Diag& other : {diag(Host::kUniform, vars, false),
                            diag(Host::kUniform, {"NVIDIA_VISIBLE_DEVICES=" + std::string(kUuids[0]), "CUDA_VISIBLE_DEVICES=5"}, true)})
    for (const Finding& f : other.fs) EXPECT_EQ(f.message.find("host number"), std::string::npos) << f.message;
  // An index that exists inside is taken as the container's own.
  Diag own = diag(Host::kUniform, {"NVIDIA_VISIBLE_DEVICES=2,3,5,6", "CUDA_VISIBLE_DEVICES=3"}, true);
  for (const Finding& f : own.fs) EXPECT_EQ(f.message.find("host number"), std::string::npos) << f.message;
}
TEST(Rules, MigEnabled) { expect_rule(Host::kMig, {}, "mig-enabled", Severity::kInfo); }
TEST(Rules, UuidPrefixCase) {
  Diag r = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=gpu-28554ffd"});
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=gpu-28554ffd"}, "uuid-prefix-case", Severity::kError);
  for (const Finding& f : r.fs)
    if (f.id == "uuid-prefix-case") {
      EXPECT_EQ(f.fix, "export CUDA_VISIBLE_DEVICES=GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2");
    }
}
TEST(Rules, MigWordOnGpu) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=MIG-df9ecf4c-79e5-ad77-701c-fc88c196632b"}, "mig-word-on-gpu",
              Severity::kWarning);
}
TEST(Rules, UuidTrailingIgnored) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2GPU-df9e"},
              "uuid-trailing-ignored", Severity::kWarning);
}
TEST(Rules, IndexOverflow) { expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=4294967297"}, "index-overflow", Severity::kError); }
TEST(Rules, SignedIndex) { expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=-0,1"}, "signed-index", Severity::kWarning); }
TEST(Rules, WorldSizeExceedsVisible) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,1", "LOCAL_WORLD_SIZE=4", "LOCAL_RANK=0"}, "world-size-exceeds-visible",
              Severity::kError);
}
TEST(Rules, MpsIndexEntries) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=1", "CUDA_MPS_PIPE_DIRECTORY=/tmp/mps"}, "mps-index-entries",
              Severity::kWarning);
}
TEST(Rules, OrdinalsAreRelative) {
  expect_rule(Host::kUniform, {"CUDA_VISIBLE_DEVICES=2,3"}, "ordinals-are-relative", Severity::kInfo);
}

}  // namespace
}  // namespace gpumap

namespace gpumap {
namespace {

std::string fix_of(const Diag& d, const std::string& id) {
  for (const Finding& f : d.fs)
    if (f.id == id) return f.fix;
  ADD_FAILURE() << id << " did not fire:" << dump(d.fs);
  return "";
}

// Issue 22.1: where gpumap knows the answer, the fix prints it: the GPUs the list meant.
TEST(RulesFixes, TheFixIsTheListTheEntriesMeant) {
  EXPECT_EQ(fix_of(diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,df9ecf4c-79e5-ad77-701c-fc88c196632b"}), "uuid-without-prefix"),
            "export CUDA_VISIBLE_DEVICES=" + std::string(kUuids[0]) + "," + kUuids[1]);
  EXPECT_EQ(fix_of(diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=00000000:AF:00.0"}), "pci-address-entry"),
            "export CUDA_VISIBLE_DEVICES=" + std::string(kUuids[2]));
  EXPECT_EQ(fix_of(diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=2;3"}), "entry-separator"),
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,3");
  EXPECT_EQ(fix_of(diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=1.5,0"}), "index-trailing-text"),
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1,0");
  EXPECT_EQ(fix_of(diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=4294967297"}), "index-overflow"),
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1");
  EXPECT_EQ(fix_of(diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=+1"}), "signed-index"),
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1");
  EXPECT_EQ(fix_of(diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=" + std::string(kUuids[0]) + ",1"}), "mixed-entry-kinds"),
            "export CUDA_VISIBLE_DEVICES=" + std::string(kUuids[0]) + "," + kUuids[1]);
  // The cut list keeps the entries after the cut that name a GPU.
  EXPECT_EQ(fix_of(diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,9,1"}), "list-cut-short"),
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0,1");
  // A MIG device named the legacy way is that MIG device.
  EXPECT_EQ(fix_of(diag(Host::kMig, {"CUDA_VISIBLE_DEVICES=MIG-" + std::string(kUuids[0]) + "/1/0"}), "mig-legacy-form"),
            "export CUDA_VISIBLE_DEVICES=MIG-11111111-2222-3333-4444-555555555555");
  // NVIDIA_VISIBLE_DEVICES=2 outside a container: the GPU it names, and the variable gone.
  EXPECT_EQ(fix_of(diag(Host::kUniform, {"NVIDIA_VISIBLE_DEVICES=2"}), "nvidia-visible-devices-outside-container"),
            "export CUDA_VISIBLE_DEVICES=" + std::string(kUuids[2]) + "; unset NVIDIA_VISIBLE_DEVICES  # cuda:0 = nvidia-smi GPU 2");
}

// Where the fix is the user's own command or code, a note says it and there is no fix.
TEST(RulesFixes, AdviceThatIsNotACommandIsANote) {
  for (const auto& [vars, id] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"CUDA_VISIBLE_DEVICES=2", "LOCAL_RANK=1"}, "local-rank-exceeds-visible"},
           {{"CUDA_VISIBLE_DEVICES=0,1", "LOCAL_WORLD_SIZE=4"}, "world-size-exceeds-visible"},
           {{"CUDA_VISIBLE_DEVICES=-1"}, "gpus-hidden"},
       }) {
    Diag d = diag(Host::kUniform, vars);
    bool seen = false;
    for (const Finding& f : d.fs)
      if (f.id == id) {
        seen = true;
        EXPECT_EQ(f.fix, "") << id;
        EXPECT_FALSE(f.note.empty()) << id;
      }
    EXPECT_TRUE(seen) << id << dump(d.fs);
  }
}

// Issue 22.2: an ambiguous index is said once, with both readings; the other fixes take nvidia-smi's.
TEST(RulesFixes, AnAmbiguousIndexIsSaidOnceAndTheFixesAgree) {
  // The mixed box: FASTEST_FIRST puts GPU 1 first, so `1` is nvidia-smi GPU 0 to CUDA.
  Diag cut = diag(Host::kMixed, {"CUDA_VISIBLE_DEVICES=1,9,2"});
  std::string reading = fix_of(cut, "visible-devices-without-pci-order");
  EXPECT_EQ(reading, "export CUDA_DEVICE_ORDER=PCI_BUS_ID  # cuda:0 = nvidia-smi GPU 1");
  for (const Finding& f : cut.fs) {
    if (f.id == "visible-devices-without-pci-order") {
      EXPECT_NE(f.note.find("export CUDA_VISIBLE_DEVICES=" + std::string(kUuids[0])), std::string::npos) << f.note;
    }
  }
  EXPECT_EQ(fix_of(cut, "list-cut-short"), "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1,2");
  // `1,1`: the duplicate is fixed to nvidia-smi GPU 1, as the PCI_BUS_ID reading says, not to GPU 0.
  Diag dup = diag(Host::kMixed, {"CUDA_VISIBLE_DEVICES=1,1"});
  EXPECT_EQ(fix_of(dup, "duplicate-gpu"), "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1");
  int readings = 0;
  for (const Finding& f : dup.fs) readings += f.id == "visible-devices-without-pci-order";
  EXPECT_EQ(readings, 1) << dump(dup.fs);
  // An invalid order's fix is PCI_BUS_ID: the other fixes read indices that way too.
  Diag order = diag(Host::kMixed, {"CUDA_DEVICE_ORDER=pci_bus_id", "CUDA_VISIBLE_DEVICES=1.5"});
  EXPECT_EQ(fix_of(order, "index-trailing-text"), "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1");
}

}  // namespace
}  // namespace gpumap

namespace gpumap {
namespace {

// Issue 22.4: CUDA_VISIBLE_DEVICES against the step's allocation.
TEST(RulesSlurm, AVisibleGpuOutsideTheAllocationIsAnError) {
  std::vector<std::string> vars = {"SLURM_STEP_GPUS=2,3", "SLURM_LOCALID=0", "CUDA_DEVICE_ORDER=PCI_BUS_ID",
                                   "CUDA_VISIBLE_DEVICES=0,1"};
  expect_rule(Host::kUniform, vars, "outside-allocation", Severity::kError);
  Diag d = diag(Host::kUniform, vars);
  for (const Finding& f : d.fs) {
    EXPECT_NE(f.id, "slurm-global-ids") << "the info line would say the allocated GPUs are cuda:0..:" << dump(d.fs);
    if (f.id == "outside-allocation") {
      EXPECT_NE(f.message.find("cuda:0 = nvidia-smi GPU 0"), std::string::npos) << f.message;
      // GPUs 0 and 1 are both another job's: the allocation instead, said in a comment.
      EXPECT_EQ(f.fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,3  # nvidia-smi GPU 0, nvidia-smi GPU 1 "
                       "left out: outside SLURM_STEP_GPUS=2,3; the allocation's GPUs instead");
    }
  }
  // The mixed box: `1,2` under FASTEST_FIRST puts cuda:0 on GPU 0, outside SLURM_STEP_GPUS=1,2.
  Diag mixed = diag(Host::kMixed, {"SLURM_STEP_GPUS=1,2", "CUDA_VISIBLE_DEVICES=1,2"});
  bool seen = false;
  for (const Finding& f : mixed.fs)
    if (f.id == "outside-allocation") {
      seen = true;
      EXPECT_NE(f.message.find("cuda:0 = nvidia-smi GPU 0"), std::string::npos) << f.message;
      EXPECT_EQ(f.fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1,2");
    }
  EXPECT_TRUE(seen) << dump(mixed.fs);
}

TEST(RulesSlurm, InsideTheAllocationTheInfoLineSaysWhatCudaNIs) {
  Diag d = diag(Host::kUniform, {"SLURM_STEP_GPUS=2,3", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=3,2"});
  bool seen = false;
  for (const Finding& f : d.fs) {
    EXPECT_NE(f.id, "outside-allocation") << dump(d.fs);
    if (f.id == "slurm-global-ids") {
      seen = true;
      EXPECT_NE(f.message.find("cuda:0 = nvidia-smi GPU 3"), std::string::npos) << f.message;
      EXPECT_NE(f.message.find("cuda:1 = nvidia-smi GPU 2"), std::string::npos) << f.message;
    }
  }
  EXPECT_TRUE(seen) << dump(d.fs);
  // Ids past this process's GPUs: a device cgroup holds the allocation; say what the process sees.
  Diag cgroup = diag(Host::kUniform, {"SLURM_JOB_GPUS=6,7", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0,1"});
  seen = false;
  for (const Finding& f : cgroup.fs) {
    EXPECT_NE(f.id, "outside-allocation") << dump(cgroup.fs);
    if (f.id == "slurm-global-ids") {
      seen = true;
      EXPECT_NE(f.message.find("device cgroup"), std::string::npos) << f.message;
      EXPECT_NE(f.message.find("cuda:0 = nvidia-smi GPU 0"), std::string::npos) << f.message;
    }
  }
  EXPECT_TRUE(seen) << dump(cgroup.fs);
}

}  // namespace
}  // namespace gpumap

namespace gpumap {
namespace {

// Issue 30.5: nvidia-smi GPU 0 in MIG mode with two slices, three whole GPUs after it.  CUDA's
// devices in PCI order: slice 0, slice 1, GPU 1, GPU 2, GPU 3; FASTEST_FIRST puts GPU 3 first.
const char* kSlice0 = "MIG-11111111-2222-3333-4444-555555555555";
const char* kSlice1 = "MIG-66666666-7777-8888-9999-000000000000";

Diag mig_diag(const std::vector<std::string>& vars) {
  Diag r;
  r.s = host(Host::kMig);
  r.s.gpus[0].mig_devices.push_back({kSlice1, "NVIDIA A100-SXM4-80GB MIG 3g.40gb", 2, 0, 40000, 0});
  r.env = Environment::from_strings(vars);
  std::vector<std::string> pci = pci_order(r.s);
  r.ff = {kUuids[3], kSlice0, kSlice1, kUuids[1], kUuids[2]};
  bool pci_set = r.env.get("CUDA_DEVICE_ORDER") == std::optional<std::string>("PCI_BUS_ID");
  r.m.base_order = pci_set ? pci : r.ff;
  r.m.view = predict_cuda_view(r.m.base_order, r.env.get("CUDA_DEVICE_ORDER"), r.env.get("CUDA_VISIBLE_DEVICES"));
  const std::vector<std::string>* ff = r.m.view.order.order == DeviceOrder::kFastestFirst ? &r.ff : nullptr;
  r.fs = diagnose({r.s, r.env, r.m, ff, false});
  return r;
}

const Finding* find(const Diag& d, const std::string& id) {
  for (const Finding& f : d.fs)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(RulesMig, AnIndexIsACudaDeviceInEitherOrderAndTheFixNamesUuids) {
  const std::string smi = "export CUDA_VISIBLE_DEVICES=" + std::string(kUuids[1]) + "," + kSlice0 + "," + kSlice1 +
                          "  # cuda:0 = nvidia-smi GPU 1, cuda:1 = nvidia-smi GPU 0 MIG device 0, cuda:2 = nvidia-smi "
                          "GPU 0 MIG device 1";
  for (std::string order : {"PCI_BUS_ID", "FASTEST_FIRST"}) {
    Diag d = mig_diag({"CUDA_VISIBLE_DEVICES=1,0", "CUDA_DEVICE_ORDER=" + order});
    const Finding* f = find(d, "mig-index-entries");
    ASSERT_TRUE(f) << order << dump(d.fs);
    EXPECT_EQ(f->severity, Severity::kWarning);
    EXPECT_EQ(f->fix, smi) << "nvidia-smi's reading, by UUID, as `gpumap which 1 0` gives it";
    EXPECT_NE(f->message.find("1 = nvidia-smi GPU 1, 0 = nvidia-smi GPU 0 MIG device 0 and nvidia-smi GPU 0 MIG device 1"),
              std::string::npos) << f->message;
    // CUDA's reading, kept as UUIDs, in the note.
    std::string now = d.m.view.uuids[0] + "," + d.m.view.uuids[1];
    EXPECT_NE(f->note.find("export CUDA_VISIBLE_DEVICES=" + now), std::string::npos) << f->note;
    for (const Finding& g : d.fs) {
      EXPECT_NE(g.id, "visible-devices-without-pci-order") << "no order makes an index nvidia-smi's under MIG";
      EXPECT_EQ(g.fix.find("PCI_BUS_ID"), std::string::npos) << g.id << ": " << g.fix;
    }
  }
  // Pasted, the fix leaves nothing above info.
  Diag pasted = mig_diag({"CUDA_VISIBLE_DEVICES=" + std::string(kUuids[1]) + "," + kSlice0 + "," + kSlice1});
  for (const Finding& g : pasted.fs) EXPECT_EQ(g.severity, Severity::kInfo) << g.id << dump(pasted.fs);
}

TEST(RulesMig, PciOrderWithAnIndexThatIsASliceOfAnotherGpuWarns) {
  // The case: PCI_BUS_ID and `1`: cuda:0 is slice 1 of GPU 0, not nvidia-smi GPU 1.
  Diag d = mig_diag({"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1"});
  ASSERT_EQ(d.m.view.uuids, std::vector<std::string>{kSlice1});
  EXPECT_EQ(fix_of(d, "mig-index-entries"), "export CUDA_VISIBLE_DEVICES=" + std::string(kUuids[1]) +
                                                "  # cuda:0 = nvidia-smi GPU 1");
  // `0` is a slice of nvidia-smi GPU 0: what the number says, no warning.
  EXPECT_FALSE(find(mig_diag({"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0"}), "mig-index-entries"));
  // `5` is no nvidia-smi number (4 GPUs): CUDA's numbering was meant.
  EXPECT_FALSE(find(mig_diag({"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=4"}), "mig-index-entries"));
  // A duplicate's fix reads the entry as the MIG rule does: nvidia-smi GPU 1, not slice 1.
  Diag dup = mig_diag({"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1,1"});
  EXPECT_EQ(fix_of(dup, "duplicate-gpu"), "export CUDA_VISIBLE_DEVICES=" + std::string(kUuids[1]));
}

TEST(RulesMig, UnsetVisibleDevicesGetsTheReadingNotAnOrderFix) {
  Diag d = mig_diag({});
  EXPECT_FALSE(find(d, "order-differs")) << "PCI_BUS_ID would not make cuda:N nvidia-smi's GPU N" << dump(d.fs);
  const Finding* f = find(d, "mig-enabled");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_NE(f->message.find("cuda:0 = nvidia-smi GPU 3, cuda:1 = nvidia-smi GPU 0 MIG device 0"), std::string::npos)
      << f->message;
}

// Issue 30.6: a fix only where it helps.
TEST(RulesFixes, AnOrderFixThatGivesNoGpuIsNotPrinted) {
  // `4` on four GPUs: no GPU 4 in either order.
  Diag d = diag(Host::kMixed, {"CUDA_VISIBLE_DEVICES=4"});
  for (const Finding& f : d.fs) EXPECT_NE(f.fix.rfind("export CUDA_DEVICE_ORDER=PCI_BUS_ID", 0), 0u) << f.id;
  EXPECT_FALSE(find(d, "visible-devices-without-pci-order")) << dump(d.fs);
  // The cut list's fix gives every GPU, in nvidia-smi's order so that order-differs does not follow.
  EXPECT_EQ(fix_of(d, "list-cut-short"), "unset CUDA_VISIBLE_DEVICES; export CUDA_DEVICE_ORDER=PCI_BUS_ID");
  // cuInit failing is the cut's doing, with the same fix: one finding (findings/fold.h).
  ASSERT_TRUE(find(d, "list-cut-short"));
  ASSERT_EQ(find(d, "list-cut-short")->also.size(), 1u) << dump(d.fs);
  EXPECT_EQ(find(d, "list-cut-short")->also[0].id, "cuda-init-fails");
  EXPECT_FALSE(find(d, "cuda-init-fails"));
  Diag pasted = diag(Host::kMixed, {"CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  EXPECT_TRUE(pasted.fs.empty()) << dump(pasted.fs);
  // Where PCI_BUS_ID gives a GPU (`0,4`: GPU 0), its fix stays.
  EXPECT_EQ(fix_of(diag(Host::kMixed, {"CUDA_VISIBLE_DEVICES=0,4"}), "visible-devices-without-pci-order"),
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID  # cuda:0 = nvidia-smi GPU 0");
}

TEST(RulesFixes, ACutListWithNothingLeftHasAFix) {
  Diag all = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=all"});
  EXPECT_EQ(fix_of(all, "container-keyword"), "unset CUDA_VISIBLE_DEVICES");
  EXPECT_FALSE(find(all, "list-cut-short")) << "folded into container-keyword:" << dump(all.fs);
  Diag four = diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=4"});
  EXPECT_EQ(fix_of(four, "list-cut-short"), "unset CUDA_VISIBLE_DEVICES");
  EXPECT_NE(find(four, "list-cut-short")->note.find("gpumap which"), std::string::npos);
  // Entries that name GPUs: the fix keeps them (after the cut too).
  EXPECT_EQ(fix_of(diag(Host::kUniform, {"CUDA_VISIBLE_DEVICES=0,7,1"}), "list-cut-short"),
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0,1");
}

}  // namespace
}  // namespace gpumap
