#include "resolve/job_view.h"

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "env/launcher.h"
#include "model/json_bounds.h"

namespace gpumap {
namespace {

template <class T>
std::optional<T> opt(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

}  // namespace

std::vector<std::string> job_fanout_argv(const std::string& srun, const std::string& job_id, const std::string& gpumap,
                                         const std::vector<std::string>& extra, size_t nodes, size_t gpus_per_node) {
  // --overlap: share the job's CPUs and GPUs with its running steps; --label: which task said
  // what; --kill-on-bad-exit=0: one node's failure does not stop the others.
  std::vector<std::string> argv = {srun, "--jobid=" + job_id, "--overlap"};
  if (nodes > 0) {
    argv.push_back("--nodes=" + std::to_string(nodes));
    argv.push_back("--ntasks=" + std::to_string(nodes));
  }
  argv.push_back("--ntasks-per-node=1");
  if (gpus_per_node > 0) argv.push_back("--gres=gpu:" + std::to_string(gpus_per_node));
  for (const char* a : {"--label", "--quiet", "--kill-on-bad-exit=0"}) argv.push_back(a);
  argv.insert(argv.end(), {gpumap, "ps", "--json"});
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

size_t uniform_gpus_per_node(const std::map<std::string, std::vector<uint32_t>>& allocation,
                             const std::vector<std::string>& nodes) {
  size_t count = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto it = allocation.find(nodes[i]);
    if (it == allocation.end() || (i > 0 && it->second.size() != count)) return 0;
    count = it->second.size();
  }
  return count;
}

std::map<int, std::string> split_labelled_output(const std::string& out) {
  std::map<int, std::string> per;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    size_t i = line.find_first_not_of(' ');
    size_t colon = line.find(':', i == std::string::npos ? 0 : i);
    if (i == std::string::npos || colon == std::string::npos || colon == i) continue;
    std::string num = line.substr(i, colon - i);
    if (num.size() > 6 || num.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string text = line.substr(colon + 1);
    if (!text.empty() && text[0] == ' ') text.erase(0, 1);
    per[std::stoi(num)] += text + "\n";
  }
  return per;
}

std::vector<std::string> expand_hostlist(const std::string& list) {
  std::vector<std::string> out;
  std::string part;
  int depth = 0;
  auto flush = [&] {
    if (part.empty()) return;
    size_t lb = part.find('['), rb = part.find(']');
    if (lb == std::string::npos || rb == std::string::npos || rb < lb) {
      out.push_back(part);
    } else {
      std::string pre = part.substr(0, lb), post = part.substr(rb + 1);
      std::stringstream ranges(part.substr(lb + 1, rb - lb - 1));
      std::string r;
      bool ok = true;
      std::vector<std::string> names;
      while (std::getline(ranges, r, ',')) {
        size_t dash = r.find('-');
        std::string a = r.substr(0, dash), b = dash == std::string::npos ? a : r.substr(dash + 1);
        if (a.empty() || b.empty() || a.size() > 9 || b.size() > 9 || a.find_first_not_of("0123456789") != std::string::npos ||
            b.find_first_not_of("0123456789") != std::string::npos || std::stoul(b) < std::stoul(a) ||
            std::stoul(b) - std::stoul(a) > 100000) {
          ok = false;
          break;
        }
        for (unsigned long n = std::stoul(a); n <= std::stoul(b); ++n) {
          std::string digits = std::to_string(n);
          if (digits.size() < a.size()) digits.insert(0, a.size() - digits.size(), '0');  // node[01-10]
          names.push_back(pre + digits + post);
        }
      }
      if (ok) out.insert(out.end(), names.begin(), names.end());
      else out.push_back(part);
    }
    part.clear();
  };
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) flush();
    else part += c;
  }
  flush();
  return out;
}

std::map<std::string, std::vector<uint32_t>> parse_job_gpu_ids(const std::string& text) {
  std::map<std::string, std::vector<uint32_t>> out;
  std::istringstream in(text);
  std::string word, nodes;
  // Word by word: a "Nodes=" word starts a per-node block, its "GRES=" word names the ids.
  while (in >> word) {
    if (word.rfind("Nodes=", 0) == 0) {
      nodes = word.substr(6);
      for (const std::string& n : expand_hostlist(nodes)) out[n];
      continue;
    }
    if (word.rfind("GRES=", 0) != 0 || nodes.empty()) continue;
    // gpu:2(IDX:0-1) or gpu:a100:2(IDX:0,2),gpu:v100:1(IDX:3); other GRES names are skipped.
    std::string g = word.substr(5);
    size_t pos = 0;
    while ((pos = g.find("gpu", pos)) != std::string::npos) {
      size_t idx = g.find("(IDX:", pos), close = g.find(')', idx);
      if (idx == std::string::npos || close == std::string::npos) break;
      IntList ids = parse_int_list(g.substr(idx + 5, close - idx - 5));
      if (ids.error.empty())
        for (const std::string& n : expand_hostlist(nodes)) {
          auto& v = out[n];
          v.insert(v.end(), ids.values.begin(), ids.values.end());
        }
      pos = close;
    }
    nodes.clear();
  }
  return out;
}

