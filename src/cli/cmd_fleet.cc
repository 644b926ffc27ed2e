// gpumap fleet: every node's GPUs, processes (each with its own cuda:N) and findings, from the
// Prometheus that scrapes `gpumap serve` on each node (docs/fleet.md).
#include <iostream>

#include "cli/command.h"
#include "cli/fleet_options.h"
#include "model/error.h"
#include "output/fleet_view.h"
#include "session/fleet.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  FleetRequest req = fleet_request(args, ctx, args.has("--verbose"));
  std::optional<Severity> fail_on = parse_fleet_fail_on(args.value("--fail-on"));
  FleetAnswer a = read_fleet(req);
  std::cout << (ctx.json() ? fleet_json(a) : fleet_text(a));
  return fail_on && fleet_worst(a) >= *fail_on ? kExitFindings : kExitOk;
}

std::vector<OptionSpec> fleet_command_options() {
  std::vector<OptionSpec> o = fleet_source_options();  // those `top --prometheus` takes too
  o.push_back({"--fail-on", true, false, "warning|error", "exit 7 when a finding this severe or worse is shown (a node down or a partial answer counts as an error)"});
  o.push_back({"--verbose", false, false, "", "list info findings too (else counted by id in one line)", {"-v"}});
  return o;
}

}  // namespace

Command fleet_command() {
  return {"fleet", "every node's GPUs, processes, cuda:N and findings, from Prometheus",
          "gpumap fleet [--prometheus URL] [--node NAME] [--job ID] [--user U] [--gpu-model TEXT]\n"
          "             [--processes auto|all|with-findings] [--fail-on warning|error]\n"
          "             [--timeout SECONDS] [--http.config.file FILE] [-v] [--json]",
          "Asks the Prometheus that scrapes `gpumap serve` on each node (its HTTP query API: Prometheus,\n"
          "Thanos, Mimir and VictoriaMetrics answer the same) and prints every node: up or down with the\n"
          "age of its last driver read, its GPUs (memory, utilisation, temperature), the processes on them\n"
          "with each one's own cuda:N, user, Slurm job and rank or pod; then each Slurm job across its\n"
          "nodes (its ranks on several nodes are one job) and the findings grouped by cause.  Past 2 000\n"
          "GPU processes (--processes auto) each GPU and job shows its count and only the processes with\n"
          "a warning or error finding are listed: --processes all lists every one, a filter narrows.  gpumap\n"
          "collects nothing itself: a node Prometheus does not scrape is not shown; every target of\n"
          "gpumap's scrape jobs is, a target that never came up DOWN.  The filters go into\n"
          "the queries as label matchers (a value is matched exactly and can never change the\n"
          "query).  The URL is --prometheus, else $GPUMAP_PROMETHEUS.  Credentials, headers (a tenant's\n"
          "X-Scope-OrgID) and TLS come from --http.config.file (Prometheus's own client YAML: basic_auth,\n"
          "authorization, tls_config, http_headers),\n"
          "never from the command line.  Exit 1 when Prometheus cannot be reached, refuses, or does not\n"
          "answer within --timeout (default 10 s per query), naming the URL; with --fail-on, 7 when a\n"
          "finding that severe or worse is shown, a node is down, or the answer is partial (a store or\n"
          "shard did not answer; docs/fleet.md).",
          fleet_command_options(),
          false,
          run};
}

}  // namespace gpumap
