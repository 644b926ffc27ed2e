// A fake libcuda.so.1 for simulated hosts ($GPUMAP_FAKE_HOST).  cuInit applies the
// calling process's CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES the way driver 580.159.04
// was measured to (docs/driver-rules.md, tests/vectors/).  Written on purpose apart from
// gpumap's own resolver (src/resolve/), so that `map --check` on a simulated host
// compares two independent readings of the same rules.
//
// Rules on MIG hosts are documented (R570+), not measured: a MIG-enabled GPU is replaced
// by its MIG devices, in place, in both orders.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "driver/cuda_api.h"
#include "fake/serving.h"

using gpumap::SimGpu;
using gpumap::SimHost;

namespace {

struct Dev {
  std::string uuid;  // GPU-... or MIG-...
  const SimGpu* gpu;
  int mig;  // -1: whole GPU
};

SimHost g_host;
gpumap::fake::FaultPlan g_faults;  // g_host's faults and their call counts
std::vector<Dev> g_devs;
int g_init_rc = -1;  // -1: cuInit not called yet

enum { kSuccess = 0, kNotInitialized = 3, kInvalidValue = 1, kNoDevice = 100, kInvalidDevice = 101 };

std::string hex_of(const std::string& uuid) {
  std::string h;
  for (size_t i = 4; i < uuid.size(); ++i)
    if (uuid[i] != '-') h.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(uuid[i]))));
  return h;
}

std::vector<Dev> expand(const std::vector<const SimGpu*>& gpus) {
  std::vector<Dev> out;
  for (const SimGpu* g : gpus) {
    if (!g->cuda_visible) continue;
    if (!g->mig_enabled) {
      out.push_back({g->uuid, g, -1});
      continue;
    }
    for (size_t m = 0; m < g->mig_devices.size(); ++m) out.push_back({g->mig_devices[m].uuid, g, static_cast<int>(m)});
  }
  return out;
}

std::vector<const SimGpu*> default_order() {
  std::vector<const SimGpu*> v;
  for (const SimGpu& g : g_host.gpus) v.push_back(&g);  // PCI order
  if (!g_host.cuda_default_order.empty()) {
    std::vector<const SimGpu*> ordered;
    for (const std::string& u : g_host.cuda_default_order)
      for (const SimGpu* g : v)
        if (g->uuid == u) ordered.push_back(g);
    for (const SimGpu* g : v)  // GPUs the file's order leaves out (MIG, hidden) keep PCI order at the end
      if (std::find(ordered.begin(), ordered.end(), g) == ordered.end()) ordered.push_back(g);
    return ordered;
  }
  // Heuristic for files without an order (documented in docs/host-file.md, not driver truth):
  // higher compute capability first, then more multiprocessors, then PCI order.
  std::stable_sort(v.begin(), v.end(), [](const SimGpu* a, const SimGpu* b) {
    if (a->cc_major != b->cc_major) return a->cc_major > b->cc_major;
    if (a->cc_minor != b->cc_minor) return a->cc_minor > b->cc_minor;
    return a->multiprocessor_count > b->multiprocessor_count;
  });
  return v;
}

// One entry of CUDA_VISIBLE_DEVICES -> index into `all`, or -1 when it names no device.
// `uuid_kind` reports whether the entry was of the UUID kind.
int match_entry(const std::string& e, const std::vector<Dev>& all, bool& uuid_kind) {
  uuid_kind = e.compare(0, 4, "GPU-") == 0 || e.compare(0, 4, "MIG-") == 0;
  if (uuid_kind) {
    // Measured: the driver looks at no more than 36 characters after the prefix (dashes count),
    // stops at the 32nd hex digit, and with only dashes there matches on an empty prefix; the
    // prefix alone names nothing.
    if (e.size() == 4) return -1;
    std::string hex;
    const size_t end = std::min(e.size(), size_t{4 + 36});
    for (size_t i = 4; i < end && hex.size() < 32; ++i) {
      if (e[i] == '-') continue;
      if (!std::isxdigit(static_cast<unsigned char>(e[i]))) return -1;
      hex.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(e[i]))));
    }
    int found = -1;
    for (size_t d = 0; d < all.size(); ++d) {
      if (hex_of(all[d].uuid).compare(0, hex.size(), hex) != 0) continue;
      if (found >= 0) return -1;  // ambiguous prefix
      found = static_cast<int>(d);
    }
    return found;
  }
  const char* s = e.c_str();
  char* end = nullptr;
  errno = 0;
  unsigned long v = std::strtoul(s, &end, 10);
  if (end == s) return -1;
  unsigned int idx = static_cast<unsigned int>(v);  // the driver keeps 32 bits
  return idx < all.size() ? static_cast<int>(idx) : -1;
}

int cuda_fault(const char* fn, CUdevice d = -1);

