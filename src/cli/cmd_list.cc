// gpumap list: the NVML inventory, in nvidia-smi's order.
#include <iostream>

#include <algorithm>

#include "cli/command.h"
#include "model/error.h"
#include "output/list_view.h"
#include "session/list.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  if (csv_query_asked(args, ctx, "--query-gpu", "gpumap list --query-gpu=index,uuid,cuda_ordinal --format=csv")) {
    std::vector<std::string> fields = parse_query_fields(QueryKind::kGpu, *args.value("--query-gpu"), "--query-gpu");
    CsvFormat fmt = parse_csv_format(args.value("--format").value_or("csv"));
    auto asked = [&](const char* f) { return std::find(fields.begin(), fields.end(), f) != fields.end(); };
    ListAnswer a = answer_list(ctx.session(), {.cuda_ordinals = asked("cuda_ordinal"),
                                               .leases = asked("lease"),
                                               .place = false,
                                               .sensors = gpu_query_reads_sensors(fields)});
    std::cout << list_csv(a, fields, fmt);
    return kExitOk;
  }
  // The table shows no sensor: reading them (temperature, power, clocks, fan, pstate, ECC) cost
  // 4 ms of a 31 ms run on an H100 (docs/validation), what made `list` slower than nvidia-smi.
  ListAnswer a = answer_list(ctx.session(), {.sensors = ctx.json()});
  std::cout << render_list(a, ctx.json());
  return kExitOk;
}

}  // namespace

Command list_command() {
  return {"list", "the GPUs as the driver (NVML, nvidia-smi) numbers them",
          "gpumap list [--json | --query-gpu=FIELDS [--format=csv[,noheader][,nounits]]] [--watch SECONDS] [--simulate HOST]",
          "Lists every GPU in NVML order (the nvidia-smi index), with UUID, PCI bus id, memory,\n"
          "utilisation, compute capability, MIG mode and process count.  A field the driver does not\n"
          "support is N/A (null in JSON); a query that fails is listed as a note, never dropping the GPU.\n"
          "A process list the driver could not read is `?` (null in JSON): unknown, not idle.\n"
          "--query-gpu=FIELDS --format=csv prints nvidia-smi's CSV for those fields, by nvidia-smi's names:\n"
          "index, uuid, pci.bus_id, name, minor_number, memory.total, memory.used, memory.free,\n"
          "utilization.gpu, utilization.memory, temperature.gpu, power.draw, power.limit,\n"
          "enforced.power.limit, clocks.sm, clocks.mem, fan.speed, pstate, compute_cap, mig.mode.current,\n"
          "driver_version, count and the ECC counts ecc.errors.corrected.volatile.total and\n"
          "ecc.errors.uncorrected.volatile.total; plus gpumap's cuda_ordinal\n"
          "(the GPU's cuda:N in this environment, [N/A] when CUDA cannot see it), lease and processes.\n"
          "--watch SECONDS refreshes until Ctrl-C (JSON: one document per line).",
          query_options("--query-gpu"),
          false, [](const Args& a, Context& c) { return run_watchable(a, c, run); }};
}

}  // namespace gpumap
