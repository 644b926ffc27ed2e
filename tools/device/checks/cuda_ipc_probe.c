/* Does CUDA IPC work between two processes with these CUDA_VISIBLE_DEVICES settings?  (issue 23:
 * `gpumap bind` narrows each rank to its own GPU, which breaks IPC and peer access between ranks;
 * `bind --keep-visible` keeps the other ranks' GPUs visible, rotated.)
 *
 *   cuda_ipc_probe [--lib LIBCUDA] EXPORT_CVD IMPORT_CVD
 *
 * Two child processes, each with its own CUDA_VISIBLE_DEVICES ("-" leaves it unset, "" hides every
 * GPU) set before it loads the driver:
 *   exporter: cuInit, its cuda:0's primary context, cuMemAlloc 1 MiB, fills it with a pattern,
 *             cuIpcGetMemHandle, sends the handle and its GPU's UUID to the importer, keeps the
 *             memory until the importer is done;
 *   importer: cuInit, lists the GPUs it sees, its cuda:0's primary context, cuDeviceCanAccessPeer
 *             towards the exporter's GPU when it sees it, cuIpcOpenMemHandle (lazy peer access),
 *             reads the memory back and compares it with the pattern.
 * The driver API is reached through dlopen of libcuda.so.1 (no CUDA toolkit, no cuda.h: the
 * prototypes below are the driver's documented ones).  Output: one `key: value` line per fact,
 * prefixed by the process (export/import), then `result: ipc-works` or `result: ipc-fails (...)`.
 * Exit 0: IPC works; 1: it fails (the lines say where and with which CUresult); 2: usage;
 * 3: the driver cannot be loaded or lacks a symbol, or a process sees no GPU at all (what it could
 * learn is printed).  Safe on a 1-GPU host: `cuda_ipc_probe 0 0` is same-GPU IPC between two
 * processes; a setting naming a missing GPU reports cuInit's error.
 * Build: cc -O2 -Wall -o cuda_ipc_probe cuda_ipc_probe.c -ldl        (runner: cuda_ipc.sh) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr; /* 64-bit hosts */
typedef struct { unsigned char bytes[16]; } CUuuid;
typedef struct { char reserved[64]; } CUipcMemHandle; /* CU_IPC_HANDLE_SIZE = 64 */
#define CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 0x1
#define PROBE_BYTES (1u << 20)
#define PATTERN 0x9e3779b9u

static struct {
  CUresult (*init)(unsigned);
  CUresult (*count)(int *);
  CUresult (*get)(CUdevice *, int);
  CUresult (*uuid)(CUuuid *, CUdevice);
  CUresult (*bus_id)(char *, int, CUdevice);
  CUresult (*ctx_retain)(CUcontext *, CUdevice);
  CUresult (*ctx_release)(CUdevice);
  CUresult (*ctx_set)(CUcontext);
  CUresult (*sync)(void);
  CUresult (*alloc)(CUdeviceptr *, size_t);
  CUresult (*free_)(CUdeviceptr);
  CUresult (*memset32)(CUdeviceptr, unsigned, size_t);
  CUresult (*dtoh)(void *, CUdeviceptr, size_t);
  CUresult (*ipc_get)(CUipcMemHandle *, CUdeviceptr);
  CUresult (*ipc_open)(CUdeviceptr *, CUipcMemHandle, unsigned);
  CUresult (*ipc_close)(CUdeviceptr);
  CUresult (*can_peer)(int *, CUdevice, CUdevice);
  CUresult (*err_name)(CUresult, const char **);
} cu;

static const char *who = "probe";
static const char *missing; /* the first context/memory/IPC symbol the driver lacks */

static const char *err(CUresult rc) {
  const char *n = NULL;
  if (!cu.err_name || cu.err_name(rc, &n) != 0 || !n) return "CUDA_ERROR_?";
  return n;
}

/* The newest versioned name first (as cuda.h maps them), then the plain one. */
static void *sym(void *lib, const char *v2, const char *plain) {
  void *p = v2 ? dlsym(lib, v2) : NULL;
  return p ? p : dlsym(lib, plain);
}

