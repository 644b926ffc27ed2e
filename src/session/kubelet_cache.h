// The kubelet's answer kept between the frames of a monitor (`top`, `serve`, `metrics --watch`):
// asking it runs gpumap-kubelet, a process start and a gRPC call (about 40 ms of CPU), which at
// top's 1 s refresh would cost several percent of a core.  A pod's name and the devices its
// containers were given do not change while it runs, so one answer serves every frame until a
// pod the answer did not name appears.
#pragma once
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "model/pod.h"
#include "model/seams.h"

namespace gpumap {

class KubeletCache {
 public:
  using Ask = std::function<KubeletReply(const Seams&)>;
  using Clock = std::function<double()>;  // seconds, monotonic
  /// `ask`: how the kubelet is asked (default session/kubelet.h's ask_kubelet); `now`: the clock.
  explicit KubeletCache(Ask ask = {}, Clock now = {});

  /// The answer for a frame whose GPU processes are in the pods `uids` (cgroup UIDs).  Asked again
  /// when a UID appears that the last frame did not have and the answer did not name (a new pod),
  /// when the answer is an error or left a UID unnamed and 10 s have passed, and after 60 s.
  KubeletReply reply(const Seams& seams, const std::set<std::string>& uids);
  /// After the frame: the UIDs it had, and those the answer named.
  void seen(const std::set<std::string>& uids, const std::set<std::string>& named);
  /// How many times the kubelet was asked (for tests and --trace).
  int asked() const;

  static constexpr double kRetrySeconds = 10;
  static constexpr double kMaxAgeSeconds = 60;

 private:
  Ask ask_;
  Clock now_;
  mutable std::mutex mu_;
  std::optional<KubeletReply> last_;
  double asked_at_ = 0;
  std::set<std::string> seen_, named_;
  int asked_ = 0;
};

}  // namespace gpumap
