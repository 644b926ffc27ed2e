// The calling process, observed: what CUDA really uses here (live, once CUDA runs) against what
// its environment says, where it holds GPU memory, and where its model sits.  The library's
// devices(), verify(), locate() and diagnose() all start from process_cuda().
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "answer/doctor_answer.h"
#include "answer/self_answer.h"  // Diagnosis
#include "findings/process_rules.h"
#include "model/cuda_devices.h"
#include "session/devices.h"
#include "session/session.h"

namespace gpumap {

/// What the library reads about its calling process.
struct SelfProcess {
  std::optional<CudaProbe> live;      // CUDA running here (driver/live_cuda.h); nullopt: not started
  std::optional<Environment> start;   // /proc/self/environ: the environment at exec; nullopt: unreadable
  std::vector<std::string> command;   // /proc/self/cmdline
  uint32_t pid = 0;                   // getpid()
};

/// The OS and driver reads of SelfProcess for this process.  Never calls cuInit, never loads
/// libcuda; `read_live` false skips the driver (a caller that knows CUDA cannot run here).  The
/// live queries obey `live_timeout_s` (the session's driver timeout, 0: none) and throw as
/// read_live_cuda does (a hung or failed query is an error, never a shorter device list).
SelfProcess read_self_process(bool read_live, double live_timeout_s);

/// Whether CUDA already runs in this process (driver/live_cuda.h: never loads libcuda, never
/// calls cuInit): after it, CUDA_VISIBLE_DEVICES set here changes nothing.  Throws
/// Error(kExitNoDriver) when the driver does not answer within `timeout_s`.
bool cuda_started_here(double timeout_s);

/// cuda:N as they are in this process: `self.live` when CUDA runs (with the prediction from
/// s.env() beside it, for set-too-late), else predicted from s.env() (Session::mapping).
ProcessCudaFacts process_cuda(Session& s, const SelfProcess& self);

/// The findings that judge process_cuda's answer: set-too-late when live, else the environment's
/// own rules (findings/rules.h, as `gpumap doctor` gives them).
std::vector<Finding> process_cuda_findings(Session& s, const ProcessCudaFacts& f);

/// When two or more findings of `env` have different fixes: the one line that fixes them all at once
/// (`unset A; export B=1 C=2`), made of their own fixes (findings/fix_line.h), so by the same
/// allowed-set logic, and checked here the same way they are: applied to `env`, the findings left
/// have no warning or error with a fix and none that `fs` did not have (rounds of the new findings'
/// fixes are applied while that is not yet so, three at most).  "" when there is nothing to combine
/// or no line does it (a fix that runs a command, fixes that do not settle).
std::string combined_fix(Session& s, const Environment& env, const std::vector<Finding>& fs);

/// `gpumap doctor`: every rule against `env` (its mapping predicted, or probed with `probe`), the
/// reminders true of any list (ordinals-are-relative) only when `verbose`, cache-unusable when the
/// order cache cannot serve, the combined fix, and the cuda:N numbering when it is not nvidia-smi's
/// (resolve/renumbering.h, with the outer layer's numbers from which.h's gpu_place).
DoctorAnswer doctor(Session& s, const Environment& env, bool probe, bool verbose);

/// Reads the processes (a fresh snapshot), joins this process by PID as `gpumap ps` does
/// (PID-namespace aware) and judges everything.  `program` comes from the caller (the Python
/// package reads it from a model, duck-typed).
Diagnosis diagnose_self(Session& s, const SelfProcess& self, ProgramFacts program);

}  // namespace gpumap
