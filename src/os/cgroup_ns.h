// Reading another process's cgroup from inside a cgroup namespace (issue 56 item 5).  In its own
// cgroup namespace (how a Kubernetes pod runs on cgroup v2, the shipped DaemonSet among them)
// gpumap reads /proc/PID/cgroup paths relative to its namespace's root ("0::/../../kubepods-...")
// and could not find their folders to check their owners, so a delegated cgroup named like a
// kubelet pod was taken as that pod.  With the host's cgroup tree mounted where gpumap reads it
// (/sys/fs/cgroup, contrib/kubernetes/gpumap-daemonset.yaml) and the host's PID namespace, the
// namespace's root is found in that tree once (the folder at its depth that holds gpumap's own
// pid), and each relative path is read from there.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

/// The leading "/.." components of a cgroup path (0 for an absolute one).
size_t cgroup_path_ups(const std::string& path);

/// `path` as the namespace whose root is `ns_root` (absolute) gives it, made absolute:
/// ("/../../b", "/k/a/x") -> "/k/b".  nullopt when it climbs above the hierarchy's root or holds
/// ".." after a name.  Pure.
std::optional<std::string> absolute_cgroup_path(const std::string& path, const std::string& ns_root);

/// This process's cgroup namespace root in the `hierarchy` ("" for cgroup v2, else a v1
/// controller list) mounted under `cgroup_root`, as an absolute path: "/" when PID 1 of
/// `proc_root` gives an absolute path (the same namespace as the tree); else the folder at the depth
/// its "/.." steps say whose cgroup.procs lists `self_pid`; nullopt when it cannot be found (the tree
/// there is the namespace's own, not the host's; no such folder).  Searched once per arguments.
std::optional<std::string> cgroup_namespace_root(const std::string& cgroup_root, const std::string& proc_root,
                                                 const std::string& hierarchy, uint32_t self_pid);

/// The owner of each folder of `path` (a /proc/PID/cgroup path of `hierarchy`; split at '/', [0]
/// the hierarchy's root), as cgroup_folder_owners (os/proc.h) reads them; a relative path through
/// cgroup_namespace_root (its "" and ".." entries nullopt, the named ones owned as read).  Empty when
/// the folders cannot be found.
std::vector<std::optional<uint32_t>> cgroup_path_owners(const std::string& cgroup_root, const std::string& proc_root,
                                                        const std::string& hierarchy, const std::string& path);

}  // namespace gpumap
