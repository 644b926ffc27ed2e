// Naming physical GPUs on the command line: an nvidia-smi index ("3"), a UUID or a
// unique prefix of one ("GPU-28554ffd", "28554ffd", any case), or a PCI bus id in any
// form ("3b:00.0", "0000:3B:00.0", "00000000:3B:00.0").  Pure: no I/O.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/snapshot.h"
#include "resolve/cuda_rules.h"

namespace gpumap {

/// Where a snapshot's GPUs are, for the list an error prints: on this host, or inside a container
/// (numbered from 0 as nvidia-smi and CUDA inside number them), with each one's host nvidia-smi
/// index when known (resolve/container_view.h host_indices; empty: unknown).
struct GpuPlace {
  bool container = false;
  std::vector<uint32_t> host_index;
  /// In a Slurm step whose device cgroup leaves it only its own GPUs (resolve/allocation.h,
  /// SlurmIdReading::kMinors): each GPU's Slurm global id, in the order of the snapshot's GPUs
  /// (nullopt where none), and the setting they come from ("SLURM_STEP_GPUS=4,5").  Empty otherwise.
  std::vector<std::optional<uint32_t>> slurm_id = {};
  std::string slurm_setting = {};
};

/// A GPU's number in the layer around this process: its host nvidia-smi index inside a container
/// ("host_index", column "HOST"), its Slurm global id in a step under a device cgroup ("slurm_id",
/// column "SLURM ID").  JSON key, table column and value.
struct OuterNumber {
  const char* key;
  const char* column;
  uint32_t value;
};

/// The outer number of a GPU (or of a MIG device's GPU) in `where`; nullopt when `where` knows none.
std::optional<OuterNumber> outer_number(const Snapshot& s, const GpuPlace& where, const std::string& uuid);

/// "GPUs on this host:" (or "The container's GPUs ...:") and one line per GPU and MIG device.
std::string gpu_list(const Snapshot& s, const GpuPlace& where = {});

/// The GPUs the specs name, in the order given.  Throws Error(kExitUsage) naming the spec
/// and listing the host's GPUs when a spec names no GPU or several.  Duplicates are kept
/// (callers decide whether a repeat is an error).
std::vector<const Gpu*> select_gpus(const Snapshot& s, const std::vector<std::string>& specs);

/// One spec; same errors as select_gpus.  Inside a container (`where`), a host number that is not
/// a GPU here is said to be one, with the container's number for that GPU.
const Gpu* select_one_gpu(const Snapshot& s, const std::string& spec, const GpuPlace& where = {});

/// "cuda:4" (any case, as people write device_map keys) -> 4; nullopt for anything else.
std::optional<unsigned> parse_cuda_ordinal(const std::string& spec);

/// What "cuda:N" is in one environment.
struct CudaOrdinalAnswer {
  std::string spec;        // as given
  unsigned cuda_ordinal = 0;
  std::string uuid;        // the GPU or MIG device
  int nvml_index = -1;     // the GPU, or the MIG device's parent
  std::string sentence;    // "in this environment cuda:4 is nvidia-smi GPU 3, UUID GPU-..., PCI bus id ..."
};

/// Answers a "cuda:N" spec from `view` (the mapping the table shows).  Error(kExitUsage) when
/// cuda:N does not exist there (saying which do), Error(kExitUnavailable) when CUDA would fail.
CudaOrdinalAnswer answer_cuda_ordinal(const Snapshot& s, const CudaView& view, const std::string& spec);

/// A GPU or a MIG device: what select_one_gpu takes, and also a MIG device UUID or a unique
/// prefix of one ("MIG-d280783e", any case).  Returns the UUID as NVML names it.
std::string select_device(const Snapshot& s, const std::string& spec, const GpuPlace& where = {});
/// select_device of each spec (comma- or space-separated), in the order given.
std::vector<std::string> select_devices(const Snapshot& s, const std::vector<std::string>& specs, const GpuPlace& where = {});

/// Error(kExitUsage) when a UUID repeats: a repeated GPU makes cuInit fail, so no list given
/// to CUDA may name one twice.
void require_distinct(const std::vector<std::string>& uuids);

/// Splits "a,b c" on commas and white space, dropping empty pieces.
std::vector<std::string> split_gpu_specs(const std::string& text);

}  // namespace gpumap
