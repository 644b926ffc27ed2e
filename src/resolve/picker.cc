#include "resolve/picker.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "model/error.h"
#include "model/uuid.h"

namespace gpumap {
namespace {

std::optional<uint64_t> free_mib(const Gpu& g) {
  if (g.memory_free_mib) return g.memory_free_mib;
  if (g.memory_total_mib && g.memory_used_mib && *g.memory_total_mib >= *g.memory_used_mib)
    return *g.memory_total_mib - *g.memory_used_mib;
  return std::nullopt;
}

bool has_processes(const Gpu& g) { return g.processes && !g.processes->empty(); }
/// Runs processes, or may: a process list NVML could not read is never taken for an idle GPU.
bool maybe_busy(const Gpu& g) { return !g.processes || !g.processes->empty(); }

std::string gpu_label(const Gpu& g) { return "GPU " + std::to_string(g.nvml_index) + " (" + g.uuid + ")"; }

/// Lower is better, for one GPU.
auto single_key(const Gpu& g) {
  return std::make_tuple(maybe_busy(g) ? 1 : 0, -static_cast<int64_t>(free_mib(g).value_or(0)),
                         g.utilization_gpu.value_or(101), g.nvml_index);  // unknown load ranks after any known
}

struct SetScore {
  int pairs = 0, links = 0, groups = 0, busy = 0;
  int64_t free = 0;
  std::vector<uint32_t> indices;
  /// Lexicographic: more connected pairs, more links, fewer CPU groups, fewer busy GPUs,
  /// more free memory, lower nvidia-smi indices.
  bool better_than(const SetScore& o) const {
    return std::make_tuple(-pairs, -links, groups, busy, -free, indices) <
           std::make_tuple(-o.pairs, -o.links, o.groups, o.busy, -o.free, o.indices);
  }
};

/// What scoring needs of the candidates, computed once: the direct NVLinks of each (a few per
/// GPU, by candidate position: no string scan per pair per set), its NVSwitch fabric and switch
/// link count (a pair on one fabric has the smaller count: no n*n matrix, which at 8 192 GPUs
/// was 256 MB), CPU group ids, busy flags and free memory.
struct Candidates {
  std::vector<const Gpu*> gpus;
  size_t n = 0;
  std::vector<std::vector<std::pair<size_t, int>>> direct;  // (candidate position, links), each peer once
  std::vector<int64_t> fabric;  // -1: on no NVSwitch fabric
  std::vector<int> switch_links;
  std::vector<int> group;  // CPU affinity group id
  std::vector<int> busy;
  std::vector<int64_t> free;
  int groups = 0;

  /// `all`: every GPU of the snapshot, which a peer's nvml_index is checked against.
  Candidates(const std::vector<Gpu>& all, const std::vector<const Gpu*>& q)
      : gpus(q), n(q.size()), direct(n), fabric(n, -1), switch_links(n, 0), group(n), busy(n), free(n) {
    // A peer is found by its nvml_index, checked against its UUID, so the link counts cost no
    // string hashing; only a peer whose index names another GPU (a snapshot put together by
    // hand) is looked up by UUID.
    std::vector<const Gpu*> gpu_at;   // nvml_index -> the snapshot's GPU
    std::vector<size_t> candidate_at;  // nvml_index -> position in q (n: not a candidate)
    for (const Gpu& g : all) {
      if (g.nvml_index >= gpu_at.size()) gpu_at.resize(g.nvml_index + 1, nullptr), candidate_at.resize(g.nvml_index + 1, n);
      gpu_at[g.nvml_index] = &g;
    }
    for (size_t i = 0; i < n; ++i)
      if (q[i]->nvml_index < gpu_at.size() && gpu_at[q[i]->nvml_index] == q[i]) candidate_at[q[i]->nvml_index] = i;
    std::unordered_map<std::string_view, size_t> by_uuid;  // built on first need
    auto position = [&](const NvLinkPeer& p) {
      if (p.nvml_index < gpu_at.size() && gpu_at[p.nvml_index] && same_uuid(gpu_at[p.nvml_index]->uuid, p.uuid)) {
        size_t at = candidate_at[p.nvml_index];
        if (at == n || same_uuid(q[at]->uuid, p.uuid)) return at;
      }
      if (by_uuid.empty())
        for (size_t i = 0; i < n; ++i) by_uuid.emplace(q[i]->uuid, i);
      auto it = by_uuid.find(p.uuid);
      return it == by_uuid.end() ? n : it->second;
    };
    for (size_t i = 0; i < n; ++i) {
      for (const NvLinkPeer& p : q[i]->nvlink_peers) {
        size_t at = position(p);
        if (at >= n || at == i) continue;
        auto it = std::find_if(direct[i].begin(), direct[i].end(), [&](const auto& d) { return d.first == at; });
        if (it == direct[i].end()) it = direct[i].insert(direct[i].end(), {at, 0});
        // A GPU has at most 18 NVLinks; the cap keeps a hand-made count from overflowing the sums.
        it->second = static_cast<int>(std::min<uint64_t>(uint64_t(it->second) + p.links, 1u << 16));
      }
      if (q[i]->nvswitch_fabric && q[i]->nvswitch_links.value_or(0)) {
        fabric[i] = *q[i]->nvswitch_fabric;
        switch_links[i] = static_cast<int>(std::min<uint32_t>(*q[i]->nvswitch_links, 1u << 16));
      }
    }
    std::map<std::string, int> ids;
    for (size_t i = 0; i < n; ++i) {
      std::string key = q[i]->cpu_affinity.value_or("?" + q[i]->uuid);
      group[i] = ids.emplace(key, static_cast<int>(ids.size())).first->second;
      busy[i] = maybe_busy(*q[i]);
      free[i] = static_cast<int64_t>(free_mib(*q[i]).value_or(0));
    }
    groups = static_cast<int>(ids.size());
  }
  /// Through the switches only.
  int switched(size_t i, size_t j) const {
    return i != j && fabric[i] >= 0 && fabric[i] == fabric[j] ? std::min(switch_links[i], switch_links[j]) : 0;
  }
  int link(size_t i, size_t j) const {
    int l = switched(i, j);
    for (const auto& [at, links] : direct[i])
      if (at == j) l += links;
    return l;
  }

