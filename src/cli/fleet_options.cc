#include "cli/fleet_options.h"

#include "model/env_vars.h"

namespace gpumap {

FleetRequest fleet_request(const Args& args, const Context& ctx, bool info) {
  FleetRequest req;
  req.prometheus = args.value("--prometheus").value_or(ctx.session().env().get(env_var("GPUMAP_PROMETHEUS")).value_or(""));
  req.filter = {args.values("--node"), args.values("--job"), args.values("--user"), args.values("--gpu-model"), info};
  if (std::optional<std::string> t = args.value("--timeout")) req.timeout_s = parse_fleet_timeout(*t);
  req.http_config_file = args.value("--http.config.file").value_or("");
  if (std::optional<std::string> p = args.value("--processes")) req.processes = parse_fleet_processes(*p);
  return req;
}

bool has_fleet_option(const Args& args) {
  for (const OptionSpec& o : fleet_source_options())
    if (args.has(o.name)) return true;
  return false;
}

std::vector<OptionSpec> fleet_source_options() {
  return {{"--prometheus", true, false, "URL", "the Prometheus to ask (default $GPUMAP_PROMETHEUS), e.g. http://prometheus:9090"},
          {"--node", true, true, "NAME", "only this node (its instance, or the instance's host without the port)"},
          {"--job", true, true, "JOBID", "only this Slurm job's processes and their GPUs"},
          {"--user", true, true, "USER", "only this user's processes and their GPUs"},
          {"--gpu-model", true, true, "TEXT", "only GPUs whose name contains TEXT (any case), e.g. H100"},
          {"--processes", true, false, "auto|all|with-findings",
           "which processes to list: every one up to 2 000 GPU processes, else those with findings (auto), or as named"},
          {"--timeout", true, false, "SECONDS", "each query's limit (default 10)"},
          {"--http.config.file", true, false, "FILE", "credentials, headers and TLS for Prometheus (basic_auth, authorization, tls_config, http_headers)"}};
}

}  // namespace gpumap