std::vector<std::string> parse_job_nodes(const std::string& text) {
  std::istringstream in(text);
  std::string word;
  while (in >> word)  // "NodeList=", not "ReqNodeList=" or "ExcNodeList="
    if (word.rfind("NodeList=", 0) == 0) {
      std::string list = word.substr(9);
      if (list.empty() || list == "(null)") return {};
      return expand_hostlist(list);
    }
  return {};
}

JobReport join_job_report(const std::string& job_id, const std::map<int, std::string>& ps_per_task,
                           const std::map<std::string, std::vector<uint32_t>>& allocation,
                           const std::vector<std::string>& job_nodes) {
  JobReport r;
  r.job_id = job_id;
  r.allocation_known = true;
  for (const auto& [task, text] : ps_per_task) {
    nlohmann::json doc;
    // srun --label cuts long lines into labelled pieces; JSON needs no newline between tokens
    // (and has none inside strings), so the pieces are joined as they are.
    std::string joined = text;
    std::erase(joined, '\n');
    if (auto e = json_bounds_error(joined)) {
      r.node_errors.push_back("task " + std::to_string(task) + ": not gpumap ps output (" + *e + ")");
      continue;
    }
    try {
      doc = nlohmann::json::parse(joined);
    } catch (const nlohmann::json::exception&) {
      std::string first = text.substr(0, text.find('\n'));
      r.node_errors.push_back("task " + std::to_string(task) + ": " + (first.empty() ? "no output" : first));
      continue;
    }
    try {
      std::string node = opt<std::string>(doc, "slurm_node").value_or(opt<std::string>(doc, "host").value_or("?"));
      r.nodes.push_back(node);
      auto alloc = allocation.find(node);
      if (alloc == allocation.end()) r.allocation_known = false;
      for (const auto& g : doc.value("gpus", nlohmann::json::array())) {
        JobGpu jg;
        jg.node = node;
        jg.nvml_index = g.at("nvml_index").get<uint32_t>();
        jg.uuid = g.at("uuid").get<std::string>();
        jg.pci_bus_id = g.value("pci_bus_id", "");
        jg.minor_number = opt<uint32_t>(g, "minor_number");
        jg.allocated = alloc != allocation.end() && jg.minor_number &&
                       std::count(alloc->second.begin(), alloc->second.end(), *jg.minor_number) > 0;
        r.gpus.push_back(jg);
      }
      for (const auto& p : doc.value("processes", nlohmann::json::array())) {
        if (opt<std::string>(p, "slurm_job_id") != job_id) {
          ++r.other_processes;
          continue;
        }
        JobProcess jp;
        jp.node = node;
        jp.rank = opt<std::string>(p, "slurm_procid");
        jp.pid = p.at("pid").get<uint32_t>();
        jp.nvml_index = p.at("nvml_index").get<uint32_t>();
        jp.uuid = p.at("uuid").get<std::string>();
        jp.cuda_ordinal = opt<int>(p, "cuda_ordinal");
        jp.rank_variable = opt<std::string>(p, "rank_variable");
        jp.local_rank = opt<uint32_t>(p, "rank_value");
        jp.cuda_device_count = opt<size_t>(p, "cuda_device_count");
        jp.rank_nvml_index = opt<uint32_t>(p, "rank_nvml_index");
        jp.bound_own_gpus = opt<size_t>(p, "bound_own_gpus");
        jp.used_memory_mib = opt<uint64_t>(p, "used_memory_mib");
        jp.command = opt<std::string>(p, "command");
        r.processes.push_back(jp);
      }
    } catch (const nlohmann::json::exception& e) {
      r.node_errors.push_back("task " + std::to_string(task) + ": unexpected ps output (" + e.what() + ")");
    }
  }
  if (r.nodes.empty()) r.allocation_known = false;
  for (const std::string& n : job_nodes)
    if (std::find(r.nodes.begin(), r.nodes.end(), n) == r.nodes.end()) r.missing_nodes.push_back(n);
  return r;
}

}  // namespace gpumap