/* 0 when every symbol bound; else prints the first missing one. */
static int load(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) { printf("%s: driver: cannot load %s: %s\n", who, path, dlerror()); return 3; }
  struct { void **slot; const char *v2, *plain; } t[] = {
    {(void **)&cu.init, NULL, "cuInit"},
    {(void **)&cu.count, NULL, "cuDeviceGetCount"},
    {(void **)&cu.get, NULL, "cuDeviceGet"},
    {(void **)&cu.uuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid"},
    {(void **)&cu.bus_id, NULL, "cuDeviceGetPCIBusId"},
    {(void **)&cu.ctx_retain, NULL, "cuDevicePrimaryCtxRetain"},
    {(void **)&cu.ctx_release, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
    {(void **)&cu.ctx_set, NULL, "cuCtxSetCurrent"},
    {(void **)&cu.sync, NULL, "cuCtxSynchronize"},
    {(void **)&cu.alloc, "cuMemAlloc_v2", "cuMemAlloc"},
    {(void **)&cu.free_, "cuMemFree_v2", "cuMemFree"},
    {(void **)&cu.memset32, "cuMemsetD32_v2", "cuMemsetD32"},
    {(void **)&cu.dtoh, "cuMemcpyDtoH_v2", "cuMemcpyDtoH"},
    {(void **)&cu.ipc_get, NULL, "cuIpcGetMemHandle"},
    {(void **)&cu.ipc_open, "cuIpcOpenMemHandle_v2", "cuIpcOpenMemHandle"},
    {(void **)&cu.ipc_close, NULL, "cuIpcCloseMemHandle"},
    {(void **)&cu.can_peer, NULL, "cuDeviceCanAccessPeer"},
  };
  cu.err_name = (CUresult (*)(CUresult, const char **))dlsym(lib, "cuGetErrorName");
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    *t[i].slot = sym(lib, t[i].v2, t[i].plain);
    if (*t[i].slot) continue;
    if (i < 5) { printf("%s: driver: %s lacks %s\n", who, path, t[i].plain); return 3; }
    if (!missing) missing = t[i].plain;  /* the GPUs can still be listed */
  }
  return 0;
}

/* 1 when every context, memory and IPC symbol bound; else says which is missing. */
static int ipc_symbols(void) {
  if (missing) printf("%s: driver lacks %s: IPC not tested\n", who, missing);
  return !missing;
}

static void uuid_text(const CUuuid *u, char out[41]) {
  char *p = out + sprintf(out, "GPU-");
  for (int b = 0; b < 16; b++) p += sprintf(p, "%02x%s", u->bytes[b], b == 3 || b == 5 || b == 7 || b == 9 ? "-" : "");
}

static void set_cvd(const char *cvd) {
  if (strcmp(cvd, "-") == 0) unsetenv("CUDA_VISIBLE_DEVICES");
  else setenv("CUDA_VISIBLE_DEVICES", cvd, 1); /* this child's own environment, before cuInit */
  const char *v = getenv("CUDA_VISIBLE_DEVICES"), *o = getenv("CUDA_DEVICE_ORDER");
  printf("%s: CUDA_VISIBLE_DEVICES=%s CUDA_DEVICE_ORDER=%s\n", who, v ? v : "(unset)", o ? o : "(unset)");
}

/* cuInit and one line per visible GPU; the device count, or -1 (printed) when cuInit fails. */
static int start(void) {
  CUresult rc = cu.init(0);
  if (rc != 0) { printf("%s: cuInit: %s (%d)\n", who, err(rc), rc); return -1; }
  int n = 0;
  cu.count(&n);
  printf("%s: sees %d GPU(s)\n", who, n);
  for (int i = 0; i < n; i++) {
    CUdevice d;
    CUuuid u;
    char id[41] = "?", bus[32] = "?";
    if (cu.get(&d, i) == 0 && cu.uuid(&u, d) == 0) uuid_text(&u, id);
    if (cu.get(&d, i) == 0) cu.bus_id(bus, sizeof bus, d);
    printf("%s: cuda:%d = %s %s\n", who, i, id, bus);
  }
  return n;
}

