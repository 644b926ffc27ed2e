/* gpumap C API: which physical GPU a program runs on, and making it the one it meant.
 *
 * Version 1.  Link with -lgpumap (pkg-config gpumap, or CMake find_package(gpumap)).
 *
 * Conventions
 *   - Every call that can fail returns a status (GPUMAP_OK or an error below: the same numbers
 *     as the gpumap command's exit codes).  After a failure gpumap_last_error() describes it.
 *   - Results are JSON documents (UTF-8, NUL-terminated), in the vocabulary of the command's
 *     --json output (docs/library.md).  The caller frees them with gpumap_free().
 *   - Inputs that are lists or options are JSON too; unknown option names are an error.
 *   - Nothing here creates a CUDA context or initialises CUDA in the calling process.  NVML is
 *     loaded into the process (like nvidia-smi's library users); when CUDA itself must be asked
 *     (mixed-model or MIG hosts, once per boot), a child process does it (gpumap-probe, next
 *     to this library).
 *   - A session is not thread-safe: use one per thread, or lock around it.  The error state is
 *     per thread.
 */
#ifndef GPUMAP_GPUMAP_H
#define GPUMAP_GPUMAP_H

#ifdef __cplusplus
extern "C" {
#endif

/* The API version this header describes; gpumap_api_version() is the library's. */
#define GPUMAP_API_VERSION 1

/* Status codes. */
#define GPUMAP_OK 0
#define GPUMAP_ERROR 1             /* a driver call or the OS failed */
#define GPUMAP_USAGE 2             /* bad input: a GPU that names nothing, malformed JSON, an unknown option */
#define GPUMAP_NO_DRIVER 3         /* no NVIDIA driver library could be loaded or initialised */
#define GPUMAP_MISMATCH 4          /* verify: the visible GPUs differ from the expected ones */
#define GPUMAP_CUDA_WOULD_FAIL 5   /* CUDA would fail to initialise in this environment */
#define GPUMAP_UNAVAILABLE 6       /* pin: not enough GPUs qualify (or the wait ran out) */
#define GPUMAP_TOO_LATE 8          /* pin: CUDA is already initialised in this process */

typedef struct gpumap_session gpumap_session;

/* GPUMAP_API_VERSION of the loaded library. */
int gpumap_api_version(void);
/* "0.1.0": the gpumap release. */
const char* gpumap_version(void);

/* Opens a session.  options_json may be NULL or an object with any of:
 *   "simulate":   a bundled simulated host name or a host file path (default: the real driver)
 *   "lock_dir":   the lease folder (default /tmp/gpumap-leases, shared with `gpumap run`)
 *   "cache_dir":  the folder for the driver's order cache (default: none)
 *   "hosts_dir", "sim_lib_dir": where simulated hosts and the fake driver libraries are
 *   "probe":      the probe program (default: gpumap-probe next to this library)
 *   "driver_timeout": seconds a read of NVML, or of the CUDA already running in this process,
 *                 may take before it fails with GPUMAP_NO_DRIVER
 *                 (a hung driver); a number or a string holding one, 0 = no limit (default 60)
 *   "environment": {"GPUMAP_SIMULATE": "...", "HOME": "...", ...}: variables read exactly as the
 *                 gpumap command reads them from its environment (the cache folder from
 *                 GPUMAP_CACHE_DIR, XDG_CACHE_HOME or HOME, and so on); only those that
 *                 gpumap_environment_variables() lists as read by "seams" count; the named
 *                 options above win over them
 * The library reads no GPUMAP_* variable (nor HOME, XDG_CACHE_HOME) from the process environment:
 * its caller passes its settings, so a library never acts on variables it was not told about.  A
 * caller that wants GPUMAP_SIMULATE, GPUMAP_LOCK_DIR and the rest to count passes them here (the
 * Python package passes its environment's seam variables).  One that passes none leases in the
 * default /tmp/gpumap-leases even when `gpumap run` on the same machine runs with
 * GPUMAP_LOCK_DIR=/other, and the two never see each other's leases.  To behave as the command
 * in this process's environment, pass the variables through:
 *
 *   static const char* names[] = {"GPUMAP_SIMULATE", "GPUMAP_LOCK_DIR", "GPUMAP_CACHE_DIR",
 *                                 "GPUMAP_HOSTS_DIR", "GPUMAP_SIM_LIBDIR", "GPUMAP_DRIVER_TIMEOUT",
 *                                 "XDG_CACHE_HOME", "HOME"};
 *   char opts[8192] = "{\"environment\": {";   (values need JSON escaping if they hold " or \)
 *   for (size_t i = 0, n = 0; i < sizeof names / sizeof *names; ++i)
 *     if (getenv(names[i]))
 *       snprintf(opts + strlen(opts), sizeof opts - strlen(opts), "%s\"%s\": \"%s\"",
 *                n++ ? ", " : "", names[i], getenv(names[i]));
 *   strncat(opts, "}}", sizeof opts - strlen(opts) - 1);
 *   gpumap_open(opts, &session);
 *
 * (gpumap_environment_variables() lists every variable read by "seams".)  The environment
 * reasoned about (CUDA_VISIBLE_DEVICES, ...) is the process's own, read at each call (so a
 * CUDA_VISIBLE_DEVICES set since is seen). */
int gpumap_open(const char* options_json, gpumap_session** session);

/* The environment variables gpumap knows, as a static JSON array (never freed):
 *   [{"name": "GPUMAP_CACHE_DIR", "meaning": "...", "read_by": ["seams"]}, ...]
 * "read_by": "environment" (the environment reasoned about), "seams" (gpumap's own settings:
 * pass these to gpumap_open's "environment"), "terminal", "command", "probe child". */
const char* gpumap_environment_variables(void);
void gpumap_close(gpumap_session* session);

/* This process's CUDA devices:
 *   {"devices": [{"cuda_ordinal", "nvml_index", "uuid", "pci_bus_id", "name"}...],
 *    "source": "live" (CUDA already runs in this process: the driver's own answer) or
 *              "predicted" (from the environment now, before CUDA starts),
 *    "order_source": "predicted"|"cache"|"driver"|"live", "order_note": "...",
 *    "findings": [set-too-late, when CUDA runs here with other GPUs than the environment names]}
 * GPUMAP_CUDA_WOULD_FAIL (no result) when CUDA would fail to initialise; an environment that hides
 * every GPU on purpose (CUDA_VISIBLE_DEVICES=-1 or "") gives an empty list instead. */
int gpumap_devices(gpumap_session* session, char** result_json);

/* request_json: {"expect": ["0", "GPU-8f3a", "MIG-...", "07:00.0"], "prefix": false}.
 * GPUMAP_OK when cuda:0.. are exactly those GPUs; GPUMAP_MISMATCH or GPUMAP_CUDA_WOULD_FAIL
 * otherwise, with gpumap_last_error() listing the differences and the fix.  The result (also
 * on a mismatch): {"ok", "expected": [uuid...], "actual": [uuid...], "differences": [...],
 * "fix": {"CUDA_VISIBLE_DEVICES": "..."} or null}. */
int gpumap_verify(gpumap_session* session, const char* request_json, char** result_json);

/* gpus_json: ["0", "GPU-8f3a", ...].  Result: {"gpus": [{"spec", "uuid", "nvml_index",
 * "cuda_ordinal" (null when not visible here)}...], "environment": {"CUDA_VISIBLE_DEVICES": the
 * value that makes exactly these GPUs cuda:0, cuda:1, ... (`gpumap which`'s UUID form)}}. */
int gpumap_locate(gpumap_session* session, const char* gpus_json, char** result_json);

/* Picks GPUs exactly as `gpumap pick` and leases them (the lock files `gpumap run` uses), held
 * by this process until gpumap_release() or its exit.  request_json (every key optional):
 *   {"gpus": 1, "min_free_mib": null, "max_util": null, "include": [], "exclude": [],
 *    "allow_busy": false, "allow_unknown": false (take a GPU whose process list or utilisation
 *    the driver could not read), "wait": 0 (seconds), "command": ["python3", "train.py"],
 *    "interrupt_fd": a descriptor (the read end of a self-pipe) that stops the wait once it is
 *    readable: pin then fails with GPUMAP_ERROR, gpumap_last_error() has "interrupted": true,
 *    nothing is leased and nothing is read from it}
 * Result: {"lease": ID, "lease_dir": "...", "devices": [rows as gpumap_devices, as they will
 * be once the environment is set], "environment": {"CUDA_DEVICE_ORDER": "PCI_BUS_ID",
 * "CUDA_VISIBLE_DEVICES": "GPU-..."}}.  The caller sets the environment (setenv) before CUDA
 * starts.  GPUMAP_TOO_LATE when CUDA is already initialised here; GPUMAP_UNAVAILABLE when not
 * enough GPUs qualify, gpumap_last_error()'s "passed_over" saying why for each GPU. */
int gpumap_pin(gpumap_session* session, const char* request_json, char** result_json);

/* Releases a lease from gpumap_pin.  GPUMAP_USAGE for an unknown or already released id. */
int gpumap_release(int lease);

/* The five-step check of this process in one call (docs/library.md, "Diagnose").  request_json
 * (NULL or an object; every key optional) tells what only the program knows:
 *   {"current_device": 0 (torch.cuda.current_device()), "tensor_devices": {"cuda:0": 120, "cpu": 3},
 *    "hf_device_map": {"model.layers.0": 0, "lm_head": "cpu"}, "max_memory": {"0": "10GiB"}}
 * Result: {"ok" (no finding of severity error), "source": "live"|"predicted", "pid",
 *   "environment": {"now": {VAR: value}, "start": {...} or null}, "devices": [as gpumap_devices],
 *   "cuda_error": null or {"name", "reason"}, "cuda_device_count", "host_gpu_count",
 *   "memory": [{device object, "cuda_ordinal", "used_memory_mib"}] (this process, from NVML),
 *   "memory_known", "unlisted_gpus", "findings": [{"id", "severity", "message", "fix", "note"?}]}.
 * Reads NVML's process lists; never initialises CUDA. */
int gpumap_diagnose(gpumap_session* session, const char* request_json, char** result_json);
/* Which cuda:N this process should use as one rank of its launcher (added after 0.1.0: version node
 * GPUMAP_2).  The local rank is the first set of LOCAL_RANK (torchrun),
 * OMPI_COMM_WORLD_LOCAL_RANK (Open MPI), MPI_LOCALRANKID (MPICH's Hydra, Intel MPI),
 * MV2_COMM_WORLD_LOCAL_RANK (MVAPICH2), PMI_LOCAL_RANK, SLURM_LOCALID; the same list and rule as
 * `gpumap bind` and `gpumap explain` (docs/launch.md).  Result:
 *   {"device": "cuda:N", "cuda_ordinal": N, "local_rank": {"variable", "value"} or null,
 *    "why": "...", "error": null, "source": "live"|"predicted", "visible": GPUs seen}
 * cuda:0 where `gpumap bind` narrowed the rank (GPUMAP_BOUND), with one visible GPU, under Slurm's
 * per-task binding and with no rank variable.  GPUMAP_UNAVAILABLE when no GPU is visible or the
 * rank is past them, GPUMAP_USAGE for a rank variable that is not a whole number,
 * GPUMAP_CUDA_WOULD_FAIL as gpumap_devices; gpumap_last_error() then holds the same object with
 * code, message and hint added. */
int gpumap_local_device(gpumap_session* session, char** result_json);

/* Device-map values and max_memory keys as CUDA ordinals of this process (added after 0.1.0:
 * version node GPUMAP_2; Python's check_device_map, check_max_memory and max_memory call it).
 * request_json: {"items": [{"value": 3 or "cuda:1"/"cpu"/..., "role": "value" (a device_map value)
 * | "key" (a max_memory key in CUDA ordinals) | "physical_key" (one in nvidia-smi numbers: only
 * "cuda:N" is refused, which accelerate refuses), "what", "where", "shown": the caller's words for
 * it in messages}]}.  Result: {"cuda_ordinals": [N or null (cpu, disk, meta, mps; a physical
 * key)], "source"}.  GPUMAP_USAGE for the first refused item, gpumap_last_error() adding "kind":
 * "value" (not a device; a "cuda:N" key) or "not-visible" (no such cuda:N here; "ordinal"; the
 * hint names the ordinal meant when N is a visible GPU's nvidia-smi index);
 * GPUMAP_CUDA_WOULD_FAIL as gpumap_devices. */
int gpumap_check_devices(gpumap_session* session, const char* request_json, char** result_json);

/* 1 when the CUDA driver library is loaded in this process and initialised (cuInit ran),
 * 0 otherwise (also when its driver does not answer within the default driver timeout, 60 s).
 * Never initialises it.  Safe in a child made by fork(), as is every call here. */
int gpumap_cuda_initialized(void);

/* This thread's last error: {"code": N, "message": "...", "hint": "..."} plus, by kind,
 * "cuda_error" (GPUMAP_CUDA_WOULD_FAIL), "differences" and "fix" (GPUMAP_MISMATCH),
 * "passed_over": [{"nvml_index", "uuid", "reasons": [...]}] (GPUMAP_UNAVAILABLE).
 * "" before any error.  Valid until this thread's next gpumap call. */
const char* gpumap_last_error(void);

/* Frees a result. */
void gpumap_free(char* result_json);

#ifdef __cplusplus
}
#endif

#endif /* GPUMAP_GPUMAP_H */
