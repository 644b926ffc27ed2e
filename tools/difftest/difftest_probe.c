/* The driver's side of the differential test (tools/difftest/difftest.py, issue 25): dlopen()s the
 * CUDA driver library (argv[1], default libcuda.so.1: the real one on a GPU host, the simulated one
 * of build/sim/ in CI), calls cuInit and then only cuDeviceGetCount, cuDeviceGet and
 * cuDeviceGetUuid(_v2): no context, no GPU memory.  It is independent of gpumap's code on purpose.
 * Prints, one fact per line:
 *   error NAME CODE          cuInit failed (NAME from cuGetErrorName, "?" without it)
 *   count N                  cuInit succeeded: N devices, then one line per device:
 *   uuid GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
 *   end
 * Exit 0 when the library answered (a cuInit error is an answer), 3 when it cannot be loaded.
 * Build: cc -O2 -o difftest_probe difftest_probe.c -ldl */
#include <dlfcn.h>
#include <stdio.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct { unsigned char bytes[16]; } CUuuid;

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) { fprintf(stderr, "difftest_probe: dlopen %s: %s\n", path, dlerror()); return 3; }
  CUresult (*init)(unsigned) = (CUresult (*)(unsigned))dlsym(lib, "cuInit");
  CUresult (*count)(int *) = (CUresult (*)(int *))dlsym(lib, "cuDeviceGetCount");
  CUresult (*get)(CUdevice *, int) = (CUresult (*)(CUdevice *, int))dlsym(lib, "cuDeviceGet");
  CUresult (*uuid)(CUuuid *, CUdevice) = (CUresult (*)(CUuuid *, CUdevice))dlsym(lib, "cuDeviceGetUuid_v2");
  CUresult (*errname)(CUresult, const char **) = (CUresult (*)(CUresult, const char **))dlsym(lib, "cuGetErrorName");
  if (!uuid) uuid = (CUresult (*)(CUuuid *, CUdevice))dlsym(lib, "cuDeviceGetUuid");
  if (!init || !count || !get || !uuid) { fprintf(stderr, "difftest_probe: %s lacks a CUDA symbol\n", path); return 3; }
  CUresult rc = init(0);
  if (rc != 0) {
    const char *n = NULL;
    if (!errname || errname(rc, &n) != 0 || !n) n = "?";
    printf("error %s %d\nend\n", n, rc);
    return 0;
  }
  int n = 0;
  rc = count(&n);
  if (rc != 0) { printf("error cuDeviceGetCount %d\nend\n", rc); return 0; }
  printf("count %d\n", n);
  for (int i = 0; i < n; i++) {
    CUdevice d;
    CUuuid u;
    if (get(&d, i) != 0 || uuid(&u, d) != 0) { printf("uuid ?\n"); continue; }
    printf("uuid GPU-");
    for (int b = 0; b < 16; b++) printf("%02x%s", u.bytes[b], b == 3 || b == 5 || b == 7 || b == 9 ? "-" : "");
    printf("\n");
  }
  printf("end\n");
  return 0;
}