// Documented (reference/cuda-env-semantics.md, NVIDIA's MIG user guide, "CUDA Device
// Enumeration"; not measured): a driver before R570 gives a process exactly one MIG device, the
// first of its list, and no other GPU.  Written apart from the resolver's copy (resolve/cuda_rules.h).
void keep_one_mig_device_before_r570(std::vector<Dev>& devs) {
  if (std::atoi(g_host.driver_version.c_str()) >= 570) return;
  for (const Dev& d : devs)
    if (d.mig >= 0) {
      devs = {d};
      return;
    }
}

int init_devices() {
  const char* path = std::getenv("GPUMAP_FAKE_HOST");
  if (!path || !*path) return 100;
  try {
    g_host = gpumap::load_host_file(path);
    g_faults = gpumap::fake::FaultPlan(g_host.faults);
    gpumap::fake::keep_openable_gpus(g_host);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake libcuda: %s\n", e.what());
    return 999;
  }
  if (auto it = g_host.errors.find("cuInit"); it != g_host.errors.end()) return it->second;
  if (int rc = cuda_fault("cuInit")) return rc;
  // Measured: a CUDA_DEVICE_ORDER of 1024 bytes or more, or a CUDA_VISIBLE_DEVICES of 2625 bytes or
  // more, is ignored as if unset.
  const char* order = std::getenv("CUDA_DEVICE_ORDER");
  if (order && std::strlen(order) >= 1024) order = nullptr;
  std::vector<const SimGpu*> base;
  if (!order || std::strcmp(order, "FASTEST_FIRST") == 0) {
    base = default_order();
  } else if (std::strcmp(order, "PCI_BUS_ID") == 0) {
    for (const SimGpu& g : g_host.gpus) base.push_back(&g);
  } else {
    return kInvalidDevice;
  }
  std::vector<Dev> all = expand(base);
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  if (cvd && std::strlen(cvd) >= 2625) cvd = nullptr;
  if (!cvd) {
    g_devs = all;
    keep_one_mig_device_before_r570(g_devs);
    return g_devs.empty() ? kNoDevice : kSuccess;
  }
  std::string list(cvd);
  // Measured (docs/driver-rules.md, tests/vectors/h200-vm3-*): a first entry that starts with
  // "MIG-" and is 1032 bytes or longer crashes the real cuInit (SIGSEGV) or never returns; the
  // fake crashes the same way: the default action first, so that no handler (a sanitizer's, which
  // would exit 1) turns the crash into an exit.  Not the legacy "MIG-GPU-" form: turned down at any
  // length (tests/vectors/h200-vm5-*).
  if (list.compare(0, 4, "MIG-") == 0 && list.compare(0, 8, "MIG-GPU-") != 0 &&
      list.substr(0, list.find(',')).size() >= 1032) {
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
  }
  std::vector<int> picked;
  int kind = -1;  // 0 integer, 1 uuid
  size_t pos = 0;
  while (true) {
    size_t comma = list.find(',', pos);
    std::string e = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    bool uuid_kind;
    int d = match_entry(e, all, uuid_kind);
    if (d < 0 || (kind >= 0 && kind != static_cast<int>(uuid_kind))) break;
    kind = uuid_kind;
    if (std::find(picked.begin(), picked.end(), d) != picked.end()) return kInvalidDevice;
    picked.push_back(d);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (picked.empty()) return kNoDevice;
  for (int d : picked) g_devs.push_back(all[d]);
  keep_one_mig_device_before_r570(g_devs);
  return kSuccess;
}

bool valid(CUdevice d) { return g_init_rc == kSuccess && d >= 0 && d < static_cast<int>(g_devs.size()); }

// The malformed answer ("unterminated", "huge_count") the current call must give, if any.
std::string g_output;

// An injected fault for a call about device d (-1: none): its error code, or 0 (then g_output
// may ask for a malformed answer).  Faults name GPUs by NVML index, as everywhere in the file.
int cuda_fault(const char* fn, CUdevice d) {
  g_output.clear();
  int gpu = -1, mig = -1;
  if (d >= 0 && d < static_cast<int>(g_devs.size())) {
    gpu = static_cast<int>(g_devs[d].gpu - g_host.gpus.data());
    mig = g_devs[d].mig;
  }
  const gpumap::SimFault* f = g_faults.apply(fn, gpu, mig);
  if (!f) return 0;
  if (f->output == "stdout") {  // a driver library that prints: it must not reach gpumap's answer
    std::printf("gpumap-probe\t1\n");
    for (int i = 0; i < 1000; ++i) std::printf("device\tGPU-%08d-0000-0000-0000-000000000000\t0000:00:00.0\tinjected\n", i);
    std::printf("end\n");
    std::fflush(stdout);
  }
  g_output = f->output;
  return f->error;
}

// Writes `s` into a caller's buffer of len bytes (truncated, terminated), or fills it without
// a terminator when a fault asks for an unterminated answer.
void put_string(const std::string& s, char* out, int len) {
  if (g_output == "unterminated") {
    for (int i = 0; i < len; ++i) out[i] = s.empty() ? 'X' : s[static_cast<size_t>(i) % s.size()];
    return;
  }
  std::snprintf(out, static_cast<size_t>(len), "%s", s.c_str());
}

}  // namespace

