// gpumap ps: who is on which GPU, and what each process calls that GPU (its own cuda:N).
#include <cstdlib>
#include <iostream>
#include <map>

#include "cli/command.h"
#include "model/error.h"
#include "model/text.h"
#include "output/ps_view.h"
#include "output/query_csv.h"
#include "output/render.h"
#include "session/ps.h"

namespace gpumap {
namespace {

std::string lease_cell(const std::optional<LeaseState>& st) {
  std::string cell = st ? lease_summary(*st, LeaseWords::kShort) : "";
  return cell.empty() ? "-" : cell;
}

/// One frame as text: a JSON document (one line per process; a single line when `one_line`)
/// or the table.  Rows are serialised one at a time: 10 000 processes never build one big tree.
std::string one_frame(Context& ctx, bool one_line) {
  PsFrame frame = read_ps_frame(ctx.session());
  const Snapshot& s = ctx.session().snapshot();
  const PidNamespaceView& ns = frame.ns;
  const PsResult& res = frame.result;
  std::map<std::string, std::optional<LeaseState>>& leases = frame.leases;

  if (ctx.json()) {
    Json head = document(s);
    head["proc_root"] = frame.proc_root;
    head["pid_namespace"] = {{"joinable", ns.joinable},
                             {"procfs", json_or_null(ns.procfs)},
                             {"nvml", json_or_null(ns.nvml)},
                             {"note", ns.note}};
    head["unlisted_gpus"] = res.unlisted_gpus;
    // Which node and GPUs this is: `gpumap job` joins one such document per node.
    head["host"] = frame.host;
    head["slurm_node"] = json_or_null(frame.slurm_node);
    Json gpus = Json::array();
    for (const Gpu& g : s.gpus)
      gpus.push_back(gpu_ref_json(g.nvml_index, g.uuid, g.pci_bus_id, g.minor_number));
    head["gpus"] = gpus;
    std::string out = dump(head, true);
    out.resize(out.size() - 2);  // the newline and the closing brace: the process list follows
    const char* nl = one_line ? "" : "\n";
    out += std::string(",") + nl + "\"processes\": [";
    bool first = true;
    for (const ProcessRow& r : res.rows) {
      out += first ? nl : std::string(",") + nl;
      out += ps_row_json(r, leases[r.uuid]);
      first = false;
    }
    out += std::string(first ? "" : nl) + "]," + nl + "\"findings\": ";
    std::string fs = dump(ps_gpu_findings_json(res.gpu_findings), true);
    fs.pop_back();  // dump's newline
    out += fs + "}\n";
    return out;
  }

  std::vector<std::vector<std::string>> table;
  std::string notes;
  for (const ProcessRow& r : res.rows) {
    std::string cuda = r.cuda_ordinal ? "cuda:" + std::to_string(*r.cuda_ordinal) : r.environ_known ? "-" : "?";
    std::string cmd = r.state == ProcessState::kExited       ? "(exited)"
                      : r.state == ProcessState::kNotVisible ? "(not visible from here)"
                                                             : r.command.value_or("?") + (r.command_truncated ? "\u2026" : "");
    std::string cvd = !r.environ_known ? "?" : r.cuda_visible_devices ? (r.cuda_visible_devices->empty() ? "''" : *r.cuda_visible_devices) : "unset";
    std::string pid = std::to_string(r.pid);
    if (r.local_pid && *r.local_pid != r.pid) pid += " (" + std::to_string(*r.local_pid) + " here)";
    table.push_back({pid, r.user.value_or("?"), std::to_string(r.nvml_index), r.uuid,
                     r.used_memory_mib ? std::to_string(*r.used_memory_mib) + " MiB" : "N/A", cuda, cvd,
                     lease_cell(leases[r.uuid]), cmd});
    for (const Finding& fd : r.findings)
      notes += render_finding(fd, "pid " + std::to_string(r.pid) + ", GPU " + std::to_string(r.nvml_index));
  }
  std::string t = host_banner(s);
  if (!ns.joinable) t += fit_line("PID namespace: " + ns.note);
  if (res.rows.empty()) t += "No GPU processes.\n";
  else
    // COMMAND tells processes apart: on a narrow terminal LEASE, UUID and USER go before it is cut
    // below 24 columns (--wide or a pipe keeps everything).
    t += render_table({"PID", "USER", "GPU", "UUID", "GPU MEMORY", "ITS CUDA", "CUDA_VISIBLE_DEVICES", "LEASE", "COMMAND"},
                      table, term_style(),
                      TableFit{{"USER", "CUDA_VISIBLE_DEVICES", "LEASE", "COMMAND"}, {"LEASE", "UUID", "USER"}, "COMMAND", 24});
  for (uint32_t i : res.unlisted_gpus)
    t += "GPU " + std::to_string(i) + ": NVML could not list its processes\n";
  for (const GpuFinding& g : res.gpu_findings) {  // once per GPU, naming its processes
    std::vector<std::string> pids;
    for (uint32_t p : g.pids) pids.push_back(std::to_string(p));
    notes += render_finding(g.finding, "GPU " + std::to_string(g.nvml_index) + ", pid" + (pids.size() == 1 ? " " : "s ") +
                                           join(pids, ", "));
  }
  if (!notes.empty()) t += "\nFindings:\n" + notes;
  return t;
}

int run(const Args& args, Context& ctx) {
  std::optional<std::vector<std::string>> fields;
  if (csv_query_asked(args, ctx, "--query", "gpumap ps --query=pid,gpu_uuid,cuda_ordinal --format=csv"))
    fields = parse_query_fields(QueryKind::kProcess, *args.value("--query"), "--query");
  CsvFormat fmt = parse_csv_format(args.value("--format").value_or("csv"));
  auto frame = [&](Context& c, bool one_line) {
    if (!fields) return one_frame(c, one_line);
    PsFrame f = read_ps_frame(c.session());
    return render_process_csv(c.session().snapshot(), f.result, f.leases, *fields, fmt);
  };
  if (std::optional<double> w = watch_seconds(args))
    return watch_frames(*w, ctx, [&](Context& c) { return frame(c, true); });
  std::cout << frame(ctx, false);
  return kExitOk;
}

}  // namespace

Command ps_command() {
  return {"ps", "who is on which GPU, and which cuda:N each process calls it",
          "gpumap ps [--json | --query=FIELDS [--format=csv[,noheader][,nounits]]] [--watch SECONDS]",
          "Lists every process in NVML's compute and graphics process lists, one row per (process, GPU):\n"
          "pid, user, command line, GPU memory, the nvidia-smi index and UUID, and the gpumap lease.  From\n"
          "/proc/PID/environ (the environment it started with) it shows the process's CUDA_VISIBLE_DEVICES\n"
          "and the cuda:N that process calls the GPU, resolved like `gpumap map`, plus findings: a GPU outside\n"
          "the process's visible set, no visibility on a shared host, a shared GPU, a CUDA_DEVICE_ORDER that\n"
          "breaks CUDA, a local rank not on its cuda:N or holding memory on another GPU besides its own.  Another user's unreadable entries show as ?/null.  In a container whose /proc cannot\n"
          "name the host PIDs NVML reports, rows say so.  $GPUMAP_PROC_ROOT replaces /proc (tests).\n"
          "--watch refreshes every SECONDS until Ctrl-C: on a terminal in place, into a pipe as plain frames\n"
          "separated by a blank line (JSON: one document per line per frame).\n"
          "--query=FIELDS --format=csv prints one CSV line per row, as nvidia-smi --query-compute-apps does: its\n"
          "names (pid, process_name, used_memory, gpu_uuid, gpu_bus_id, gpu_name) plus gpu_index, command, type,\n"
          "user, state, cuda_ordinal (the cuda:N the process calls that GPU), cuda_visible_devices, slurm_job_id,\n"
          "rank, local_rank, lease and findings (ids, space separated).",
          query_options("--query"),
          false,
          run};
}

}  // namespace gpumap