  SetScore score(const std::vector<size_t>& set) const {
    SetScore s;
    std::vector<char> seen(static_cast<size_t>(groups), 0);
    for (size_t a = 0; a < set.size(); ++a) {
      for (size_t b = a + 1; b < set.size(); ++b) {
        int l = link(set[a], set[b]);
        s.pairs += l > 0;
        s.links += l;
      }
      s.groups += !seen[static_cast<size_t>(group[set[a]])];
      seen[static_cast<size_t>(group[set[a]])] = 1;
      s.busy += busy[set[a]];
      s.free += free[set[a]];
      s.indices.push_back(gpus[set[a]]->nvml_index);
    }
    std::sort(s.indices.begin(), s.indices.end());
    return s;
  }
};

double combinations(size_t n, size_t k) {
  double c = 1;
  for (size_t i = 0; i < k; ++i) c = c * static_cast<double>(n - i) / static_cast<double>(i + 1);
  return c;
}

/// Greedy growth from `seed`: each step adds the candidate that most improves the set, judged
/// incrementally (what joining adds to pairs, links, groups, busy and free), O(n) per step.
/// `rank[g]`: g's place in the order (busy, most free, nvidia-smi index), the last tie-breaks.
std::vector<size_t> grow(const Candidates& c, const std::vector<uint32_t>& rank, size_t seed, size_t k) {
  std::vector<size_t> set = {seed};
  std::vector<char> in(c.n, 0), group_used(static_cast<size_t>(c.groups), 0);
  // Per candidate, with the current set: gain = pairs << 32 | links (higher is better), and
  // tie = a bit for a CPU group not used yet, then the rank (lower is better).
  std::vector<uint64_t> gain(c.n, 0);
  std::vector<int> row(c.n, 0);  // scratch: direct links of the GPU being added
  std::vector<uint32_t> tie(c.n);
  for (size_t g = 0; g < c.n; ++g) tie[g] = (1u << 31) | rank[g];
  auto add = [&](size_t m) {
    in[m] = 1;
    if (!group_used[static_cast<size_t>(c.group[m])]) {
      group_used[static_cast<size_t>(c.group[m])] = 1;
      for (size_t g = 0; g < c.n; ++g)
        if (c.group[g] == c.group[m]) tie[g] &= ~(1u << 31);
    }
    // m's links to every candidate: through the switches, plus its few direct ones (O(n)).
    for (const auto& [at, links] : c.direct[m]) row[at] += links;
    for (size_t g = 0; g < c.n; ++g) {
      int l = row[g] + c.switched(m, g);
      gain[g] += (static_cast<uint64_t>(l > 0) << 32) | static_cast<uint32_t>(l);
    }
    for (const auto& [at, links] : c.direct[m]) row[at] = 0;
  };
  add(seed);
  while (set.size() < k) {
    size_t pick = c.n;
    for (size_t g = 0; g < c.n; ++g) {
      if (in[g]) continue;
      if (pick == c.n || gain[g] > gain[pick] || (gain[g] == gain[pick] && tie[g] < tie[pick])) pick = g;
    }
    set.push_back(pick);
    add(pick);
  }
  return set;
}

std::vector<const Gpu*> best_set(const std::vector<Gpu>& all, const std::vector<const Gpu*>& q, size_t k) {
  Candidates c(all, q);
  std::vector<size_t> best;
  SetScore best_score;
  auto consider = [&](const std::vector<size_t>& set) {
    SetScore sc = c.score(set);
    if (best.empty() || sc.better_than(best_score)) best = set, best_score = sc;
  };
  if (k >= c.n) {
    std::vector<size_t> every(c.n);
    for (size_t i = 0; i < c.n; ++i) every[i] = i;
    consider(every);
  } else if (combinations(c.n, k) <= 50000) {
    std::vector<bool> sel(c.n, false);
    std::fill(sel.begin(), sel.begin() + static_cast<long>(k), true);
    std::vector<size_t> set;
    do {
      set.clear();
      for (size_t i = 0; i < c.n; ++i)
        if (sel[i]) set.push_back(i);
      consider(set);
    } while (std::prev_permutation(sel.begin(), sel.end()));
  } else {
    // Many GPUs: grow greedily from several seeds and keep the best set grown.  Seeds: the
    // best of each CPU affinity group, and the first candidates (they come sorted best-first):
    // 32 of them, fewer when k*n is large, so that seeds*k*n stays near 8 million steps (a
    // growth costs k*n: 1024 GPUs with k=512 get 16 first seeds).
    // The group seeds are bounded too (at most max(first, 8) of them, best groups first): GPUs
    // whose affinity NVML could not read are each a group of their own, and 16 384 of them
    // made every GPU a seed (issue 34 point 9).
    const size_t first = std::clamp<size_t>((size_t{8} << 20) / (k * c.n), 1, 32);
    const size_t group_seeds = std::max<size_t>(first, 8);
    size_t groups_seeded = 0;
    std::vector<char> seeded(c.n, 0), group_seeded(static_cast<size_t>(c.groups), 0);
    for (size_t i = 0; i < c.n; ++i) {
      bool first_of_group = !group_seeded[static_cast<size_t>(c.group[i])];
      group_seeded[static_cast<size_t>(c.group[i])] = 1;
      if (first_of_group && i >= first && groups_seeded < group_seeds) ++groups_seeded, seeded[i] = 1;
      if (i < first) seeded[i] = 1;
    }
    std::vector<size_t> order(c.n);
    for (size_t i = 0; i < c.n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::make_tuple(c.busy[a], -c.free[a], c.gpus[a]->nvml_index) <
             std::make_tuple(c.busy[b], -c.free[b], c.gpus[b]->nvml_index);
    });
    std::vector<uint32_t> rank(c.n);
    for (size_t r = 0; r < c.n; ++r) rank[order[r]] = static_cast<uint32_t>(r);
    for (size_t i = 0; i < c.n; ++i)
      if (seeded[i]) consider(grow(c, rank, i, k));
  }
  std::vector<const Gpu*> out;
  for (size_t i : best) out.push_back(q[i]);
  return out;
}

/// --include names MIG devices: choose among exactly those, in the order given.  NVML gives no
/// process list or utilisation per MIG device, so only leases, --exclude and memory count.
PickResult pick_mig_devices(const Snapshot& s, const std::set<std::string>& vis, const std::vector<std::string>& include,
                            const std::set<std::string>& excluded, const std::map<std::string, std::string>& leases,
                            const PickRequest& req) {
  PickResult r;
  std::vector<std::string> qualified;
  size_t possible = 0;
  for (const std::string& u : include) {
    Snapshot::DeviceRef d = s.find_device(u);
    if (!vis.count(uuid_key(u)))
      throw Error(kExitUsage, req.names.include + " " + u + ": this MIG device is not visible to this process",
                  "CUDA_VISIBLE_DEVICES (or the scheduler) hides it; `gpumap map` shows what this process sees");
    Rejection rej{d.gpu->nvml_index, u, {}};
    bool permanent = false;
    if (excluded.count(uuid_key(u))) rej.reasons.push_back("excluded by " + req.names.exclude), permanent = true;
    auto lease = leases.find(u);
    if (lease != leases.end()) rej.reasons.push_back(lease->second);
    if (req.min_free_mib && d.mig->memory_total_mib) {
      uint64_t free = *d.mig->memory_total_mib - std::min(*d.mig->memory_total_mib, d.mig->memory_used_mib.value_or(0));
      if (free < *req.min_free_mib) {
        rej.reasons.push_back(std::to_string(free) + " MiB free, want " + std::to_string(*req.min_free_mib));
        permanent |= *d.mig->memory_total_mib < *req.min_free_mib;
      }
    }
    if (!permanent) ++possible;
    if (rej.reasons.empty()) qualified.push_back(u);
    else r.rejected.push_back(rej);
  }
  size_t k = static_cast<size_t>(req.count);
  if (qualified.size() < k) {
    r.impossible = possible < k;
    r.failure = "need " + std::to_string(k) + " MIG device" + (k == 1 ? "" : "s") + ", " +
                std::to_string(qualified.size()) + " of the " + std::to_string(include.size()) + " included qualif" +
                (qualified.size() == 1 ? "ies" : "y");
    for (const Rejection& rej : r.rejected) {
      r.failure += "; " + rej.uuid + ": ";
      for (size_t i = 0; i < rej.reasons.size(); ++i) r.failure += (i ? ", " : "") + rej.reasons[i];
    }
    return r;
  }
  r.uuids.assign(qualified.begin(), qualified.begin() + static_cast<long>(k));
  r.notes.push_back("MIG devices from " + req.names.include + ", in the order given");
  return r;
}

}  // namespace

