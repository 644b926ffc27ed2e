// gpumap list: the NVML inventory, in nvidia-smi's order.
#include <iostream>

#include "cli/command.h"
#include "model/text.h"
#include "session/lease_gpus.h"
#include "session/which.h"
#include "model/error.h"
#include "output/query_csv.h"
#include "output/render.h"

namespace gpumap {
namespace {

/// --query-gpu FIELDS --format csv[,noheader][,nounits]: nvidia-smi's CSV.
std::string query_csv(const Args& args, Context& ctx) {
  std::vector<std::string> fields = parse_query_fields(QueryKind::kGpu, *args.value("--query-gpu"), "--query-gpu");
  CsvFormat fmt = parse_csv_format(args.value("--format").value_or("csv"));
  const Snapshot& s = ctx.session().snapshot();
  GpuQueryExtras x;
  for (const std::string& f : fields) {
    if (f == "cuda_ordinal") {  // this environment's cuda:N of each GPU (a MIG GPU: its first MIG device's)
      std::vector<std::string> uuids = ctx.session().mapping().view.uuids;
      for (size_t i = 0; i < uuids.size(); ++i)
        if (const Gpu* g = s.find_device(uuids[i]).gpu) x.cuda_ordinal.emplace(g->uuid, static_cast<int>(i));
    }
    if (f == "lease") x.lease = read_gpu_leases(ctx.session());
  }
  return render_gpu_csv(s, x, fields, fmt);
}

int run(const Args& args, Context& ctx) {
  if (csv_query_asked(args, ctx, "--query-gpu", "gpumap list --query-gpu=index,uuid,cuda_ordinal --format=csv")) {
    std::cout << query_csv(args, ctx);
    return 0;
  }
  const Snapshot& s = ctx.session().snapshot();
  std::map<std::string, LeaseState> leases = read_gpu_leases(ctx.session());  // gpumap run's leases
  // Inside a container or a Slurm step under a device cgroup: each GPU's number outside.
  GpuPlace where = gpu_place(ctx.session(), ctx.session().env());
  if (ctx.json()) {
    Json j = snapshot_json(s);
    for (Json& gj : j["gpus"]) {
      auto l = leases.find(gj["uuid"].get<std::string>());
      gj["lease"] = l == leases.end() ? Json(nullptr) : lease_json(l->second);  // a lost GPU has no lease to name
      if (auto o = outer_number(s, where, gj["uuid"].get<std::string>())) gj[o->key] = o->value;
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
                    leases.count(g.uuid) ? lease_summary(leases.at(g.uuid)) : ""});
    if (rows.back().back().empty()) rows.back().back() = "-";
  }
  std::vector<std::string> heads = {"GPU", "NAME", "UUID", "PCI BUS ID", "MEMORY USED", "UTIL", "CC", "MIG", "PROCS", "LEASE"};
  if (!s.gpus.empty())
    if (auto first = outer_number(s, where, s.gpus.front().uuid)) {
      heads.insert(heads.begin() + 1, first->column);
      for (size_t i = 0; i < rows.size(); ++i) {
        auto o = outer_number(s, where, s.gpus[i].uuid);
        rows[i].insert(rows[i].begin() + 1, o ? std::to_string(o->value) : "?");
      }
    }
  std::cout << host_banner(s) << render_table(heads, rows, term_style(), {"NAME", "LEASE"});
  for (const Gpu& g : s.gpus)
    for (const GpuNote& n : g.notes) std::cout << fit_line("note: GPU " + std::to_string(g.nvml_index) + ": " + n.text);
  return 0;
}

}  // namespace

Command list_command() {
  return {"list", "the GPUs as the driver (NVML, nvidia-smi) numbers them",
          "gpumap list [--json | --query-gpu=FIELDS [--format=csv[,noheader][,nounits]]] [--watch SECONDS] [--simulate HOST]",
          "Lists every GPU in NVML order (the nvidia-smi index), with UUID, PCI bus id, memory,\n"
          "utilisation, compute capability, MIG mode and process count.  A field the driver does not\n"
          "support is N/A (null in JSON); a query that fails is listed as a note, never dropping the GPU.\n"
          "A process list the driver could not read is `?` (null in JSON): unknown, not idle.\n"
          "--query-gpu=FIELDS --format=csv prints nvidia-smi's CSV for those fields: nvidia-smi's names (index,\n"
          "uuid, pci.bus_id, name, minor_number, memory.total, memory.used, memory.free, utilization.gpu,\n"
          "utilization.memory, compute_cap, mig.mode.current, driver_version, count) plus gpumap's cuda_ordinal\n"
          "(the GPU's cuda:N in this environment, [N/A] when CUDA cannot see it), lease and processes.\n"
          "--watch SECONDS refreshes until Ctrl-C (JSON: one document per line).",
          query_options("--query-gpu"),
          false, [](const Args& a, Context& c) { return run_watchable(a, c, run); }};
}

}  // namespace gpumap
