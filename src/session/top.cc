#include "session/top.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>

#include "model/error.h"
#include "os/host_stats.h"
#include "os/proc.h"
#include "session/ps.h"

namespace gpumap {

namespace {

int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}


/// Reads `pid` through `cache`: its stat file, and the full read only when it is new or exec'd.
/// The stat file read is kept in `stats` (CPU time and memory, without a second read).
ProcProcess cached_read(const ProcFs& proc, ProcCache& cache, uint32_t pid, std::map<uint32_t, ProcStat>& stats) {
  std::optional<ProcStat> st = proc.stat(pid);
  if (!st) return proc.read(pid);  // gone, or unreadable: the full read says which
  stats[pid] = *st;
  auto it = cache.entries.find(pid);
  if (it != cache.entries.end() && it->second.start_ticks == st->start_ticks && it->second.comm == st->comm) {
    ProcProcess p = it->second.proc;
    p.zombie = st->state == 'Z' || st->state == 'X';
    p.ppid = st->ppid;
    return p;
  }
  ProcProcess p = proc.read(pid);
  if (p.access == ProcAccess::kOk && !p.zombie) cache.entries[pid] = {st->start_ticks, st->comm, p};
  return p;
}

/// Fills frame.host_use for every GPU process in this PID namespace; keeps their CPU samples in
/// `cache` for the next frame.
void read_host_use(TopFrame& f, const ProcFs& proc, std::map<uint32_t, ProcStat>& stats, ProcCache* cache) {
  std::optional<double> uptime = proc.uptime_s();
  if (!uptime) return;
  std::map<uint32_t, ProcCache::CpuSample> next;
  for (const ProcessRow& r : f.ps.result.rows) {
    if (!r.local_pid || f.host_use.count(*r.local_pid)) continue;
    uint32_t pid = *r.local_pid;
    auto it = stats.find(pid);
    if (it == stats.end()) {
      std::optional<ProcStat> st = proc.stat(pid);
      if (!st) continue;
      it = stats.emplace(pid, *st).first;
    }
    const ProcStat& st = it->second;
    const ProcCache::CpuSample* before = nullptr;
    if (cache)
      if (auto b = cache->cpu.find(pid); b != cache->cpu.end()) before = &b->second;
    f.host_use[pid] = host_use_of(st, *uptime, clock_ticks_per_second(), page_size_bytes(), before);
    next[pid] = {st.start_ticks, st.cpu_ticks, *uptime};
  }
  if (cache) cache->cpu = std::move(next);  // processes that left the GPUs are forgotten
}

}  // namespace

ProcessHostUse host_use_of(const ProcStat& st, double uptime_s, int64_t ticks_per_s, int64_t page_bytes,
                           const ProcCache::CpuSample* before) {
  ProcessHostUse u;
  double hz = static_cast<double>(ticks_per_s);
  double started = static_cast<double>(st.start_ticks) / hz;
  if (st.start_ticks >= 0 && uptime_s >= started) u.elapsed_s = static_cast<int64_t>(uptime_s - started);
  u.rss_kib = st.rss_pages * static_cast<uint64_t>(page_bytes) / 1024;
  if (before && before->start_ticks == st.start_ticks && uptime_s > before->uptime_s && st.cpu_ticks >= before->cpu_ticks)
    u.cpu_percent = static_cast<double>(st.cpu_ticks - before->cpu_ticks) / hz / (uptime_s - before->uptime_s) * 100;
  else if (st.start_ticks >= 0 && uptime_s > started)
    u.cpu_percent = static_cast<double>(st.cpu_ticks) / hz / (uptime_s - started) * 100;
  return u;
}

TopFrame read_top_frame(Session& session, const ProcFs& proc, ProcCache* cache) {
  TopFrame f;
  auto start = std::chrono::steady_clock::now();
  try {
    ReadProc read;
    std::map<uint32_t, ProcStat> stats;
    if (cache) read = [&](uint32_t pid) { return cached_read(proc, *cache, pid, stats); };
    ReadOptions sensors = ps_read_options();  // the session's first snapshot: what a monitor shows too
    sensors.sensors = true;
    session.snapshot(sensors);
    f.ps = read_ps_frame(session, proc, LeasesOf::kEveryGpu, {}, read, nullptr, cache ? &cache->kubelet : nullptr);
    if (cache) {  // forget the processes that left the GPUs
      std::set<uint32_t> listed;
      for (const ProcessRow& r : f.ps.result.rows) listed.insert(r.pid);
      for (auto it = cache->entries.begin(); it != cache->entries.end();)
        it = listed.count(it->first) ? std::next(it) : cache->entries.erase(it);
    }
    read_host_use(f, proc, stats, cache);
    if (cache && cache->frames++ > 0) {  // the host panel: from the second frame on
      HostCounters now = read_host_counters(proc.root());
      f.host = host_panel_of(now, cache->host_before ? &*cache->host_before : nullptr);
      cache->host_before = std::move(now);
    }
    f.snapshot = std::make_shared<const Snapshot>(session.snapshot());
    Mapping here = session.mapping();
    if (here.view.error != CudaInitError::kNone) f.cuda_here_error = here.view.error_reason;
    for (size_t n = 0; n < here.view.uuids.size(); ++n) f.cuda_here.emplace(here.view.uuids[n], static_cast<int>(n));
    std::set<uint32_t> pids;
    for (const ProcessRow& r : f.ps.result.rows)
      if (r.local_pid) pids.insert(*r.local_pid);
    for (const ProcessRow& r : f.ps.result.rows) {
      if (!r.ppid || *r.ppid <= 1 || pids.count(*r.ppid) || f.parents.count(*r.ppid)) continue;
      ProcProcess p = proc.read(*r.ppid, false);
      f.parents[*r.ppid] = p.command.value_or("?");
    }
  } catch (const Error& e) {
    f = TopFrame{};
    f.error = e.what();
  }
  f.read_unix_ms = now_unix_ms();
  f.read_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return f;
}

