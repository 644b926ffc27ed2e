// gpumap list: the NVML inventory, in nvidia-smi's order.
#include <iostream>

#include "cli/command.h"
#include "model/text.h"
#include "os/lease.h"
#include "output/render.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  const Snapshot& s = ctx.snapshot();
  if (ctx.json()) {
    Json j = snapshot_json(s);
    for (Json& gj : j["gpus"]) {
      if (gj["uuid"].get<std::string>().empty()) {  // NVML could not read it (a lost GPU): no lease to name
        gj["lease"] = nullptr;
        continue;
      }
      LeaseState l = read_lease(lease_dir(ctx.env().get("GPUMAP_LOCK_DIR")), gj["uuid"].get<std::string>());  // gpumap run's lease
      gj["lease"] = lease_json(l);
    }
    std::cout << dump(j);
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const Gpu& g : s.gpus) {
    std::string util = g.utilization_gpu ? std::to_string(*g.utilization_gpu) + "%" : "N/A";
    std::string procs = g.processes ? std::to_string(g.processes->size()) : "?";  // unknown, never "0"
    std::string mig = g.mig_enabled ? (*g.mig_enabled ? "on (" + std::to_string(g.mig_devices.size()) + ")" : "off") : "N/A";
    rows.push_back({std::to_string(g.nvml_index), g.name, g.uuid, g.pci_bus_id, memory_cell(g), util,
                    na(g.compute_capability), mig, procs,
                    g.uuid.empty() ? "" : lease_summary(read_lease(lease_dir(ctx.env().get("GPUMAP_LOCK_DIR")), g.uuid))});
    if (rows.back().back().empty()) rows.back().back() = "-";
  }
  std::cout << host_banner(s)
            << render_table({"GPU", "NAME", "UUID", "PCI BUS ID", "MEMORY USED", "UTIL", "CC", "MIG", "PROCS", "LEASE"}, rows,
                            term_style(), {"NAME", "LEASE"});
  for (const Gpu& g : s.gpus)
    for (const std::string& n : g.notes) std::cout << fit_line("note: GPU " + std::to_string(g.nvml_index) + ": " + n);
  return 0;
}

}  // namespace

Command list_command() {
  return {"list", "the GPUs as the driver (NVML, nvidia-smi) numbers them",
          "gpumap list [--json] [--simulate HOST]",
          "Lists every GPU in NVML order (the nvidia-smi index), with UUID, PCI bus id, memory,\n"
          "utilisation, compute capability, MIG mode and process count.  A field the driver does not\n"
          "support is N/A (null in JSON); a query that fails is listed as a note, never dropping the GPU.\n"
          "A process list the driver could not read is `?` (null in JSON): unknown, not idle.",
          {}, false, run};
}

}  // namespace gpumap
