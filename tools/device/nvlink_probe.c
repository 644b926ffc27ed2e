/* What NVML's NvLink calls return on this host, link by link (no context, no memory).
 * Build: cc -O2 -o nvlink_probe nvlink_probe.c -ldl */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

typedef struct { char legacy[16]; unsigned domain, bus, device, pciDeviceId, sub; char busId[32]; } Pci;
static double ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }

int main(void) {
  void *l = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  int (*init)(void) = dlsym(l, "nvmlInit_v2");
  int (*count)(unsigned *) = dlsym(l, "nvmlDeviceGetCount_v2");
  int (*handle)(unsigned, void **) = dlsym(l, "nvmlDeviceGetHandleByIndex_v2");
  int (*state)(void *, unsigned, int *) = dlsym(l, "nvmlDeviceGetNvLinkState");
  int (*remote)(void *, unsigned, Pci *) = dlsym(l, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  int (*rtype)(void *, unsigned, int *) = dlsym(l, "nvmlDeviceGetNvLinkRemoteDeviceType");
  int (*p2p)(void *, void *, int, int *) = dlsym(l, "nvmlDeviceGetP2PStatus");
  int (*anc)(void *, void *, int *) = dlsym(l, "nvmlDeviceGetTopologyCommonAncestor");
  init();
  unsigned n = 0;
  count(&n);
  void *d[16];
  for (unsigned i = 0; i < n && i < 16; i++) handle(i, &d[i]);
  for (unsigned i = 0; i < n && i < 16; i++) {
    double t0 = ms();
    for (unsigned k = 0; k < 18; k++) {
      int a = -1, ty = -1;
      Pci p = {0};
      int rs = state(d[i], k, &a);
      int rr = remote ? remote(d[i], k, &p) : -1;
      int rt = rtype ? rtype(d[i], k, &ty) : -1;
      printf("gpu %u link %2u: state rc=%d active=%d  remote rc=%d busId=%s  type rc=%d type=%d\n", i, k, rs, a, rr, p.busId, rt, ty);
    }
    printf("gpu %u: 18 links read in %.3f ms\n", i, ms() - t0);
    for (unsigned j = 0; j < n; j++) {
      if (j == i) continue;
      int s = -1, lvl = -1;
      double t1 = ms();
      int rc = p2p(d[i], d[j], 2, &s);
      int rc2 = anc(d[i], d[j], &lvl);
      printf("gpu %u -> %u: P2P NVLINK rc=%d status=%d; common ancestor rc=%d level=%d (%.3f ms)\n", i, j, rc, s, rc2, lvl, ms() - t1);
    }
  }
  return 0;
}
