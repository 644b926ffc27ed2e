// gpumap serve: /metrics (the same series as `gpumap metrics`) and /healthz over HTTP.
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cli/command.h"
#include "model/env_vars.h"
#include "model/error.h"
#include "serve/exporter.h"

namespace gpumap {
namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

#define GPUMAP_DEFAULT_LISTEN "127.0.0.1:9467"
constexpr const char* kDefaultListen = GPUMAP_DEFAULT_LISTEN;

int run(const Args& args, Context& ctx) {
  refuse_json(ctx, "gpumap serve", "`gpumap ps --json` or `gpumap list --json`");
  ExporterOptions opt;
  opt.cache_s = args.number("--cache", 0, 3600).value_or(1);
  opt.read_wait_s = ctx.session().seams().driver_timeout_s;
  opt.version = GPUMAP_VERSION;
  opt.limits.max_requests = static_cast<size_t>(args.number("--web.max-requests", 0, 100000).value_or(40));
  opt.limits.max_connections = static_cast<size_t>(args.number("--web.max-connections", 1, 100000).value_or(64));
  opt.limits.max_per_peer = std::max<size_t>(1, std::min<size_t>(16, opt.limits.max_connections / 4));
  if (std::optional<std::string> file = args.value("--web.config.file")) {
    if (file->empty()) throw Error(kExitUsage, "--web.config.file needs a file name", "e.g. --web.config.file /etc/gpumap/web-config.yml");
    opt.web = read_web_config(*file);
  }
  const Environment& env = ctx.session().env();
  // systemd's (sd_listen_fds(3)), not gpumap's: not in model/env_vars.h's table of GPUMAP_* and CUDA ones.
  opt.listen_fd = activation_socket(env.get(env_var("LISTEN_PID")), env.get(env_var("LISTEN_FDS")));
  if (opt.listen_fd && args.value("--listen"))
    throw Error(kExitUsage, "--listen is given, and systemd passed a socket (LISTEN_FDS)",
                "drop --listen: the socket unit's ListenStream= says where gpumap serve listens");
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  bool stuck = serve_exporter(ctx.session().driver(), ctx.session().seams(), args.value("--listen").value_or(kDefaultListen),
                              opt, &g_stop, [](const Listening& at) {
                                std::cout << "gpumap serve: listening on " << at.url << std::endl;
                                if (!at.loopback)
                                  std::cerr << "gpumap serve: " << at.shown
                                            << " is not a loopback address: whoever reaches this port sees the GPU "
                                               "processes' users and command lines\n";
                              });
  if (stuck) {  // a read stuck in a hung driver would outlive the exporter: end here
    std::cout.flush();
    std::_Exit(kExitOk);
  }
  return kExitOk;
}

}  // namespace

Command serve_command() {
  return {"serve", "a Prometheus exporter: /metrics and /healthz over HTTP",
          "gpumap serve [--listen HOST:PORT] [--cache SECONDS] [--web.config.file FILE] [--web.max-requests N] "
          "[--web.max-connections N] [--simulate HOST]",
          "Answers HTTP GET /metrics with `gpumap metrics`'s series (docs/metrics.md) and /healthz with\n"
          "200 ok or 503 and why, on " GPUMAP_DEFAULT_LISTEN " unless --listen says otherwise (another address only when\n"
          "asked; port 0 picks a free one; the address is printed on stdout).  One reader thread reads the\n"
          "driver: concurrent scrapes share one read, and a frame is reused for --cache SECONDS (default 1).\n"
          "A scrape waits at most GPUMAP_DRIVER_TIMEOUT seconds for the driver; then it gets the last good\n"
          "frame marked stale (gpumap_exporter_stale 1, gpumap_exporter_up 0), and no longer than the\n"
          "scraper's X-Prometheus-Scrape-Timeout-Seconds.  A hung cuInit (the CUDA probe, needed on a mixed-model\n"
          "or MIG host) is given half that wait: the frame then has NVML's data without cuda_ordinal\n"
          "(gpumap_exporter_cuda_up 0).  --web.config.file FILE reads the Prometheus exporter-toolkit's\n"
          "web-config.yml: tls_server_config (cert_file, key_file, min_version, max_version, client_ca_file,\n"
          "client_auth_type) and basic_auth_users (bcrypt); an unknown key is an error.  The answer is gzipped\n"
          "when the scraper accepts gzip.  Requests are bounded (8 KiB head, 5 s to send it) and never read a\n"
          "file or run anything; at most --web.max-connections (64) connections, a quarter of them (at most\n"
          "16) from one address: past that, the oldest connection that has sent nothing is closed for the new\n"
          "one, so held connections never keep a scraper out; past --web.max-requests (40) requests being\n"
          "answered at once, 503.  With systemd socket activation (LISTEN_FDS=1, LISTEN_PID) it serves the\n"
          "socket passed and --listen must not be given.  Run it unprivileged: other users' environments are\n"
          "then unknown (their cuda_ordinal absent), not errors.  SIGINT/SIGTERM stop it (exit 0).\n"
          "contrib/systemd/gpumap-serve.service (and .socket) runs it as a service.",
          {{"--listen", true, false, "HOST:PORT", "address to listen on (default " GPUMAP_DEFAULT_LISTEN "; 0.0.0.0:PORT for every IPv4 address)"},
           {"--cache", true, false, "SECONDS", "reuse a frame this long (0 to 3600, default 1)"},
           {"--web.config.file", true, false, "FILE", "TLS and basic authentication: exporter-toolkit's web-config.yml"},
           {"--web.max-requests", true, false, "N", "requests answered at once; past it 503 (default 40, 0: no limit)"},
           {"--web.max-connections", true, false, "N", "connections open at once (default 64)"}},
          false,
          run};
}

}  // namespace gpumap
