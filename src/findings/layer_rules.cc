// Where layers meet: a number written in an outer layer's numbering (the host's nvidia-smi index
// inside a container, Slurm's global id inside a step whose device cgroup renumbered its GPUs)
// that CUDA reads in this process's own numbering.  When every index entry reads as such a number
// and so names other GPUs, both readings are given once, and every fix of the run takes the outer
// one (rules.cc written_in_outer_numbers), the reading the seeds' users meant.
#include "findings/rule_table.h"
#include "model/text.h"
#include "resolve/cuda_rules.h"

namespace gpumap {
namespace {

/// "1 = host GPU 1 = the container's GPU 0" for each index entry, in the outer reading.
std::vector<std::string> outer_readings(const RuleInput& r, const std::string& kind, const std::string& here) {
  std::vector<std::string> out;
  for (const EntryDecision& d : r.v.entries) {
    if (d.entry.kind != CvdEntryKind::kInteger) continue;
    std::optional<uint32_t> n = outer_number_here(r, d.entry.index);
    if (n) out.push_back(d.entry.raw + " as " + kind + " is " + here + " " + std::to_string(*n));
  }
  return out;
}

/// What CUDA makes of the list now, in words.
std::string gives_now(const RuleInput& r) {
  if (r.v.error != CudaInitError::kNone) return std::string("no GPU (cuInit fails: ") + cuda_error_name(r.v.error) + ")";
  std::vector<std::string> parts;
  for (size_t i = 0; i < r.v.uuids.size(); ++i) {
    parts.push_back("cuda:" + std::to_string(i) + " = " + r.s.describe(r.v.uuids[i]));
    int here = r.s.nvml_index_of(r.v.uuids[i]);  // inside a container: the host's number too
    for (size_t k = 0; r.in.in_container && here >= 0 && k < r.host_index.size() && k < r.s.gpus.size(); ++k)
      if (r.s.gpus[k].nvml_index == static_cast<uint32_t>(here)) parts.back() += " (host GPU " + std::to_string(r.host_index[k]) + ")";
  }
  return parts.empty() ? "no GPU" : join(parts, ", ");
}

// Inside a container: `CUDA_VISIBLE_DEVICES=1` under NVIDIA_VISIBLE_DEVICES=1,3 is the container's
// GPU 1 (host GPU 3) to CUDA, and host GPU 1 (the container's GPU 0) to whoever copied it from the
// host's nvidia-smi.  Said where CUDA takes it silently; a number past the container's GPUs is
// list-cut-short's, which gives the same reading.
void container_host_number(const RuleInput& r, Report& report) {
  if (!r.in.in_container || r.v.cut_at || !written_in_outer_numbers(r)) return;
  std::string nvd = r.in.env.get("NVIDIA_VISIBLE_DEVICES").value_or("");
  std::vector<std::string> uuids_now = r.v.uuids;
  std::string note;
  if (r.v.error == CudaInitError::kNone && !uuids_now.empty())
    note = "if the numbers are this container's own, name the GPUs by UUID so no reading is left: export "
           "CUDA_VISIBLE_DEVICES=" + join(uuids_now, ",") + gives_comment(r.s, uuids_now);
  report.add(Severity::kWarning,
             "CUDA_VISIBLE_DEVICES=" + r.cvd + " inside this container counts in the container's numbering: " + gives_now(r) +
                 ". Every entry is also a host GPU number, and NVIDIA_VISIBLE_DEVICES=" + nvd +
                 " renumbered the host's GPUs from 0 (" + join(outer_readings(r, "the host's number", "the container's GPU"), ", ") +
                 "): a number copied from the host's nvidia-smi lands on another GPU here",
             meant_fix(r), note);
}

// A Slurm step under a device cgroup: its GPUs are renumbered from 0, so CUDA_VISIBLE_DEVICES=4,5
// copied from SLURM_STEP_GPUS=4,5 names GPUs that are not there (or other ones of the step).
void slurm_global_id_as_index(const RuleInput& r, Report& report) {
  if (r.in.in_container || r.bound || !written_in_outer_numbers(r)) return;
  bool cuda_fails = r.v.error != CudaInitError::kNone;
  report.add(cuda_fails ? Severity::kError : Severity::kWarning,
             "CUDA_VISIBLE_DEVICES=" + r.cvd + " uses Slurm's global GPU ids (" + r.alloc.setting() +
                 "), but a device cgroup leaves this step only its own GPUs, numbered from 0 (" +
                 join(outer_readings(r, "Slurm's global id", "GPU"), ", ") + " here): CUDA gives " + gives_now(r) +
                 ". Never use Slurm's ids as CUDA numbers",
             meant_fix(r),
             "or unset CUDA_VISIBLE_DEVICES: under the device cgroup CUDA sees only the step's GPUs (srun sets it "
             "itself when the step asks for GPUs: srun --gpus=N)");
}

}  // namespace

const std::vector<Rule>& layer_rules() {
  static const std::vector<Rule> table = {
      {"container-host-number", container_host_number},
      {"slurm-global-id-as-index", slurm_global_id_as_index},
  };
  return table;
}

}  // namespace gpumap
