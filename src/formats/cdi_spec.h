// The Container Device Interface's spec files (CDI, github.com/cncf-tags/container-device-interface
// SPEC.md): what each fully qualified device name ("nvidia.com/gpu=0") gives a container.  gpumap
// reads only what tells which GPU a device is: the host device nodes of the device's own edits
// and of the spec's edits (which every device of the spec gets).  Pure: documents in, devices out;
// gpumap-kubelet reads the files (kube/cdi_files.h), JSON as is and YAML turned into the same tree.
#pragma once
#include <string>
#include <vector>

#include "formats/json.h"
#include "model/pod.h"

namespace gpumap {

/// The folders the runtimes search by default, lowest priority first (CDI: a device in
/// /var/run/cdi overrides the same name in /etc/cdi).
inline const std::vector<std::string> kCdiSpecDirs = {"/etc/cdi", "/var/run/cdi"};

/// Each device of one spec document, named "KIND=NAME" with the host path of every device node it
/// gives (hostPath when the spec has one, else path), `file` naming the document.  Throws
/// std::invalid_argument saying what is wrong (no kind, a malformed name, a device without a name,
/// a device node without a path): a runtime refuses such a spec too.
std::vector<CdiDevice> parse_cdi_spec(const Json& spec, const std::string& file);

/// One spec file as read: its folder's position in the search order and its devices, or why it
/// could not be used.
struct CdiFileRead {
  std::string file;
  size_t priority = 0;  // the folder's position in CdiSpecs::dirs
  std::vector<CdiDevice> devices;
  std::string error;    // non-empty: the file is not used
};

/// The node's devices from every file: a name in a later folder overrides an earlier one; the
/// same name in two files of one folder is a conflict the runtimes refuse, so neither is used
/// (a problem says so); unusable files are problems too.
CdiSpecs merge_cdi_files(const std::vector<std::string>& dirs, const std::vector<CdiFileRead>& files);

}  // namespace gpumap
