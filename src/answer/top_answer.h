// `gpumap top`'s answer: one frame of the live view (session/top.h reads it; output/top_view.h
// draws it), and the history the view keeps between frames.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "answer/ps_answer.h"
#include "model/snapshot.h"

namespace gpumap {

/// What the host says about one GPU process beside the GPU's numbers, as nvitop shows them:
/// CPU use (percent of one core: over the time since the last frame, or over its life on the
/// first frame, as ps(1) does), resident host memory, how long it has run.  Each is unknown
/// (nullopt) when /proc does not say (another PID namespace, an unreadable stat file).
struct ProcessHostUse {
  std::optional<double> cpu_percent;
  std::optional<uint64_t> rss_kib;
  std::optional<int64_t> elapsed_s;
};

/// The machine itself, as the host panel shows it (nvitop's host panel): CPU use since the last
/// read (the whole machine and each core), memory, swap, load and uptime, from /proc.  Unknown
/// (nullopt, empty) where /proc did not say; CPU use needs two reads.
struct TopHostPanel {
  std::optional<double> cpu_percent;  // all cores, 0..100
  std::vector<double> core_percent;   // each core, 0..100
  std::optional<uint64_t> mem_total_kib, mem_used_kib, swap_total_kib, swap_used_kib;
  std::optional<double> load1, load5, load15, uptime_s;
  bool known() const { return mem_total_kib || load1 || cpu_percent; }
};

/// One read of the machine: the GPUs, every GPU process with its own cuda:N (the `ps` frame, with
/// the lease of every GPU), what cuda:N each GPU is in the shell `top` was started from, and the
/// parents of the processes (the tree view).
struct TopFrame {
  std::shared_ptr<const Snapshot> snapshot;  // null when the read failed (`error` says why)
  PsFrame ps;
  std::map<std::string, int> cuda_here;      // UUID -> N: cuda:N in top's own environment
  std::string cuda_here_error;               // top's own CUDA_VISIBLE_DEVICES breaks CUDA: why
  std::map<uint32_t, std::string> parents;   // ppid -> its command, for parents that are not GPU processes
  std::map<uint32_t, ProcessHostUse> host_use;  // by pid in top's /proc (ProcessRow::local_pid)
  TopHostPanel host;                         // the machine (not read on the first frame: it starts no slower)
  std::string error;                         // the read failed: the error's text
  int64_t read_unix_ms = 0;                  // when the read finished
  double read_ms = 0;                        // how long it took
};

/// Utilisation and memory samples per GPU (UUID), one per frame read, oldest first, percent.
struct TopHistory {
  static constexpr size_t kSamples = 600;  // 10 minutes at a 1 s refresh
  struct Series {
    std::deque<uint8_t> util, mem;
  };
  std::map<std::string, Series> gpus;
  /// Each GPU process over the session (top's Enter screen): its GPU memory (MiB, summed over its
  /// GPUs), SM % (its largest), CPU % and RSS (MiB); NaN where a read did not say.  By NVML's pid;
  /// a process that left the GPUs is dropped.
  static constexpr size_t kProcessSamples = 300;
  struct ProcessSeries {
    std::deque<float> gpu_memory_mib, sm_percent, cpu_percent, rss_mib;
  };
  std::map<uint32_t, ProcessSeries> processes;
};

}  // namespace gpumap
