// Test fixtures for the ps join and its rules (process_view_test.cc, findings/ps_rules_test.cc):
// a two-GPU snapshot with given process lists, and a /proc and a mapping engine made of values.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "resolve/cuda_rules.h"
#include "resolve/process_view.h"

namespace gpumap::testing_ps {

inline const char* kU0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";
inline const char* kU1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

inline Snapshot two_gpus(std::vector<std::vector<uint32_t>> pids) {
  Snapshot s;
  for (uint32_t i = 0; i < 2; ++i) {
    Gpu g;
    g.nvml_index = i;
    g.uuid = i ? kU1 : kU0;
    g.name = "NVIDIA H200";
    g.pci_bus_id = i ? "00000000:00:07.0" : "00000000:00:06.0";
    g.processes.emplace();
    for (uint32_t p : pids[i]) g.processes->push_back({p, 256, "compute"});
    s.gpus.push_back(g);
  }
  return s;
}

struct World {
  std::map<uint32_t, ProcProcess> procs;
  int views = 0;
  void add(uint32_t pid, std::vector<std::string> env, std::string user = "alice") {
    ProcProcess p;
    p.pid = pid;
    p.user = user;
    p.command = "python3 train.py";
    p.argv = std::vector<std::string>{"python3", "train.py"};
    p.environ = std::move(env);
    p.environ_access = ProcAccess::kOk;
    p.nspid = std::vector<uint32_t>{pid};
    procs[pid] = p;
  }
  // Another user's process: its environment cannot be read.
  void add_denied(uint32_t pid, std::string user) {
    ProcProcess p;
    p.pid = pid;
    p.user = std::move(user);
    p.environ_access = ProcAccess::kDenied;
    p.environ_error = "Permission denied";
    procs[pid] = p;
  }
  // status "State: Z (zombie)"; its environ reads empty.
  void add_zombie(uint32_t pid, std::string user) {
    ProcProcess z;
    z.pid = pid;
    z.user = std::move(user);
    z.zombie = true;
    z.environ_access = ProcAccess::kError;
    procs[pid] = z;
  }
  ReadProc reader() {
    return [this](uint32_t pid) {
      auto it = procs.find(pid);
      if (it != procs.end()) return it->second;
      ProcProcess gone;
      gone.pid = pid;
      gone.access = ProcAccess::kGone;
      return gone;
    };
  }
  ViewOf viewer() {
    return [this](const Environment& e) {
      ++views;
      return predict_cuda_view({kU0, kU1}, e.get("CUDA_DEVICE_ORDER"), e.get("CUDA_VISIBLE_DEVICES"));
    };
  }
};

// GPU 0: pids 100 (CUDA_VISIBLE_DEVICES=1,0) and 101 (=1: GPU 0 is outside its set); GPU 1: pids
// 102 (its UUID) and 103 (bob's, unset).
inline Snapshot four_processes(World& w) {
  w.add(100, {"CUDA_VISIBLE_DEVICES=1,0"});
  w.add(101, {"CUDA_VISIBLE_DEVICES=1"});
  w.add(102, {std::string("CUDA_VISIBLE_DEVICES=") + kU1});
  w.add(103, {}, "bob");
  return two_gpus({{100, 101}, {102, 103}});
}

}  // namespace gpumap::testing_ps