#define CHECK(call, what)                                                          \
  do {                                                                             \
    CUresult rc_ = (call);                                                         \
    if (rc_ != 0) {                                                                \
      printf("%s: %s: %s (%d)\n", who, what, err(rc_), rc_);                       \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

struct message {            /* exporter -> importer */
  int ok;                   /* 0: the exporter failed (the importer then only reports what it sees) */
  CUipcMemHandle handle;
  char uuid[41];
};

static int exporter(const char *lib, const char *cvd, int to_importer, int from_importer) {
  who = "export";
  struct message m;
  memset(&m, 0, sizeof m);
  int rc = 3;
  set_cvd(cvd);
  CUdevice d;
  CUcontext ctx;
  CUdeviceptr p = 0;
  if (load(lib) == 0 && start() > 0 && ipc_symbols()) {
    rc = 1;
    CUuuid u;
    if (cu.get(&d, 0) == 0 && cu.uuid(&u, d) == 0 && cu.ctx_retain(&ctx, d) == 0 && cu.ctx_set(ctx) == 0) {
      uuid_text(&u, m.uuid);
      CUresult r;
      if ((r = cu.alloc(&p, PROBE_BYTES)) != 0) printf("export: cuMemAlloc: %s (%d)\n", err(r), r);
      else if ((r = cu.memset32(p, PATTERN, PROBE_BYTES / 4)) != 0 || (r = cu.sync()) != 0)
        printf("export: fill: %s (%d)\n", err(r), r);
      else if ((r = cu.ipc_get(&m.handle, p)) != 0) printf("export: cuIpcGetMemHandle: %s (%d)\n", err(r), r);
      else { m.ok = 1; rc = 0; printf("export: 1 MiB on cuda:0 (%s), handle sent\n", m.uuid); }
    } else {
      printf("export: no context on cuda:0\n");
    }
  }
  if (write(to_importer, &m, sizeof m) != (ssize_t)sizeof m) perror("export: write");
  char done;
  if (read(from_importer, &done, 1) < 0) perror("export: read"); /* keep the memory until the importer is done */
  if (p) cu.free_(p);
  if (m.uuid[0]) cu.ctx_release(d);
  return rc;
}

static int importer(const char *lib, const char *cvd, int from_exporter, int to_exporter) {
  who = "import";
  struct message m;
  ssize_t got = read(from_exporter, &m, sizeof m);
  int rc = 3;
  set_cvd(cvd);
  int n;
  if (load(lib) != 0 || (n = start()) <= 0 || !ipc_symbols()) goto out;
  if (got != (ssize_t)sizeof m || !m.ok) { printf("import: the exporter sent no handle\n"); goto out; }
  CUdevice mine, theirs = -1;
  CUcontext ctx;
  rc = 1;
  for (int i = 0; i < n; i++) {
    CUdevice d;
    CUuuid u;
    char id[41];
    if (cu.get(&d, i) == 0 && cu.uuid(&u, d) == 0 && (uuid_text(&u, id), strcmp(id, m.uuid) == 0)) theirs = d;
  }
  if (theirs < 0) printf("import: the exporter's GPU %s is not visible here\n", m.uuid);
  else printf("import: the exporter's GPU is visible here as device %d\n", theirs);
  if (cu.get(&mine, 0) != 0 || cu.ctx_retain(&ctx, mine) != 0 || cu.ctx_set(ctx) != 0) {
    printf("import: no context on cuda:0\n");
    goto out;
  }
  if (theirs >= 0 && theirs != mine) {
    int can = -1;
    CUresult r = cu.can_peer(&can, mine, theirs);
    printf("import: cuDeviceCanAccessPeer(cuda:0 -> device %d): %s, %d\n", theirs, r ? err(r) : "CUDA_SUCCESS", can);
  }
  {
    CUdeviceptr p = 0;
    CUresult r = cu.ipc_open(&p, m.handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (r != 0) {
      printf("import: cuIpcOpenMemHandle: %s (%d)\n", err(r), r);
      printf("result: ipc-fails (cuIpcOpenMemHandle %s)\n", err(r));
      cu.ctx_release(mine);
      goto out;
    }
    unsigned words[4] = {0};
    r = cu.dtoh(words, p, sizeof words);
    int same = r == 0 && words[0] == PATTERN && words[3] == PATTERN;
    if (r != 0) printf("import: cuMemcpyDtoH: %s (%d)\n", err(r), r);
    printf("import: read back %s\n", same ? "the exporter's pattern" : "something else");
    printf("result: %s\n", same ? "ipc-works" : "ipc-fails (opened, but the memory read back differs)");
    cu.ipc_close(p);
    cu.ctx_release(mine);
    rc = same ? 0 : 1;
  }
out:
  if (rc == 3) printf("result: not-tested (see the lines above)\n");
  if (write(to_exporter, "d", 1) != 1) perror("import: write");
  return rc;
}

int main(int argc, char **argv) {
  const char *lib = "libcuda.so.1";
  int a = 1;
  if (argc > 2 && strcmp(argv[1], "--lib") == 0) { lib = argv[2]; a = 3; }
  if (argc - a != 2) {
    fprintf(stderr, "usage: %s [--lib LIBCUDA] EXPORT_CUDA_VISIBLE_DEVICES IMPORT_CUDA_VISIBLE_DEVICES\n"
                    "  (\"-\": unset; e.g. `0 1` as gpumap bind gives ranks 0 and 1, `0,1 1,0` as bind --keep-visible)\n",
            argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  int e2i[2], i2e[2];
  if (pipe(e2i) || pipe(i2e)) { perror("pipe"); return 3; }
  pid_t ex = fork();
  if (ex == 0) {
    close(e2i[0]); close(i2e[1]);  /* so a dead importer reads as EOF here */
    _exit(exporter(lib, argv[a], e2i[1], i2e[0]));
  }
  pid_t im = fork();
  if (im == 0) {
    close(e2i[1]); close(i2e[0]);
    _exit(importer(lib, argv[a + 1], e2i[0], i2e[1]));
  }
  close(e2i[0]); close(e2i[1]); close(i2e[0]); close(i2e[1]);
  int se = 0, si = 0;
  while (waitpid(ex, &se, 0) < 0 && errno == EINTR) {}
  while (waitpid(im, &si, 0) < 0 && errno == EINTR) {}
  int ce = WIFEXITED(se) ? WEXITSTATUS(se) : 3, ci = WIFEXITED(si) ? WEXITSTATUS(si) : 3;
  if (!WIFEXITED(se) || !WIFEXITED(si)) printf("probe: a process was killed by a signal\n");
  return ci == 0 && ce == 0 ? 0 : (ci == 3 || ce == 3 ? 3 : 1);
}
