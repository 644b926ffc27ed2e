// gpumap ps's process rows as JSON: one object per line, serialised directly (10 000 rows
// would otherwise build one big tree).  The keys are the contract in docs/ps.md and docs/cli.md.
#include "output/ps_view.h"

#include "findings/severity.h"

namespace gpumap {
namespace {

/// The lease object, plus whether this row's process is the one holding it.
Json row_lease_json(const std::optional<LeaseState>& st, const ProcessRow& r) {
  if (!st || !st->held) return nullptr;
  Json j = lease_json(*st);
  j["this_process"] = st->holder && r.local_pid && st->holder->pid == static_cast<int64_t>(*r.local_pid);
  return j;
}

/// Appends `v` as a JSON string.  Plain ASCII (the usual case) is copied as is; anything
/// else goes through nlohmann's escaper.  10 000 rows make ~10 MB: this path keeps it fast.
void put_str(std::string& out, const std::string& v) {
  for (unsigned char c : v)
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
      out += Json(v).dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
    }
  out += '"';
  out += v;
  out += '"';
}

void put_key(std::string& out, const char* key, bool first = false) {
  if (!first) out += ',';
  out += '"';
  out += key;
  out += "\":";
}

void put_opt_str(std::string& out, const char* key, const std::optional<std::string>& v) {
  put_key(out, key);
  if (v) put_str(out, *v);
  else out += "null";
}

template <class T>
void put_opt_num(std::string& out, const char* key, const std::optional<T>& v) {
  put_key(out, key);
  out += v ? std::to_string(*v) : "null";
}

}  // namespace

std::string ps_row_json(const ProcessRow& r, const std::optional<LeaseState>& lease) {
  std::string out = "{";
  put_key(out, "pid", true);
  out += std::to_string(r.pid);
  put_opt_num(out, "local_pid", r.local_pid);
  put_key(out, "nspid");
  if (r.nspid) {
    out += '[';
    for (size_t i = 0; i < r.nspid->size(); ++i) out += (i ? "," : "") + std::to_string((*r.nspid)[i]);
    out += ']';
  } else {
    out += "null";
  }
  put_key(out, "state");
  put_str(out, process_state_name(r.state));
  put_key(out, "nvml_index");
  out += std::to_string(r.nvml_index);
  put_key(out, "uuid");
  put_str(out, r.uuid);
  put_key(out, "type");
  put_str(out, r.type);
  put_opt_num(out, "used_memory_mib", r.used_memory_mib);
  put_opt_str(out, "user", r.user);
  put_opt_num(out, "uid", r.uid);
  put_opt_str(out, "command", r.command);
  put_key(out, "command_truncated");
  out += r.command_truncated ? "true" : "false";
  put_key(out, "environ");
  put_str(out, r.environ_known                        ? "ok"
               : r.state == ProcessState::kRunning ? proc_access_name(r.environ_access)
                                                   : "unknown");
  put_key(out, "environ_truncated");
  out += r.environ_truncated ? "true" : "false";
  put_opt_str(out, "cuda_visible_devices", r.cuda_visible_devices);
  put_opt_str(out, "cuda_device_order", r.cuda_device_order);
  put_opt_str(out, "nvidia_visible_devices", r.nvidia_visible_devices);
  put_opt_str(out, "local_rank", r.local_rank);
  put_opt_str(out, "slurm_localid", r.slurm_localid);
  put_opt_str(out, "slurm_job_id", r.slurm_job_id);
  put_opt_str(out, "slurm_procid", r.slurm_procid);
  put_opt_num(out, "cuda_ordinal", r.cuda_ordinal);
  put_opt_str(out, "cuda_error", r.cuda_error);
  put_opt_num(out, "cuda_device_count", r.cuda_device_count);
  put_opt_str(out, "rank_variable", r.rank_variable.empty() ? std::nullopt : std::optional<std::string>(r.rank_variable));
  put_opt_num(out, "rank_value", r.rank);
  put_opt_num(out, "rank_nvml_index", r.rank_nvml_index);
  put_opt_num(out, "bound_own_gpus", r.bound_own);
  put_key(out, "lease");
  out += dump(row_lease_json(lease, r), true);
  out.pop_back();  // dump's newline
  put_key(out, "findings");
  out += dump(findings_json(r.findings), true);  // one writer for findings (json_view.h)
  out.pop_back();                                // dump's newline
  put_key(out, "gpu_findings");
  out += '[';
  for (size_t i = 0; i < r.gpu_findings.size(); ++i) out += (i ? "," : "") + std::to_string(r.gpu_findings[i]);
  out += "]}";
  return out;
}

Json ps_gpu_findings_json(const std::vector<GpuFinding>& fs) {
  Json out = Json::array();
  for (const GpuFinding& g : fs) {
    Json f = findings_json({g.finding})[0];
    f["nvml_index"] = g.nvml_index;
    f["uuid"] = g.uuid;
    f["pids"] = g.pids;
    out.push_back(f);
  }
  return out;
}


}  // namespace gpumap
