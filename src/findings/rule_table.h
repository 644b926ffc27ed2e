// The frame every rule of diagnose() shares: what a rule reads (RuleInput), how it reports
// (Report), and the id -> rule tables of the three rule files.  A new finding is one row in one
// table, its function beside it, its test and its line in docs/findings.md.
// Internal to findings/: callers use findings/rules.h.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "env/launcher.h"
#include "findings/rules.h"

namespace gpumap {

struct RuleInput {
  const DiagnosisInput& in;
  const Snapshot& s;
  const CudaView& v;
  const LauncherEnv& launch;
  bool hidden;      // CUDA_VISIBLE_DEVICES hides every GPU on purpose (gpus_hidden_on_purpose)
  bool bound;       // gpumap bind set CUDA_VISIBLE_DEVICES (bound_by_gpumap)
  std::string cvd;  // CUDA_VISIBLE_DEVICES as set; "" when unset
};

/// Adds findings under one rule's id.
class Report {
 public:
  Report(std::vector<Finding>& out, const char* id) : out_(out), id_(id) {}
  void add(Severity severity, std::string message, std::string fix, std::string note = "") {
    out_.push_back({id_, severity, std::move(message), std::move(fix), std::move(note)});
  }

 private:
  std::vector<Finding>& out_;
  const char* id_;
};

/// One rule: its id (docs/findings.md) and the check that reports under it.
struct Rule {
  const char* id;
  void (*check)(const RuleInput&, Report&);
};

const std::vector<Rule>& entry_rules();     // CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER as written (entry_rules.cc)
const std::vector<Rule>& host_rules();      // the host: its order, containers, MIG (host_rules.cc)
const std::vector<Rule>& launcher_rules();  // torchrun, MPI, Slurm, MPS, gpumap bind (launcher_rules.cc)

/// True when CUDA_VISIBLE_DEVICES is one blank or negative entry: no GPU, on purpose.
bool gpus_hidden_on_purpose(const CudaView& v);

/// What the user most likely wanted, as a UUID list: `export CUDA_VISIBLE_DEVICES=<the entries
/// that named a GPU>`; "" when none did.
std::string uuid_fix(const CudaView& v);

/// True when some CUDA_VISIBLE_DEVICES entry is an index (those count in CUDA's order).
bool has_index_entries(const CudaView& v);

}  // namespace gpumap
