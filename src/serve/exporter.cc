#include "serve/exporter.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "model/error.h"
#include "model/text.h"
#include "output/metrics_text.h"

namespace gpumap {

Exporter::Exporter(DriverSource driver, Seams seams, ExporterOptions opt)
    : driver_(std::move(driver)), seams_(std::move(seams)), opt_(std::move(opt)) {
  driver_.driver_timeout_s = 0;  // the reader may wait; scrapes do not (read_wait_s)
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) throw Error(kExitError, "gpumap serve: cannot make a pipe");
  want_read_ = true;  // the first frame, before the first scrape
  reader_ = std::thread([this] { reader_loop(); });
}

Exporter::~Exporter() {
  bool stuck;
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
    stuck = reading_;
    cv_.notify_all();
  }
  if (stuck) reader_.detach();  // in a hung driver call: it ends with the process
  else reader_.join();
  if (!stuck) {
    close(wake_[0]);
    close(wake_[1]);
  }
}

bool Exporter::reading() {
  std::lock_guard<std::mutex> lock(m_);
  return reading_;
}

namespace {
double secs(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

void Exporter::reader_loop() {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || want_read_; });
    if (stop_) return;
    want_read_ = false;
    reading_ = true;
    read_started_ = Clock::now();
    read_timed_out_ = false;
    MetricsReadOptions read_opt;
    read_opt.probe_timeout_s = opt_.probe_wait_s >= 0 ? opt_.probe_wait_s : opt_.read_wait_s > 0 ? opt_.read_wait_s / 2 : 30;
    read_opt.ask_cuda = !cuda_failed_at_ || secs(Clock::now() - *cuda_failed_at_) >= opt_.cuda_retry_s;
    read_opt.kubelets = &kubelets_;
    lock.unlock();
    std::optional<Served> f;
    std::string error;
    FrameSeries said;
    try {
      MetricsFrame frame = read_metrics_frame(driver_, seams_, read_opt);
      Exposition out;
      said = add_frame_metrics(out, metrics_input(frame), opt_.series);
      std::string text;
      if (!frame.cuda_known)
        text = "# gpumap: CUDA's view is unknown (no cuda_ordinal, no findings): " + escape_help(frame.cuda_error) + "\n";
      text += out.text();
      f = Served{std::make_shared<const SharedBody>(std::move(text)), frame.cuda_known, frame.read_seconds, frame.read_unix};
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "the driver read failed";
    }
    lock.lock();
    reading_ = false;
    last_attempt_end_ = Clock::now();
    if (f && read_opt.ask_cuda) {
      if (f->cuda_known) cuda_failed_at_.reset();
      else cuda_failed_at_ = last_attempt_end_;
    }
    if (f) {
      frame_ = std::move(f);
      frame_dropped_ = said.dropped_processes;
      dropped_total_ += said.dropped_processes;
      frame_at_ = last_attempt_end_;
      up_ = true;
      last_error_.clear();
    } else {
      up_ = false;
      last_error_ = error;
      if (!read_timed_out_) ++errors_;  // a read given up on was counted then
    }
    if (stop_) return;
    char one = 1;
    ssize_t ignored = write(wake_[1], &one, 1);
    (void)ignored;
  }
}

// The /metrics answer: the served frame's series by reference (never copied per answer), the
// health series after them.
HttpResponse Exporter::metrics_answer(bool stale) {
  ExporterHealth h;
  h.version = opt_.version;
  h.up = up_ && !stale;
  h.stale = stale && frame_;
  h.driver_errors = errors_;
  h.scrapes = ++scrapes_;
  if (opt_.series.max_processes) {
    h.dropped_processes_total = dropped_total_;
    if (frame_) h.capped_processes = frame_dropped_;
  }
  if (frame_) {
    h.read_seconds = frame_->read_seconds;
    h.last_success_unix = frame_->read_unix;
    h.cuda_up = frame_->cuda_known;
  }
  Exposition health;
  add_health_metrics(health, h);
  HttpResponse r;
  r.content_type = kExpositionContentType;
  if (!frame_) r.body = "# gpumap: no driver read has succeeded yet";
  if (!frame_ && !last_error_.empty()) r.body += ": " + escape_help(last_error_);
  if (!frame_) r.body += "\n";
  if (frame_) r.shared = frame_->body;
  r.tail = health.text();
  return r;
}

