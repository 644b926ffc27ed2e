#include "session/diagnose.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <iterator>

#include "driver/live_cuda.h"
#include "findings/fix_line.h"
#include "session/explain.h"
#include "session/health.h"
#include "session/which.h"  // gpu_place
#include "model/error.h"
#include "os/proc.h"
#include "resolve/renumbering.h"
#include "session/ps.h"

namespace gpumap {
namespace {

std::optional<std::string> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

SelfProcess read_self_process(bool read_live, double live_timeout_s) {
  SelfProcess p;
  if (read_live) p.live = read_live_cuda(live_timeout_s);
  if (auto env = read_file("/proc/self/environ")) p.start = Environment::from_strings(split_nul(*env));
  if (auto cmd = read_file("/proc/self/cmdline")) p.command = split_nul(*cmd);
  p.pid = static_cast<uint32_t>(getpid());
  return p;
}

bool cuda_started_here(double timeout_s) { return live_cuda_started(timeout_s); }

ProcessCudaFacts process_cuda(Session& s, const SelfProcess& self) {
  ProcessCudaFacts f;
  f.now = s.env();
  f.start = self.start;
  f.command = self.command;
  if (!self.live) {
    f.mapping = s.mapping();
    return f;
  }
  f.live = true;
  f.mapping = live_mapping(s.snapshot(), *self.live);
  try {
    f.predicted = s.mapping();
  } catch (const Error& e) {  // e.g. the driver's order could not be asked: the live answer stands
    f.predicted_error = e.what();
  }
  return f;
}

std::vector<Finding> process_cuda_findings(Session& s, const ProcessCudaFacts& f) {
  const Snapshot& snap = s.snapshot();
  if (f.live) {
    std::optional<Finding> late = set_too_late(snap, f);
    return late ? std::vector<Finding>{*late} : std::vector<Finding>{};
  }
  return environment_findings(s, f.now, f.mapping);
}

std::string combined_fix(Session& s, const Environment& env, const std::vector<Finding>& fs) {
  std::set<std::string> commands, before;
  for (const Finding& f : fs) {
    if (!f.fix.empty()) commands.insert(f.fix.substr(0, f.fix.find(" #")));
    if (f.severity != Severity::kInfo) before.insert(f.id);
  }
  if (commands.size() < 2) return "";
  Environment fixed = env;
  std::vector<std::string> names;  // the variables the fixes touch, in the order they first do
  std::vector<Finding> pending = fs;
  for (int round = 0; round < 3; ++round) {
    for (const Finding& f : pending) {
      if (f.fix.empty() || (round > 0 && f.severity == Severity::kInfo)) continue;
      std::optional<std::vector<FixStep>> steps = parse_fix_line(f.fix);
      if (!steps) return "";  // runs a command: not a line of variables to combine
      for (const FixStep& st : *steps)
        if (std::find(names.begin(), names.end(), st.name) == names.end()) names.push_back(st.name);
      fixed = apply_fix_steps(fixed, *steps);
    }
    std::vector<Finding> after;
    try {
      after = environment_findings(s, fixed, s.mapping(fixed, false));
    } catch (const Error&) {
      return "";
    }
    bool settled = true;
    pending.clear();
    for (const Finding& g : after) {
      if (g.severity == Severity::kInfo) continue;
      if (!g.fix.empty() || !before.count(g.id)) settled = false;
      pending.push_back(g);
    }
    if (settled) return fix_line_between(env, fixed, names);
    bool fixable = false;
    for (const Finding& g : pending) fixable |= !g.fix.empty();
    if (!fixable) return "";
  }
  return "";
}

DoctorAnswer doctor(Session& s, const Environment& env, bool probe, bool verbose) {
  DoctorAnswer a;
  a.snapshot = &s.snapshot();
  a.environment = env;
  Mapping m = s.mapping(env, probe);
  a.findings = environment_findings(s, env, m);
  // A reminder true of every list, said on every run: only when asked for (-v).  The numbering
  // itself is said in every run where it is not the identity (a.renumbering).
  if (!verbose) std::erase_if(a.findings, [](const Finding& f) { return f.id == "ordinals-are-relative"; });
  if (std::optional<Finding> cache = cache_finding(s)) a.findings.push_back(*cache);  // every run pays cuInit again
  for (Finding& f : gpu_fault_findings(s, m.view.uuids)) a.findings.push_back(std::move(f));  // issue 58
  a.combined_fix = combined_fix(s, env, a.findings);
  if (m.view.error == CudaInitError::kNone) a.renumbering = renumbering_line(*a.snapshot, m.view.uuids, gpu_place(s, env));
  for (const Finding& f : a.findings)
    ++(f.severity == Severity::kError ? a.errors : f.severity == Severity::kWarning ? a.warnings : a.infos);
  return a;
}

Diagnosis diagnose_self(Session& s, const SelfProcess& self, ProgramFacts program) {
  ReadOptions opt;
  opt.utilization = false;
  const Snapshot& snap = s.reread(opt);
  Diagnosis d;
  d.cuda = process_cuda(s, self);
  d.devices = visible_devices(snap, d.cuda.mapping);
  d.host_gpus = snap.gpus.size();

  // This process's memory per GPU: NVML's process lists joined by PID, as `gpumap ps` joins them.
  ProcFs proc(s.seams().proc_root);
  PidNamespaceView ns = pid_namespace_view(proc, snap.simulated, s.seams().nvml_pid_ns);
  PsResult ps = join_ps(
      snap, ns, [&](uint32_t pid) { return proc.read(pid, false); }, [](const Environment&) { return CudaView{}; });
  d.unlisted_gpus = ps.unlisted_gpus;
  program.memory_known = ns.joinable && ps.unlisted_gpus.empty();
  program.memory_mib.clear();
  for (const ProcessRow& r : ps.rows)
    if (r.local_pid && *r.local_pid == self.pid) program.memory_mib[r.uuid] += r.used_memory_mib.value_or(0);
  d.program = program;

  d.findings = process_cuda_findings(s, d.cuda);
  std::vector<Finding> more = program_findings(snap, d.cuda.mapping.view.uuids, d.cuda.now, d.program);
  d.findings.insert(d.findings.end(), more.begin(), more.end());
  d.pid = self.pid;
  d.where = gpu_place(s, s.env());
  d.snapshot = &snap;
  return d;
}

}  // namespace gpumap
