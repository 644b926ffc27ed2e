// The JSON vocabulary (docs/cli.md, "JSON contract"): every command builds its document from
// these pieces, so one concept has one key and one shape everywhere.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "findings/severity.h"
#include "formats/json.h"
#include "model/snapshot.h"
#include "model/lease.h"
#include "resolve/gpu_selector.h"
#include "resolve/picker.h"
#include "resolve/resolve_mapping.h"

namespace gpumap {

/// What every document starts with: {"simulated": bool, "source": "NVML" | "simulated host FILE"}.
Json document(const Snapshot& s);

/// The device object, the same in every command: nvml_index (the nvidia-smi index; a MIG
/// device's parent's), uuid (as NVML names it: "GPU-..." or "MIG-..."), pci_bus_id, name,
/// memory_total_mib and mig (null for a whole GPU; for a MIG device {parent_uuid,
/// gpu_instance_id, compute_instance_id}).  A UUID the snapshot does not know keeps only its
/// uuid; the other keys are null.
Json device_json(const Snapshot& s, const std::string& uuid);
/// {"cuda_ordinal": N} followed by device_json: what cuda:N is.
Json cuda_device_json(const Snapshot& s, size_t ordinal, const std::string& uuid);
/// cuda_device_json of each UUID, cuda:0 first; with `where` (a container, a Slurm step under a
/// device cgroup) each device also carries its outer number (`host_index` or `slurm_id`).
Json cuda_devices_json(const Snapshot& s, const std::vector<std::string>& uuids, const GpuPlace* where = nullptr);

/// The CUDA view of one environment: source, order, error, error_reason, devices (cuda
/// device objects), order_note, and driver_ms when the driver was asked.
Json mapping_json(const Snapshot& s, const Mapping& m, const GpuPlace* where = nullptr);

/// What torch 2.11 makes of the same environment (resolve/framework_view.h): device_count (null
/// when it raises), raises, defers_to_driver, driver_device_count, agrees, reason,
/// is_available and is_available_nvml_check (PYTORCH_NVML_BASED_CUDA_CHECK=1; null when it raises).
Json torch_view_json(const Snapshot& s, const Environment& env, const Mapping& m);

/// A GPU as a node's process list names it (ps's "gpus", and `gpumap job`, which joins them
/// across nodes): {nvml_index, uuid, pci_bus_id, minor_number} (minor_number: /dev/nvidiaN,
/// null when unknown).
Json gpu_ref_json(uint32_t nvml_index, const std::string& uuid, const std::string& pci_bus_id,
                  std::optional<uint32_t> minor_number);

/// The inventory object of list and map: device_json plus every NVML field.
Json gpu_json(const Snapshot& s, const Gpu& g);
/// document() plus driver_version, cuda_driver_version, nvml_symbols and gpus (gpu_json each).
Json snapshot_json(const Snapshot& s);

/// `asked_cuda` of `map cuda:N` and `which cuda:N`: what each asked cuda:N is.
Json asked_cuda_json(const std::vector<CudaOrdinalAnswer>& asked);

/// `passed_over` of pick's document and of the C API's "not enough GPUs" error: device_json of
/// each GPU not chosen, with its "reasons".
Json passed_over_json(const Snapshot& s, const std::vector<Rejection>& rejected);

/// The document pick, run and bind share: document() plus "devices" (the cuda device objects
/// the program will see, with memory_free_mib and cpu_affinity) and "exports" (the variables
/// set for it, in order).
Json launch_json(const Snapshot& s, const std::vector<std::string>& uuids,
                 const std::vector<std::pair<std::string, std::string>>& exports);

/// {"NAME": value or null} for each variable of relevant_variables() (the ones in force).
Json environment_json(const Environment& env);

/// [{"id", "severity", "message", "fix"}]
Json findings_json(const std::vector<Finding>& fs);

/// The lease object: null when nobody holds it, else {"held": true, "pid", "user", "command",
/// "start_unix"} (null values while the holder has not written its record yet).
Json lease_json(const LeaseState& st);
Json lease_json(const LeaseRecord& r);

}  // namespace gpumap