std::optional<HttpResponse> Exporter::handle(const HttpRequest& req) {
  std::lock_guard<std::mutex> lock(m_);
  auto now = Clock::now();
  if (req.path == "/healthz") {
    HttpResponse r;
    bool hung = reading_ && opt_.read_wait_s > 0 && secs(now - read_started_) > opt_.read_wait_s;
    if (up_ && !hung) {
      r.body = "ok\n";
    } else {
      r.status = 503;
      r.body = hung ? "the driver has not answered for " + std::to_string(static_cast<long>(secs(now - read_started_))) + " s\n"
               : frame_ || !last_error_.empty() ? "the last driver read failed: " + last_error_ + "\n"
                                                : "no driver read yet\n";
      if (!frame_ && last_error_.empty() && !hung && !reading_) {  // first call: read now
        want_read_ = true;
        cv_.notify_all();
      }
    }
    return r;
  }
  if (req.path == "/") {
    HttpResponse r;
    r.content_type = "text/html; charset=utf-8";
    r.body = "<html><head><title>gpumap</title></head><body><h1>gpumap serve</h1>"
             "<p><a href=\"/metrics\">/metrics</a> (Prometheus text format) &middot; <a href=\"/healthz\">/healthz</a></p>"
             "</body></html>\n";
    return r;
  }
  if (req.path != "/metrics") {
    HttpResponse r;
    r.status = 404;
    r.body = "not found: this server answers /metrics and /healthz\n";
    return r;
  }
  bool fresh = frame_ && up_ && secs(now - frame_at_) < opt_.cache_s;
  // A read that ended after this request arrived answers it (it may have failed: then stale).
  bool answered = last_attempt_end_ >= req.arrived && !reading_;
  if (fresh || (answered && up_)) return metrics_answer(false);
  if (answered) return metrics_answer(true);
  if (!reading_) {
    want_read_ = true;
    cv_.notify_all();
    reading_ = true;  // from now on (the reader sets it again when it starts)
    read_started_ = now;
    read_timed_out_ = false;
    return std::nullopt;
  }
  // The read under way: wait for it, up to read_wait_s from its start (once given up on, the
  // scrapes that come while it still hangs are answered at once), and no longer than the scraper
  // itself waits (X-Prometheus-Scrape-Timeout-Seconds, less half a second to send the answer):
  // then this scrape gets the last frame, stale, and the read goes on for the next one.
  if (req.scrape_timeout_s && !read_timed_out_ &&
      secs(now - req.arrived) >= std::max(*req.scrape_timeout_s - 0.5, *req.scrape_timeout_s / 2))
    return metrics_answer(true);
  if (!read_timed_out_ && (opt_.read_wait_s <= 0 || secs(now - read_started_) < opt_.read_wait_s)) return std::nullopt;
  if (!read_timed_out_) {  // this read is given up on: count it once, and say so
    read_timed_out_ = true;
    ++errors_;
    up_ = false;
    last_error_ = "the driver did not answer within " + short_number(opt_.read_wait_s) + " s";
  }
  return metrics_answer(true);
}

ServeAnswer serve_exporter(const DriverSource& driver, const Seams& seams, const ExporterOptions& opt,
                           const volatile sig_atomic_t* stop, const std::function<void(const Listening&)>& ready) {
  std::unique_ptr<HttpServer> bound;
  if (opt.listen_fd) {
    bound = std::make_unique<HttpServer>(*opt.listen_fd, opt.limits, opt.web);
  } else {
    auto [host, port] = parse_listen_address(opt.listen);
    bound = std::make_unique<HttpServer>(host, port, opt.limits, opt.web);
  }
  HttpServer& server = *bound;
  auto exporter = std::make_unique<Exporter>(driver, seams, opt);
  ServeAnswer answer;
  Listening& at = answer.listening;
  const std::string& host = server.host();
  at.shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  at.url = std::string(server.tls() ? "https://" : "http://") + at.shown + ":" + std::to_string(server.port()) + "/metrics";
  at.loopback = is_loopback_host(host);
  ready(at);
  server.serve([&](const HttpRequest& r) { return exporter->handle(r); }, stop, exporter->wake_fd());
  if (exporter->reading()) {  // a reader stuck in the driver still uses the exporter: never destroy it
    (void)exporter.release();
    answer.reader_stuck = true;
  }
  return answer;
}

}  // namespace gpumap
