/* Minimal CUDA driver probe: the ground truth gpumap is checked against and
 * the baseline its speed is compared with.  dlopen()s libcuda.so.1, calls
 * cuInit and the device queries only (no context, no GPU memory), and prints
 * one JSON line: {"error": null|"NAME(code)", "devices": [{uuid, pci, name}]}
 * Build: cc -O2 -o cuda_probe cuda_probe.c -ldl */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct { unsigned char bytes[16]; } CUuuid;

int main(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) { printf("{\"error\":\"dlopen: %s\",\"devices\":[]}\n", dlerror()); return 3; }
  CUresult (*init)(unsigned) = (CUresult (*)(unsigned))dlsym(lib, "cuInit");
  CUresult (*count)(int *) = (CUresult (*)(int *))dlsym(lib, "cuDeviceGetCount");
  CUresult (*get)(CUdevice *, int) = (CUresult (*)(CUdevice *, int))dlsym(lib, "cuDeviceGet");
  CUresult (*uuid)(CUuuid *, CUdevice) = (CUresult (*)(CUuuid *, CUdevice))dlsym(lib, "cuDeviceGetUuid_v2");
  CUresult (*pci)(char *, int, CUdevice) = (CUresult (*)(char *, int, CUdevice))dlsym(lib, "cuDeviceGetPCIBusId");
  CUresult (*name)(char *, int, CUdevice) = (CUresult (*)(char *, int, CUdevice))dlsym(lib, "cuDeviceGetName");
  CUresult (*errname)(CUresult, const char **) = (CUresult (*)(CUresult, const char **))dlsym(lib, "cuGetErrorName");
  if (!uuid) uuid = (CUresult (*)(CUuuid *, CUdevice))dlsym(lib, "cuDeviceGetUuid");
  if (!init || !count || !get || !uuid || !pci || !name) { printf("{\"error\":\"missing symbol\",\"devices\":[]}\n"); return 3; }
  CUresult rc = init(0);
  if (rc != 0) {
    const char *n = "?";
    if (errname) errname(rc, &n);
    printf("{\"error\":\"%s(%d)\",\"devices\":[]}\n", n, rc);
    return 1;
  }
  int n = 0;
  count(&n);
  printf("{\"error\":null,\"devices\":[");
  for (int i = 0; i < n; i++) {
    CUdevice d; CUuuid u; char p[64] = "", nm[256] = "";
    get(&d, i); uuid(&u, d); pci(p, sizeof p, d); name(nm, sizeof nm, d);
    printf("%s{\"uuid\":\"GPU-", i ? "," : "");
    for (int b = 0; b < 16; b++) {
      printf("%02x", u.bytes[b]);
      if (b == 3 || b == 5 || b == 7 || b == 9) printf("-");
    }
    printf("\",\"pci\":\"%s\",\"name\":\"%s\"}", p, nm);
  }
  printf("]}\n");
  return 0;
}
