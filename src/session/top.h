// `gpumap top` as an operation: one frame of the live view (answer/top_answer.h), read on a
// fresh session each time so memory, load and processes are current.
#pragma once
#include <map>
#include <string>

#include "answer/top_answer.h"
#include "model/host_counters.h"
#include "model/process.h"
#include "session/kubelet_cache.h"
#include "session/session.h"

namespace gpumap {

class ProcFs;
struct ProcStat;

/// The GPU processes' /proc reads kept from one frame to the next: a process's command line and
/// environment (as at exec) do not change while it runs, so a later frame reads only its small
/// stat file and reuses them while its start time and comm (which exec changes) are the same.
struct ProcCache {
  struct Entry {
    int64_t start_ticks = -1;
    std::string comm;
    ProcProcess proc;
  };
  std::map<uint32_t, Entry> entries;  // by pid in the proc root
  /// Each process's CPU time at the last frame, for CPU % over the time between frames.
  struct CpuSample {
    int64_t start_ticks = -1;
    uint64_t cpu_ticks = 0;
    double uptime_s = 0;
  };
  std::map<uint32_t, CpuSample> cpu;  // by pid in the proc root
  KubeletCache kubelet;               // the kubelet's answer, asked again only for a new pod
  /// The machine's counters at the last frame (the host panel's CPU use is over the time since);
  /// `frames`: frames read so far (the first reads no host counters: it is drawn no later).
  std::optional<HostCounters> host_before;
  size_t frames = 0;
};

/// The ps frame of `session` with every GPU's lease, top's own cuda:N per GPU, the commands of
/// the processes' parents.  A failed read (a driver error) is a frame with `error` set: top
/// keeps showing the last good frame and says so.  Never throws an Error.
/// With `cache`, processes seen before are not read again in full (ProcCache).
TopFrame read_top_frame(Session& session, const ProcFs& proc, ProcCache* cache = nullptr);
/// The same with the session's /proc (Seams::proc_root).
TopFrame read_top_frame(Session& session, ProcCache* cache = nullptr);

/// CPU %, resident memory and run time of a process from its stat file, /proc/uptime, the clock
/// tick and the page size; `before` (its sample at the last frame, the same process) makes CPU %
/// the use since then, else the use over its life.  Pure: the caller reads the files.
ProcessHostUse host_use_of(const ProcStat& st, double uptime_s, int64_t ticks_per_s, int64_t page_bytes,
                           const ProcCache::CpuSample* before);

/// The host panel from the machine's counters now and (for CPU use) at the last frame.  Pure.
TopHostPanel host_panel_of(const HostCounters& now, const HostCounters* before);

/// Adds `frame`'s utilisation and memory use to `history` (GPUs that left are dropped).
void record_history(TopHistory& history, const TopFrame& frame);

}  // namespace gpumap
