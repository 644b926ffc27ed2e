#include "driver/driver_thread.h"

#include <pthread.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace gpumap {
namespace {

/// One lane's thread and its one-job mailbox.  Never destroyed: the thread may be stuck in the
/// driver when the process exits (or when it forks).
class DriverThread {
 public:
  bool run(std::function<void()> job, std::chrono::duration<double> limit) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(limit);
    std::unique_lock<std::mutex> lock(m_);
    if (!cv_.wait_until(lock, deadline, [&] { return !busy_; })) return false;
    if (!started_) {
      std::thread(&DriverThread::loop, this).detach();
      started_ = true;
    }
    job_ = std::move(job);
    busy_ = true;
    cv_.notify_all();
    return cv_.wait_until(lock, deadline, [&] { return !busy_; });
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return job_ != nullptr; });
        job = std::move(job_);
        job_ = nullptr;
      }
      job();
      std::lock_guard<std::mutex> lock(m_);
      busy_ = false;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool busy_ = false, started_ = false;
};

// The lanes' threads of this process.  fork() copies this memory but not the threads: a child
// that reused the parent's DriverThread would see started_ (so start none), hand its job to a
// thread that does not exist and wait out the whole driver timeout (issue 34 point 5: pin() or
// diagnose() in a multiprocessing/DataLoader child after one in the parent raised a false
// NoDriverError).  The fork handlers below make the child forget them: the prepare handler takes
// g_lanes_mutex so that no other thread is half-way through creating one at the fork, and the
// child's handler drops the pointers (the parent's objects are leaked in the child: their
// mutexes may have been held by a thread that is gone there).
std::mutex g_lanes_mutex;
DriverThread* g_lanes[2] = {nullptr, nullptr};

void before_fork() { g_lanes_mutex.lock(); }
void after_fork_in_parent() { g_lanes_mutex.unlock(); }
void after_fork_in_child() {
  g_lanes[0] = g_lanes[1] = nullptr;
  g_lanes_mutex.unlock();  // held by this (the forking) thread since before_fork
}

DriverThread& lane_thread(DriverLane lane) {
  static const bool registered = [] {
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    return true;
  }();
  (void)registered;
  std::lock_guard<std::mutex> lock(g_lanes_mutex);
  DriverThread*& t = g_lanes[lane == DriverLane::kNvml ? 0 : 1];
  if (!t) t = new DriverThread;  // leaked on purpose: see the class comment
  return *t;
}

}  // namespace

bool run_on_driver_thread(DriverLane lane, std::function<void()> job, std::chrono::duration<double> limit) {
  return lane_thread(lane).run(std::move(job), limit);
}

}  // namespace gpumap
