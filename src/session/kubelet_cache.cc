#include "session/kubelet_cache.h"

#include <chrono>

#include "session/kubelet.h"

namespace gpumap {

KubeletCache::KubeletCache(Ask ask, Clock now) : ask_(std::move(ask)), now_(std::move(now)) {
  if (!ask_) ask_ = ask_kubelet;
  if (!now_)
    now_ = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
}

KubeletReply KubeletCache::reply(const Seams& seams, const std::set<std::string>& uids) {
  std::lock_guard<std::mutex> lock(mu_);
  double t = now_();
  bool ask = !last_ || t - asked_at_ >= kMaxAgeSeconds;
  bool unnamed = false;
  for (const std::string& u : uids) {
    if (named_.count(u)) continue;
    unnamed = true;
    if (!seen_.count(u)) ask = true;  // a pod the last frame did not have
  }
  if ((unnamed || (last_ && !last_->pods)) && t - asked_at_ >= kRetrySeconds) ask = true;
  if (ask) {
    last_ = ask_(seams);
    asked_at_ = t;
    ++asked_;
  }
  return *last_;
}

void KubeletCache::seen(const std::set<std::string>& uids, const std::set<std::string>& named) {
  std::lock_guard<std::mutex> lock(mu_);
  seen_ = uids;
  named_ = named;
}

int KubeletCache::asked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return asked_;
}

}  // namespace gpumap
