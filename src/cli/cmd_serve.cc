// gpumap serve: /metrics (the same series as `gpumap metrics`) and /healthz over HTTP.
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cli/command.h"
#include "cli/command_help.h"
#include "cli/series_flags.h"
#include "model/env_vars.h"
#include "model/error.h"
#include "output/serve_view.h"
#include "serve/exporter.h"

namespace gpumap {
namespace {

constexpr const char* kDefaultListen = GPUMAP_DEFAULT_LISTEN;

/// The request: every option checked before anything is bound or read.
ExporterOptions serve_options(const Args& args, Context& ctx) {
  ExporterOptions opt;
  opt.listen = args.value("--listen").value_or(kDefaultListen);
  opt.cache_s = args.number("--cache", 0, 3600).value_or(1);
  opt.read_wait_s = ctx.session().seams().driver_timeout_s;
  opt.version = GPUMAP_VERSION;
  opt.series = series_budget(args);
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
  return opt;
}

int run(const Args& args, Context& ctx) {
  refuse_json(ctx, "gpumap serve", "`gpumap ps --json` or `gpumap list --json`");
  ExporterOptions opt = serve_options(args, ctx);
  const volatile sig_atomic_t* stop = stop_on_signals();
  signal(SIGPIPE, SIG_IGN);
  ServeAnswer answer = serve_exporter(ctx.session().driver(), ctx.session().seams(), opt, stop, [](const Listening& at) {
    ServeStartText start = serve_start_text(at);
    std::cout << start.out << std::flush;
    std::cerr << start.err;
  });
  if (answer.reader_stuck) {  // a read stuck in a hung driver would outlive the exporter: end here
    std::cout.flush();
    std::_Exit(kExitOk);
  }
  return kExitOk;
}

}  // namespace

Command serve_command() {
  std::vector<OptionSpec> options = {
      {"--listen", true, false, "HOST:PORT", "address to listen on (default " GPUMAP_DEFAULT_LISTEN "; 0.0.0.0:PORT for every IPv4 address)"},
      {"--cache", true, false, "SECONDS", "reuse a frame this long (0 to 3600, default 1)"},
      {"--web.config.file", true, false, "FILE", "TLS and basic authentication: exporter-toolkit's web-config.yml"},
      {"--web.max-requests", true, false, "N", "requests answered at once; past it 503 (default 40, 0: no limit)"},
      {"--web.max-connections", true, false, "N", "connections open at once (default 64)"}};
  for (OptionSpec& o : series_budget_options()) options.push_back(std::move(o));
  return {"serve", "a Prometheus exporter: /metrics and /healthz over HTTP",
          "gpumap serve [--listen HOST:PORT] [--cache SECONDS] [--web.config.file FILE] [--web.max-requests N] "
          "[--web.max-connections N] [--process-series all|info|none] [--drop-process-label LABEL]... "
          "[--command-length N] [--max-processes N] [--finding-severity SEVERITY] [--simulate HOST]",
          command_description("serve"),
          options,
          false,
          run};
}

}  // namespace gpumap
