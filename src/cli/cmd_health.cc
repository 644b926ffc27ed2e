// gpumap health: each GPU's faults (Xids of the kernel log, uncorrectable ECC, a lost GPU, hardware
// slowdown) and whose work each hit: pid, user, Slurm job and rank, pod and its own cuda:N.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/health_view.h"
#include "session/health.h"
#include "session/ps.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  HealthRequest req;
  if (auto since = args.value("--since")) req.since_s = parse_since(*since);
  std::optional<Severity> fail_on = parse_fail_on(args.value("--fail-on"));
  if (fail_on && args.has("--watch"))
    throw Error(kExitUsage, "health: --fail-on checks one reading, --watch never ends", "drop --watch for a health check");
  Severity worst = Severity::kInfo;
  auto frame = [&](Context& c, bool one_line) {
    HealthAnswer a = read_health(c.session(), req);
    worst = a.worst;
    return c.json() ? health_json(a, one_line) : health_text(c.session().snapshot(), a);
  };
  if (std::optional<double> w = watch_seconds(args))
    return watch_frames(*w, ctx, [&](Context& c) { return frame(c, true); });
  std::cout << frame(ctx, false);
  return worst >= fail_on.value_or(Severity::kError) && worst != Severity::kInfo ? kExitFindings : kExitOk;
}

}  // namespace

Command health_command() {
  return {"health", "GPU faults (Xid, ECC, lost GPU, slowdown) and whose job, rank, pod and cuda:N each hit",
          "gpumap health [--since DURATION] [--fail-on warning|error] [--json] [--watch SECONDS]",
          "Reads the kernel log (/dev/kmsg: root or CAP_SYSLOG; a simulated host's kernel_log) for the\n"
          "NVIDIA driver's Xid lines and NVML's fault counters of each GPU (ECC volatile and aggregate,\n"
          "retired pages, remapped rows, clock-event reasons, PCIe replays, a lost GPU), and ties each\n"
          "fault to the processes it hit: the pid the kernel line names (`pid P (exited)` with the name\n"
          "the line gave when it is gone), else the processes on that GPU, each with its user, Slurm job\n"
          "and rank, launcher rank, pod and its own cuda:N (as `gpumap ps` reads them).  Each Xid says what\n"
          "it means, whom it points at (application, driver, hardware, interconnect, thermal-power) and\n"
          "what to do, from NVIDIA's Xid catalogue.  Without the kernel log it says so and shows NVML's\n"
          "counters, which name no process.  --since 10m keeps the Xids of the last 10 minutes (s, m, h,\n"
          "d); the counters count since the driver loaded (volatile) or ever (aggregate).  Exit 7 when a\n"
          "fault of severity error is shown (with --fail-on warning, a warning too).",
          {{"--since", true, false, "DURATION", "only Xids of the last DURATION (90, 90s, 10m, 2h, 1d)"},
           {"--fail-on", true, false, "warning|error", "exit 7 when a fault this severe or worse is shown (default: error)"},
           watch_option()},
          false,
          run};
}

}  // namespace gpumap