TopFrame read_top_frame(Session& session, ProcCache* cache) {
  return read_top_frame(session, ProcFs(session.seams().proc_root), cache);
}

TopHostPanel host_panel_of(const HostCounters& now, const HostCounters* before) {
  TopHostPanel p;
  auto percent = [](const HostCounters::Cpu& a, const HostCounters::Cpu& b) -> std::optional<double> {
    if (b.total <= a.total || b.busy < a.busy) return std::nullopt;
    return std::min(100.0, static_cast<double>(b.busy - a.busy) * 100 / static_cast<double>(b.total - a.total));
  };
  if (before && before->cpu && now.cpu) p.cpu_percent = percent(*before->cpu, *now.cpu);
  if (before && before->cores.size() == now.cores.size())
    for (size_t i = 0; i < now.cores.size(); ++i) p.core_percent.push_back(percent(before->cores[i], now.cores[i]).value_or(0));
  p.mem_total_kib = now.mem_total_kib;
  if (now.mem_total_kib && now.mem_available_kib && *now.mem_available_kib <= *now.mem_total_kib)
    p.mem_used_kib = *now.mem_total_kib - *now.mem_available_kib;
  p.swap_total_kib = now.swap_total_kib;
  if (now.swap_total_kib && now.swap_free_kib && *now.swap_free_kib <= *now.swap_total_kib)
    p.swap_used_kib = *now.swap_total_kib - *now.swap_free_kib;
  p.load1 = now.load1;
  p.load5 = now.load5;
  p.load15 = now.load15;
  p.uptime_s = now.uptime_s;
  return p;
}

void record_history(TopHistory& history, const TopFrame& frame) {
  if (!frame.snapshot) return;  // a failed read adds no sample
  std::map<std::string, TopHistory::Series> next;
  for (const Gpu& g : frame.snapshot->gpus) {
    TopHistory::Series& s = next[g.uuid];
    if (auto it = history.gpus.find(g.uuid); it != history.gpus.end()) s = std::move(it->second);
    auto push = [](std::deque<uint8_t>& d, std::optional<uint32_t> v) {
      d.push_back(static_cast<uint8_t>(v ? std::min<uint32_t>(*v, 100) : 255));  // 255: not known
      if (d.size() > TopHistory::kSamples) d.pop_front();
    };
    push(s.util, g.utilization_gpu);
    std::optional<uint32_t> mem;
    if (g.memory_used_mib && g.memory_total_mib && *g.memory_total_mib)
      mem = static_cast<uint32_t>(*g.memory_used_mib * 100 / *g.memory_total_mib);
    push(s.mem, mem);
  }
  history.gpus = std::move(next);
  // Each process: its numbers summed (memory) or the largest (SM %) over its GPUs.
  struct Now {
    std::optional<double> mem, sm, cpu, rss;
  };
  std::map<uint32_t, Now> now;
  for (const ProcessRow& r : frame.ps.result.rows) {
    Now& n = now[r.pid];
    if (r.used_memory_mib) n.mem = n.mem.value_or(0) + static_cast<double>(*r.used_memory_mib);
    if (r.sm_utilization) n.sm = std::max(n.sm.value_or(0), static_cast<double>(*r.sm_utilization));
    if (r.local_pid)
      if (auto u = frame.host_use.find(*r.local_pid); u != frame.host_use.end()) {
        n.cpu = u->second.cpu_percent;
        if (u->second.rss_kib) n.rss = static_cast<double>(*u->second.rss_kib) / 1024;
      }
  }
  std::map<uint32_t, TopHistory::ProcessSeries> procs;
  for (const auto& [pid, n] : now) {
    TopHistory::ProcessSeries& s = procs[pid];
    if (auto it = history.processes.find(pid); it != history.processes.end()) s = std::move(it->second);
    auto push = [](std::deque<float>& d, std::optional<double> v) {
      d.push_back(v ? static_cast<float>(*v) : std::numeric_limits<float>::quiet_NaN());
      if (d.size() > TopHistory::kProcessSamples) d.pop_front();
    };
    push(s.gpu_memory_mib, n.mem);
    push(s.sm_percent, n.sm);
    push(s.cpu_percent, n.cpu);
    push(s.rss_mib, n.rss);
  }
  history.processes = std::move(procs);
}

}  // namespace gpumap
