// gpumap ps: who is on which GPU, and what each process calls that GPU (its own cuda:N).
#include <signal.h>
#include <time.h>

#include <cstdlib>
#include <iostream>
#include <map>

#include "cli/command.h"
#include "model/error.h"
#include "model/text.h"
#include "os/lease.h"
#include "os/proc.h"
#include "output/render.h"
#include "resolve/process_view.h"

namespace gpumap {
namespace {

volatile sig_atomic_t g_stop = 0;
void on_sigint(int) { g_stop = 1; }

PidNamespaceView pid_view(const ProcFs& proc, bool simulated, const std::optional<std::string>& nvml_pid_ns) {
  // NVML reports PIDs of the init namespace; a simulated host's PIDs are this /proc's own.
  // GPUMAP_NVML_PID_NS (Seams::nvml_pid_ns) names that namespace explicitly ("pid:[...]"), for tests.
  std::optional<std::string> nvml = nvml_pid_ns;
  if (!nvml && !simulated) nvml = kInitPidNamespace;
  return classify_pid_namespace(nvml, proc.pid_ns_link("1"), proc.pid_ns_link("self"), proc.nspid("self"));
}

Json lease_json(const std::optional<LeaseState>& st, const ProcessRow& r) {
  if (!st || !st->held) return nullptr;
  Json j;
  j["held"] = true;
  if (st->holder) {
    j["holder_pid"] = st->holder->pid;
    j["holder_user"] = st->holder->user;
    j["holder_command"] = st->holder->command;
    j["this_process"] = r.local_pid && st->holder->pid == static_cast<int64_t>(*r.local_pid);
  } else {
    j["holder_pid"] = nullptr;
  }
  return j;
}

std::string lease_cell(const std::optional<LeaseState>& st) {
  if (!st || !st->held) return "-";
  if (!st->holder) return "held";
  return "pid " + std::to_string(st->holder->pid);
}

template <class T>
Json opt_json(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

/// Appends `v` as a JSON string.  Plain ASCII (the usual case) is copied as is; anything
/// else goes through nlohmann's escaper.  10 000 rows make ~10 MB: this path keeps it fast.
void put_str(std::string& out, const std::string& v) {
  for (unsigned char c : v)
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
      out += dump_line(Json(v));
      return;
    }
  out += '"';
  out += v;
  out += '"';
}

void put_key(std::string& out, const char* key, bool first = false) {
  if (!first) out += ',';
  out += '"';
  out += key;
  out += "\":";
}

void put_opt_str(std::string& out, const char* key, const std::optional<std::string>& v) {
  put_key(out, key);
  if (v) put_str(out, *v);
  else out += "null";
}

template <class T>
void put_opt_num(std::string& out, const char* key, const std::optional<T>& v) {
  put_key(out, key);
  out += v ? std::to_string(*v) : "null";
}

/// One process row as a JSON object on one line (the contract in docs/ps.md).
void put_row(std::string& out, const ProcessRow& r, const std::optional<LeaseState>& lease) {
  out += '{';
  put_key(out, "pid", true);
  out += std::to_string(r.pid);
  put_opt_num(out, "local_pid", r.local_pid);
  put_key(out, "nspid");
  if (r.nspid) {
    out += '[';
    for (size_t i = 0; i < r.nspid->size(); ++i) out += (i ? "," : "") + std::to_string((*r.nspid)[i]);
    out += ']';
  } else {
    out += "null";
  }
  put_key(out, "state");
  put_str(out, process_state_name(r.state));
  put_key(out, "nvml_index");
  out += std::to_string(r.nvml_index);
  put_key(out, "uuid");
  put_str(out, r.uuid);
  put_key(out, "type");
  put_str(out, r.type);
  put_opt_num(out, "used_memory_mib", r.used_memory_mib);
  put_opt_str(out, "user", r.user);
  put_opt_num(out, "uid", r.uid);
  put_opt_str(out, "command", r.command);
  put_key(out, "environ");
  put_str(out, r.environ_known                        ? "ok"
               : r.state == ProcessState::kRunning ? proc_access_name(r.environ_access)
                                                   : "unknown");
  put_opt_str(out, "cuda_visible_devices", r.cuda_visible_devices);
  put_opt_str(out, "cuda_device_order", r.cuda_device_order);
  put_opt_str(out, "nvidia_visible_devices", r.nvidia_visible_devices);
  put_opt_str(out, "local_rank", r.local_rank);
  put_opt_str(out, "slurm_localid", r.slurm_localid);
  put_opt_num(out, "ordinal", r.ordinal);
  put_opt_str(out, "cuda_device", r.ordinal ? std::optional<std::string>("cuda:" + std::to_string(*r.ordinal))
                                            : std::nullopt);
  put_opt_str(out, "cuda_error", r.cuda_error);
  put_key(out, "lease");
  out += dump_line(lease_json(lease, r));
  put_key(out, "findings");
  out += '[';
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const Finding& f = r.findings[i];
    out += i ? ",{" : "{";
    put_key(out, "id", true);
    put_str(out, f.id);
    put_key(out, "severity");
    put_str(out, severity_name(f.severity));
    put_key(out, "message");
    put_str(out, f.message);
    put_key(out, "fix");
    put_str(out, f.fix);
    out += '}';
  }
  out += "]}";
}

/// One frame as text: a JSON document (one line per process; a single line when `one_line`)
/// or the table.  Rows are serialised one at a time: 10 000 processes never build one big tree.
std::string one_frame(Context& ctx, const ProcFs& proc, bool one_line) {
  const Snapshot& s = ctx.snapshot();
  PidNamespaceView ns = pid_view(proc, s.simulated, ctx.seams().nvml_pid_ns);
  PsResult res = build_ps(
      s, ns, [&](uint32_t pid) { return proc.read(pid); },
      [&](const Environment& e) { return ctx.mapping(e, false).view; });

  // Leases: one read per GPU that has a row.
  std::map<std::string, std::optional<LeaseState>> leases;
  std::string dir = ctx.lease_dir();
  for (const ProcessRow& r : res.rows) {
    if (leases.count(r.uuid)) continue;
    try {
      leases[r.uuid] = read_lease(dir, r.uuid);
    } catch (const Error&) {
      leases[r.uuid] = std::nullopt;
    }
  }

  if (ctx.json()) {
    Json head;
    head["simulated"] = s.simulated;
    head["source"] = s.source;
    head["proc_root"] = proc.root();
    head["pid_namespace"] = {{"joinable", ns.joinable},
                             {"procfs", opt_json(ns.procfs)},
                             {"nvml", opt_json(ns.nvml)},
                             {"note", ns.note}};
    head["unlisted_gpus"] = res.unlisted_gpus;
    std::string out = dump_line(head);
    out.pop_back();  // the closing brace: the process list follows
    const char* nl = one_line ? "" : "\n";
    out += std::string(",") + nl + "\"processes\": [";
    bool first = true;
    for (const ProcessRow& r : res.rows) {
      out += first ? nl : std::string(",") + nl;
      put_row(out, r, leases[r.uuid]);
      first = false;
    }
    out += std::string(first ? "" : nl) + "]}\n";
    return out;
  }

  std::vector<std::vector<std::string>> table;
  std::string notes;
  for (const ProcessRow& r : res.rows) {
    std::string cuda = r.ordinal ? "cuda:" + std::to_string(*r.ordinal) : r.environ_known ? "-" : "?";
    std::string cmd = r.state == ProcessState::kExited       ? "(exited)"
                      : r.state == ProcessState::kNotVisible ? "(not visible from here)"
                                                             : r.command.value_or("?");
    if (cmd.size() > 60) cmd = cmd.substr(0, 57) + "...";
    std::string cvd = !r.environ_known ? "?" : r.cuda_visible_devices ? (r.cuda_visible_devices->empty() ? "''" : *r.cuda_visible_devices) : "unset";
    std::string pid = std::to_string(r.pid);
    if (r.local_pid && *r.local_pid != r.pid) pid += " (" + std::to_string(*r.local_pid) + " here)";
    table.push_back({pid, r.user.value_or("?"), std::to_string(r.nvml_index), r.uuid,
                     r.used_memory_mib ? std::to_string(*r.used_memory_mib) + " MiB" : "N/A", cuda, cvd,
                     lease_cell(leases[r.uuid]), cmd});
    for (const Finding& fd : r.findings) {
      notes += "  [" + std::string(severity_name(fd.severity)) + "] " + fd.id + " (pid " + std::to_string(r.pid) +
               ", GPU " + std::to_string(r.nvml_index) + "): " + printable(fd.message) + "\n";
      if (!fd.fix.empty()) notes += "      fix: " + printable(fd.fix) + "\n";
    }
  }
  std::string t = host_banner(s);
  if (!ns.joinable) t += "PID namespace: " + ns.note + "\n";
  if (res.rows.empty()) t += "No GPU processes.\n";
  else
    t += render_table({"PID", "USER", "GPU", "UUID", "GPU MEMORY", "ITS CUDA", "CUDA_VISIBLE_DEVICES", "LEASE", "COMMAND"},
                      table);
  for (uint32_t i : res.unlisted_gpus)
    t += "GPU " + std::to_string(i) + ": NVML could not list its processes\n";
  if (!notes.empty()) t += "\nFindings:\n" + notes;
  return t;
}

int run(const Args& args, Context& ctx) {
  std::optional<double> watch = args.number("--watch", 0.1, 86400);
  ProcFs proc(ctx.seams().proc_root);
  if (!watch) {
    std::cout << one_frame(ctx, proc, false);
    return kExitOk;
  }
  struct sigaction sa = {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  while (!g_stop) {
    Context frame_ctx(ctx.driver(), ctx.env(), ctx.json(), ctx.seams());  // a fresh snapshot per frame
    std::string f = one_frame(frame_ctx, proc, true);
    if (ctx.json()) std::cout << f;
    else std::cout << "\033[H\033[2J" << f;
    std::cout.flush();
    timespec ts{static_cast<time_t>(*watch), static_cast<long>((*watch - static_cast<time_t>(*watch)) * 1e9)};
    while (!g_stop && nanosleep(&ts, &ts) != 0) {
    }
  }
  return kExitOk;
}

}  // namespace

Command ps_command() {
  return {"ps", "who is on which GPU, and which cuda:N each process calls it",
          "gpumap ps [--json] [--watch SECONDS]",
          "Lists every process in NVML's compute and graphics process lists, one row per (process, GPU):\n"
          "pid, user, command line, GPU memory, the nvidia-smi index and UUID, and the gpumap lease.  From\n"
          "/proc/PID/environ (the environment it started with) it shows the process's CUDA_VISIBLE_DEVICES\n"
          "and the cuda:N that process calls the GPU, resolved like `gpumap map`, plus findings: a GPU outside\n"
          "the process's visible set, no visibility on a shared host, a shared GPU, a CUDA_DEVICE_ORDER that\n"
          "breaks CUDA.  Another user's unreadable entries show as ?/null.  In a container whose /proc cannot\n"
          "name the host PIDs NVML reports, rows say so.  $GPUMAP_PROC_ROOT replaces /proc (tests).\n"
          "--watch refreshes every SECONDS until Ctrl-C (JSON: one document per line per frame).",
          {{"--watch", true, false, "SECONDS", "refresh every SECONDS until interrupted"}},
          false,
          run};
}

}  // namespace gpumap
