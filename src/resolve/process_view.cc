#include "resolve/process_view.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "env/launcher.h"
#include "findings/rules.h"
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

std::string visible_words(const Snapshot& s, const CudaView& v) {
  if (v.uuids.empty()) return "no GPU";
  std::string out;
  for (size_t i = 0; i < v.uuids.size(); ++i)
    out += (i ? ", " : "") + std::string("cuda:") + std::to_string(i) + "=" + s.describe(v.uuids[i]);
  return out;
}

// Processes of one job share these (the innermost launcher's first); "" when none is set.
std::string job_key(const Environment& env) {
  if (auto id = env.get("TORCHELASTIC_RUN_ID")) return "torchrun " + *id;
  if (auto id = env.get("SLURM_JOB_ID")) return "slurm " + *id + "." + env.get("SLURM_STEP_ID").value_or("");
  if (auto a = env.get("MASTER_ADDR"); a && env.get("MASTER_PORT")) return "master " + *a + ":" + *env.get("MASTER_PORT");
  return "";
}

// One process that carries a local rank, on one GPU.
struct RankSeen {
  size_t row;
  std::string variable;
  uint32_t value;
  size_t visible;  // how many GPUs it sees
};

// Several local ranks of one job on one GPU: the program ignores its local rank (the second
// field guide's trap).  Adds a finding to each of those rows.
void ranks_sharing_gpu(const std::map<std::pair<uint32_t, std::string>, std::vector<RankSeen>>& groups,
                       std::vector<ProcessRow>& rows) {
  for (const auto& [key, seen] : groups) {
    std::set<uint32_t> values;
    size_t min_visible = SIZE_MAX;
    for (const RankSeen& r : seen) {
      values.insert(r.value);
      min_visible = std::min(min_visible, r.visible);
    }
    if (values.size() < 2) continue;
    std::vector<std::string> parts;
    for (const RankSeen& r : seen)
      parts.push_back(std::to_string(rows[r.row].pid) + " (" + r.variable + "=" + std::to_string(r.value) + ")");
    const std::string& var = seen.front().variable;
    std::string msg = "pids " + join(parts, ", ") + (key.second.empty() ? "" : " of one job (" + key.second + ")") +
                      " all run on nvidia-smi GPU " + std::to_string(key.first) +
                      ": the ranks share one GPU, so the program ignores its local rank (it uses cuda:0 or the "
                      "default device)";
    std::string fix =
        *values.rbegin() < min_visible
            ? "at the start of the program: torch.cuda.set_device(int(os.environ[\"" + var + "\"])) and use "
              "f\"cuda:{local_rank}\" (or start each rank with `gpumap bind -- CMD`, then cuda:0 is its own GPU)"
            : std::to_string(values.size()) + " ranks but each sees only " + std::to_string(min_visible) +
                  " GPU(s): start each rank with `gpumap bind -- CMD` (gives it its own GPU as cuda:0; the job needs "
                  "as many GPUs as ranks per node)";
    for (const RankSeen& r : seen) rows[r.row].findings.push_back({"ranks-share-gpu", Severity::kWarning, msg, fix});
  }
}

}  // namespace

PidNamespaceView classify_pid_namespace(const std::optional<std::string>& nvml_ns,
                                        const std::optional<std::string>& procfs_ns,
                                        const std::optional<std::string>& self_ns,
                                        const std::optional<std::vector<uint32_t>>& self_nspid) {
  PidNamespaceView v;
  v.nvml = nvml_ns;
  v.self_level = self_nspid && !self_nspid->empty() ? self_nspid->size() - 1 : 0;
  v.procfs = procfs_ns;
  // Our own namespace is the proc root's when our NSpid has a single field.
  if (!v.procfs && self_ns && self_nspid && self_nspid->size() == 1) v.procfs = self_ns;
  if (!nvml_ns) {
    v.note = "the process list's PIDs are this proc root's own (simulated host)";
  } else if (v.procfs) {
    v.joinable = *v.procfs == *nvml_ns;
    v.note = v.joinable ? "this proc root shows NVML's PID namespace " + *nvml_ns
                        : "NVML reports PIDs of namespace " + *nvml_ns + ", but this proc root shows namespace " +
                              *v.procfs + ", which cannot name them";
  } else if (v.self_level > 0) {
    v.note = "this proc root is an ancestor of gpumap's PID namespace; assumed to be NVML's (the host's)";
  } else {
    v.note = "the proc root's PID namespace could not be read; assumed to be NVML's";
  }
  return v;
}

const char* process_state_name(ProcessState s) {
  switch (s) {
    case ProcessState::kRunning: return "running";
    case ProcessState::kExited: return "exited";
    case ProcessState::kNotVisible: return "not-visible";
  }
  return "running";
}

