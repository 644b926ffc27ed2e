// The host snapshot: everything read from the driver, once, as plain values.
// Every field a driver may not support is optional (N/A in tables, null in JSON);
// one failed query never drops a GPU.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model/pci.h"

namespace gpumap {

struct GpuProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_memory_mib;  // nullopt: the driver reports "not available"
  std::string type;                          // "compute" or "graphics"
  /// Its share of the GPU over NVML's last samples (nvmlDeviceGetProcessesUtilizationInfo, or
  /// nvmlDeviceGetProcessUtilization on older drivers), percent: SM (kernels running) and memory
  /// (reads/writes).  nullopt: not read (ReadOptions::process_utilization), not supported, or
  /// NVML had no sample of this process in the window (docs/cli.md).
  std::optional<uint32_t> sm_utilization;
  std::optional<uint32_t> memory_utilization;
};

struct MigDevice {
  std::string uuid;  // "MIG-..."
  std::string name;  // NVML's name for the MIG device, with its profile: "NVIDIA A100-SXM4-80GB MIG 3g.40gb"
  std::optional<uint32_t> gpu_instance_id;
  std::optional<uint32_t> compute_instance_id;
  std::optional<uint64_t> memory_total_mib;
  std::optional<uint64_t> memory_used_mib;
};

/// A GPU at the far end of direct (GPU to GPU) NVLinks.  One entry per peer with a count, not
/// one per link.  GPUs reached through NVSwitches are not listed per pair (that grew as the
/// square of the GPU count): see Gpu::nvswitch_fabric and nvlinks_between.
struct NvLinkPeer {
  std::string uuid;         // the peer's UUID, spelled as in this snapshot
  uint32_t links = 0;       // active NVLinks between the two (through NVSwitches: the smaller switch link count)
  uint32_t nvml_index = 0;  // the peer's, for joining within this snapshot without a UUID lookup
  bool operator==(const NvLinkPeer& o) const { return uuid == o.uuid && links == o.links && nvml_index == o.nvml_index; }
};

/// A query on one GPU that failed, or answered what gpumap would not take (a count past its
/// limits), as the NVML reader (driver/nvml_reader.cc) kept it.
struct GpuNote {
  std::string call;  // the NVML call as gpumap names it, without a version: "nvmlDeviceGetMemoryInfo"
  int code = 0;      // the nvmlReturn_t the call returned, raw ("NVML_SUCCESS" 0 for a refused answer)
  std::string text;  // in words, from the library, call and code (and the driver's nvmlErrorString):
                     // what `list` prints and JSON's "notes" holds
};

struct Gpu {
  uint32_t nvml_index = 0;
  std::string uuid;  // "GPU-...", the identity in every layer
  std::string pci_bus_id;  // as NVML wrote it
  std::optional<PciAddress> pci;  // parsed; nullopt when the driver gave nothing usable
  std::string name;
  std::optional<uint32_t> minor_number;
  std::optional<uint64_t> memory_total_mib;
  std::optional<uint64_t> memory_used_mib;
  std::optional<uint64_t> memory_free_mib;
  std::optional<uint32_t> utilization_gpu;     // percent
  std::optional<uint32_t> utilization_memory;  // percent
  std::optional<std::string> compute_capability;  // "9.0"
  std::optional<bool> mig_enabled;
  // What a monitor shows (ReadOptions::sensors; nullopt: not read, or not supported).
  std::optional<uint32_t> temperature_c;       // GPU core, degrees C (nvidia-smi temperature.gpu)
  std::optional<double> power_draw_w;          // board power draw, W (power.draw)
  std::optional<double> power_limit_w;         // power management limit, W (power.limit)
  std::optional<double> enforced_power_limit_w;  // the limit in force, W (enforced.power.limit)
  std::optional<uint32_t> clock_sm_mhz;        // clocks.current.sm
  std::optional<uint32_t> clock_memory_mhz;    // clocks.current.memory
  std::optional<uint32_t> fan_speed_percent;   // fan.speed (nullopt on passively cooled boards)
  std::optional<uint32_t> performance_state;   // pstate: 0 for P0 .. 15 for P15
  std::optional<uint64_t> ecc_corrected_volatile;    // ecc.errors.corrected.volatile.total
  std::optional<uint64_t> ecc_uncorrected_volatile;  // ecc.errors.uncorrected.volatile.total
  std::vector<MigDevice> mig_devices;
  std::optional<std::vector<GpuProcess>> processes;  // nullopt: the list could not be read
  std::optional<std::string> cpu_affinity;  // cpu list, "0-15,32-47"
  std::vector<NvLinkPeer> nvlink_peers;     // GPUs reached by direct active NVLinks, nvidia-smi order, each once
  std::optional<uint32_t> nvswitch_links;   // active NVLinks whose far end is an NVSwitch
  /// The NVSwitch fabric this GPU reaches others through (an id within this snapshot; the
  /// driver's P2P status says who shares one): two GPUs of one fabric are joined by the smaller
  /// of their nvswitch_links.  nullopt: on none (or not read).
  std::optional<uint32_t> nvswitch_fabric;
  std::vector<GpuNote> notes;               // queries that failed, each with the driver's code
};

