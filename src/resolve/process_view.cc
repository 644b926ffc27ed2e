#include "resolve/process_view.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "env/launcher.h"
#include "env/pod_cgroup.h"
#include "model/text.h"

namespace gpumap {
namespace {

// Processes of one job share these (the innermost launcher's first); "" when none is set.
std::string job_key(const Environment& env) {
  if (auto id = env.get("TORCHELASTIC_RUN_ID")) return "torchrun " + *id;
  if (auto id = env.get("SLURM_JOB_ID")) return "slurm " + *id + "." + env.get("SLURM_STEP_ID").value_or("");
  if (auto a = env.get("MASTER_ADDR"); a && env.get("MASTER_PORT")) return "master " + *a + ":" + *env.get("MASTER_PORT");
  return "";
}

/// An id from a process's environment (a job id, a rank) as a row keeps it: ids are short, so one
/// of more than kMaxRowIdBytes (a hostile SLURM_JOB_ID of 120 kB) is cut and ends in "…", not
/// copied into every row, JSON document and label of every GPU the process uses.
std::optional<std::string> bounded_id(std::optional<std::string> v) {
  if (!v || v->size() <= kMaxRowIdBytes) return v;
  size_t cut = kMaxRowIdBytes;
  while (cut > 0 && (static_cast<unsigned char>((*v)[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  v->resize(cut);
  return *v + "\u2026";
}

// A spawn worker's command line, its file descriptor numbers left out (they differ per worker):
// "" when it is not one.
std::string spawn_command(const std::optional<std::vector<std::string>>& argv) {
  if (!argv) return "";
  bool spawn = false;
  std::string out;
  for (const std::string& a : *argv) {
    spawn = spawn || a == "--multiprocessing-fork" || a.find("spawn_main(") != std::string::npos;
    for (char c : a)
      if (c < '0' || c > '9') out += c;
    out += '\0';
  }
  return spawn ? out : "";
}

// torch.multiprocessing.spawn's workers: running rows with a readable environment, no rank, the
// same parent and spawn command line; two or more such processes are ranks in start order.
void spawn_ranks(const Snapshot& s, PsResult& res, const std::map<uint32_t, ProcProcess>& procs) {
  std::map<std::pair<uint32_t, std::string>, std::set<std::pair<int64_t, uint32_t>>> groups;  // -> (start, pid)
  for (const ProcessRow& r : res.rows)
    if (r.state == ProcessState::kRunning && r.environ_known && !r.rank && r.rank_variable.empty() && r.ppid && *r.ppid > 0)
      if (std::string cmd = spawn_command(r.argv); !cmd.empty())
        groups[{*r.ppid, cmd}].insert({procs.at(r.pid).start_ticks.value_or(0), r.pid});
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> rank_of;  // pid -> (rank, parent)
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    uint32_t i = 0;
    for (const auto& m : members) rank_of[m.second] = {i++, key.first};
  }
  for (ProcessRow& r : res.rows) {
    auto it = rank_of.find(r.pid);
    if (it == rank_of.end()) continue;
    r.rank_variable = kSpawnRank;
    r.rank = it->second.first;
    if (r.job.empty()) r.job = "spawn " + std::to_string(it->second.second);
    if (r.view) apply_cuda_view(s, *r.view, res.views[*r.view], r);
  }
}

}  // namespace

std::optional<std::pair<std::string, uint32_t>> argv_local_rank(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    for (const char* opt : {"--local_rank", "--local-rank"}) {
      const std::string o = opt;
      std::string value;
      if (argv[i] == o && i + 1 < argv.size()) value = argv[i + 1];
      else if (argv[i].rfind(o + "=", 0) == 0) value = argv[i].substr(o.size() + 1);
      else continue;
      uint32_t n;
      if (parse_small_uint(value, n)) return std::make_pair(o, n);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

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

void apply_cuda_view(const Snapshot& s, size_t view, const CudaView& v, ProcessRow& r) {
  r.view = view;
  r.cuda_error.reset();
  r.cuda_ordinal.reset();
  r.rank_nvml_index.reset();
  if (v.error != CudaInitError::kNone) r.cuda_error = cuda_error_name(v.error);
  for (size_t i = 0; i < v.uuids.size(); ++i)
    if (s.nvml_index_of(v.uuids[i]) == static_cast<int>(r.nvml_index)) {
      r.cuda_ordinal = static_cast<int>(i);
      break;
    }
  r.cuda_device_count = v.uuids.size();
  if (!r.rank) return;
  if (r.bound_own) r.bound_own = std::min<size_t>(*r.bound_own, v.uuids.size());
  size_t own_ordinal = r.bound_own ? 0 : *r.rank;
  if (own_ordinal < v.uuids.size() && (!r.bound_own || *r.bound_own > 0))
    if (int own = s.nvml_index_of(v.uuids[own_ordinal]); own >= 0) r.rank_nvml_index = static_cast<uint32_t>(own);
}

PsResult join_ps(const Snapshot& s, const PidNamespaceView& ns, const ReadProc& read, const ViewOf& view_of) {
  PsResult res;
  std::map<uint32_t, ProcProcess> procs;  // one read per process, even on several GPUs
  for (const Gpu& g : s.gpus) {
    if (!g.processes) {
      res.unlisted_gpus.push_back(g.nvml_index);
      continue;
    }
    for (const GpuProcess& p : *g.processes) {
      if (ns.joinable && !procs.count(p.pid)) procs.emplace(p.pid, read(p.pid));
      if (ns.joinable && procs.at(p.pid).access == ProcAccess::kGone) continue;  // exited: shares nothing
      res.pids_on_gpu[g.nvml_index].insert(p.pid);
    }
  }
  std::set<std::string> users;
  for (const auto& [pid, pp] : procs)
    if (pp.user) users.insert(*pp.user);
  res.gpu_users = users.size();

  std::map<std::pair<std::optional<std::string>, std::optional<std::string>>, size_t> views;  // -> res.views

  for (const Gpu& g : s.gpus) {
    if (!g.processes) continue;
    for (const GpuProcess& p : *g.processes) {
      ProcessRow r;
      r.pid = p.pid;
      r.nvml_index = g.nvml_index;
      r.uuid = g.uuid;
      r.type = p.type;
      r.used_memory_mib = p.used_memory_mib;
      r.sm_utilization = p.sm_utilization;
      r.memory_utilization = p.memory_utilization;
      if (!ns.joinable) {
        r.state = ProcessState::kNotVisible;
        res.rows.push_back(std::move(r));
        continue;
      }
      const ProcProcess& pp = procs.at(p.pid);
      r.nspid = pp.nspid;
      r.ppid = pp.ppid;
      if (pp.access == ProcAccess::kGone || pp.zombie) {
        r.state = ProcessState::kExited;
        r.zombie = pp.zombie;
        res.rows.push_back(std::move(r));
        continue;
      }
      if (pp.nspid && pp.nspid->size() > ns.self_level) r.local_pid = (*pp.nspid)[ns.self_level];
      else if (!pp.nspid && ns.self_level == 0) r.local_pid = p.pid;
      r.uid = pp.uid;
      r.start_ticks = pp.start_ticks;
      r.user = pp.user;
      r.command = pp.command;
      r.argv = pp.argv;
      r.command_truncated = pp.command_truncated;
      r.environ_truncated = pp.environ_truncated;
      r.environ_access = pp.environ_access;
      r.environ_error = pp.environ_error;
      if (pp.cgroup)
        if (std::optional<PodCgroup> pc = parse_pod_cgroup(*pp.cgroup)) {
          // Only the kubelet's cgroups name a pod; another is said, never attributed (issue 46, item 7).
          r.pod_unverified = pod_cgroup_untrusted(*pc, pp.cgroup_owned_path, pp.cgroup_owners);
          if (r.pod_unverified.empty()) {
            r.pod = PodRef{};
            r.pod->uid = pc->pod_uid;
            r.pod->qos = pc->qos;
            r.pod->container_id = pc->container_id;
            r.pod->runtime = pc->runtime;
          }
        }
      if (!pp.environ) {
        res.rows.push_back(std::move(r));
        continue;
      }
      r.environ_known = true;
      Environment env = Environment::from_strings(*pp.environ);
      r.cuda_visible_devices = env.get("CUDA_VISIBLE_DEVICES");
      r.cuda_device_order = env.get("CUDA_DEVICE_ORDER");
      r.nvidia_visible_devices = env.get("NVIDIA_VISIBLE_DEVICES");
      r.local_rank = bounded_id(env.get("LOCAL_RANK"));
      r.slurm_localid = bounded_id(env.get("SLURM_LOCALID"));
      r.slurm_job_id = bounded_id(env.get("SLURM_JOB_ID"));
      r.slurm_procid = bounded_id(env.get("SLURM_PROCID"));
      r.hostname = bounded_id(env.get("HOSTNAME"));
      auto key = std::make_pair(r.cuda_visible_devices, r.cuda_device_order);
      auto it = views.find(key);
      if (it == views.end()) {
        Environment only;
        if (key.first) only.set("CUDA_VISIBLE_DEVICES", *key.first);
        if (key.second) only.set("CUDA_DEVICE_ORDER", *key.second);
        res.views.push_back(view_of(only));
        it = views.emplace(key, res.views.size() - 1).first;
      }
      LauncherEnv launch = parse_launcher_env(env);
      r.global_rank = bounded_id(launch.global_rank);
      r.global_rank_variable = launch.global_rank_variable;
      if (const LocalRank* lr = launch.rank()) {
        r.rank_variable = lr->variable;
        r.rank = lr->value;
        // gpumap bind puts the rank's own GPUs first: its cuda:0, whatever its rank.
        if (launch.bound) r.bound_own = launch.bound_own.value_or(SIZE_MAX);
      } else if (launch.local_ranks.empty() && r.argv) {
        // torch.distributed.launch without --use-env passes the rank as an argument (issue 52).
        if (auto arg = argv_local_rank(*r.argv)) {
          r.rank_variable = arg->first;
          r.rank = arg->second;
        }
      }
      apply_cuda_view(s, it->second, res.views[it->second], r);
      r.job = job_key(env);
      // Ranks given on the command line with no launcher variable: one job per launching parent.
      if (r.job.empty() && r.rank_variable.rfind("--", 0) == 0 && r.ppid && *r.ppid > 0) r.job = "parent " + std::to_string(*r.ppid);
      res.rows.push_back(std::move(r));
    }
  }
  res.distinct_views = views.size();
  spawn_ranks(s, res, procs);
  // Each running process's parent, once per parent: a launcher that set CUDA_VISIBLE_DEVICES for its
  // workers (DeepSpeed, accelerate, vLLM) starts them with another value than its own.
  std::map<uint32_t, ProcProcess> parents;
  for (ProcessRow& r : res.rows) {
    if (r.state != ProcessState::kRunning || !r.environ_known || !r.ppid || *r.ppid <= 1) continue;
    auto it = parents.find(*r.ppid);
    if (it == parents.end()) {
      auto known = procs.find(*r.ppid);
      it = parents.emplace(*r.ppid, known != procs.end() ? known->second : read(*r.ppid)).first;
    }
    const ProcProcess& pp = it->second;
    if (pp.access != ProcAccess::kOk) continue;
    r.parent_argv = pp.argv;
    if (!pp.environ) continue;
    r.parent_environ_known = true;
    r.parent_cuda_visible_devices = Environment::from_strings(*pp.environ).get("CUDA_VISIBLE_DEVICES");
  }
  return res;
}

}  // namespace gpumap
