#include "os/wakeup.h"

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <thread>

namespace gpumap {

bool wait_for_input(int fd, int timeout_ms) {
  if (fd < 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return false;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, left > 0 ? static_cast<int>(left) : 0);
    if (n > 0) return true;  // POLLIN, POLLHUP, POLLERR or POLLNVAL: stop waiting
    if (n == 0) return false;
    if (errno != EINTR) return true;  // poll itself failed: waiting on would be blind
  }
}

}  // namespace gpumap
