#include "findings/ps_rules.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "findings/fold.h"
#include "findings/rank_rules.h"
#include "model/text.h"

namespace gpumap {
namespace {

std::string quoted(const std::optional<std::string>& v) {
  if (!v) return "unset";
  return "`" + *v + "`";
}

std::string who(const ProcessRow& r) {
  std::string s = "pid " + std::to_string(r.pid);
  if (r.user) s += " (" + *r.user + ")";
  return s;
}

std::string gpu_words(const ProcessRow& r) {
  return "nvidia-smi GPU " + std::to_string(r.nvml_index) + " (" + r.uuid + ")";
}

std::string command_or(const ProcessRow& r) {
  return r.command && !r.command->empty() ? *r.command : "<command>";
}

// The process started again with `prefix` (NAME=value ...) on its command line: one line a shell
// runs as printed (its arguments quoted), for the shell or launcher that starts it, never an
// `export` (pasted where `gpumap ps` ran, that would change the wrong shell).  "" when its
// arguments are unknown (a kernel thread, an unreadable cmdline) or one holds a control character
// (a line break in an argument: no one-line form).
std::string relaunch_line(const ProcessRow& r, const std::string& prefix) {
  if (!r.argv || r.argv->empty()) return "";
  std::string line = prefix;
  for (const std::string& a : *r.argv) {
    for (char c : a)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "";
    line += " " + shell_word(a);
  }
  return line;
}

std::string visible_words(const Snapshot& s, const CudaView& v) {
  if (v.uuids.empty()) return "no GPU";
  std::string out;
  for (size_t i = 0; i < v.uuids.size(); ++i)
    out += (i ? ", " : "") + std::string("cuda:") + std::to_string(i) + "=" + s.describe(v.uuids[i]);
  return out;
}

// One process that carries a local rank, on one GPU.
struct RankSeen {
  size_t row;
  std::string variable;
  uint32_t value;
  size_t visible;  // how many GPUs it sees
};

// A finding about one GPU, once: on the result, each concerned row referring to it.
void add_gpu_finding(PsResult& ps, const std::vector<size_t>& rows, Finding f) {
  GpuFinding g{ps.rows[rows.front()].nvml_index, ps.rows[rows.front()].uuid, {}, std::move(f)};
  for (size_t i : rows) {
    g.pids.push_back(ps.rows[i].pid);
    ps.rows[i].gpu_findings.push_back(ps.gpu_findings.size());
  }
  ps.gpu_findings.push_back(std::move(g));
}

// A GPU where a rank holds only a stray context (stray-context: it works on its own GPU): pid ->
// the nvidia-smi indices of those GPUs.  Filled by rank_gpu_findings.
using StrayGpus = std::map<uint32_t, std::set<uint32_t>>;

// pid -> its rows.
using RowsOfPid = std::map<uint32_t, std::vector<size_t>>;

// The finding `id` of one of pid's rows: the row and the finding's place there; nullopt when none.
std::optional<std::pair<size_t, size_t>> finding_of_pid(const PsResult& ps, const RowsOfPid& rows_of, uint32_t pid,
                                                        const std::string& id) {
  auto mine = rows_of.find(pid);
  if (mine == rows_of.end()) return std::nullopt;
  for (size_t i : mine->second)
    for (size_t k = 0; k < ps.rows[i].findings.size(); ++k)
      if (ps.rows[i].findings[k].id == id) return std::make_pair(i, k);
  return std::nullopt;
}

// Moves one row's finding into `cause`'s evidence (findings/fold.h: one finding per cause), said
// as `evidence` (the rank's own words would repeat the cause's paragraph once per rank); the cause
// takes the worse severity.  Only along a row of the fold table.
void fold_row_finding(PsResult& ps, std::pair<size_t, size_t> at, Finding& cause, std::string evidence) {
  std::vector<Finding>& fs = ps.rows[at.first].findings;
  Finding& f = fs[at.second];
  if (!find_fold(f.id, cause.id)) return;
  cause.severity = std::max(cause.severity, f.severity);
  cause.also.push_back({f.id, std::move(evidence)});
  fs.erase(fs.begin() + static_cast<std::ptrdiff_t>(at.second));
}

// A rank on the wrong GPU in one line: "pid 31 (alice), LOCAL_RANK=1: its own GPU, cuda:1, is
// nvidia-smi GPU 1, unused".
std::string wrong_gpu_evidence(const ProcessRow& r, uint32_t here) {
  std::string own = r.rank_nvml_index ? "nvidia-smi GPU " + std::to_string(*r.rank_nvml_index) : std::string("none");
  return who(r) + ", " + r.rank_variable + "=" + std::to_string(*r.rank) + ": works on nvidia-smi GPU " +
         std::to_string(here) + ", while its own GPU, cuda:" + std::to_string(r.bound_own ? 0 : *r.rank) + ", is " + own;
}

// Several local ranks of one job on one GPU: the program ignores its local rank (the second
// field guide's trap).  One finding per GPU (and job), listing the pids.  One finding per cause
// (findings/fold.h): a rank there that stray-context names (it works on its own GPU, only a stray
// context is here) is not one that ignores its local rank: the sharing is evidence under its
// stray-context; a rank-on-wrong-gpu of a rank that shares the GPU is evidence under this one.
void ranks_sharing_gpu(const std::map<std::pair<uint32_t, std::string>, std::vector<RankSeen>>& groups, const StrayGpus& strays,
                       PsResult& ps) {
  RowsOfPid rows_of;
  for (size_t i = 0; i < ps.rows.size(); ++i) rows_of[ps.rows[i].pid].push_back(i);
  for (const auto& [key, seen] : groups) {
    std::set<uint32_t> all_values, values;
    size_t min_visible = SIZE_MAX;
    std::vector<const RankSeen*> sharing, stray;
    for (const RankSeen& r : seen) {
      all_values.insert(r.value);
      auto st = strays.find(ps.rows[r.row].pid);
      if (st != strays.end() && st->second.count(key.first)) {
        stray.push_back(&r);
        continue;
      }
      sharing.push_back(&r);
      values.insert(r.value);
      min_visible = std::min(min_visible, r.visible);
    }
    if (all_values.size() < 2) continue;
    auto rank_words = [&](const RankSeen& r) {
      return std::to_string(ps.rows[r.row].pid) + " (" + r.variable + "=" + std::to_string(r.value) + ")";
    };
    for (const RankSeen* r : stray) {  // its stray-context is the cause: the sharing is its evidence
      auto at = finding_of_pid(ps, rows_of, ps.rows[r->row].pid, "stray-context");
      if (!at) continue;
      std::vector<std::string> with;
      for (const RankSeen& o : seen)
        if (&o != r) with.push_back(rank_words(o));
      Finding& f = ps.rows[at->first].findings[at->second];
      if (find_fold("ranks-share-gpu", f.id))
        f.also.push_back({"ranks-share-gpu", "its stray context shares nvidia-smi GPU " + std::to_string(key.first) +
                                                 " with pid" + (with.size() == 1 ? " " : "s ") + join(with, ", ")});
    }
    if (values.size() < 2) continue;
    std::vector<std::string> parts;
    std::vector<size_t> rows;
    for (const RankSeen* r : sharing) {
      parts.push_back(rank_words(*r));
      rows.push_back(r->row);
    }
    const std::string& var = sharing.front()->variable;
    std::string msg = "pids " + join(parts, ", ") + (key.second.empty() ? "" : " of one job (" + key.second + ")") +
                      " all run on nvidia-smi GPU " + std::to_string(key.first) +
                      ": the ranks share one GPU, so the program ignores its local rank (it uses cuda:0 or the "
                      "default device)";
    // The fix is in the program or in the user's launch line: a note, no command.
    std::string note =
        *values.rbegin() < min_visible
            ? "at the start of the program: torch.cuda.set_device(" + rank_in_code(var) + ") and use "
              "f\"cuda:{local_rank}\" (or start each rank with `gpumap bind -- <your command>`, then cuda:0 is its own GPU)"
            : "at least " + std::to_string(*values.rbegin() + 1) + " ranks per node (" + var + " up to " +
                  std::to_string(*values.rbegin()) + ") but each sees only " + std::to_string(min_visible) +
                  " GPU(s): start no more ranks per node than the GPUs they see (" + ranks_per_node_knob(var, min_visible) +
                  "), or give the job a GPU per rank (then `gpumap bind -- <your command>` gives each rank its own GPU "
                  "as cuda:0); no CUDA_VISIBLE_DEVICES gives more ranks than GPUs a GPU of their own";
    Finding f{"ranks-share-gpu", Severity::kWarning, msg, "", note};
    for (const RankSeen* r : sharing)  // the same cause said per rank: evidence here
      if (auto at = finding_of_pid(ps, rows_of, ps.rows[r->row].pid, "rank-on-wrong-gpu"))
        fold_row_finding(ps, *at, f, wrong_gpu_evidence(ps.rows[r->row], key.first));
    add_gpu_finding(ps, rows, std::move(f));
  }
}

// outside-visible-set's advice: where the GPU was chosen, and how to start the process on the GPUs
// its environment names (the one line only outside a container layer, whose numbers are not this
// host's, and when those GPUs exist).
std::string outside_visible_note(const Snapshot& s, const CudaView& v, const ProcessRow& r, bool in_container_layer) {
  std::string note = "choose the GPU before the process starts, in the shell or launcher (by UUID), not in the program";
  if (in_container_layer || v.error != CudaInitError::kNone || v.uuids.empty()) return note;
  std::string line = relaunch_line(r, "CUDA_VISIBLE_DEVICES=" + join(v.uuids, ","));
  if (line.empty()) line = "CUDA_VISIBLE_DEVICES=" + join(v.uuids, ",") + " " + command_or(r);
  return note + "; to run it on the GPU(s) its environment names (" + visible_words(s, v) +
         "), remove the assignment in the program, stop pid " + std::to_string(r.pid) + " and start it again as: " + line;
}

bool said(const ProcessRow& r, const std::string& id) {
  return std::any_of(r.findings.begin(), r.findings.end(), [&](const Finding& f) { return f.id == id; });
}

// The findings of a process whose environment was read: its view of the GPU it holds.
void environment_findings(const Snapshot& s, const CudaView& v, ProcessRow& r) {
  const bool order_breaks = v.error != CudaInitError::kNone && !base_order_kind(v.order);
  const bool in_container_layer = r.nvidia_visible_devices || (r.nspid && r.nspid->size() > 1);
  if (order_breaks) {
    r.findings.push_back(
        {"device-order-breaks-cuda", Severity::kError,
         who(r) + " started with CUDA_DEVICE_ORDER=" + quoted(r.cuda_device_order) + ", which makes cuInit fail (" +
             *r.cuda_error + "; only FASTEST_FIRST and PCI_BUS_ID are accepted): yet it holds " + gpu_words(r) +
             ", so it changed the variable before CUDA started or reaches the GPU without CUDA; any CUDA "
             "program it starts with this environment will fail",
         relaunch_line(r, "CUDA_DEVICE_ORDER=PCI_BUS_ID"),
         relaunch_line(r, "CUDA_DEVICE_ORDER=PCI_BUS_ID").empty()
             ? "set CUDA_DEVICE_ORDER=PCI_BUS_ID (or unset it) in the shell or launcher that starts it, then restart it: "
               "CUDA_DEVICE_ORDER=PCI_BUS_ID " + command_or(r)
             : "the fix starts it again with a valid order: stop pid " + std::to_string(r.pid) +
                   " first and run it where that process was started (or set the variable in its launcher)"});
  } else if (!r.cuda_ordinal && !said(r, "pod-gpu-outside-allocation")) {  // (that one says it for a pod)
    std::string saw = r.cuda_error ? "makes cuInit fail (" + *r.cuda_error + ")"
                                   : "does not include it (it sees " + visible_words(s, v) + ")";
    r.findings.push_back(
        {"outside-visible-set", in_container_layer ? Severity::kWarning : Severity::kError,
         who(r) + " uses " + gpu_words(r) + ", but the environment it started with, CUDA_VISIBLE_DEVICES=" +
             quoted(r.cuda_visible_devices) + ", " + saw +
             ": the variable was changed after the process started (in the program, e.g. os.environ, which "
             "/proc/PID/environ does not show) or set in another layer (a container numbers its GPUs from 0; " +
             (r.nvidia_visible_devices ? "NVIDIA_VISIBLE_DEVICES=" + quoted(r.nvidia_visible_devices) + " picks them"
                                       : std::string("NVIDIA_VISIBLE_DEVICES picks them")) + ")",
         // No fix: the GPU it holds is the one it landed on by mistake, and starting it again
         // changes nothing while the program (or the other layer) still picks the GPU.
         "", outside_visible_note(s, v, r, in_container_layer)});
  }
  if (r.cuda_ordinal && *r.cuda_ordinal != static_cast<int>(r.nvml_index)) {
    // Inside a container CUDA numbers only the container's GPUs: the mapping to show is that one.
    std::string container = r.container_gpus ? join(*r.container_gpus, ",") : "";
    r.findings.push_back(
        {"cuda-number-differs", Severity::kInfo,
         who(r) + " calls " + gpu_words(r) + " cuda:" + std::to_string(*r.cuda_ordinal) + " (CUDA_VISIBLE_DEVICES=" +
             quoted(r.cuda_visible_devices) + ", CUDA_DEVICE_ORDER=" + quoted(r.cuda_device_order) +
             (r.container_gpus ? ", inside its container of " + std::to_string(r.container_gpus->size()) + " GPU" +
                                     (r.container_gpus->size() == 1 ? "" : "s") + ", numbered from 0"
                               : std::string()) +
             "): its logs, errors and device_map say cuda:" + std::to_string(*r.cuda_ordinal) + " for nvidia-smi GPU " +
             std::to_string(r.nvml_index),
         "",
         "match GPUs by UUID (" + r.uuid + "), not by number; its whole mapping: gpumap map" +
             (r.container_gpus ? " --env NVIDIA_VISIBLE_DEVICES=" + container : std::string()) +
             (r.cuda_visible_devices ? " --env CUDA_VISIBLE_DEVICES=" + *r.cuda_visible_devices : std::string(" --unset CUDA_VISIBLE_DEVICES")) +
             (r.cuda_device_order ? " --env CUDA_DEVICE_ORDER=" + *r.cuda_device_order : std::string(" --unset CUDA_DEVICE_ORDER"))});
  }
}

// A launcher that sets CUDA_VISIBLE_DEVICES for the workers it starts, known by its command line,
// and its own knob for the GPUs (issue 52; each from its docs or source, docs/findings.md).
struct LauncherKnob {
  std::string name;  // "DeepSpeed's launcher"
  std::string knob;  // the option, with <GPUs> where the list goes
  std::string more;  // what else to know
};

std::optional<LauncherKnob> launcher_of(const std::vector<std::string>& argv) {
  // A program by its name (argv[0], or the script python runs: argv[1] or after -u) or a module.
  auto has = [&](const char* program, const char* module) {
    for (size_t i = 0; i < argv.size() && i < 3; ++i) {
      const std::string& a = argv[i];
      std::string base = a.substr(a.rfind('/') == std::string::npos ? 0 : a.rfind('/') + 1);
      if (base == program) return true;
    }
    for (const std::string& a : argv)
      if (module && a.rfind(module, 0) == 0) return true;
    return false;
  };
  if (has("deepspeed", "deepspeed.launcher"))  // `deepspeed ...`, and the per-node `python -m deepspeed.launcher.launch --world_info=...`
    return LauncherKnob{"DeepSpeed's launcher", "deepspeed --include localhost:<GPUs> (or --exclude localhost:<GPUs>)",
                        "it ignores CUDA_VISIBLE_DEVICES once --include, --exclude, --num_gpus or --num_nodes is given "
                        "(microsoft/DeepSpeed#662)"};
  if (has("accelerate", "accelerate.commands"))
    return LauncherKnob{"accelerate launch", "accelerate launch --gpu_ids <GPUs> (or gpu_ids: in its config file)",
                        "accelerate's config (`accelerate config`) keeps gpu_ids for every run"};
  if (has("raylet", nullptr))
    return LauncherKnob{"Ray", "@ray.remote(num_gpus=N) / .options(num_gpus=N) on the task or actor",
                        "Ray gives each task and actor the GPUs it asked for, by setting CUDA_VISIBLE_DEVICES"};
  if (has("vllm", "vllm.entrypoints"))
    return LauncherKnob{"vLLM", "vllm serve ... --device-ids <GPUs> (releases with vllm-project/vllm#45026), else "
                                "CUDA_VISIBLE_DEVICES on the vllm serve command itself",
                        "its tensor-parallel workers take the GPUs the engine gives them"};
  if (has("torchrun", "torch.distributed.run") || has("torchrun", "torch.distributed.launch"))
    return LauncherKnob{"torchrun", "CUDA_VISIBLE_DEVICES on the torchrun command (its workers inherit it), or "
                                    "`gpumap bind -- <your command>` under it for one GPU per rank",
                        "torchrun passes its own environment to the ranks"};
  return std::nullopt;
}

// launcher-set-visible-devices (warning when the launcher replaced a value, else info): the process started with another CUDA_VISIBLE_DEVICES than
// its parent, a launcher that sets it for its workers.  A change made in the worker's shell (an
// export, a value on its command line) is overridden there: the launcher's own knob is the fix.
void launcher_set_visible_devices(ProcessRow& r) {
  if (!r.parent_environ_known || !r.parent_argv || r.parent_cuda_visible_devices == r.cuda_visible_devices) return;
  // `gpumap bind` under the launcher set it (GPUMAP_BOUND matches): the recommended way, said by
  // the rank rules, not a launcher that overrode the user.
  if (r.bound_own) return;
  std::optional<LauncherKnob> l = launcher_of(*r.parent_argv);
  if (!l) return;
  std::string parent;
  for (const std::string& a : *r.parent_argv) parent += (parent.empty() ? "" : " ") + a;
  if (parent.size() > 120) parent = parent.substr(0, 117) + "...";
  // A value the user gave the launcher and the launcher replaced is a warning (the job is not on the
  // GPUs the user named: DeepSpeed#662, accelerate#663, verl#589); a launcher choosing where none was
  // given is information.
  const bool replaced = r.parent_cuda_visible_devices.has_value() && !r.parent_cuda_visible_devices->empty();
  r.findings.push_back(
      {"launcher-set-visible-devices", replaced ? Severity::kWarning : Severity::kInfo,
       who(r) + " started with CUDA_VISIBLE_DEVICES=" + quoted(r.cuda_visible_devices) + ", its parent pid " +
           std::to_string(*r.ppid) + " (" + parent + ") with " + quoted(r.parent_cuda_visible_devices) + ": " + l->name +
           (replaced ? " replaced the value it was given" : " set it") +
           " for its worker, so an export in the worker's shell or a value on its command line is overridden",
       "", "choose the GPUs with " + l->name + "'s own option: " + l->knob + "; " + l->more});
}

// Processes on one GPU that see every GPU (CUDA_VISIBLE_DEVICES unset) on a shared host: once
// per GPU, naming them (`rows`: theirs).
void no_visibility_shared_host(PsResult& ps, const std::vector<size_t>& rows, size_t gpu_processes) {
  std::vector<std::string> whos;
  for (size_t i : rows) whos.push_back(who(ps.rows[i]));
  const ProcessRow& r = ps.rows[rows.front()];
  const bool one = rows.size() == 1;
  add_gpu_finding(ps, rows,
                  {"no-visibility-shared-host", Severity::kInfo,
                   join(whos, ", ") + " on " + gpu_words(r) + (one ? " sees" : " see") +
                       " every GPU (CUDA_VISIBLE_DEVICES unset) on a host where " + std::to_string(gpu_processes) +
                       " processes of " + std::to_string(std::max<size_t>(ps.gpu_users, 1)) +
                       " user(s) use GPUs: " + (one ? "its" : "their") + " cuda:0 is everyone's cuda:0",
                   // For another process: the line that starts it again pinned (one process), never an export.
                   one ? relaunch_line(r, "CUDA_VISIBLE_DEVICES=" + r.uuid) : std::string(),
                   one && !relaunch_line(r, "CUDA_VISIBLE_DEVICES=" + r.uuid).empty()
                       ? "the fix starts it again on the GPU it uses now, alone: stop pid " + std::to_string(r.pid) +
                             " first and run it where that process was started (or pin it in its launcher)"
                       : "pin each job to its own GPU in the shell or launcher that starts it: CUDA_VISIBLE_DEVICES=" +
                             r.uuid + " " + (one ? command_or(r) : std::string("<command>"))});
}

// rank-on-wrong-gpu and stray-context (findings/rank_rules.h): one process's rows (GPU order) are
// one RankedProcess, and each finding goes on the row of the GPU it names first.
void rank_gpu_findings(const Snapshot& s, const std::vector<CudaView>& views, std::vector<ProcessRow>& rows, StrayGpus& strays) {
  std::map<uint32_t, std::vector<size_t>> rows_of;  // pid -> its rows with a local rank
  for (size_t i = 0; i < rows.size(); ++i) {
    const ProcessRow& r = rows[i];
    if (r.state == ProcessState::kRunning && r.view && r.rank && !r.cuda_error) rows_of[r.pid].push_back(i);
  }
  for (const auto& [pid, mine] : rows_of) {
    const ProcessRow& first = rows[mine.front()];
    const CudaView& v = views[*first.view];
    RankedProcess p;
    p.who = who(first);
    p.variable = first.rank_variable;
    p.rank = *first.rank;
    p.cuda_devices = v.uuids.size();
    p.own_index = first.rank_nvml_index;
    p.bound_own = first.bound_own;
    size_t own_ordinal = p.bound_own ? 0 : p.rank;
    if (p.own_index) p.own_gpu = s.describe(v.uuids[own_ordinal]) + " (" + v.uuids[own_ordinal] + ")";
    for (size_t i : mine) p.held.push_back({rows[i].nvml_index, gpu_words(rows[i]), rows[i].cuda_ordinal, rows[i].used_memory_mib});
    for (RankFinding& f : rank_findings(p)) {
      if (f.finding.id == "stray-context")
        for (size_t h : f.others) strays[pid].insert(p.held[h].nvml_index);
      rows[mine[f.held]].findings.push_back(std::move(f.finding));
    }
  }
}

}  // namespace

namespace {

/// Whether `device` (a GPU or MIG UUID) is GPU `gpu` or a MIG device of it.
bool on_gpu(const Snapshot& s, const std::string& device, const std::string& gpu) {
  if (device == gpu) return true;
  Snapshot::DeviceRef d = s.find_device(device);
  return d.mig && d.gpu && d.gpu->uuid == gpu;
}

/// Whether `allocated` covers device `uuid` (a GPU or a MIG device): it lists it, or lists the GPU
/// of a MIG device.
bool covers(const Snapshot& s, const std::vector<std::string>& allocated, const std::string& uuid) {
  return std::any_of(allocated.begin(), allocated.end(), [&](const std::string& a) { return on_gpu(s, uuid, a); });
}

/// "pod ml/train-0 (container main)", or its UID while the kubelet has not named it.
std::string pod_words(const PodRef& p) {
  if (p.name.empty()) return "pod " + p.uid;
  return "pod " + p.ns + "/" + p.name + (p.container.empty() ? "" : " (container " + p.container + ")");
}

/// pod-sees-unallocated-gpu: the container's NVIDIA_VISIBLE_DEVICES (or the CDI devices it names)
/// gives it GPUs the kubelet did not allocate to it: the NVIDIA runtime injects them all.
void pod_sees_unallocated(const Snapshot& s, ProcessRow& r) {
  const PodRef& p = *r.pod;
  if (!p.visible) return;
  std::vector<std::string> extra;
  for (const std::string& u : *p.visible)
    if (!covers(s, p.allocated, u)) extra.push_back(s.describe(u));
  if (extra.empty()) return;
  std::vector<std::string> given;
  for (const std::string& a : p.allocated) given.push_back(s.describe(a));
  std::string whose = p.container.empty() ? "its pod" : "its container";
  r.findings.push_back(
      {"pod-sees-unallocated-gpu", Severity::kWarning,
       who(r) + " in " + pod_words(p) + " started with NVIDIA_VISIBLE_DEVICES=" + quoted(r.nvidia_visible_devices) +
           ", which gives it " + join(extra, ", ") + ": not allocated to " + whose + " by the kubelet (" + whose +
           " was given " + (given.empty() ? std::string("no GPU") : join(given, ", ")) +
           "); the NVIDIA container runtime injects every GPU the variable names, so it can use GPUs other pods were given",
       "",
       "check the pod spec and its image: an image (CUDA base images set NVIDIA_VISIBLE_DEVICES=all) or a spec that "
       "sets the variable overrides the device plugin; on the node, the device plugin's DEVICE_LIST_STRATEGY="
       "volume-mounts (or cdi-cri) with the toolkit's accept-nvidia-visible-devices-envvar-when-unprivileged = false "
       "stops it"});
}

/// pod-gpu-outside-allocation: a process in a Kubernetes pod uses a GPU the kubelet did not give
/// its container (or, when its container is not known, its pod); and pod-sees-unallocated-gpu.
/// No fix line: what to change is in the pod spec or on the node, never in the shell gpumap runs in.
void pod_findings(const Snapshot& s, ProcessRow& r) {
  if (!r.pod || !r.pod->allocation_known) return;
  pod_sees_unallocated(s, r);
  const PodRef& p = *r.pod;
  // NVML lists a MIG device's processes on its GPU: a MIG device of it given is the GPU given.
  for (const std::string& a : p.allocated)
    if (on_gpu(s, a, r.uuid)) return;
  std::vector<std::string> given;
  for (const std::string& a : p.allocated) given.push_back(s.describe(a));
  std::string whose = p.container.empty() ? "its pod" : "its container";
  r.findings.push_back(
      {"pod-gpu-outside-allocation", Severity::kWarning,
       who(r) + " in pod " + p.ns + "/" + p.name + (p.container.empty() ? "" : " (container " + p.container + ")") +
           " uses " + gpu_words(r) + ", which the kubelet did not allocate to " + whose + " (" + whose + " was given " +
           (given.empty() ? std::string("no GPU") : join(given, ", ")) + ")",
       "",
       "check the pod spec: a privileged container, a hostPath mount of /dev or NVIDIA_VISIBLE_DEVICES set by hand "
       "sees GPUs the device plugin gave to others; `gpumap ps --json` names every process's pod and allocation"});
}

bool has(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

/// pod-gpu-shared: processes of two or more pods on one GPU that no share explains.  Explained:
/// different MIG devices of it, or the same device given to each as a time-slicing or MPS replica
/// (GPU-...::N) or through DRA claims (a claim shared by both).  Without the kubelet's answer for
/// every one of them it cannot be told: then it is said as info.
void pods_sharing_gpu(const Snapshot& s, PsResult& ps) {
  std::map<uint32_t, std::map<std::string, std::vector<size_t>>> on;  // GPU -> pod UID -> its rows
  for (size_t i = 0; i < ps.rows.size(); ++i)
    if (ps.rows[i].state == ProcessState::kRunning && ps.rows[i].pod) on[ps.rows[i].nvml_index][ps.rows[i].pod->uid].push_back(i);
  for (const auto& [gpu, pods] : on) {
    if (pods.size() < 2) continue;
    const std::string& g = ps.rows[pods.begin()->second.front()].uuid;
    struct Claim {
      const PodRef* pod;
      std::vector<std::string> devices;  // what of this GPU it was given: the GPU, or MIG devices of it
    };
    std::vector<Claim> claims;
    bool known = true;
    std::vector<size_t> rows;
    std::vector<std::string> whose, given, unnamed;
    for (const auto& [uid, mine] : pods) {
      const PodRef& p = *ps.rows[mine.front()].pod;
      const std::string name = p.name.empty() ? p.uid : p.ns + "/" + p.name;
      known = known && p.allocation_known;
      if (!p.allocation_known) unnamed.push_back(name);
      Claim c{&p, {}};
      for (const std::string& a : p.allocated)
        if (on_gpu(s, a, g)) c.devices.push_back(a);
      if (!c.devices.empty()) given.push_back(name);
      if (c.devices.empty()) c.devices.push_back(g);  // not given it: it holds the whole GPU
      claims.push_back(std::move(c));
      std::vector<std::string> pids;
      for (size_t i : mine) pids.push_back(std::to_string(ps.rows[i].pid));
      whose.push_back(name + " (pid" + (pids.size() > 1 ? "s " : " ") + join(pids, ", ") + ")");
      rows.insert(rows.end(), mine.begin(), mine.end());
    }
    bool conflict = false;
    for (size_t a = 0; a < claims.size(); ++a)
      for (size_t b = a + 1; b < claims.size(); ++b)
        for (const std::string& d1 : claims[a].devices)
          for (const std::string& d2 : claims[b].devices) {
            const PodRef& p = *claims[a].pod;
            const PodRef& q = *claims[b].pod;
            if (d1 == d2)
              conflict = conflict || !((has(p.shared, d1) && has(q.shared, d1)) || (has(p.claimed, d1) && has(q.claimed, d1)));
            else if (d1 == g || d2 == g)
              conflict = true;  // the whole GPU, and a MIG device of it
          }
    if (known && !conflict) continue;
    std::sort(rows.begin(), rows.end());
    std::string head = gpu_words(ps.rows[rows.front()]) + " is used by processes of " + std::to_string(pods.size()) +
                       " pods: " + join(whose, ", ");
    if (!known) {
      add_gpu_finding(ps, rows,
                      {"pod-gpu-shared", Severity::kInfo,
                       head + "; whether a time-slicing or MPS share explains it is unknown: the kubelet did not say "
                              "what " + join(unnamed, ", ") + (unnamed.size() == 1 ? " was" : " were") +
                              " given (its answer is missing, or does not list " + (unnamed.size() == 1 ? "it" : "them") + ")",
                       "", "`gpumap pods` on the node (with gpumap-kubelet and the pod-resources socket) says what each pod was given"});
      continue;
    }
    std::string why = given.empty()       ? "none of them was allocated it"
                      : given.size() == 1 ? "only " + given[0] + " was allocated it"
                                          : "the kubelet gave it to " + join(given, " and ") +
                                                " without a time-slicing or MPS share (replicas) that explains it";
    add_gpu_finding(ps, rows,
                    {"pod-gpu-shared", Severity::kWarning, head + "; " + why + ": they share its memory and compute",
                     "",
                     "a pod that was not given this GPU reaches it around the device plugin (pod-gpu-outside-allocation "
                     "names it: a privileged container, a hostPath /dev, NVIDIA_VISIBLE_DEVICES); two pods given the "
                     "same GPU without replicas means the device plugin handed it out twice: check its time-slicing/MPS "
                     "config and restart it; `gpumap pods` shows each pod's allocation"});
  }
}

}  // namespace

void add_ps_findings(const Snapshot& s, const PidNamespaceView& ns, PsResult& ps) {
  std::set<uint32_t> all_pids;
  for (const auto& [gpu, pids] : ps.pids_on_gpu) all_pids.insert(pids.begin(), pids.end());

  // "More than one process on this GPU": once per GPU, after the rows (it concerns each of them).
  std::map<uint32_t, std::vector<size_t>> sharing_rows;  // GPU -> its rows of live processes
  std::map<uint32_t, std::vector<size_t>> unpinned_rows;  // GPU -> its rows that see every GPU on a shared host
  auto add_shared = [&](size_t i) {
    auto on = ps.pids_on_gpu.find(ps.rows[i].nvml_index);
    if (on != ps.pids_on_gpu.end() && on->second.size() >= 2) sharing_rows[ps.rows[i].nvml_index].push_back(i);
  };

  std::map<std::pair<uint32_t, std::string>, std::vector<RankSeen>> rank_groups;  // (GPU, job) -> ranks on it
  for (size_t i = 0; i < ps.rows.size(); ++i) {
    ProcessRow& r = ps.rows[i];
    switch (r.state) {
      case ProcessState::kNotVisible:
        add_shared(i);
        r.findings.push_back({"process-not-visible", Severity::kWarning,
                              "NVML reports host pid " + std::to_string(r.pid) + " on " + gpu_words(r) +
                                  ", but this /proc shows another PID namespace (" + ns.procfs.value_or("?") +
                                  "): who runs it and its environment cannot be seen from here (a process with "
                                  "that number here, if any, is a different one)",
                              "", "run `gpumap ps` on the host, or start this container with --pid=host"});
        continue;
      case ProcessState::kExited:
        r.findings.push_back({"process-exited", Severity::kInfo,
                              "pid " + std::to_string(r.pid) + " is in NVML's list for " + gpu_words(r) +
                                  (r.zombie ? " but has exited (a zombie its parent has not reaped yet)"
                                            : " but has no /proc entry: it exited after NVML listed it"),
                              ""});
        continue;
      case ProcessState::kRunning: break;
    }
    add_shared(i);
    pod_findings(s, r);
    if (!r.environ_known || !r.view) {
      r.findings.push_back({"environ-unreadable", Severity::kInfo,
                            "the environment of " + who(r) + " cannot be read (" +
                                (r.environ_error.empty() ? proc_access_name(r.environ_access) : r.environ_error) +
                                "): which cuda:N it calls " + gpu_words(r) + " is unknown",
                            "sudo gpumap ps", "or run `gpumap ps` as that user"});
      continue;
    }
    const CudaView& v = ps.views[*r.view];
    environment_findings(s, v, r);
    launcher_set_visible_devices(r);
    if (!r.cuda_visible_devices && (all_pids.size() > 1 || ps.gpu_users > 1)) unpinned_rows[r.nvml_index].push_back(i);
    if (r.rank && !r.cuda_error)
      rank_groups[{r.nvml_index, r.job}].push_back({i, r.rank_variable, *r.rank, v.uuids.size()});
  }
  for (const auto& [gpu, rows] : sharing_rows) {
    const std::set<uint32_t>& sharing = ps.pids_on_gpu.at(gpu);
    std::string list;
    size_t shown = 0;
    for (uint32_t q : sharing) {
      if (shown++ == 8) {
        list += " and " + std::to_string(sharing.size() - 8) + " more";
        break;
      }
      list += (list.empty() ? "" : ", ") + std::to_string(q);
    }
    add_gpu_finding(ps, rows,
                    {"gpu-shared", Severity::kInfo,
                     gpu_words(ps.rows[rows.front()]) + " is used by " + std::to_string(sharing.size()) + " processes (pids " +
                         list + "): they share its memory and compute",
                     "", "give each job its own GPU before it starts: `gpumap pick` chooses a free one and prints the line"});
  }
  for (const auto& [gpu, rows] : unpinned_rows) no_visibility_shared_host(ps, rows, all_pids.size());
  StrayGpus strays;
  rank_gpu_findings(s, ps.views, ps.rows, strays);  // first: ranks-share-gpu folds by what it found
  ranks_sharing_gpu(rank_groups, strays, ps);
  pods_sharing_gpu(s, ps);
}

}  // namespace gpumap
