// gpumap serve: /metrics (the same series as `gpumap metrics`) and /healthz over HTTP.
#include <signal.h>

#include <cstdlib>
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "session/exporter.h"

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
          "gpumap serve [--listen HOST:PORT] [--cache SECONDS] [--simulate HOST]",
          "Answers HTTP GET /metrics with `gpumap metrics`'s series (docs/metrics.md) and /healthz with\n"
          "200 ok or 503 and why, on " GPUMAP_DEFAULT_LISTEN " unless --listen says otherwise (another address only when\n"
          "asked; port 0 picks a free one; the address is printed on stdout).  One reader thread reads the\n"
          "driver: concurrent scrapes share one read, and a frame is reused for --cache SECONDS (default 1).\n"
          "A scrape waits at most GPUMAP_DRIVER_TIMEOUT seconds for the driver; then it gets the last good\n"
          "frame marked stale (gpumap_exporter_stale 1, gpumap_exporter_up 0).  Requests are bounded (8 KiB\n"
          "head, 5 s to send it, 64 clients) and never read a file or run anything.  Run it unprivileged: other\n"
          "users' environments are then unknown (their cuda_ordinal absent), not errors.  SIGINT/SIGTERM stop it\n"
          "(exit 0).  contrib/systemd/gpumap-serve.service runs it as a service.",
          {{"--listen", true, false, "HOST:PORT", "address to listen on (default " GPUMAP_DEFAULT_LISTEN "; 0.0.0.0:PORT for every IPv4 address)"},
           {"--cache", true, false, "SECONDS", "reuse a frame this long (0 to 3600, default 1)"}},
          false,
          run};
}

}  // namespace gpumap
