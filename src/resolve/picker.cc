#include "resolve/picker.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "model/error.h"

namespace gpumap {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::optional<uint64_t> free_mib(const Gpu& g) {
  if (g.memory_free_mib) return g.memory_free_mib;
  if (g.memory_total_mib && g.memory_used_mib && *g.memory_total_mib >= *g.memory_used_mib)
    return *g.memory_total_mib - *g.memory_used_mib;
  return std::nullopt;
}

bool has_processes(const Gpu& g) { return g.processes && !g.processes->empty(); }

int links_between(const Gpu& a, const Gpu& b) {
  int n = 0;
  std::string ub = upper(b.uuid);
  for (const std::string& p : a.nvlink_peers) n += upper(p) == ub;
  return n;
}

std::string gpu_label(const Gpu& g) { return "GPU " + std::to_string(g.nvml_index) + " (" + g.uuid + ")"; }

/// Lower is better, for one GPU.
auto single_key(const Gpu& g) {
  return std::make_tuple(has_processes(g) ? 1 : 0, -static_cast<int64_t>(free_mib(g).value_or(0)),
                         g.utilization_gpu.value_or(0), g.nvml_index);
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

SetScore score_set(const std::vector<const Gpu*>& set) {
  SetScore s;
  std::set<std::string> groups;
  for (size_t i = 0; i < set.size(); ++i) {
    for (size_t j = i + 1; j < set.size(); ++j) {
      int l = links_between(*set[i], *set[j]);
      s.pairs += l > 0;
      s.links += l;
    }
    groups.insert(set[i]->cpu_affinity.value_or("?" + set[i]->uuid));
    s.busy += has_processes(*set[i]);
    s.free += static_cast<int64_t>(free_mib(*set[i]).value_or(0));
    s.indices.push_back(set[i]->nvml_index);
  }
  s.groups = static_cast<int>(groups.size());
  std::sort(s.indices.begin(), s.indices.end());
  return s;
}

double combinations(size_t n, size_t k) {
  double c = 1;
  for (size_t i = 0; i < k; ++i) c = c * static_cast<double>(n - i) / static_cast<double>(i + 1);
  return c;
}

std::vector<const Gpu*> best_set(const std::vector<const Gpu*>& q, size_t k) {
  std::vector<const Gpu*> best;
  SetScore best_score;
  if (combinations(q.size(), k) <= 50000) {
    std::vector<bool> sel(q.size(), false);
    std::fill(sel.begin(), sel.begin() + static_cast<long>(k), true);
    do {
      std::vector<const Gpu*> set;
      for (size_t i = 0; i < q.size(); ++i)
        if (sel[i]) set.push_back(q[i]);
      SetScore sc = score_set(set);
      if (best.empty() || sc.better_than(best_score)) best = set, best_score = sc;
    } while (std::prev_permutation(sel.begin(), sel.end()));
    return best;
  }
  // Many GPUs: grow greedily from each GPU in turn and keep the best set grown.
  for (const Gpu* seed : q) {
    std::vector<const Gpu*> set = {seed};
    while (set.size() < k) {
      const Gpu* pick = nullptr;
      SetScore pick_score;
      for (const Gpu* g : q) {
        if (std::find(set.begin(), set.end(), g) != set.end()) continue;
        std::vector<const Gpu*> trial = set;
        trial.push_back(g);
        SetScore sc = score_set(trial);
        if (!pick || sc.better_than(pick_score)) pick = g, pick_score = sc;
      }
      set.push_back(pick);
    }
    std::sort(set.begin(), set.end(), [](const Gpu* a, const Gpu* b) { return a->nvml_index < b->nvml_index; });
    SetScore sc = score_set(set);
    if (best.empty() || sc.better_than(best_score)) best = set, best_score = sc;
  }
  return best;
}

}  // namespace

PickResult pick_gpus(const Snapshot& s, const std::vector<std::string>& visible,
                     const std::map<std::string, std::string>& leases, const PickRequest& req) {
  PickResult r;
  if (req.count < 1) throw Error(kExitUsage, "--gpus " + std::to_string(req.count) + ": need at least 1 GPU");

  std::vector<const Gpu*> pool;  // visible whole GPUs, nvidia-smi order
  std::set<std::string> vis;
  for (const std::string& v : visible) vis.insert(upper(v));
  for (const Gpu& g : s.gpus)
    if (vis.count(upper(g.uuid))) pool.push_back(&g);

  std::set<const Gpu*> included, excluded;
  for (const std::string& sel : req.include) {
    const Gpu& g = *select_gpus(s, {sel}).front();
    if (!vis.count(upper(g.uuid)))
      throw Error(kExitUsage, "--include " + sel + ": " + gpu_label(g) + " is not visible to this process",
                  "CUDA_VISIBLE_DEVICES (or the scheduler) hides it; `gpumap map` shows what this process sees");
    included.insert(&g);
  }
  for (const std::string& sel : req.exclude) excluded.insert(select_gpus(s, {sel}).front());

  std::vector<const Gpu*> qualified;
  size_t possible = 0;  // GPUs that could ever qualify (ignoring leases, load and processes)
  for (const Gpu* g : pool) {
    Rejection rej{g->nvml_index, g->uuid, {}};
    bool permanent = false;
    if (!included.empty() && !included.count(g)) rej.reasons.push_back("not in --include"), permanent = true;
    if (excluded.count(g)) rej.reasons.push_back("excluded by --exclude"), permanent = true;
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
    if (req.max_util && g->utilization_gpu && *g->utilization_gpu > *req.max_util)
      rej.reasons.push_back("utilisation " + std::to_string(*g->utilization_gpu) + "% over " +
                            std::to_string(*req.max_util) + "%");
    if (!req.allow_busy && has_processes(*g)) {
      std::string pids;
      for (const GpuProcess& p : *g->processes) pids += (pids.empty() ? "" : ", ") + std::to_string(p.pid);
      rej.reasons.push_back("runs " + std::to_string(g->processes->size()) + " other process" +
                            (g->processes->size() == 1 ? "" : "es") + " (pid " + pids + "; --allow-busy to share)");
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
      what += "but this process can see only " + std::to_string(pool.size());
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
    chosen = best_set(qualified, k);
    SetScore sc = score_set(chosen);
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
