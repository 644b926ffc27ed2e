#include "session/lease_gpus.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "model/text.h"
#include "os/wakeup.h"

namespace gpumap {

std::vector<std::string> pickable_uuids(Session& session, const PickRequest& request) {
  const Snapshot& s = session.snapshot(ReadOptions{.processes = true, .topology = true, .nvlink = request.count > 1});
  Mapping m = session.mapping();
  if (m.view.error != CudaInitError::kNone) {
    // Only name the variables that are set: advice to unset a variable that is not set helps nobody.
    std::vector<std::string> set;
    for (const char* v : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"})
      if (session.env().get(v)) set.push_back(v);
    throw Error(kExitUnavailable, "no GPU is usable: CUDA would fail to initialise here (" +
                                      std::string(cuda_error_name(m.view.error)) + ": " + m.view.error_reason + ")",
                set.empty() ? std::string("run `gpumap list` to see the GPUs the driver knows (there may be none)")
                            : "run `gpumap map` for the details; fix or unset " + join(set, " / "));
  }
  // Only GPUs of the allocation: without a device cgroup nothing stops a step from opening another
  // job's GPU, and CUDA_VISIBLE_DEVICES unset (or naming more) shows every GPU of the node.
  Allocation alloc = session.allocation();
  std::vector<std::string> out;  // NVML's names: GPUs, and MIG devices (pickable only when included by name)
  size_t outside = 0;
  for (const std::string& u : m.view.uuids) {
    if (!s.find_device(u).gpu) continue;
    if (alloc.allows(s, u)) out.push_back(nvml_uuid_for(s, u));
    else ++outside;
  }
  if (alloc.restricts && request.count > 0 && static_cast<size_t>(request.count) > out.size()) {
    bool narrowed = session.env().get("CUDA_VISIBLE_DEVICES").has_value() && out.size() < alloc.uuids.size();
    throw UnavailableError(std::to_string(request.count) + " GPU(s) asked, but this Slurm " +
                               (alloc.variable == "SLURM_STEP_GPUS" ? "step" : "job") + "'s allocation " + alloc.words(s) +
                               " holds " + std::to_string(alloc.uuids.size()) +
                               (narrowed ? " and CUDA_VISIBLE_DEVICES leaves " + std::to_string(out.size()) + " of them" : "") +
                               (outside ? "; the other GPU(s) CUDA would show belong to other jobs" : ""),
                           "ask for at most " + std::to_string(out.size()) + " (" + request.names.gpus +
                               "), or ask Slurm for more GPUs (srun --gpus=N, sbatch --gpus=N)",
                           {});
  }
  return out;
}

std::string visible_limit(Session& session) {
  const Snapshot& s = session.snapshot();
  Allocation alloc = session.allocation();
  if (!alloc.variable.empty())
    return std::string(" (this Slurm ") + (alloc.variable == "SLURM_STEP_GPUS" ? "step" : "job") + "'s allocation: " +
           alloc.words(s) + ")";
  if (session.in_container()) {
    auto nvd = session.env().get("NVIDIA_VISIBLE_DEVICES");
    return " (inside this container" + (nvd ? ": NVIDIA_VISIBLE_DEVICES=" + *nvd : std::string()) + ")";
  }
  if (alloc.node_gpus_hidden)
    return " (a device cgroup or container lets this process open only " + std::to_string(s.gpus.size()) +
           " of this node's GPUs)";
  return "";
}

std::map<std::string, std::string> lease_blockers(const std::string& dir, const std::vector<std::string>& uuids) {
  std::map<std::string, std::string> out;
  for (const std::string& u : uuids) {
    LeaseState st = read_lease(dir, u);
    if (st.refused.empty() && st.holder && st.holder->pid == getpid())
      out[u] = kOwnLease;  // an earlier pin of this process (issue 43: it was "leased by pid N (root)")
    else if (std::string words = lease_summary(st); !words.empty())
      out[u] = st.refused.empty() && st.holder ? "leased by " + words : words;
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

/// Takes every lease in `uuids` or none: on a lost race the ones taken are released.  A lock
/// file found unusable is added to `refused` (UUID -> why) so it is not picked again.
std::vector<Lease> lease_all(const std::string& dir, const std::vector<std::string>& uuids, const LeaseRecord& rec,
                             std::map<std::string, std::string>& refused) {
  std::vector<Lease> held;
  for (const std::string& u : uuids) {
    LeaseAttempt a = try_lease(dir, u, rec);
    if (!a.refused.empty()) refused[u] = "lock file unusable: " + a.refused;
    if (!a.lease) return {};
    held.push_back(std::move(*a.lease));
  }
  return held;
}

/// Not enough GPUs qualify: what was asked and what blocked, with the fix in the caller's
/// words (PickRequest::names).
UnavailableError unavailable(const PickResult& r, const PickRequest& req, const std::string& what, double wait_s) {
  if (r.impossible)
    return UnavailableError(what + ": " + r.failure, "ask for fewer GPUs (" + req.names.gpus + "), or relax " + req.names.limits,
                            r.rejected);
  char waited[48] = "";
  if (wait_s > 0) std::snprintf(waited, sizeof waited, " (waited %g s)", wait_s);
  return UnavailableError(what + ": " + r.failure + waited,
                          wait_s > 0 ? "wait longer (" + req.names.wait + "), or relax the limits"
                                     : "add " + req.names.wait + " to wait for them, relax the limits, or " + req.names.allow_busy,
                          r.rejected);
}

}  // namespace

PickAnswer pick_now(Session& session, const PickRequest& request, CvdForm form) {
  std::vector<std::string> visible = pickable_uuids(session, request);
  PickRequest req = request;
  req.visible_limit = visible_limit(session);
  const Snapshot& s = session.snapshot();
  PickResult r = pick_gpus(s, visible, lease_blockers(session.lease_dir(), visible), req);
  if (r.uuids.empty()) throw unavailable(r, req, "pick", 0);
  PickAnswer a;
  a.snapshot = &s;
  a.uuids = r.uuids;
  a.notes = r.notes;
  a.passed_over = r.rejected;
  a.visibility = launch_visibility(s, r.uuids, form);
  a.by_index = launch_visibility(s, r.uuids, CvdForm::kIndex);
  return a;
}

std::map<std::string, LeaseState> read_gpu_leases(Session& session) {
  std::map<std::string, LeaseState> out;
  std::string dir = session.lease_dir();
  for (const Gpu& g : session.snapshot().gpus)
    if (!g.uuid.empty()) out.emplace(g.uuid, read_lease(dir, g.uuid));
  return out;
}

LeasedGpus lease_gpus(Session& session, const PickRequest& request, const LeaseOptions& opt) {
  std::vector<std::string> visible = pickable_uuids(session, request);
  PickRequest req = request;
  req.visible_limit = visible_limit(session);
  const Snapshot* s = &session.snapshot();
  LeasedGpus out;
  out.dir = session.lease_dir();
  prepare_lease_dir(out.dir);
  LeaseRecord rec = current_lease_record(opt.argv);
  out.record = rec;

  auto start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.wait_s));
  auto last_read = start;
  std::mt19937 rng(static_cast<unsigned>(getpid()));
  int lost_races = 0;
  std::map<std::string, std::string> refused;  // lock files try_lease would not use
  for (;;) {
    std::map<std::string, std::string> blockers = lease_blockers(out.dir, visible);
    blockers.insert(refused.begin(), refused.end());
    PickResult r = pick_gpus(*s, visible, blockers, req);
    if (!r.uuids.empty()) {
      out.leases = lease_all(out.dir, r.uuids, rec, refused);
      if (!out.leases.empty()) {
        out.uuids = r.uuids;
        out.record = rec;
        return out;
      }
      // Another gpumap got there first (or a lock file proved unusable): look again at once.
      if (++lost_races < 20) continue;
      if (Clock::now() >= deadline)
        throw UnavailableError(opt.what + ": other gpumap processes kept taking the GPUs picked (" + join(r.uuids, ",") + ")",
                               "add or raise " + req.names.wait, r.rejected);
    } else {
      if (r.impossible || Clock::now() >= deadline) {
        UnavailableError e = unavailable(r, req, opt.what, opt.wait_s);
        // GPUs this process holds itself (an earlier pin; another thread may still release them
        // during a wait): what to do about them comes first.
        if (std::any_of(blockers.begin(), blockers.end(), [](const auto& b) { return b.second == kOwnLease; }))
          throw UnavailableError(e.what(), opt.own_lease_fix + "; or " + e.hint(), e.passed_over());
        throw e;
      }
    }
    lost_races = 0;
    if (wait_for_input(opt.interrupt_fd, static_cast<int>(50 + rng() % 100)))
      throw InterruptedError(kExitError, opt.what + ": interrupted while waiting for GPUs (nothing was leased)",
                             "the caller asked to stop (a signal such as Ctrl-C)");
    if (Clock::now() - last_read > std::chrono::seconds(1)) {
      s = &session.reread(ReadOptions{.processes = true, .topology = true, .nvlink = req.count > 1});
      last_read = Clock::now();
    }
  }
}

}  // namespace gpumap
