// Picking GPUs for this process and holding them: what `gpumap pick`, `gpumap run` and the
// library's pin share.  The pick policy itself is pure (resolve/picker.h); this adds the
// session's view, the lease files and the retry loop.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "answer/pick_answer.h"
#include "model/error.h"
#include "os/lease.h"
#include "resolve/picker.h"
#include "session/session.h"

namespace gpumap {

/// Not enough GPUs qualify (kExitUnavailable), with pick's reasons for each GPU passed over.
class UnavailableError : public Error {
 public:
  UnavailableError(const std::string& message, const std::string& hint, std::vector<Rejection> passed_over)
      : Error(kExitUnavailable, message, hint), passed_over_(std::move(passed_over)) {}
  const std::vector<Rejection>& passed_over() const { return passed_over_; }

 private:
  std::vector<Rejection> passed_over_;
};

/// Reads the snapshot with processes and topology (the session's first read), and returns the
/// UUIDs of the GPUs this process may use: its CUDA view within the session's allocation (a Slurm
/// step's GPUs; Session::allocation).  Error(kExitUnavailable) when CUDA would fail;
/// UnavailableError naming the allocation when it holds fewer than request.count of them.  NVLink is
/// read only when request.count > 1 (it needs the P2P query, ~19 ms on first use).
std::vector<std::string> pickable_uuids(Session& session, const PickRequest& request);

/// What limits the GPUs this process can see, for "can see only N" (PickRequest::visible_limit):
/// " (this Slurm step's allocation: ...)", " (inside this container: NVIDIA_VISIBLE_DEVICES=...)",
/// " (a device cgroup ...)", or "".
std::string visible_limit(Session& session);

/// UUID -> why its lease is unavailable ("leased by pid 12 (alice) since ...", "lock file ...
/// is a symbolic link"), for the GPUs among `uuids` that are leased or unsafe.
std::map<std::string, std::string> lease_blockers(const std::string& dir, const std::vector<std::string>& uuids);

/// gpumap's lease of every GPU of the session's snapshot that NVML could name, by UUID (what
/// `gpumap list` shows).  Error from read_lease for an unsafe lease folder.
std::map<std::string, LeaseState> read_gpu_leases(Session& session);

/// `gpumap pick`: the GPUs that qualify now among pickable_uuids, by the pick policy, leasing
/// nothing; their variables in `form` and as indices.  UnavailableError (what "pick: ..."
/// messages say, with the same hints as lease_gpus) when not enough qualify.
PickAnswer pick_now(Session& session, const PickRequest& request, CvdForm form);

struct LeaseOptions {
  double wait_s = 0;              // keep trying this long for GPUs to qualify (0: fail at once)
  std::string what = "run";       // the operation, first word of error messages ("run: ...")
  std::vector<std::string> argv;  // the command recorded in the lock files
  /// A descriptor that, once readable, stops the wait (os/wakeup.h): lease_gpus then throws
  /// InterruptedError, holding nothing.  -1: none.
  int interrupt_fd = -1;
  /// What to do when GPUs asked for are held by this very process (an earlier pin): in the
  /// front end's words, first in the hint.  Such GPUs are named "already leased by this process".
  std::string own_lease_fix = "this process already holds them: reuse its lease, or release it first";
};

/// How lease_blockers names a GPU this process leased itself (an earlier pin), not "pid N (user)".
inline constexpr const char* kOwnLease = "already leased by this process";

/// lease_gpus stopped waiting because LeaseOptions::interrupt_fd became readable (kExitError).
class InterruptedError : public Error {
 public:
  using Error::Error;
};

struct LeasedGpus {
  std::vector<std::string> uuids;  // the GPUs, in the order pick chose them (cuda:0 first)
  std::vector<Lease> leases;       // held until destroyed (or the process exits)
  std::string dir;                 // the lease folder
  LeaseRecord record;              // what the lock files say (rewritten with the job's group once it runs)
};

/// Picks GPUs like `gpumap pick` among the session's visible GPUs, skipping leased ones, and
/// leases all of them or none.  While waiting it retries every 50-150 ms (random, so racing
/// processes spread out) and re-reads the snapshot every second; the session's snapshot() is
/// then the last one read.  Throws UnavailableError when not enough GPUs qualify within
/// wait_s (at once when more are asked for than could ever qualify), InterruptedError when
/// options.interrupt_fd becomes readable while it waits.
LeasedGpus lease_gpus(Session& session, const PickRequest& request, const LeaseOptions& options);

}  // namespace gpumap
