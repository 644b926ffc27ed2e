// The CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER pair gpumap hands to a program it launches
// (`run`, `bind`) or prints for one (`pick`, `which`).  Pure: no I/O.
//
// Two forms name the same GPUs:
//  - index (the default for launches): CUDA_DEVICE_ORDER=PCI_BUS_ID and plain indices in PCI bus
//    order.  Every program accepts it: vLLM, Ray, dask-cuda and many scripts int() each entry.
//  - uuid: the GPUs' UUIDs.  Survives renumbering (reboots, containers, MPS servers), but programs
//    that int() the entries fail on it.
// MIG devices have no index: a list with one is written as UUIDs (indices and UUIDs cannot be
// mixed in one list), and so is any list on a host whose PCI order NVML cannot give exactly.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/snapshot.h"

namespace gpumap {

enum class CvdForm { kIndex, kUuid };

/// "index" / "uuid" -> the form; nullopt for anything else.
std::optional<CvdForm> parse_cvd_form(const std::string& text);

struct LaunchVisibility {
  std::string cuda_visible_devices;
  std::string cuda_device_order = "PCI_BUS_ID";
  CvdForm form = CvdForm::kIndex;  // the form used
  std::string note;                // why the UUID form was used although index was asked; "" otherwise
  /// "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=..." (an `env` prefix or `export` argument).
  std::string assignments() const;
  /// The two variables, CUDA_DEVICE_ORDER first (JSON `exports`, `export` lines).
  std::vector<std::pair<std::string, std::string>> variables() const;
};

/// The position of a CUDA device (GPU or MIG device UUID) in PCI bus order, as a
/// CUDA_VISIBLE_DEVICES index under CUDA_DEVICE_ORDER=PCI_BUS_ID; nullopt when it has none
/// (MIG hosts, GPUs NVML could not place).
std::optional<size_t> pci_index_of(const Snapshot& s, const std::string& uuid);

/// The setting that makes exactly `uuids` cuda:0, cuda:1, ... in that order.
LaunchVisibility launch_visibility(const Snapshot& s, const std::vector<std::string>& uuids, CvdForm wanted);

}  // namespace gpumap
