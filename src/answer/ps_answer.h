// `gpumap ps`'s answer: one frame (session/ps.h read_ps_frame computes it; output/ps_view.h
// writes its JSON document, its table and its CSV; `metrics` and `top` read the same frame).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/lease.h"
#include "resolve/process_view.h"

namespace gpumap {

/// One `ps` frame of a session: the PID-namespace decision, every row with its findings, and
/// the gpumap lease of each GPU that has a row (nullopt: its lock file could not be read).
struct PsFrame {
  std::string proc_root;                   // the /proc read (Seams::proc_root)
  std::string host;                        // this machine's hostname
  std::optional<std::string> slurm_node;   // $SLURMD_NODENAME of the session's environment
  PidNamespaceView ns;
  PsResult result;
  std::map<std::string, std::optional<LeaseState>> leases;  // by UUID
  /// The kubelet's answer, asked when a GPU process runs in a Kubernetes pod (nullopt: not asked).
  std::optional<KubeletReply> kubelet;
};

/// What `gpumap ps` was asked to keep (--user, --gpu, --pid, --job); each list empty: no filter on it.
/// A row is kept when it matches every non-empty list (any of a list's values).
struct PsFilter {
  std::vector<std::string> users;  // a user name or a numeric UID, as typed
  std::vector<std::string> gpus;   // GPU specs (nvidia-smi index, UUID or prefix, PCI bus id)
  std::vector<uint32_t> pids;      // NVML's PID or the PID in gpumap's own namespace
  std::vector<std::string> jobs;   // Slurm job id (SLURM_JOB_ID of the process's environment)
  bool empty() const { return users.empty() && gpus.empty() && pids.empty() && jobs.empty(); }
};

}  // namespace gpumap
