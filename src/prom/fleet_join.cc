#include "prom/fleet_join.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "http/url.h"
#include "model/ascii.h"
#include "prom/promql.h"

namespace gpumap {

FleetQueries fleet_queries(const FleetFilter& f) {
  // --node NAME matches the instance NAME or NAME:PORT.
  std::string node = label_matcher("instance", f.nodes, "", "(?::[0-9]+)?");
  std::string model = label_matcher("name", f.gpu_models, "(?i).*", ".*");
  std::string job = label_matcher("slurm_job_id", f.jobs);
  std::string user = label_matcher("user", f.users);
  FleetQueries q;
  // Every target of a job that is gpumap's (one of its targets exported gpumap_build_info within
  // the hour), whether it ever exported or not: a target that never came up is a DOWN node, not
  // left out.  (Not narrowed by --node inside: the job of a node that never exported is known only
  // from the others.)
  q.up = selector("up", {node}) + " and on(job) group by (job) (last_over_time(gpumap_build_info[1h]))";
  q.last_read = "max by (instance, job) (last_over_time(" +
                selector("gpumap_exporter_last_success_timestamp_seconds", {node}) + "[1h]))";
  q.health = selector("", {"__name__=~\"gpumap_exporter_up|gpumap_exporter_stale|gpumap_build_info\"", node});
  q.gpus = selector("gpumap_gpu_info", {node, model});
  q.gauges = selector("", {"__name__=~\"gpumap_gpu_memory_used_bytes|gpumap_gpu_memory_total_bytes|"
                           "gpumap_gpu_utilization_ratio|gpumap_gpu_temperature_celsius\"",
                           node});
  q.processes = selector("gpumap_process_info", {node, job, user});
  if (!model.empty()) q.processes += " and on(instance, uuid) " + selector("gpumap_gpu_info", {node, model});
  // (count the pids, not the series: a process is one series per type it has on the GPU)
  q.process_counts = "count by (instance, uuid, slurm_job_id) (count by (instance, uuid, pid, slurm_job_id) (" +
                     q.processes + "))";
  if (f.info) {
    q.findings = selector("gpumap_finding", {node});
  } else {
    q.findings = selector("gpumap_finding", {"severity!=\"info\"", node});
    q.info_counts = "count by (id) (" + selector("gpumap_finding", {"severity=\"info\"", node}) + ")";
  }
  return q;
}

std::vector<std::pair<std::string, std::string>> finding_places(const PromResult& findings) {
  std::set<std::pair<std::string, std::string>> places;
  for (const PromSample& x : findings.samples) {
    auto sev = x.labels.find("severity"), inst = x.labels.find("instance"), pid = x.labels.find("pid");
    if (inst == x.labels.end() || pid == x.labels.end() || pid->second.empty()) continue;
    if (sev != x.labels.end() && sev->second == "info") continue;
    places.insert({inst->second, pid->second});
  }
  return {places.begin(), places.end()};
}

std::string finding_processes_query(const FleetFilter& f, const std::vector<std::pair<std::string, std::string>>& places) {
  if (places.empty()) return "";
  const std::string node = label_matcher("instance", f.nodes, "", "(?::[0-9]+)?");
  const std::string model = label_matcher("name", f.gpu_models, "(?i).*", ".*");
  std::vector<std::string> filters = {node, label_matcher("slurm_job_id", f.jobs), label_matcher("user", f.users)};
  std::string q;
  if (places.size() <= kExactFindingPlaces) {
    // The nodes and the pids named, each an index lookup: a superset of the places (a pid of one
    // node on another) that the caller drops; milliseconds where the `and on` below scans every process.
    std::set<std::string> insts, pids;
    for (const auto& [i, p] : places) {
      insts.insert(i);
      pids.insert(p);
    }
    filters.push_back(label_matcher("instance", {insts.begin(), insts.end()}));
    filters.push_back(label_matcher("pid", {pids.begin(), pids.end()}));
    q = selector("gpumap_process_info", filters);
  } else {
    q = "(" + selector("gpumap_process_info", filters) + ") and on(instance, pid) " +
        selector("gpumap_finding", {"severity!=\"info\"", "pid!=\"\"", node});
  }
  if (!model.empty()) q += " and on(instance, uuid) " + selector("gpumap_gpu_info", {node, model});
  return q;
}

std::vector<std::vector<std::string>> split_for_budget(
    const std::vector<std::string>& values, size_t budget_bytes,
    const std::function<std::string(const std::vector<std::string>&)>& build) {
  std::vector<std::vector<std::string>> out;
  if (values.empty()) return out;
  if (values.size() == 1 || url_encode(build(values)).size() <= budget_bytes) return {values};
  const auto mid = values.begin() + static_cast<long>(values.size() / 2);
  for (auto part : {std::vector<std::string>(values.begin(), mid), std::vector<std::string>(mid, values.end())})
    for (std::vector<std::string>& s : split_for_budget(part, budget_bytes, build)) out.push_back(std::move(s));
  return out;
}

PromResult merge_results(std::vector<PromResult> parts) {
  PromResult all;
  for (PromResult& p : parts) {
    if (all.result_type.empty()) all.result_type = p.result_type;
    all.samples.insert(all.samples.end(), std::make_move_iterator(p.samples.begin()), std::make_move_iterator(p.samples.end()));
    all.warnings.insert(all.warnings.end(), p.warnings.begin(), p.warnings.end());
    all.partial |= p.partial;
  }
  return all;
}

std::vector<QueryPart> finding_processes_queries(const FleetFilter& filter,
                                                 const std::vector<std::pair<std::string, std::string>>& places,
                                                 size_t budget_bytes) {
  if (places.empty()) return {};
  if (places.size() > kExactFindingPlaces) return {{finding_processes_query(filter, places), {}}};  // its size is fixed
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_node;
  for (const auto& pl : places) by_node[pl.first].push_back(pl);
  std::vector<std::string> nodes;
  for (const auto& [inst, ps] : by_node) nodes.push_back(inst);
  auto places_of = [&](const std::vector<std::string>& set) {
    std::vector<std::pair<std::string, std::string>> ps;
    for (const std::string& inst : set) ps.insert(ps.end(), by_node[inst].begin(), by_node[inst].end());
    return ps;
  };
  std::vector<QueryPart> out;
  for (const std::vector<std::string>& set :
       split_for_budget(nodes, budget_bytes, [&](const std::vector<std::string>& s) { return finding_processes_query(filter, places_of(s)); }))
    out.push_back({finding_processes_query(filter, places_of(set)), set});
  return out;
}

void keep_places(PromResult& processes, const std::vector<std::pair<std::string, std::string>>& places) {
  std::set<std::pair<std::string, std::string>> want(places.begin(), places.end());
  auto gone = [&](const PromSample& x) {
    auto inst = x.labels.find("instance"), pid = x.labels.find("pid");
    return inst == x.labels.end() || pid == x.labels.end() || !want.count({inst->second, pid->second});
  };
  processes.samples.erase(std::remove_if(processes.samples.begin(), processes.samples.end(), gone), processes.samples.end());
}

namespace {

// Bounds of what a gpumap exporter can have sent: anything else came from a broken or hostile
// answer, and is unknown rather than cast (a double past long long's range is undefined behaviour).
constexpr double kMaxCount = 1e9;                 // series or processes in one count
constexpr long long kMaxPid = 4194304;            // Linux's PID_MAX_LIMIT
constexpr double kMaxBytes = 9007199254740992.0;  // 2^53: 8 PiB of GPU memory, exact in a double

/// A count Prometheus answered: a whole number from 0 to kMaxCount, else none.
std::optional<long long> count_of(double v) {
  if (!std::isfinite(v) || v < 0 || v > kMaxCount || v != std::floor(v)) return std::nullopt;
  return static_cast<long long>(v);
}

std::optional<double> in_range(double v, double lo, double hi) {
  return std::isfinite(v) && v >= lo && v <= hi ? std::optional<double>(v) : std::nullopt;
}

}  // namespace

std::vector<std::string> unread_down_instances(const FleetSeries& s) {
  std::set<std::string> exporting, read;
  auto inst = [](const PromSample& x) {
    auto it = x.labels.find("instance");
    return it == x.labels.end() ? std::string() : it->second;
  };
  for (const PromSample& x : s.health.samples) exporting.insert(inst(x));
  for (const PromSample& x : s.last_read.samples)
    if (std::isfinite(x.value) && x.value > 0) read.insert(inst(x));
  std::set<std::string> out;
  for (const PromSample& x : s.up.samples) {
    std::string i = inst(x);
    if (i.empty() || read.count(i)) continue;
    if (x.value != 1 || !exporting.count(i)) out.insert(i);
  }
  return {out.begin(), out.end()};
}

std::string long_last_read_query(const std::vector<std::string>& instances) {
  if (instances.empty()) return "";
  return "max by (instance, job) (last_over_time(" +
         selector("gpumap_exporter_last_success_timestamp_seconds", {label_matcher("instance", instances)}) + "[" +
         std::to_string(kFleetLongLookbackDays) + "d]))";
}

std::vector<QueryPart> long_last_read_queries(const std::vector<std::string>& instances, size_t budget_bytes) {
  std::vector<QueryPart> out;
  for (const std::vector<std::string>& set : split_for_budget(instances, budget_bytes, long_last_read_query))
    out.push_back({long_last_read_query(set), set});
  return out;
}

long long counted_processes(const PromResult& process_counts) {
  long long n = 0;
  for (const PromSample& x : process_counts.samples)
    if (std::optional<long long> c = count_of(x.value)) n += *c;
  return n;
}

std::string node_of_instance(const std::string& instance) {
  if (!instance.empty() && instance[0] == '[') {
    size_t close = instance.find(']');
    if (close != std::string::npos) return instance.substr(1, close - 1);
  }
  size_t colon = instance.rfind(':');
  if (colon != std::string::npos && instance.find(':') == colon && colon + 1 < instance.size() &&
      std::all_of(instance.begin() + static_cast<long>(colon) + 1, instance.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return instance.substr(0, colon);
  return instance;
}

namespace {

const std::string* label(const PromSample& s, const char* name) {
  auto it = s.labels.find(name);
  return it == s.labels.end() ? nullptr : &it->second;
}

std::string label_or(const PromSample& s, const char* name) {
  const std::string* v = label(s, name);
  return v ? *v : "";
}

std::optional<std::string> label_opt(const PromSample& s, const char* name) {
  const std::string* v = label(s, name);
  return v ? std::optional<std::string>(*v) : std::nullopt;
}

std::optional<long long> integer(const std::string* v) {
  if (!v || v->empty() || v->size() > 18) return std::nullopt;
  size_t i = (*v)[0] == '-' ? 1 : 0;
  if (i == v->size() || !std::all_of(v->begin() + static_cast<long>(i), v->end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoll(*v);
}

std::optional<long long> pid_of(const std::string* v) {
  std::optional<long long> n = integer(v);
  if (!n || *n <= 0 || *n > kMaxPid) return std::nullopt;
  return n;
}

std::optional<int> small_int(const std::string* v) {
  std::optional<long long> n = integer(v);
  if (!n || *n < 0 || *n > 1000000) return std::nullopt;
  return static_cast<int>(*n);
}

using ascii::lower;

bool any_equal(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

Severity severity_of(const std::string& s) {
  if (s == "error") return Severity::kError;
  if (s == "warning") return Severity::kWarning;
  return Severity::kInfo;
}

/// Builds the answer; nodes and GPUs in maps until the end.
class Joiner {
 public:
  Joiner(const FleetFilter& f, double now) : f_(f), now_(now) {}

  FleetAnswer run(const FleetSeries& s) {
    for (const PromSample& x : s.up.samples) {
      FleetNode* n = node(x, false);
      if (!n) continue;
      n->up = x.value == 1;
      if (!n->up) n->down_reason = "scrape_failed";
      in_up_.insert(n->instance);
      if (const std::string* j = label(x, "job")) n->job = *j;
    }
    for (const PromSample& x : s.info_counts.samples)
      if (const std::string* id = label(x, "id"); id && x.value != 0) {
        if (std::optional<long long> c = count_of(x.value)) hidden_info_[*id] += *c;
        else invalid(x.value, "count of info findings " + *id);
      }
    for (const PromSample& x : s.last_read.samples)
      if (FleetNode* n = node(x, false); n && std::isfinite(x.value) && x.value > 0) {
        n->last_read_age_s = std::max(0.0, now_ - x.value);
        if (const std::string* j = label(x, "job"); j && n->job.empty()) n->job = *j;  // (a node missing from `up`)
      }
    for (const PromSample& x : s.last_read_long.samples)  // a down node's last read older than the hour
      if (const std::string* inst = label(x, "instance"); inst && std::isfinite(x.value) && x.value > 0)
        if (auto it = nodes_.find(*inst); it != nodes_.end() && !it->second.last_read_age_s)
          it->second.last_read_age_s = std::max(0.0, now_ - x.value);
    for (const PromSample& x : s.health.samples) {
      FleetNode* n = node(x);
      if (!n || !std::isfinite(x.value)) continue;
      std::string name = label_or(x, "__name__");
      if (name == "gpumap_exporter_up") n->exporter_up = x.value == 1;
      if (name == "gpumap_exporter_stale") n->exporter_stale = x.value == 1;
    }
    for (const PromSample& x : s.gpus.samples) {
      if (!model_ok(label(x, "name"))) continue;
      FleetGpu* g = gpu(x, true);
      if (!g) continue;
      g->nvml_index = small_int(label(x, "nvml_index"));
      g->name = label_opt(x, "name");
    }
    for (const PromSample& x : s.gauges.samples) {
      FleetGpu* g = gpu(x, false);
      if (!g) continue;
      std::string name = label_or(x, "__name__");
      std::optional<double> v;
      if (name == "gpumap_gpu_memory_used_bytes") v = g->memory_used_bytes = in_range(x.value, 0, kMaxBytes);
      else if (name == "gpumap_gpu_memory_total_bytes") v = g->memory_total_bytes = in_range(x.value, 0, kMaxBytes);
      else if (name == "gpumap_gpu_utilization_ratio") v = g->utilization_ratio = in_range(x.value, 0, 1);
      else if (name == "gpumap_gpu_temperature_celsius") v = g->temperature_celsius = in_range(x.value, -273.15, 1000);
      else continue;
      if (!v) invalid(x.value, name + " of " + g->uuid);
    }
    for (const PromSample& x : s.processes.samples) process(x);
    for (const PromSample& x : s.process_counts.samples) count(x);
    counted_ = !s.process_counts.samples.empty() || s.listed != FleetProcessList::kAll;
    for (auto [name, r] : std::vector<std::pair<const char*, const PromResult*>>{
             {"up", &s.up}, {"last_read", &s.last_read}, {"health", &s.health}, {"gpus", &s.gpus}, {"gauges", &s.gauges},
             {"processes", &s.processes}, {"findings", &s.findings}, {"info_counts", &s.info_counts},
             {"process_counts", &s.process_counts}, {"last_read_long", &s.last_read_long}})
      if (r->partial) partial_queries_.push_back(name);
    listed_ = s.listed;
    for (const PromSample& x : s.findings.samples) finding(x);
    return finish();
  }

 private:
  using GpuKey = std::pair<std::string, std::string>;                       // instance, uuid
  using ProcKey = std::tuple<std::string, std::string, long long>;           // instance, uuid, pid

  bool node_ok(const std::string& instance) const {
    if (f_.nodes.empty()) return true;
    return any_equal(f_.nodes, instance) || any_equal(f_.nodes, node_of_instance(instance));
  }
  bool model_ok(const std::string* name) const {
    if (f_.gpu_models.empty()) return true;
    if (!name) return false;
    std::string n = lower(*name);
    for (const std::string& m : f_.gpu_models)
      if (n.find(lower(m)) != std::string::npos) return true;
    return false;
  }

  /// The node a series names; `exports`: the series is one of gpumap's own now (not `up`, not a
  /// look back over the hour), so the node exports gpumap's series.
  FleetNode* node(const PromSample& x, bool exports = true) {
    const std::string* inst = label(x, "instance");
    if (!inst) {
      ++unplaced_;
      return nullptr;
    }
    if (!node_ok(*inst)) return nullptr;
    if (exports) exporting_.insert(*inst);
    auto it = nodes_.find(*inst);
    if (it == nodes_.end()) {
      FleetNode n;
      n.instance = *inst;
      n.node = node_of_instance(*inst);
      n.up = true;  // named only by current series (its `up` was not in the answer): it was scraped
      it = nodes_.emplace(*inst, std::move(n)).first;
    }
    return &it->second;
  }

  /// The GPU a series names; `create`: from gpu_info (else only an existing one).
  FleetGpu* gpu(const PromSample& x, bool create) {
    const std::string* uuid = label(x, "uuid");
    const std::string* inst = label(x, "instance");
    if (!uuid || !inst) {
      ++unplaced_;
      return nullptr;
    }
    auto it = gpus_.find({*inst, *uuid});
    if (it != gpus_.end()) return &it->second;
    if (!create || !node(x)) return nullptr;
    FleetGpu g;
    g.uuid = *uuid;
    return &gpus_.emplace(GpuKey{*inst, *uuid}, std::move(g)).first->second;
  }

  void process(const PromSample& x) {
    if (!f_.jobs.empty() && !any_equal(f_.jobs, label_or(x, "slurm_job_id"))) return;
    if (!f_.users.empty() && !any_equal(f_.users, label_or(x, "user"))) return;
    FleetGpu* g = gpu(x, false);
    if (!g) {
      // A process on a GPU gpu_info did not list: kept (with what its own labels say) unless a
      // --gpu-model filter asked for GPUs by a name it does not tell.
      if (!f_.gpu_models.empty() || !label(x, "uuid") || !label(x, "instance")) return;
      g = gpu(x, true);
      if (!g) return;
      g->nvml_index = small_int(label(x, "nvml_index"));
    }
    FleetProcess p;
    p.pid = pid_of(label(x, "pid"));
    if (!p.pid && label(x, "pid") && integer(label(x, "pid"))) invalid_label("pid", *label(x, "pid"));
    p.type = label_or(x, "type");
    p.user = label_opt(x, "user");
    p.command = label_opt(x, "command");
    p.cuda_ordinal = small_int(label(x, "cuda_ordinal"));
    p.sees_no_gpu = label_or(x, "cuda_ordinal") == "none";  // the exporter's word for "cannot see it"
    p.state = label_or(x, "state");
    p.slurm_job_id = label_or(x, "slurm_job_id");
    p.rank = label_or(x, "rank");
    p.local_rank = label_or(x, "local_rank");
    p.pod = label_or(x, "pod");
    p.ns = label_or(x, "namespace");
    p.container = label_or(x, "container");
    const std::string& inst = *label(x, "instance");
    ProcKey key{inst, g->uuid, p.pid.value_or(-1)};
    if (procs_seen_.count(key)) {  // listed as compute and graphics: one process
      return;
    }
    procs_seen_.insert(key);
    if (p.pid) kept_pids_.insert({inst, *p.pid});
    g->processes.push_back(std::move(p));
  }

  /// One (GPU, Slurm job)'s count of processes.
  void count(const PromSample& x) {
    if (x.value == 0) return;
    std::optional<long long> c = count_of(x.value);
    std::string job = label_or(x, "slurm_job_id");
    if (!f_.jobs.empty() && !any_equal(f_.jobs, job)) return;
    FleetGpu* g = gpu(x, false);
    if (!g) {  // as process(): a GPU gpu_info did not list is kept unless --gpu-model asked
      if (!f_.gpu_models.empty()) return;
      g = gpu(x, true);
      if (!g) return;
    }
    if (!c) {
      invalid(x.value, "count of the processes on " + g->uuid);
      g->process_count_known = false;
      if (!job.empty()) unknown_job_counts_.insert(job);
      return;
    }
    g->process_count += *c;
    if (!job.empty()) job_counts_[job][*label(x, "instance")] += *c;
  }

  /// A number that is none of what the exporter sends: said once in the warnings, shown as `?`.
  void invalid(double v, const std::string& what) {
    if (invalid_++ == 0) first_invalid_ = what + " = " + std::to_string(v);
  }
  void invalid_label(const std::string& name, const std::string& v) {
    if (invalid_++ == 0) first_invalid_ = name + " = " + v;
  }

  void finding(const PromSample& x) {
    const std::string* id = label(x, "id");
    const std::string* inst = label(x, "instance");
    if (!id || !inst) {
      ++unplaced_;
      return;
    }
    if (!node_ok(*inst)) return;
    std::optional<long long> pid = pid_of(label(x, "pid"));
    std::string uuid = label_or(x, "uuid");
    FleetFindingPlace place{*inst, node_of_instance(*inst), pid, uuid, ""};
    bool placed = false;
    if (pid) {
      if (f_.narrows_content() && !kept_pids_.count({*inst, *pid})) return;
      auto g = gpus_.find({*inst, uuid});
      if (g != gpus_.end())
        for (FleetProcess& p : g->second.processes)
          if (p.pid == pid) {
            if (!any_equal(p.findings, *id)) p.findings.push_back(*id);
            place.slurm_job_id = p.slurm_job_id;
            placed = true;
          }
      if (!placed)  // the process's series on another GPU (a finding of the process as a whole)
        for (auto& [k, gg] : gpus_)
          if (k.first == *inst)
            for (FleetProcess& p : gg.processes)
              if (p.pid == pid) place.slurm_job_id = p.slurm_job_id;
    } else {
      if (f_.narrows_content()) return;  // the node's own finding: not what --job/--user/--gpu-model asked
      FleetNode* n = node(x);
      if (!n) return;
      if (!any_equal(n->host_findings, *id)) n->host_findings.push_back(*id);
    }
    FleetCause& c = causes_[*id];
    c.id = *id;
    c.severity = std::max(c.severity, severity_of(label_or(x, "severity")));
    c.places.push_back(std::move(place));
  }

  FleetAnswer finish() {
    // A target scraped (`up == 1`) that exports none of gpumap's series is no gpumap node that
    // works: DOWN, said why (a wrong port, another exporter, a proxy's error page).
    // Under a partial answer a node missing from it is not known to be down or without series:
    // it is said missing.  A node only the hour's last read names (no `up`, no series now) was
    // removed from the targets (gone from the view), or, in a partial answer, is missing from it.
    const bool partial = !partial_queries_.empty();
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      FleetNode& n = it->second;
      const bool listed = in_up_.count(it->first), exports = exporting_.count(it->first);
      if (!listed && !exports && !partial) {
        it = nodes_.erase(it);
        continue;
      }
      if (n.up && !exports) {
        n.up = false;
        n.down_reason = partial ? "not_in_answer" : "no_gpumap_series";
      }
      ++it;
    }
    FleetAnswer a;
    a.filter = f_;
    a.evaluated_at = now_;
    a.listed = listed_;
    a.partial = !partial_queries_.empty();
    a.partial_queries = partial_queries_;
    for (auto& [key, g] : gpus_) {
      std::sort(g.processes.begin(), g.processes.end(), [](const FleetProcess& x, const FleetProcess& y) {
        return std::tie(x.pid, x.type) < std::tie(y.pid, y.type);
      });
      if (!counted_) g.process_count = static_cast<long long>(g.processes.size());
      if (f_.narrows_content() && (!f_.jobs.empty() || !f_.users.empty()) && g.processes.empty() && g.process_count == 0)
        continue;
      nodes_[key.first].gpus.push_back(std::move(g));
    }
    std::map<std::string, FleetJob> jobs;
    std::map<std::tuple<std::string, std::string, long long>, size_t> rank_at;  // job, instance, pid -> rank
    for (auto& [inst, n] : nodes_) {
      std::sort(n.gpus.begin(), n.gpus.end(), [](const FleetGpu& x, const FleetGpu& y) {
        return std::make_tuple(!x.nvml_index, x.nvml_index.value_or(0), x.uuid) <
               std::make_tuple(!y.nvml_index, y.nvml_index.value_or(0), y.uuid);
      });
      std::sort(n.host_findings.begin(), n.host_findings.end());
      for (const FleetGpu& g : n.gpus)
        for (const FleetProcess& p : g.processes) {
          if (p.slurm_job_id.empty()) continue;
          FleetJob& j = jobs[p.slurm_job_id];
          j.slurm_job_id = p.slurm_job_id;
          if (!any_equal(j.nodes, n.node)) j.nodes.push_back(n.node);
          auto key = std::make_tuple(p.slurm_job_id, inst, p.pid.value_or(-1));
          auto at = rank_at.find(key);
          if (at == rank_at.end()) {
            at = rank_at.emplace(key, j.ranks.size()).first;
            j.ranks.push_back(FleetRank{inst, n.node, p.pid, p.rank, p.local_rank, p.user, {}});
          }
          j.ranks[at->second].gpus.push_back(FleetRankGpu{g.uuid, g.nvml_index, p.cuda_ordinal, p.sees_no_gpu});
          for (const std::string& id : p.findings)
            if (!any_equal(j.finding_ids, id)) j.finding_ids.push_back(id);
        }
    }
    for (auto& [job, per_node] : job_counts_) {  // counted: every node of a job, listed or not
      FleetJob& j = jobs[job];
      j.slurm_job_id = job;
      for (const auto& [inst, n] : per_node) {
        if (!nodes_.count(inst)) continue;  // (a node the filters left out)
        if (!any_equal(j.nodes, nodes_[inst].node)) j.nodes.push_back(nodes_[inst].node);
        j.gpu_processes += n;
      }
    }
    for (const std::string& job : unknown_job_counts_)
      if (jobs.count(job)) jobs[job].gpu_processes_known = false;
    if (!counted_)
      for (auto& [id, j] : jobs)
        for (const FleetRank& r : j.ranks) j.gpu_processes += static_cast<long long>(r.gpus.size());
    for (auto& [inst, n] : nodes_) {
      bool keep = !f_.narrows_content() || !n.gpus.empty() || !n.up;
      if (keep) a.nodes.push_back(std::move(n));
    }
    std::sort(a.nodes.begin(), a.nodes.end(),
              [](const FleetNode& x, const FleetNode& y) { return std::tie(x.node, x.instance) < std::tie(y.node, y.instance); });
    for (auto& [id, j] : jobs) {
      std::sort(j.nodes.begin(), j.nodes.end());
      std::sort(j.finding_ids.begin(), j.finding_ids.end());
      std::sort(j.ranks.begin(), j.ranks.end(), [](const FleetRank& x, const FleetRank& y) {
        std::optional<long long> rx = integer(&x.rank), ry = integer(&y.rank);
        return std::make_tuple(!rx, rx.value_or(0), x.rank, x.node, x.instance, x.pid) <
               std::make_tuple(!ry, ry.value_or(0), y.rank, y.node, y.instance, y.pid);
      });
      a.jobs.push_back(std::move(j));
    }
    for (auto& [id, c] : causes_) {
      std::sort(c.places.begin(), c.places.end(), [](const FleetFindingPlace& x, const FleetFindingPlace& y) {
        return std::tie(x.node, x.instance, x.pid, x.uuid) < std::tie(y.node, y.instance, y.pid, y.uuid);
      });
      a.causes.push_back(std::move(c));
    }
    std::stable_sort(a.causes.begin(), a.causes.end(),
                     [](const FleetCause& x, const FleetCause& y) { return x.severity > y.severity; });
    a.hidden_info = std::move(hidden_info_);
    if (invalid_)
      a.warnings.push_back(std::to_string(invalid_) + " number" + (invalid_ == 1 ? " was" : "s were") +
                           " not valid (not finite, out of range or not a whole number; first: " + first_invalid_ +
                           "): shown as unknown (?)");
    if (unplaced_)
      a.warnings.push_back(std::to_string(unplaced_) + " series without an instance, uuid or id label were left out");
    return a;
  }

  const FleetFilter& f_;
  double now_;
  std::map<std::string, FleetNode> nodes_;
  std::map<GpuKey, FleetGpu> gpus_;
  std::set<ProcKey> procs_seen_;
  std::set<std::string> in_up_, exporting_;
  std::vector<std::string> partial_queries_;  // instances in `up`; those with one of gpumap's series now
  std::set<std::pair<std::string, long long>> kept_pids_;
  std::map<std::string, FleetCause> causes_;
  std::map<std::string, long long> hidden_info_;
  std::map<std::string, std::map<std::string, long long>> job_counts_;  // job -> instance -> GPU processes
  bool counted_ = false;
  FleetProcessList listed_ = FleetProcessList::kAll;
  size_t unplaced_ = 0;
  size_t invalid_ = 0;
  std::string first_invalid_;
  std::set<std::string> unknown_job_counts_;
};

}  // namespace

FleetAnswer join_fleet(const FleetSeries& series, const FleetFilter& filter, double evaluated_at) {
  return Joiner(filter, evaluated_at).run(series);
}

}  // namespace gpumap
