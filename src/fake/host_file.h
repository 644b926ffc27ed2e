// A simulated host: the JSON file that the fake NVML and CUDA libraries serve
// (format: docs/host-file.md).  Loaded by the fake libraries and checked by gpumap
// before it loads them, so a bad file gets a message naming the file and the field.
#pragma once
#include <cstdint>
#include <map>
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

struct FakeHost {
  std::string path;
  std::string driver_version = "580.159.04";
  int cuda_driver_version = 13000;
  std::vector<FakeGpu> gpus;  // NVML order: sorted by PCI address
  std::vector<std::string> cuda_default_order;  // UUIDs; empty: heuristic
  std::map<std::string, int> errors;  // global NVML/CUDA function -> code ("nvmlInit_v2", "cuInit")
  std::string boot_id;                // optional: for the order cache key and mapping snapshots
  std::string hostname;               // optional: for mapping snapshots
};

/// Reads and checks a host file.  Throws std::runtime_error("FILE: what is wrong").
FakeHost load_host_file(const std::string& path);

/// NVML/CUDA code from a name ("NVML_ERROR_NOT_SUPPORTED", "CUDA_ERROR_NO_DEVICE") or a number.
int error_code_from_name(const std::string& name);

}  // namespace gpumap::fake
