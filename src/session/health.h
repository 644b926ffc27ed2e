// `gpumap health` as an operation: the kernel log's Xid lines (/dev/kmsg, or a simulated host's
// `kernel_log`) and NVML's fault counters per GPU, each fault tied to the processes it hit as
// `ps` sees them (user, Slurm job and rank, torchrun rank, pod, own cuda:N): the pid the kernel
// line names (a process that has exited says so), else the processes on that GPU.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "answer/health_answer.h"
#include "session/session.h"

namespace gpumap {

/// The answer for `req` on the session's host.  Throws Error(kExitNoDriver) when NVML cannot be
/// read; a kernel log that cannot be read is part of the answer (KernelLogState::problem).
HealthAnswer read_health(Session& session, const HealthRequest& req);

/// doctor's `gpu-faulted` (docs/findings.md): one finding per GPU of `uuids` (the environment's CUDA
/// view, cuda:0 first; a MIG device counts as its GPU) that is lost, has uncorrectable ECC errors or
/// a failed row remapping, logged an Xid that points at the card (not at a program) in the last
/// hour (errors), or is slowed down by the hardware now (a warning).  Nothing when NVML cannot be read.
std::vector<Finding> gpu_fault_findings(Session& session, const std::vector<std::string>& uuids);

/// --since's value: "90" or "90s", "10m", "2h", "1d"; Error(kExitUsage) naming it otherwise.
double parse_since(const std::string& text);

}  // namespace gpumap