PickResult pick_gpus(const Snapshot& s, const std::vector<std::string>& visible,
                     const std::map<std::string, std::string>& leases, const PickRequest& req) {
  PickResult r;
  if (req.count < 1) throw Error(kExitUsage, req.names.gpus + " " + std::to_string(req.count) + ": need at least 1 GPU");

  std::vector<const Gpu*> pool;  // visible whole GPUs, nvidia-smi order
  std::set<std::string> vis;
  for (const std::string& v : visible) vis.insert(uuid_key(v));
  for (const Gpu& g : s.gpus)
    if (vis.count(uuid_key(g.uuid))) pool.push_back(&g);

  // MIG devices are named by their own UUIDs (select_device); whole GPUs as before.
  std::vector<std::string> mig_include;
  std::vector<std::string> gpu_include;
  std::set<std::string> mig_excluded;
  for (const std::string& sel : req.include)
    (uuid_key(sel).rfind("MIG-", 0) == 0 ? mig_include.push_back(select_device(s, sel)) : gpu_include.push_back(sel));
  std::vector<std::string> gpu_exclude;
  for (const std::string& sel : req.exclude)
    if (uuid_key(sel).rfind("MIG-", 0) == 0) mig_excluded.insert(uuid_key(select_device(s, sel)));
    else gpu_exclude.push_back(sel);
  if (!mig_include.empty()) {
    if (!gpu_include.empty())
      throw Error(kExitUsage, req.names.include + " names both MIG devices and whole GPUs",
                  "pick either MIG devices (MIG-...) or whole GPUs for one job");
    return pick_mig_devices(s, vis, mig_include, mig_excluded, leases, req);
  }

  std::set<const Gpu*> included, excluded;
  for (const std::string& sel : gpu_include) {
    const Gpu& g = *select_gpus(s, {sel}).front();
    if (!vis.count(uuid_key(g.uuid)))
      throw Error(kExitUsage, req.names.include + " " + sel + ": " + gpu_label(g) + " is not visible to this process",
                  "CUDA_VISIBLE_DEVICES (or the scheduler) hides it; `gpumap map` shows what this process sees");
    included.insert(&g);
  }
  for (const std::string& sel : gpu_exclude) excluded.insert(select_gpus(s, {sel}).front());

  std::vector<const Gpu*> qualified;
  size_t possible = 0;  // GPUs that could ever qualify (ignoring leases, load and processes)
  for (const Gpu* g : pool) {
    Rejection rej{g->nvml_index, g->uuid, {}};
    bool permanent = false;
    if (!included.empty() && !included.count(g)) rej.reasons.push_back("not in " + req.names.include), permanent = true;
    if (excluded.count(g)) rej.reasons.push_back("excluded by " + req.names.exclude), permanent = true;
    if (g->mig_enabled.value_or(false))
      rej.reasons.push_back("MIG mode is on (use a MIG device's UUID directly)"), permanent = true;
    auto lease = leases.find(g->uuid);
    if (lease != leases.end()) rej.reasons.push_back(lease->second);
    auto fm = free_mib(*g);
    if (req.min_free_mib) {
      if (!fm) rej.reasons.push_back("free memory unknown, want " + std::to_string(*req.min_free_mib) + " MiB");
      else if (*fm < *req.min_free_mib) {
        rej.reasons.push_back(std::to_string(*fm) + " MiB free, want " + std::to_string(*req.min_free_mib));
        if (g->memory_total_mib && *g->memory_total_mib < *req.min_free_mib) permanent = true;
      }
    }
    if (req.max_util && !g->utilization_gpu && !req.allow_unknown)
      rej.reasons.push_back("utilisation unreadable, want at most " + std::to_string(*req.max_util) +
                            "% (" + req.names.allow_unknown + " to risk it)");
    if (req.max_util && g->utilization_gpu && *g->utilization_gpu > *req.max_util)
      rej.reasons.push_back("utilisation " + std::to_string(*g->utilization_gpu) + "% over " +
                            std::to_string(*req.max_util) + "%");
    if (!req.allow_busy && !req.allow_unknown && !g->processes)
      rej.reasons.push_back("process list unreadable (" + req.names.allow_unknown + " to risk it, " + req.names.allow_busy + " to share)");
    if (!req.allow_busy && has_processes(*g)) {
      std::string pids;
      for (const GpuProcess& p : *g->processes) pids += (pids.empty() ? "" : ", ") + std::to_string(p.pid);
      rej.reasons.push_back("runs " + std::to_string(g->processes->size()) + " other process" +
                            (g->processes->size() == 1 ? "" : "es") + " (pid " + pids + "; " + req.names.allow_busy + " to share)");
    }
    if (!permanent) ++possible;
    if (rej.reasons.empty()) qualified.push_back(g);
    else r.rejected.push_back(rej);
  }

  size_t k = static_cast<size_t>(req.count);
  if (qualified.size() < k) {
    r.impossible = possible < k;
    std::string what = "need " + std::to_string(k) + " GPU" + (k == 1 ? "" : "s") + ", ";
    if (pool.size() < k)
      what += "but this process can see only " + std::to_string(pool.size()) + req.visible_limit;
    else
      what += std::to_string(qualified.size()) + " of " + std::to_string(pool.size()) + " visible qualif" +
              (qualified.size() == 1 ? "ies" : "y");
    for (const Rejection& rej : r.rejected) {
      what += "; GPU " + std::to_string(rej.nvml_index) + " (" + rej.uuid + "): ";
      for (size_t i = 0; i < rej.reasons.size(); ++i) what += (i ? ", " : "") + rej.reasons[i];
    }
    r.failure = what;
    return r;
  }

  std::sort(qualified.begin(), qualified.end(), [](const Gpu* a, const Gpu* b) { return single_key(*a) < single_key(*b); });
  std::vector<const Gpu*> chosen;
  if (k == 1) {
    chosen.push_back(qualified.front());
    r.notes.push_back("most free memory, least busy");
  } else {
    chosen = best_set(s.gpus, qualified, k);
    std::vector<size_t> all(chosen.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    SetScore sc = Candidates(s.gpus, chosen).score(all);
    size_t all_pairs = k * (k - 1) / 2;
    if (sc.pairs == static_cast<int>(all_pairs))
      r.notes.push_back("every pair joined by NVLink (" + std::to_string(sc.links) + " links over " +
                        std::to_string(all_pairs) + (all_pairs == 1 ? " pair)" : " pairs)"));
    else if (sc.pairs > 0)
      r.notes.push_back(std::to_string(sc.pairs) + " of " + std::to_string(all_pairs) + " pairs joined by NVLink");
    else
      r.notes.push_back("no NVLink between the chosen GPUs (none available)");
    if (sc.groups == 1 && chosen.front()->cpu_affinity)
      r.notes.push_back("all local to CPUs " + *chosen.front()->cpu_affinity);
    else
      r.notes.push_back("spread over " + std::to_string(sc.groups) + " CPU affinity groups");
  }
  std::sort(chosen.begin(), chosen.end(), [](const Gpu* a, const Gpu* b) { return a->nvml_index < b->nvml_index; });
  for (const Gpu* g : chosen) r.uuids.push_back(g->uuid);
  return r;
}

}  // namespace gpumap
