// gpumap run: pick GPUs, lease them, and run a command pinned to them (and to their CPUs).
//
// Design: gpumap stays as the parent.  It holds one flock()ed lock file per GPU (O_CLOEXEC, so
// the command never inherits them) for as long as the command runs, forwards SIGINT, SIGTERM,
// SIGHUP and SIGQUIT to it, and exits with its status (128+signal when a signal killed it).
// The kernel drops the leases when gpumap exits, however it exits; should gpumap be killed
// first, the command gets SIGTERM (PR_SET_PDEATHSIG), so a lease never outlives its job
// unnoticed.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include "model/text.h"
#include "cli/pick_options.h"
#include "driver/nvml_reader.h"
#include "model/error.h"
#include "os/launch.h"
#include "os/lease.h"

namespace gpumap {
namespace {

using Clock = std::chrono::steady_clock;

/// Takes every lease in `uuids` or none: on a lost race the ones taken are released.  A lock
/// file found unusable is added to `refused` (UUID -> why) so it is not picked again.
std::vector<Lease> lease_all(const std::string& dir, const std::vector<std::string>& uuids, const LeaseRecord& rec,
                             std::map<std::string, std::string>& refused) {
  std::vector<Lease> held;
  for (const std::string& u : uuids) {
    LeaseAttempt a = try_lease(dir, u, rec);
    if (!a.refused.empty()) refused[u] = "lock file unusable: " + a.refused;
    if (!a.lease) return {};
    held.push_back(std::move(*a.lease));
  }
  return held;
}

int run(const Args& args, Context& ctx) {
  if (!args.has_rest() || args.rest().empty())
    throw Error(kExitUsage, "run: no command given", "put the command after `--`: gpumap run --gpus 1 -- python3 train.py");
  PickRequest req = pick_request(args);
  double wait_s = args.number("--wait", 0, 1e7).value_or(0);
  const std::vector<std::string>& cmd = args.rest();

  std::vector<std::string> visible = pickable_uuids(ctx, req.count);
  std::optional<Snapshot> fresh;  // re-read while waiting: memory, load and processes change
  const Snapshot* s = &ctx.snapshot();
  std::string dir = context_lease_dir(ctx);
  prepare_lease_dir(dir);
  LeaseRecord rec = current_lease_record(cmd);

  auto start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s));
  auto last_read = start;
  std::mt19937 rng(static_cast<unsigned>(getpid()));
  std::vector<Lease> leases;
  std::vector<std::string> chosen;
  int lost_races = 0;
  std::map<std::string, std::string> refused;  // lock files try_lease would not use
  for (;;) {
    std::map<std::string, std::string> blockers = lease_blockers(dir, visible);
    blockers.insert(refused.begin(), refused.end());
    PickResult r = pick_gpus(*s, visible, blockers, req);
    if (!r.uuids.empty()) {
      leases = lease_all(dir, r.uuids, rec, refused);
      if (!leases.empty()) {
        chosen = r.uuids;
        break;
      }
      // Another gpumap got there first (or a lock file proved unusable): look again at once.
      if (++lost_races < 20) continue;
      if (Clock::now() >= deadline)
        throw Error(kExitUnavailable, "run: other gpumap processes kept taking the GPUs picked (" + join(r.uuids, ",") + ")",
                    "add or raise --wait SECONDS");
    } else {
      if (r.impossible)
        throw Error(kExitUnavailable, "run: " + r.failure,
                    "ask for fewer GPUs (--gpus), or relax --include/--exclude/--min-free-mib");
      if (Clock::now() >= deadline) {
        std::string waited = wait_s > 0 ? " (waited " + std::to_string(static_cast<long>(wait_s)) + " s)" : "";
        throw Error(kExitUnavailable, "run: " + r.failure + waited,
                    wait_s > 0 ? "wait longer (--wait SECONDS), or relax the limits"
                               : "add --wait SECONDS to wait for them, relax the limits, or --allow-busy");
      }
    }
    lost_races = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 100));
    if (Clock::now() - last_read > std::chrono::seconds(1)) {
      fresh = read_snapshot(ctx.driver(), ReadOptions{.processes = true, .topology = true, .nvlink = req.count > 1});
      s = &*fresh;
      last_read = Clock::now();
    }
  }

  Environment env = ctx.env();
  env.set("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  env.set("CUDA_VISIBLE_DEVICES", join(chosen, ","));
  LaunchSpec spec{cmd, env.to_strings(), {}};
  std::string cpu_note;
  if (args.has("--no-cpu-bind")) {
    cpu_note = "CPUs: not bound (--no-cpu-bind)";
  } else {
    std::vector<std::optional<std::string>> lists;
    for (const std::string& u : chosen) lists.push_back(s->find_uuid(u) ? s->find_uuid(u)->cpu_affinity : std::nullopt);
    std::string why;
    spec.cpus = cpus_near(lists, current_affinity(), &why);
    cpu_note = spec.cpus.empty() ? "CPUs: not bound (" + why + ")" : "CPUs: " + format_cpu_list(spec.cpus);
  }
  std::string msg = "gpumap run: leased " + std::to_string(chosen.size()) + " GPU" + (chosen.size() == 1 ? "" : "s") +
                    " (" + dir + "); CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=" + join(chosen, ",") + "\n" +
                    describe_choice(*s, chosen, "  ") + "  " + cpu_note + "\n";
  std::cout.flush();
  std::fputs(msg.c_str(), stderr);
  std::fflush(stderr);

  LaunchResult res = launch_and_wait(spec);
  if (!res.exec_error.empty()) {
    std::fprintf(stderr, "gpumap: error: run: %s\n  hint: check the program name and PATH (no shell is used: "
                         "for shell syntax run `sh -c '...'`)\n", res.exec_error.c_str());
  }
  return res.exit_code;  // the leases close with `leases`, right after the command ended
}

}  // namespace

Command run_command() {
  std::vector<OptionSpec> opts = pick_options();
  opts.push_back({"--wait", true, false, "SECONDS", "wait up to this long for GPUs to qualify (default: fail at once)"});
  opts.push_back({"--no-cpu-bind", false, false, "", "keep the inherited CPU affinity"});
  return {"run", "pick GPUs, lease them, and run a command pinned to them",
          "gpumap run [--gpus N] [pick options] [--wait SECONDS] [--no-cpu-bind] -- CMD [ARGS...]",
          "Picks GPUs like `gpumap pick`, takes a lease on each (a lock file per GPU in\n"
          "$GPUMAP_LOCK_DIR, default /tmp/gpumap-leases, shared by every user), then runs CMD directly\n"
          "(PATH lookup, no shell) with CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA_VISIBLE_DEVICES set to the\n"
          "GPUs' UUIDs, and CPU affinity set to the GPUs' local CPUs within the inherited set.  The\n"
          "mapping is printed on stderr.  gpumap stays as CMD's parent holding the leases, forwards\n"
          "SIGINT, SIGTERM, SIGHUP and SIGQUIT, and exits with CMD's exit code (128+signal when a signal\n"
          "ended it; 127/126 when CMD cannot be started).  A leased GPU is never picked by another\n"
          "gpumap.  Exit 6 when not enough GPUs qualify now (or within --wait), saying what blocked\n"
          "each; at once when more GPUs are asked for than could ever qualify.",
          opts, false, run};
}

}  // namespace gpumap
