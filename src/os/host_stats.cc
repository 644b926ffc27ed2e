#include "os/host_stats.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpumap {
namespace {

std::string read_small(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::string text;
  text.resize(64 * 1024);  // /proc/stat of 512 cores is about 60 KiB
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

}  // namespace

void parse_cpu_stat(std::string_view text, HostCounters& out) {
  for (std::string_view line : lines_of(text)) {
    if (line.rfind("cpu", 0) != 0) continue;
    std::istringstream in{std::string(line)};
    std::string name;
    in >> name;
    uint64_t v[8] = {};
    size_t n = 0;
    while (n < 8 && in >> v[n]) ++n;
    if (n < 4) continue;  // user nice system idle at least (Linux 2.6: all eight)
    HostCounters::Cpu c;
    c.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    c.total = c.busy + v[3] + v[4];
    if (name == "cpu") out.cpu = c;
    else out.cores.push_back(c);
  }
}

void parse_meminfo(std::string_view text, HostCounters& out) {
  for (std::string_view line : lines_of(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::optional<uint64_t>* field = key == "MemTotal"       ? &out.mem_total_kib
                                     : key == "MemAvailable" ? &out.mem_available_kib
                                     : key == "SwapTotal"    ? &out.swap_total_kib
                                     : key == "SwapFree"     ? &out.swap_free_kib
                                                             : nullptr;
    if (!field) continue;
    std::string value(line.substr(colon + 1));
    char* end = nullptr;
    unsigned long long kib = std::strtoull(value.c_str(), &end, 10);
    if (end != value.c_str()) *field = kib;
  }
}

void parse_loadavg(std::string_view text, HostCounters& out) {
  std::istringstream in{std::string(text)};
  double a = 0, b = 0, c = 0;
  if (in >> a >> b >> c) {
    out.load1 = a;
    out.load5 = b;
    out.load15 = c;
  }
}

HostCounters read_host_counters(const std::string& proc_root) {
  HostCounters h;
  parse_cpu_stat(read_small(proc_root + "/stat"), h);
  parse_meminfo(read_small(proc_root + "/meminfo"), h);
  parse_loadavg(read_small(proc_root + "/loadavg"), h);
  std::string up = read_small(proc_root + "/uptime");
  char* end = nullptr;
  double s = std::strtod(up.c_str(), &end);
  if (end != up.c_str() && s >= 0) h.uptime_s = s;
  return h;
}

}  // namespace gpumap
