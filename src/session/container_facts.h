// The container this process runs in, and the frameworks it imported: facts about the process that
// the session's diagnosis reads (issue 52).  Apart from session.h, which most files include.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "driver/driver_source.h"
#include "model/container_facts.h"

namespace gpumap {

class Session;

/// A simulated host's `container` object (docs/host-file.md), read once per file; nullopt for the
/// real driver or a host without one.
std::optional<ContainerFacts> simulated_container(const DriverSource& driver);

/// What the container gpumap runs in can open and was given: the simulated host's `container`
/// object, or, in a real container (Seams::in_container), os/container.h's read of /dev, the
/// device cgroup and CapEff; nullopt outside a container and for a `map --env` what-if.
std::optional<ContainerFacts> container_facts_of(const Session& session);

/// The frameworks this process imported, name -> __version__, as its front end said them (Python's
/// diagnose(): sys.modules; gpumap_diagnose's "frameworks").  Process-wide: they are the calling
/// process's modules, whatever session asks.  Thread-safe.
void set_process_frameworks(std::map<std::string, std::string> versions);
/// nullopt until a front end said them.
std::optional<std::map<std::string, std::string>> process_frameworks();

/// A simulated host's kubelet (its `kubelet` object, gpumap-kubelet's document); "" for the real
/// driver or a host without one.
std::string simulated_kubelet(const DriverSource& driver);

}  // namespace gpumap
