// Reads the node's CDI spec files (formats/cdi_spec.h) for gpumap-kubelet: every *.json and
// *.yaml file of each folder, YAML through Debian's yaml-cpp (which only this program links).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "model/pod.h"

namespace gpumap {

/// What reading the spec files may cost (issue 46, item 8: one 4 MiB YAML list of a million items
/// cost 3 s and 570 MB before a node count looked, and two such files lost every pod's attribution
/// on the node to gpumap's wait).  A file's size is checked (fstat) before a byte is read; its
/// nodes are counted by a streaming pass that builds nothing and stops at the cap, before any tree
/// is built.  Before that, a YAML file's structure characters (`,` `[` `{` `-` `:` `?` and line
/// ends: every node needs one or two) are counted, at most 3 times the node cap: yaml-cpp scans a whole
/// flow collection before its first event (a 4 MB `[a,a,...]` held 808 MB).  The files are read
/// smallest first, so what the run's budget leaves out is the largest, never a small spec behind a
/// huge one.
struct CdiBudget {
  size_t file_bytes = 1u << 20;   // one file (a real spec is a few KiB; nvidia-ctk's for 8 GPUs and
                                  // their MIG devices, tens of KiB); a 4 MiB plain scalar cost 3 s
  size_t file_nodes = 100000;     // YAML or JSON nodes in one file (a spec for 8 GPUs and their MIG devices: a few thousand)
  size_t run_bytes = 16u << 20;   // every file together
  size_t run_nodes = 400000;
  double run_seconds = 1;         // every file together; gpumap waits 3 s for the whole helper
};

/// The spec files read in one folder: the first by name; each one past it is a problem naming it.
inline constexpr size_t kCdiFolderFiles = 1024;
/// The spec names listed in one folder (a hostile folder of millions costs no more): past it, one
/// problem names the folder.
inline constexpr size_t kCdiFolderNames = 65536;

/// The devices of `dirs` (lowest priority first).  A folder that does not exist is skipped; one
/// that cannot be read, a file that is not a regular file, past its budget, or not a CDI spec is a
/// problem with its reason (and costs no other file its devices).  Never throws.
CdiSpecs read_cdi_specs(const std::vector<std::string>& dirs, const CdiBudget& budget = {});

}  // namespace gpumap