extern "C" {
#define EXPORT __attribute__((visibility("default")))

// For gpumap's DynLib: symbols the host file lists in missing_symbols read as absent.
EXPORT int gpumapFakeHidesSymbol(const char* name) {
  const char* path = std::getenv("GPUMAP_FAKE_HOST");
  return gpumap::fake::fake_hides_symbol(path ? path : "", name) ? 1 : 0;
}

EXPORT CUresult cuInit(unsigned flags) {
  if (flags != 0) return kInvalidValue;
  if (g_init_rc < 0) g_init_rc = init_devices();
  return g_init_rc;
}
EXPORT CUresult cuDriverGetVersion(int* v) {
  if (!v) return kInvalidValue;
  *v = g_host.cuda_driver_version ? g_host.cuda_driver_version : 13000;
  return kSuccess;
}
EXPORT CUresult cuDeviceGetCount(int* n) {
  if (g_init_rc != kSuccess) return kNotInitialized;
  if (!n) return kInvalidValue;
  if (int rc = cuda_fault("cuDeviceGetCount")) return rc;
  *n = g_output == "huge_count" ? 100000 : static_cast<int>(g_devs.size());
  return kSuccess;
}
EXPORT CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (g_init_rc != kSuccess) return kNotInitialized;
  if (!d) return kInvalidValue;
  if (ordinal < 0 || ordinal >= static_cast<int>(g_devs.size())) return kInvalidDevice;
  if (int rc = cuda_fault("cuDeviceGet", ordinal)) return rc;
  *d = ordinal;
  return kSuccess;
}
EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  if (!valid(d)) return kInvalidDevice;
  if (!name || len <= 0) return kInvalidValue;
  if (int rc = cuda_fault("cuDeviceGetName", d)) return rc;
  std::string n = g_devs[d].gpu->name;
  if (g_devs[d].mig >= 0) n += " MIG";
  put_string(n, name, len);
  return kSuccess;
}
static CUresult uuid_impl(CUuuid* u, CUdevice d, bool v2) {
  if (!valid(d)) return kInvalidDevice;
  if (!u) return kInvalidValue;
  if (int rc = cuda_fault("cuDeviceGetUuid", d)) return rc;
  // cuDeviceGetUuid (v1) gives the parent GPU's UUID for a MIG device; _v2 the MIG one.
  std::string hex = hex_of(v2 ? g_devs[d].uuid : g_devs[d].gpu->uuid);
  if (hex.size() != 32) return 999;  // the host file check makes this unreachable; never throw from C
  auto nibble = [](char c) { return static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : c - 'a' + 10); };
  for (int i = 0; i < 16; ++i) u->bytes[i] = static_cast<unsigned char>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  return kSuccess;
}
EXPORT CUresult cuDeviceGetUuid(CUuuid* u, CUdevice d) { return uuid_impl(u, d, false); }
#ifndef FAKE_LEGACY
EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* u, CUdevice d) { return uuid_impl(u, d, true); }
#endif
EXPORT CUresult cuDeviceGetPCIBusId(char* out, int len, CUdevice d) {
  if (!valid(d)) return kInvalidDevice;
  if (!out || len <= 0) return kInvalidValue;
  if (int rc = cuda_fault("cuDeviceGetPCIBusId", d)) return rc;
  const auto& p = g_devs[d].gpu->pci;
  char text[64];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", p.domain, p.bus, p.device, p.function);
  put_string(text, out, len);
  return kSuccess;
}
EXPORT CUresult cuDeviceGetAttribute(int* v, int attr, CUdevice d) {
  if (!valid(d)) return kInvalidDevice;
  if (!v) return kInvalidValue;
  const SimGpu* g = g_devs[d].gpu;
  if (attr == gpumap::kCuAttrComputeCapabilityMajor) *v = g->cc_major;
  else if (attr == gpumap::kCuAttrComputeCapabilityMinor) *v = g->cc_minor;
  else if (attr == gpumap::kCuAttrMultiprocessorCount)
    *v = static_cast<int>(g_devs[d].mig >= 0 ? g->mig_devices[g_devs[d].mig].multiprocessor_count : g->multiprocessor_count);
  else return kInvalidValue;
  return kSuccess;
}
EXPORT CUresult cuGetErrorName(CUresult rc, const char** s) {
  if (!s) return kInvalidValue;
  *s = gpumap::cuda_result_name(rc);
  return kSuccess;
}
}  // extern "C"