struct Snapshot {
  bool simulated = false;
  std::string source;  // "NVML" or "simulated host <file>"
  std::optional<std::string> driver_version;
  std::optional<int> cuda_driver_version;  // 13000 = 13.0
  std::vector<Gpu> gpus;  // NVML order
  std::vector<std::string> bindings;  // "nvmlInit_v2", ... which symbol bound for each call
  bool sensors_read = false;               // read with ReadOptions::sensors (JSON then shows those fields)
  bool process_utilization_read = false;   // read with ReadOptions::process_utilization

  /// The GPU with this UUID (case-insensitive), or nullptr.
  const Gpu* find_uuid(const std::string& uuid) const;
  /// The GPU or MIG device with this UUID (case-insensitive); `gpu` is a MIG device's parent.
  /// Both null when unknown.
  struct DeviceRef {
    const Gpu* gpu = nullptr;
    const MigDevice* mig = nullptr;
  };
  DeviceRef find_device(const std::string& uuid) const;
  /// The GPU or MIG device a UUID from CUDA names, matched by hex digits (model/uuid.h
  /// same_uuid_hex: CUDA writes a MIG device as "GPU-<hex of its MIG UUID>").  Both null when unknown.
  DeviceRef find_cuda_device(const std::string& cuda_uuid) const;
  /// The NVML index of a GPU or of the parent of a MIG device (find_device), or -1; an empty UUID
  /// (a GPU whose UUID NVML could not read) matches nothing.
  int nvml_index_of(const std::string& uuid) const;
  /// "nvidia-smi GPU 3" for a UUID (or "nvidia-smi GPU 3 MIG device 1"), "unknown GPU <uuid>"
  /// otherwise, "a GPU NVML could not identify" for an empty one.
  std::string describe(const std::string& uuid) const;
  /// describe() with the UUID: "nvidia-smi GPU 3 (GPU-...)", the one way messages name a GPU.
  std::string describe_with_uuid(const std::string& uuid) const { return describe(uuid) + " (" + uuid + ")"; }
  bool any_mig() const;
  /// True when every GPU has the same name and compute capability.
  bool all_same_model() const;

 private:
  // The lookups above run once per GPU in many per-GPU loops (map, list, pick on 16 384 GPUs:
  // issue 34 point 9), so they go through a hash index of the UUIDs, built on first use and
  // rebuilt when `gpus` moved or changed size.  An index hit is checked against the GPU itself
  // and a miss falls back to the scan, so an edit in place (a test renaming a GPU) is never
  // answered wrongly, only more slowly.  Const lookups may run on several threads: the cache
  // has its own lock, and a copy of the snapshot starts with an empty one.
  struct UuidIndex;
  struct IndexCache {
    IndexCache() = default;
    IndexCache(const IndexCache&) {}
    IndexCache& operator=(const IndexCache&) {
      std::lock_guard<std::mutex> lock(mutex);
      index.reset();
      return *this;
    }
    std::mutex mutex;
    std::shared_ptr<const UuidIndex> index;
  };
  mutable IndexCache index_;
  std::shared_ptr<const UuidIndex> uuid_index() const;
  DeviceRef scan_device(const std::string& uuid) const;
  DeviceRef scan_cuda_device(const std::string& hex) const;
};

/// Active NVLinks between two GPUs: direct ones, plus through NVSwitches the smaller of the two
/// switch link counts when both are on one fabric (what `nvidia-smi topo -m` prints as NV<n>).
uint32_t nvlinks_between(const Gpu& a, const Gpu& b);

/// Every GPU of `s` that `g` reaches over NVLink, each once in nvidia-smi order with its link
/// count (nvlinks_between): for output, O(GPUs) per call.
std::vector<NvLinkPeer> nvlink_peers_of(const Snapshot& s, const Gpu& g);

// A mapping snapshot (`gpumap snapshot save|diff`, `verify --snapshot`): the numbering of a
// host's GPUs as a snapshot file records it (formats/snapshot_file.h), compared by
// resolve/snapshot_diff.h.

struct SnapshotMig {
  std::string uuid;  // "MIG-..."
  std::optional<uint32_t> gpu_instance_id;
  std::optional<uint32_t> compute_instance_id;
};

struct SnapshotGpu {
  uint32_t nvml_index = 0;
  std::optional<uint32_t> minor_number;  // /dev/nvidiaN
  std::string uuid;
  std::string pci_bus_id;  // NVML form
  std::string name;
  std::optional<bool> mig_enabled;
  std::vector<SnapshotMig> mig_devices;
};

/// CUDA's base order (CUDA_VISIBLE_DEVICES unset) under one CUDA_DEVICE_ORDER value.
struct SnapshotOrder {
  std::string order;                 // "FASTEST_FIRST" | "PCI_BUS_ID"
  std::vector<std::string> devices;  // UUIDs (MIG devices in place of their GPU), cuda:0 first
  std::string source;                // how gpumap knew it: "predicted" | "cache" | "driver"
  std::string error;                 // non-empty: the order could not be obtained (devices empty)
};

struct MappingSnapshot {
  std::string gpumap_version;
  std::string saved_at;  // UTC, "2026-11-30T03:04:05Z"
  std::string hostname;
  std::string boot_id;
  bool simulated = false;
  std::string source;  // "NVML" | "simulated host FILE"
  std::optional<std::string> driver_version;
  std::optional<int> cuda_driver_version;  // 13000 = 13.0
  std::vector<SnapshotGpu> gpus;           // nvidia-smi order
  std::vector<SnapshotOrder> cuda_orders;  // FASTEST_FIRST, then PCI_BUS_ID
};

}  // namespace gpumap
