#include "cli/command_help.h"

#include <cstring>

namespace gpumap {
namespace {

struct Description {
  const char* command;
  const char* text;
};

const Description kDescriptions[] = {
    {"top",
     "A full-screen view that refreshes every --interval seconds (default 1): one block per GPU\n"
     "(nvidia-smi index, its cuda:N in this shell, name, utilisation and memory with history, lease\n"
     "and Slurm job; one line per GPU when the blocks would take a third of the screen, c toggles),\n"
     "the GPU processes (pid, user, GPU, the cuda:N the process itself calls it, GPU memory, SM %,\n"
     "CPU %, resident memory, run time, job, rank, command) and the findings, once per GPU.  Keys: h shows them all; q quits.\n"
     "Enter on a process shows its CUDA variables, its own cuda:N map and its findings with fixes.\n"
     "The driver is read apart from the drawing: a hung driver leaves the screen usable and says\n"
     "the data is stale.  Needs a terminal of at least 80x24.  --once prints one frame as text\n"
     "(no escape codes into a pipe) for scripts and bug reports.  For programs: gpumap ps --json --watch.\n"
     "With --prometheus URL (or --fleet and $GPUMAP_PROMETHEUS): the fleet as `gpumap fleet` reads it,\n"
     "every 2 s unless --interval says otherwise, one row per node (up, DOWN or STALE with the age of\n"
     "its last read, GPUs, memory, mean/max utilisation, processes, findings); Enter or Right expands\n"
     "a node into its GPUs and their processes with each one's own cuda:N, user, Slurm job and rank or\n"
     "pod, e expands them all; the findings by cause below.  The filters, --timeout and\n"
     "--http.config.file are fleet's.  Prometheus unreachable at start: fleet's error, exit 1; later,\n"
     "the screen says so with the age of the last good answer and keeps asking (docs/fleet.md)."},
    {"serve",
     "Answers HTTP GET /metrics with `gpumap metrics`'s series (docs/metrics.md) and /healthz with\n"
     "200 ok or 503 and why, on " GPUMAP_DEFAULT_LISTEN " unless --listen says otherwise (another address only when\n"
     "asked; port 0 picks a free one; the address is printed on stdout).  One reader thread reads the\n"
     "driver: concurrent scrapes share one read, and a frame is reused for --cache SECONDS (default 1).\n"
     "A scrape waits at most GPUMAP_DRIVER_TIMEOUT seconds for the driver; then it gets the last good\n"
     "frame marked stale (gpumap_exporter_stale 1, gpumap_exporter_up 0), and no longer than the\n"
     "scraper's X-Prometheus-Scrape-Timeout-Seconds.  A hung cuInit (the CUDA probe, needed on a mixed-model\n"
     "or MIG host) is given half that wait: the frame then has NVML's data without cuda_ordinal\n"
     "(gpumap_exporter_cuda_up 0).  --web.config.file FILE reads the Prometheus exporter-toolkit's\n"
     "web-config.yml: tls_server_config (cert_file, key_file, min_version, max_version, client_ca_file,\n"
     "client_auth_type) and basic_auth_users (bcrypt); an unknown key is an error.  The answer is gzipped\n"
     "when the scraper accepts gzip.  Requests are bounded (8 KiB head, 5 s to send it) and never read a\n"
     "file or run anything; at most --web.max-connections (64) connections, a quarter of them (at most\n"
     "16) from one address: past that, the oldest connection that has sent nothing is closed for the new\n"
     "one, so held connections never keep a scraper out; past --web.max-requests (40) requests being\n"
     "answered at once, 503.  With systemd socket activation (LISTEN_FDS=1, LISTEN_PID) it serves the\n"
     "socket passed and --listen must not be given.  Run it unprivileged: other users' environments are\n"
     "then unknown (their cuda_ordinal absent), not errors.  SIGINT/SIGTERM stop it (exit 0).\n"
     "contrib/systemd/gpumap-serve.service (and .socket) runs it as a service.  The series budget flags\n"
     "(--process-series, --drop-process-label, --command-length, --max-processes, --finding-severity) are\n"
     "`gpumap metrics`' (docs/metrics.md); serve also counts what --max-processes left out over its frames."},
    {"ps",
     "Lists every process in NVML's compute and graphics process lists, one row per (process, GPU):\n"
     "pid, user, command line, GPU memory, the nvidia-smi index and UUID, and the gpumap lease.  From\n"
     "/proc/PID/environ (the environment it started with) it shows the process's CUDA_VISIBLE_DEVICES\n"
     "and the cuda:N that process calls the GPU, resolved like `gpumap map`, plus findings: a GPU outside\n"
     "the process's visible set, no visibility on a shared host, a shared GPU, a CUDA_DEVICE_ORDER that\n"
     "breaks CUDA, a local rank not on its cuda:N or holding memory on another GPU besides its own.\n"
     "Another user's unreadable entries show as ?/null.  In a container whose /proc cannot\n"
     "name the host PIDs NVML reports, rows say so.  $GPUMAP_PROC_ROOT replaces /proc (tests).\n"
     "--watch refreshes every SECONDS until Ctrl-C: on a terminal in place, into a pipe as plain frames\n"
     "separated by a blank line (JSON: one document per line per frame).\n"
     "--query=FIELDS --format=csv prints one CSV line per row, as nvidia-smi --query-compute-apps does: its\n"
     "names (pid, process_name, used_memory, gpu_uuid, gpu_bus_id, gpu_name) plus gpu_index, command, type,\n"
     "user, state, cuda_ordinal (the cuda:N the process calls that GPU), cuda_visible_devices, slurm_job_id,\n"
     "rank, local_rank, lease and findings (ids, space separated).\n"
     "--user, --gpu, --pid and --job keep the rows that match (each repeatable; a row must match every\n"
     "option given) in the table, JSON, CSV and --watch frames alike.  The text hides info findings\n"
     "(a line counts them; --all shows them) and folds findings that differ only in numbers into one\n"
     "per job or GPU; JSON always has every finding.  --fail-on exits 7 when a finding of that\n"
     "severity or worse remains after the filters (for health checks).\n"
     "--pid N (one process) explains that process: after its rows, the CUDA variables it started\n"
     "with, its own cuda:N map (cuda:0.. to nvidia-smi indices and UUIDs) and every finding on it\n"
     "with its fix, info ones too."},
};

}  // namespace

const char* command_description(const char* name) {
  for (const Description& d : kDescriptions)
    if (std::strcmp(d.command, name) == 0) return d.text;
  return nullptr;
}

}  // namespace gpumap
