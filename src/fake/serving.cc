#include "fake/serving.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace gpumap::fake {

FaultPlan::FaultPlan(std::vector<SimFault> faults)
    : faults_(std::move(faults)), seen_(std::make_unique<std::atomic<uint64_t>[]>(faults_.size())) {}

const SimFault* FaultPlan::apply(const std::string& call, int gpu, int mig) {
  const SimFault* hit = nullptr;
  for (size_t i = 0; i < faults_.size(); ++i) {
    const SimFault& f = faults_[i];
    if (f.call != "*" && f.call != call) continue;
    if (f.gpu >= 0 && f.gpu != gpu) continue;
    if (f.mig >= 0 && f.mig != mig) continue;
    uint64_t n = seen_[i]++;  // this call is the n-th (from 0) that matched f
    if (!hit && n >= f.after && (f.times == 0 || n < f.after + f.times)) hit = &f;
  }
  if (hit && hit->delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(hit->delay_ms));
  while (hit && hit->hang) std::this_thread::sleep_for(std::chrono::hours(1));
  return hit;
}

bool fake_hides_symbol(const std::string& host_path, const char* symbol) {
  static std::mutex m;
  static std::map<std::string, std::set<std::string>> missing;  // per host file
  std::lock_guard<std::mutex> lock(m);
  auto it = missing.find(host_path);
  if (it == missing.end()) {
    std::set<std::string> names;
    try {
      if (!host_path.empty()) names = load_host_file(host_path).missing_symbols;
    } catch (const std::exception&) {
      // nvmlInit/cuInit report the bad file
    }
    it = missing.emplace(host_path, std::move(names)).first;
  }
  return symbol && it->second.count(symbol) > 0;
}

namespace {
// What the process may open, as the driver finds out: a fake node (no driver behind it) fails
// with ENXIO when allowed and EPERM when a device cgroup denies it (slurm-observed.md).
bool open_allowed(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return true;
  }
  return errno != EPERM && errno != EACCES && errno != ENOENT;
}
}  // namespace

void keep_openable_gpus(SimHost& host, bool (*may_open)(const std::string& path)) {
  if (host.dev_dir.empty()) return;
  if (!may_open) may_open = open_allowed;
  std::set<std::string> gone;
  std::vector<SimGpu> kept;
  for (SimGpu& g : host.gpus) {
    if (may_open(host.dev_dir + "/nvidia" + std::to_string(g.minor_number)))
      kept.push_back(std::move(g));
    else
      gone.insert(g.uuid);
  }
  host.gpus = std::move(kept);
  std::erase_if(host.cuda_default_order, [&](const std::string& u) { return gone.count(u) > 0; });
}

}  // namespace gpumap::fake