PsResult build_ps(const Snapshot& s, const PidNamespaceView& ns, const ReadProc& read, const ViewOf& view_of) {
  PsResult res;
  std::map<uint32_t, ProcProcess> procs;  // one read per process, even on several GPUs
  std::map<uint32_t, std::set<uint32_t>> pids_on_gpu;
  std::set<uint32_t> all_pids;
  for (const Gpu& g : s.gpus) {
    if (!g.processes) {
      res.unlisted_gpus.push_back(g.nvml_index);
      continue;
    }
    for (const GpuProcess& p : *g.processes) {
      if (ns.joinable && !procs.count(p.pid)) procs.emplace(p.pid, read(p.pid));
      if (ns.joinable && procs.at(p.pid).access == ProcAccess::kGone) continue;  // exited: shares nothing
      pids_on_gpu[g.nvml_index].insert(p.pid);
      all_pids.insert(p.pid);
    }
  }
  std::set<std::string> users;
  for (const auto& [pid, pp] : procs)
    if (pp.user) users.insert(*pp.user);
  const bool shared_host = all_pids.size() > 1 || users.size() > 1;

  std::map<std::pair<std::optional<std::string>, std::optional<std::string>>, CudaView> views;
  std::map<std::pair<uint32_t, std::string>, std::vector<RankSeen>> rank_groups;  // (GPU, job) -> ranks on it

  // "More than one process on this GPU", worded once per GPU.
  std::map<uint32_t, std::string> shared_words;
  auto add_shared = [&](ProcessRow& r) {
    const std::set<uint32_t>& sharing = pids_on_gpu[r.nvml_index];
    if (sharing.size() < 2) return;
    std::string& msg = shared_words[r.nvml_index];
    if (msg.empty()) {
      std::string list;
      size_t shown = 0;
      for (uint32_t q : sharing) {
        if (shown++ == 8) {
          list += " and " + std::to_string(sharing.size() - 8) + " more";
          break;
        }
        list += (list.empty() ? "" : ", ") + std::to_string(q);
      }
      msg = gpu_words(r) + " is used by " + std::to_string(sharing.size()) + " processes (pids " + list +
            "): they share its memory and compute";
    }
    r.findings.push_back({"gpu-shared", Severity::kInfo, msg,
                          "give each job its own GPU: CUDA_VISIBLE_DEVICES=<uuid> before it starts "
                          "(`gpumap pick` chooses a free one)"});
  };

  for (const Gpu& g : s.gpus) {
    if (!g.processes) continue;
    for (const GpuProcess& p : *g.processes) {
      ProcessRow r;
      r.pid = p.pid;
      r.nvml_index = g.nvml_index;
      r.uuid = g.uuid;
      r.type = p.type;
      r.used_memory_mib = p.used_memory_mib;
      if (!ns.joinable) {
        r.state = ProcessState::kNotVisible;
        add_shared(r);
        r.findings.push_back({"process-not-visible", Severity::kWarning,
                              "NVML reports host pid " + std::to_string(p.pid) + " on " + gpu_words(r) +
                                  ", but this /proc shows another PID namespace (" + ns.procfs.value_or("?") +
                                  "): who runs it and its environment cannot be seen from here (a process with "
                                  "that number here, if any, is a different one)",
                              "run `gpumap ps` on the host, or start this container with --pid=host"});
        res.rows.push_back(std::move(r));
        continue;
      }
      const ProcProcess& pp = procs.at(p.pid);
      r.nspid = pp.nspid;
      if (pp.access == ProcAccess::kGone || pp.zombie) {
        r.state = ProcessState::kExited;
        r.findings.push_back({"process-exited", Severity::kInfo,
                              "pid " + std::to_string(p.pid) + " is in NVML's list for " + gpu_words(r) +
                                  (pp.zombie ? " but has exited (a zombie its parent has not reaped yet)"
                                             : " but has no /proc entry: it exited after NVML listed it"),
                              ""});
        res.rows.push_back(std::move(r));
        continue;
      }
      add_shared(r);
      if (pp.nspid && pp.nspid->size() > ns.self_level) r.local_pid = (*pp.nspid)[ns.self_level];
      else if (!pp.nspid && ns.self_level == 0) r.local_pid = p.pid;
      r.uid = pp.uid;
      r.user = pp.user;
      r.command = pp.command;
      r.environ_access = pp.environ_access;
      r.environ_error = pp.environ_error;
      if (!pp.environ) {
        r.findings.push_back({"environ-unreadable", Severity::kInfo,
                              "the environment of " + who(r) + " cannot be read (" +
                                  (pp.environ_error.empty() ? proc_access_name(pp.environ_access) : pp.environ_error) +
                                  "): which cuda:N it calls " + gpu_words(r) + " is unknown",
                              "run `sudo gpumap ps`, or `gpumap ps` as that user"});
        res.rows.push_back(std::move(r));
        continue;
      }
      r.environ_known = true;
      Environment env = Environment::from_strings(*pp.environ);
      r.cuda_visible_devices = env.get("CUDA_VISIBLE_DEVICES");
      r.cuda_device_order = env.get("CUDA_DEVICE_ORDER");
      r.nvidia_visible_devices = env.get("NVIDIA_VISIBLE_DEVICES");
      r.local_rank = env.get("LOCAL_RANK");
      r.slurm_localid = env.get("SLURM_LOCALID");
      r.slurm_job_id = env.get("SLURM_JOB_ID");
      r.slurm_procid = env.get("SLURM_PROCID");
      auto key = std::make_pair(r.cuda_visible_devices, r.cuda_device_order);
      auto it = views.find(key);
      if (it == views.end()) {
        Environment only;
        if (key.first) only.set("CUDA_VISIBLE_DEVICES", *key.first);
        if (key.second) only.set("CUDA_DEVICE_ORDER", *key.second);
        it = views.emplace(key, view_of(only)).first;
      }
      const CudaView& v = it->second;
      if (v.error != CudaInitError::kNone) r.cuda_error = cuda_error_name(v.error);
      for (size_t i = 0; i < v.uuids.size(); ++i)
        if (s.nvml_index_of(v.uuids[i]) == static_cast<int>(g.nvml_index)) {
          r.ordinal = static_cast<int>(i);
          break;
        }

      const bool order_breaks = v.error != CudaInitError::kNone && !base_order_kind(v.order);
      const bool in_container_layer = r.nvidia_visible_devices || (pp.nspid && pp.nspid->size() > 1);
      if (order_breaks) {
        r.findings.push_back(
            {"device-order-breaks-cuda", Severity::kError,
             who(r) + " started with CUDA_DEVICE_ORDER=" + quoted(r.cuda_device_order) + ", which makes cuInit fail (" +
                 *r.cuda_error + "; only FASTEST_FIRST and PCI_BUS_ID are accepted): yet it holds " + gpu_words(r) +
                 ", so it changed the variable before CUDA started or reaches the GPU without CUDA; any CUDA "
                 "program it starts with this environment will fail",
             "export CUDA_DEVICE_ORDER=PCI_BUS_ID (or unset it) before starting: CUDA_DEVICE_ORDER=PCI_BUS_ID " +
                 command_or(r)});
      } else if (!r.ordinal) {
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
             "set the GPU by UUID in the launcher, before the process starts: CUDA_VISIBLE_DEVICES=" + r.uuid + " " +
                 command_or(r)});
      }
      if (r.ordinal && *r.ordinal != static_cast<int>(r.nvml_index)) {
        r.findings.push_back(
            {"cuda-number-differs", Severity::kInfo,
             who(r) + " calls " + gpu_words(r) + " cuda:" + std::to_string(*r.ordinal) + " (CUDA_VISIBLE_DEVICES=" +
                 quoted(r.cuda_visible_devices) + ", CUDA_DEVICE_ORDER=" + quoted(r.cuda_device_order) +
                 "): its logs, errors and device_map say cuda:" + std::to_string(*r.ordinal) + " for nvidia-smi GPU " +
                 std::to_string(r.nvml_index),
             "match GPUs by UUID (" + r.uuid + "), not by number; its whole mapping: gpumap map" +
                 (r.cuda_visible_devices ? " --env CUDA_VISIBLE_DEVICES=" + *r.cuda_visible_devices : std::string(" --unset CUDA_VISIBLE_DEVICES")) +
                 (r.cuda_device_order ? " --env CUDA_DEVICE_ORDER=" + *r.cuda_device_order : std::string(" --unset CUDA_DEVICE_ORDER"))});
      }
      LauncherEnv launch = parse_launcher_env(env);
      if (const LocalRank* lr = launch.rank(); lr && !r.cuda_error)
        rank_groups[{g.nvml_index, job_key(env)}].push_back({res.rows.size(), lr->variable, *lr->value, v.uuids.size()});
      if (!r.cuda_visible_devices && shared_host) {
        r.findings.push_back(
            {"no-visibility-shared-host", Severity::kInfo,
             who(r) + " sees every GPU (CUDA_VISIBLE_DEVICES unset) on a host where " + std::to_string(all_pids.size()) +
                 " processes of " + std::to_string(std::max<size_t>(users.size(), 1)) +
                 " user(s) use GPUs: its cuda:0 is everyone's cuda:0",
             "pin each job to its GPU: CUDA_VISIBLE_DEVICES=" + r.uuid + " " + command_or(r)});
      }
      res.rows.push_back(std::move(r));
    }
  }
  ranks_sharing_gpu(rank_groups, res.rows);
  res.distinct_views = views.size();
  return res;
}

}  // namespace gpumap
