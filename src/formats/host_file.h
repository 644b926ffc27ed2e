// The simulated-host file format (docs/host-file.md): the JSON file that the fake NVML and CUDA
// libraries serve, read into plain values.  Its users: the fake libraries (src/fake/), which serve
// it, and the session, which checks a `--simulate` file before loading them (so a bad file gets
// a message naming the file and the field) and names a simulated host in snapshots.
// parse_host_file is pure; load_host_file adds the one OS call the format needs, reading the file.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/container_facts.h"
#include "model/pci.h"

namespace gpumap {

struct SimProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_memory_mib;  // nullopt: "not available"
  // Its utilisation sample (percent); both nullopt: NVML has no sample of it (an idle process).
  std::optional<uint32_t> sm_utilization, memory_utilization;
  // What the driver answers a reader that asks for every sample it holds (lastSeenTimeStamp 0 or
  // long ago): the average over its whole sample buffer, not the last period (docs/driver-rules.md,
  // measured 2026-12-06).  nullopt: the same as the sample above.
  std::optional<uint32_t> sm_utilization_buffer, memory_utilization_buffer;
};

struct SimMig {
  std::string uuid;  // MIG-...
  std::string name;  // what nvmlDeviceGetName returns for it ("... MIG 3g.40gb")
  uint32_t gpu_instance_id = 0;
  uint32_t compute_instance_id = 0;
  uint64_t memory_total_mib = 0;
  uint32_t multiprocessor_count = 0;
};

struct SimGpu {
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
  std::vector<SimMig> mig_devices;
  std::vector<SimProcess> processes, graphics_processes;
  std::string cpu_affinity;                // "0-15"; empty: NOT_SUPPORTED
  std::vector<std::string> nvlink_peers;   // PCI bus ids of the peer at the end of each active link
  uint32_t nvswitch_links = 0;             // further active links that end at an NVSwitch
  bool cuda_visible = true;                // false: CUDA cannot open it (cgroup-denied, say)
  // What a monitor shows; each nullopt: the fake answers NVML_ERROR_NOT_SUPPORTED.
  std::optional<uint32_t> temperature_gpu_c;
  std::optional<uint32_t> power_draw_mw, power_limit_mw, enforced_power_limit_mw;  // the host file gives watts
  std::optional<uint32_t> clock_sm_mhz, clock_memory_mhz;
  std::optional<uint32_t> fan_speed_percent;
  std::optional<uint32_t> pstate;  // 0..15
  std::optional<uint64_t> ecc_corrected_volatile, ecc_uncorrected_volatile;
  // The fault counters (docs/host-file.md, "GPU faults"); each nullopt: NOT_SUPPORTED.
  std::optional<uint64_t> ecc_corrected_aggregate, ecc_uncorrected_aggregate;
  std::optional<uint32_t> retired_pages_sbe, retired_pages_dbe;
  std::optional<bool> retired_pages_pending;
  std::optional<uint32_t> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> remapped_rows_pending, remapped_rows_failed;
  std::optional<uint64_t> clock_event_reasons;  // nvmlClocksEventReasons bits
  std::optional<uint32_t> pcie_replay_count;
  /// Whether nvmlDeviceGetProcess(es)Utilization(Info) answers for this GPU: set when the file
  /// gives `process_utilization` or any of its processes a utilisation.
  bool process_utilization = false;
  std::map<std::string, int> errors;       // NVML function -> return code to inject
};

/// One injected fault: the host file's "faults" list (docs/host-file.md).  A call matches when
/// its name (without a _vN suffix) is `call` (or `call` is "*"), and `gpu`/`mig` (when set)
/// are the GPU (NVML index) and MIG device it was asked about.
struct SimFault {
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
};

struct SimHost {
  std::string path;
  std::string driver_version = "580.159.04";
  int cuda_driver_version = 13000;
  std::vector<SimGpu> gpus;  // NVML order: sorted by PCI address
  std::vector<std::string> cuda_default_order;  // UUIDs; empty: heuristic
  std::map<std::string, int> errors;  // global NVML/CUDA function -> code ("nvmlInit_v2", "cuInit")
  std::string boot_id;                // optional: for the order cache key and mapping snapshots
  std::string hostname;               // optional: for mapping snapshots
  std::vector<SimFault> faults;       // injected faults, in file order (the first that applies wins)
  std::set<std::string> missing_symbols;  // exported, but reported absent (gpumapFakeHidesSymbol)
  std::string dev_dir;                // optional: GPU N's device node is <dev_dir>/nvidia<minor_number>
  /// optional: gpumap runs inside a container on this host (the `container` object): what it can
  /// open and what it was given.  The fakes serve every GPU of the file either way (NVML in a
  /// privileged container lists them all); gpumap reads this instead of /dev and the cgroup.
  std::optional<ContainerFacts> container;
  /// optional: the node's kubelet (the `kubelet` object): gpumap-kubelet's JSON document
  /// (formats/pod_resources.h), checked at load; `gpumap pods` reads it instead of asking the
  /// kubelet.  "" when absent.
  std::string kubelet;
  /// optional: the kernel log's lines (the `kernel_log` list: /dev/kmsg records or dmesg lines),
  /// which gpumap reads instead of /dev/kmsg on this host (session/health.h).
  std::vector<std::string> kernel_log;
  /// optional: the simulated host's seconds since boot (`uptime_s`), what `health --since` counts
  /// back from; nullopt: the time of the last kernel_log line.
  std::optional<double> uptime_s;
};

/// The largest host file accepted (a 1024-GPU host is about 0.5 MiB).
inline constexpr size_t kMaxHostFileBytes = 16u << 20;

/// Checks and reads a host file's text: every key known, every number a whole number in its
/// field's range, UUIDs in NVML's form, GPUs sorted into PCI (NVML) order.  `path` names the file
/// in messages and is kept in SimHost::path.  Throws std::runtime_error("PATH: what is wrong"),
/// whatever the text holds.
SimHost parse_host_file(std::string_view text, const std::string& path);

/// Reads a host file (a regular file of at most kMaxHostFileBytes) and parses it as
/// parse_host_file does.  Throws std::runtime_error("PATH: what is wrong").
SimHost load_host_file(const std::string& path);

/// NVML/CUDA code from a name ("NVML_ERROR_NOT_SUPPORTED", "CUDA_ERROR_NO_DEVICE") or a number.
int error_code_from_name(const std::string& name);

}  // namespace gpumap
