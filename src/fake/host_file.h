// A simulated host: the JSON file that the fake NVML and CUDA libraries serve
// (format: docs/host-file.md).  Loaded by the fake libraries and checked by gpumap
// before it loads them, so a bad file gets a message naming the file and the field.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "model/pci.h"

namespace gpumap::fake {

struct FakeProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_memory_mib;  // nullopt: "not available"
};

struct FakeMig {
  std::string uuid;  // MIG-...
  std::string name;  // what nvmlDeviceGetName returns for it ("... MIG 3g.40gb")
  uint32_t gpu_instance_id = 0;
  uint32_t compute_instance_id = 0;
  uint64_t memory_total_mib = 0;
  uint32_t multiprocessor_count = 0;
};

struct FakeGpu {
  std::string name;
  std::string uuid;
  std::string pci_bus_id;  // NVML form, normalised
  PciAddress pci;
  uint32_t minor_number = 0;
  int cc_major = 0, cc_minor = 0;
  uint32_t multiprocessor_count = 0;
  uint64_t memory_total_mib = 0;
  uint64_t memory_used_mib = 0;
  uint32_t utilization_gpu = 0, utilization_memory = 0;
  bool mig_enabled = false;
  std::vector<FakeMig> mig_devices;
  std::vector<FakeProcess> processes, graphics_processes;
  std::string cpu_affinity;                // "0-15"; empty: NOT_SUPPORTED
  std::vector<std::string> nvlink_peers;   // PCI bus ids of the peer at the end of each active link
  uint32_t nvswitch_links = 0;             // further active links that end at an NVSwitch
  bool cuda_visible = true;                // false: CUDA cannot open it (cgroup-denied, say)
  std::map<std::string, int> errors;       // NVML function -> return code to inject
};

/// One injected fault: the host file's "faults" list (docs/host-file.md).  A call matches when
/// its name (without a _vN suffix) is `call` (or `call` is "*"), and `gpu`/`mig` (when set)
/// are the GPU (NVML index) and MIG device it was asked about.
struct FakeFault {
  std::string call;
  int gpu = -1;          // -1: any GPU, and calls about no GPU (nvmlInit, cuInit, counts)
  int mig = -1;          // -1: the GPU or any of its MIG devices
  int error = 0;         // the code the call returns; 0: it answers (late, or malformed)
  uint64_t after = 0;    // matching calls let through first: fail the Nth call with after = N-1
  uint64_t times = 0;    // matching calls it then applies to; 0: all later ones
  uint32_t delay_ms = 0; // answer this much later (a slow call)
  bool hang = false;     // never answer (a hung driver)
  std::string output;    // "" or a malformed answer: "unterminated" (a string fills the buffer,
                         // no NUL), "huge_count" (a count of 0xFFFFFFF0), "stdout" (the call
                         // prints lines that look like a CUDA probe answer to stdout)
  std::shared_ptr<std::atomic<uint64_t>> seen = std::make_shared<std::atomic<uint64_t>>(0);
};

struct FakeHost {
  std::string path;
  std::string driver_version = "580.159.04";
  int cuda_driver_version = 13000;
  std::vector<FakeGpu> gpus;  // NVML order: sorted by PCI address
  std::vector<std::string> cuda_default_order;  // UUIDs; empty: heuristic
  std::map<std::string, int> errors;  // global NVML/CUDA function -> code ("nvmlInit_v2", "cuInit")
  std::string boot_id;                // optional: for the order cache key and mapping snapshots
  std::string hostname;               // optional: for mapping snapshots
  std::vector<FakeFault> faults;      // injected faults, in file order (the first that applies wins)
  std::set<std::string> missing_symbols;  // exported, but reported absent (gpumapFakeHidesSymbol)
  std::string dev_dir;                // optional: GPU N's device node is <dev_dir>/nvidia<minor_number>
};

/// The fault that applies to this call now, or nullptr.  Counts the call against every fault
/// it matches; sleeps delay_ms, or forever for hang, before returning.
const FakeFault* apply_fault(const FakeHost& host, const std::string& call, int gpu, int mig = -1);

/// Whether host file `host_path` lists `symbol` in missing_symbols (each file read once).  The
/// fake libraries export it as gpumapFakeHidesSymbol for gpumap's DynLib.
bool fake_hides_symbol(const std::string& host_path, const char* symbol);

/// The largest host file accepted (a 1024-GPU host is about 0.5 MiB).
inline constexpr size_t kMaxHostFileBytes = 16u << 20;

/// Reads and checks a host file: a regular file of at most kMaxHostFileBytes, every number a
/// whole number in its field's range, UUIDs in NVML's form.  Throws
/// std::runtime_error("FILE: what is wrong").
FakeHost load_host_file(const std::string& path);

/// With `dev_dir` set, keeps only the GPUs whose device node this process may open (an open that
/// fails with EPERM/EACCES, or a missing node, hides the GPU), as the real driver does under a
/// device cgroup or in a container; the rest keep PCI order, so NVML numbers them from 0.
/// `may_open(path)` is the seam (default: open(2) itself).  Without `dev_dir`, does nothing.
void keep_openable_gpus(FakeHost& host, bool (*may_open)(const std::string& path) = nullptr);

/// NVML/CUDA code from a name ("NVML_ERROR_NOT_SUPPORTED", "CUDA_ERROR_NO_DEVICE") or a number.
int error_code_from_name(const std::string& name);

}  // namespace gpumap::fake
