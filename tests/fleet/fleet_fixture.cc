#include "fleet/fleet_fixture.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

namespace gpumap::testing {
namespace {

PromSample sample(std::map<std::string, std::string> labels, double value) { return {std::move(labels), value, kFleetNow}; }

PromResult vec(std::vector<PromSample> s) { return {"vector", std::move(s), {}}; }

std::map<std::string, std::string> proc(const std::string& inst, const std::string& uuid, const std::string& pid,
                                        std::map<std::string, std::string> more) {
  std::map<std::string, std::string> l = {{"__name__", "gpumap_process_info"},
                                          {"instance", inst},
                                          {"job", "gpumap"},
                                          {"uuid", uuid},
                                          {"pid", pid},
                                          {"type", "compute"},
                                          {"state", "running"}};
  for (auto& [k, v] : more) l[k] = v;
  return l;
}

}  // namespace

FleetSeries three_node_fleet() {
  const std::string a = "node-a:9467", b = "node-b:9467", c = "node-c:9467";
  FleetSeries s;
  s.up = vec({sample({{"instance", a}, {"job", "gpumap"}}, 1), sample({{"instance", b}, {"job", "gpumap"}}, 1),
              sample({{"instance", c}, {"job", "gpumap"}}, 0)});
  s.last_read = vec({sample({{"instance", a}, {"job", "gpumap"}}, kFleetNow - 1), sample({{"instance", b}, {"job", "gpumap"}}, kFleetNow - 2),
                     sample({{"instance", c}, {"job", "gpumap"}}, kFleetNow - 95)});
  s.health = vec({sample({{"__name__", "gpumap_exporter_up"}, {"instance", a}}, 1), sample({{"__name__", "gpumap_exporter_stale"}, {"instance", a}}, 0),
                  sample({{"__name__", "gpumap_exporter_up"}, {"instance", b}}, 1), sample({{"__name__", "gpumap_exporter_stale"}, {"instance", b}}, 0)});
  auto info = [](const std::string& inst, const std::string& uuid, const std::string& idx, const std::string& name) {
    return sample({{"__name__", "gpumap_gpu_info"}, {"instance", inst}, {"uuid", uuid}, {"nvml_index", idx}, {"name", name}, {"pci_bus_id", "00000000:3B:00.0"}}, 1);
  };
  s.gpus = vec({info(a, "GPU-aaaa0000", "0", "NVIDIA H100 80GB HBM3"), info(a, "GPU-aaaa1111", "1", "NVIDIA H100 80GB HBM3"),
                info(b, "GPU-bbbb0000", "0", "NVIDIA A100-SXM4-80GB"), info(b, "GPU-bbbb1111", "1", "NVIDIA A100-SXM4-80GB")});
  auto gauge = [](const std::string& name, const std::string& inst, const std::string& uuid, double v) {
    return sample({{"__name__", name}, {"instance", inst}, {"uuid", uuid}}, v);
  };
  s.gauges = vec({gauge("gpumap_gpu_memory_used_bytes", a, "GPU-aaaa0000", 1024.0 * 1048576), gauge("gpumap_gpu_memory_total_bytes", a, "GPU-aaaa0000", 81559.0 * 1048576),
                  gauge("gpumap_gpu_utilization_ratio", a, "GPU-aaaa0000", 0.97), gauge("gpumap_gpu_temperature_celsius", a, "GPU-aaaa0000", 61),
                  gauge("gpumap_gpu_memory_used_bytes", b, "GPU-nowhere", 1)});  // a GPU gpu_info does not list: dropped
  s.processes = vec({
      sample(proc(a, "GPU-aaaa0000", "100", {{"user", "alice"}, {"command", "python train.py"}, {"cuda_ordinal", "0"}, {"slurm_job_id", "77"}, {"rank", "0"}, {"local_rank", "0"}}), 1),
      sample(proc(a, "GPU-aaaa1111", "101", {{"user", "alice"}, {"command", "python train.py"}, {"cuda_ordinal", "1"}, {"slurm_job_id", "77"}, {"rank", "1"}, {"local_rank", "1"}}), 1),
      sample(proc(b, "GPU-bbbb0000", "200", {{"user", "alice"}, {"command", "python train.py"}, {"cuda_ordinal", "0"}, {"slurm_job_id", "77"}, {"rank", "2"}, {"local_rank", "0"}}), 1),
      sample(proc(b, "GPU-bbbb0000", "201", {{"user", "alice"}, {"command", "python train.py"}, {"cuda_ordinal", "0"}, {"slurm_job_id", "77"}, {"rank", "3"}, {"local_rank", "1"}}), 1),
      // The same process in NVML's graphics list too: one process.
      sample(proc(b, "GPU-bbbb0000", "201", {{"type", "graphics"}, {"user", "alice"}, {"slurm_job_id", "77"}, {"rank", "3"}}), 1),
      // A pod's process whose command label a series budget dropped, and without cuda_ordinal.
      sample(proc(b, "GPU-bbbb1111", "300", {{"user", "bob"}, {"pod", "trainer-0"}, {"namespace", "ml"}, {"container", "main"}}), 1),
  });
  auto finding = [](const std::string& inst, const std::string& id, const std::string& sev, std::map<std::string, std::string> more) {
    std::map<std::string, std::string> l = {{"__name__", "gpumap_finding"}, {"instance", inst}, {"id", id}, {"severity", sev}};
    for (auto& [k, v] : more) l[k] = v;
    return sample(l, 1);
  };
  s.findings = vec({
      finding(b, "ranks-share-gpu", "warning", {{"pid", "200"}, {"uuid", "GPU-bbbb0000"}}),
      finding(b, "ranks-share-gpu", "warning", {{"pid", "201"}, {"uuid", "GPU-bbbb0000"}}),
      finding(a, "rank-on-wrong-gpu", "error", {{"pid", "101"}, {"uuid", "GPU-aaaa1111"}}),
      finding(a, "order-differs", "warning", {}),
  });
  // Without -v the info findings come as a count by id (two processes exited on node-a).
  s.info_counts = vec({sample({{"id", "process-exited"}}, 2)});
  return s;
}

FleetSeries fleet_with_unread_targets() {
  FleetSeries s = three_node_fleet();
  s.up.samples.push_back(sample({{"instance", "node-d:9467"}, {"job", "gpumap"}}, 0));
  s.up.samples.push_back(sample({{"instance", "node-e:9467"}, {"job", "gpumap"}}, 1));
  s.last_read_long = vec({sample({{"instance", "node-c:9467"}, {"job", "gpumap"}}, kFleetNow - 3 * 86400)});
  return s;
}

std::optional<PromResult> answer_fleet_query(const FleetSeries& s, const FleetFilter& filter, const std::string& query,
                                             size_t budget) {
  const FleetQueries q = fleet_queries(filter);
  auto get = [](const PromSample& x, const char* k) {
    auto it = x.labels.find(k);
    return it == x.labels.end() ? std::string() : it->second;
  };
  if (query == q.process_counts) {  // count by (instance, uuid, slurm_job_id) (count by (..., pid) (...))
    std::map<std::tuple<std::string, std::string, std::string>, std::set<std::string>> pids;
    for (const PromSample& x : s.processes.samples)
      pids[{get(x, "instance"), get(x, "uuid"), get(x, "slurm_job_id")}].insert(get(x, "pid"));
    PromResult r{"vector", {}, {}};
    for (const auto& [k, p] : pids) {
      std::map<std::string, std::string> l = {{"instance", std::get<0>(k)}, {"uuid", std::get<1>(k)}};
      if (!std::get<2>(k).empty()) l["slurm_job_id"] = std::get<2>(k);  // (an empty label is no label)
      r.samples.push_back({l, static_cast<double>(p.size()), kFleetNow});
    }
    return r;
  }
  auto in = [](const std::vector<std::string>& set, const std::string& v) {
    return set.empty() || std::find(set.begin(), set.end(), v) != set.end();
  };
  for (const QueryPart& part : long_last_read_queries(unread_down_instances(s), budget))
    if (query == part.query) {  // over 14 days: what it has of those asked
      PromResult r{"vector", {}, {}};
      for (const PromSample& x : s.last_read_long.samples)
        if (in(part.instances, get(x, "instance"))) r.samples.push_back(x);
      return r;
    }
  const std::vector<std::pair<std::string, std::string>> places = finding_places(s.findings);
  for (const QueryPart& part : finding_processes_queries(filter, places, budget))
    if (query == part.query) {  // the processes the findings name, of the part's nodes
      PromResult r{"vector", {}, {}};
      for (const PromSample& x : s.processes.samples)
        if (in(part.instances, get(x, "instance")) &&
            std::binary_search(places.begin(), places.end(), std::make_pair(get(x, "instance"), get(x, "pid"))))
          r.samples.push_back(x);
      return r;
    }
  for (auto [text, res] : {std::pair{&q.up, &s.up}, {&q.last_read, &s.last_read}, {&q.health, &s.health}, {&q.gpus, &s.gpus},
                           {&q.gauges, &s.gauges}, {&q.processes, &s.processes}, {&q.findings, &s.findings},
                           {&q.info_counts, &s.info_counts}})
    if (query == *text) return *res;
  return std::nullopt;
}

std::string query_of(const std::string& target) {
  size_t at = target.find("query=");
  if (at == std::string::npos) return "";
  std::string q = target.substr(at + 6, target.find('&', at) - at - 6), out;
  for (size_t i = 0; i < q.size(); ++i) {
    if (q[i] == '%' && i + 2 < q.size()) {
      out += static_cast<char>(std::stoi(q.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += q[i] == '+' ? ' ' : q[i];
    }
  }
  return out;
}

std::string prom_body(const PromResult& r) {
  nlohmann::json result = nlohmann::json::array();
  auto value = [](const PromSample& s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", s.value);
    return nlohmann::json::array({s.timestamp, buf});
  };
  for (const PromSample& s : r.samples) result.push_back({{"metric", s.labels}, {"value", value(s)}});
  nlohmann::json answer{{"status", "success"}, {"data", {{"resultType", "vector"}, {"result", result}}}};
  if (!r.warnings.empty()) answer["warnings"] = r.warnings;  // Thanos's partial response
  return answer.dump();
}

}  // namespace gpumap::testing
