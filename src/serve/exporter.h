// `gpumap serve`'s HTTP front end (src/serve/, beside cli/ and capi/): the metrics frames behind
// /metrics and /healthz, read through session/metrics.h.  One reader thread does every driver
// read, one at a time, so concurrent scrapes share one read, and a hung driver holds one thread,
// not one per scrape.  A frame is reused for `cache_s`; a scrape that waits longer than the
// driver bound for a read gets the last good frame marked stale (gpumap_exporter_stale 1,
// gpumap_exporter_up 0), or only the health series when no read has succeeded yet.
#pragma once
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "answer/serve_answer.h"
#include "driver/driver_source.h"
#include "model/seams.h"
#include "http/server.h"
#include "output/series_budget.h"
#include "session/kubelet_cache.h"
#include "session/metrics.h"

namespace gpumap {

/// `gpumap serve`'s request: where it listens and how its exporter reads and answers.
struct ExporterOptions {
  std::string listen;         // "HOST:PORT" (port 0 picks a free one); unused with listen_fd
  double cache_s = 1;         // a frame younger than this answers a scrape without a read
  double read_wait_s = 60;    // how long a scrape waits for a read (GPUMAP_DRIVER_TIMEOUT; 0: no bound)
  /// Bound on the CUDA probe within a read (a hung cuInit on a mixed-model or MIG host): past it
  /// the frame is NVML's data with CUDA's view unknown (gpumap_exporter_cuda_up 0).  Negative:
  /// half of read_wait_s (30 s when that is 0), so the frame still comes within a scrape's wait.
  double probe_wait_s = -1;
  double cuda_retry_s = 60;   // after a failed probe, frames do not ask CUDA again for this long
  std::string version;        // for gpumap_build_info
  HttpLimits limits;          // connections and requests (http/server.h)
  WebConfig web;              // TLS and basic authentication (--web.config.file)
  SeriesBudget series;        // what the frames' series leave out (docs/metrics.md, "The series budget")
  std::optional<int> listen_fd;  // a listening socket from systemd (socket activation): `listen` unused
};

class Exporter {
 public:
  /// Starts the reader thread.  `driver`'s own timeout is not used: the reader waits as long as
  /// the driver takes, and scrapes stop waiting for it after read_wait_s.
  Exporter(DriverSource driver, Seams seams, ExporterOptions opt);
  /// Stops the reader.  One stuck in a hung driver call is detached, still using this object:
  /// the program must then end without returning to it (cmd_serve: std::_Exit).
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  /// Whether a driver read is under way (at shutdown: one stuck in a hung driver call).
  bool reading();
  /// Readable when a read has ended (HttpServer::serve's wake_fd).
  int wake_fd() const { return wake_[0]; }
  /// The answer to `req` (/metrics, /healthz, /), or nullopt while it waits for a read.
  std::optional<HttpResponse> handle(const HttpRequest& req);

 private:
  using Clock = std::chrono::steady_clock;
  void reader_loop();
  HttpResponse metrics_answer(bool stale);

  DriverSource driver_;
  Seams seams_;
  ExporterOptions opt_;
  int wake_[2] = {-1, -1};

  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool want_read_ = false;
  bool reading_ = false;
  Clock::time_point read_started_;
  bool read_timed_out_ = false;  // the read under way was given up on (counted as an error once)
  /// The last good frame, as it is served: its series rendered once and shared by every answer
  /// that carries them (the frame itself is not kept: serve's memory is the text, issue 56 item 11).
  struct Served {
    std::shared_ptr<const SharedBody> body;
    bool cuda_known = true;
    double read_seconds = 0, read_unix = 0;
  };
  std::optional<Served> frame_;
  size_t frame_dropped_ = 0;                   // the processes they leave out (--max-processes)
  uint64_t dropped_total_ = 0;                 // the same summed over the frames read
  Clock::time_point frame_at_;                 // when it was read
  Clock::time_point last_attempt_end_;         // when the last read ended, good or not
  std::optional<Clock::time_point> cuda_failed_at_;  // the last frame whose CUDA probe failed
  bool up_ = false;
  KubeletCache kubelets_;  // the kubelet's answer across scrapes (only the reader thread uses it)
  std::string last_error_;
  uint64_t errors_ = 0, scrapes_ = 0;
  std::thread reader_;
};

/// `gpumap serve`: binds opt.listen (or takes opt.listen_fd), calls `ready` with where it listens
/// once bound (the front end renders its start-up lines: output/serve_view.h), then answers
/// /metrics and /healthz until *stop.  Throws Error(kExitUsage) for a malformed address,
/// Error(kExitError) when it cannot bind.  The answer says where it listened and whether a driver
/// read was still stuck at the end (ServeAnswer::reader_stuck: then end with std::_Exit).
ServeAnswer serve_exporter(const DriverSource& driver, const Seams& seams, const ExporterOptions& opt,
                           const volatile sig_atomic_t* stop, const std::function<void(const Listening&)>& ready);

}  // namespace gpumap
