#include "findings/rules.h"

#include <set>

#include "findings/rule_table.h"
#include "model/text.h"

namespace gpumap {

bool bound_by_gpumap(const Environment& env) {
  auto mark = env.get("GPUMAP_BOUND");
  return mark && env.get("CUDA_VISIBLE_DEVICES") == mark;
}

std::string bound_rank_advice(const std::string& rank_variable) {
  return "this rank sees only its own GPU(s), numbered from cuda:0: use cuda:0 (torch.cuda.set_device(0)), not "
         "cuda:$" + rank_variable + " (set_device(" + rank_variable + ") fails with `invalid device ordinal` on every rank "
         "but 0); code that must keep the rank can use int(os.environ[\"" + rank_variable +
         "\"]) % torch.cuda.device_count()";
}

bool gpus_hidden_on_purpose(const CudaView& v) {
  if (!v.visible_set || v.entries.size() != 1) return false;
  const CvdEntry& e = v.entries.front().entry;
  return e.form == CvdEntryForm::kBlank || (e.kind == CvdEntryKind::kInteger && e.negative);
}

std::string uuid_fix(const CudaView& v) {
  std::vector<std::string> uuids;
  std::set<std::string> seen;
  for (const EntryDecision& d : v.entries)
    if (!d.uuid.empty() && seen.insert(d.uuid).second) uuids.push_back(d.uuid);
  if (uuids.empty()) return "";
  return "export CUDA_VISIBLE_DEVICES=" + join(uuids, ",");
}

bool has_index_entries(const CudaView& v) {
  for (const EntryDecision& d : v.entries)
    if (d.entry.kind == CvdEntryKind::kInteger) return true;
  return false;
}

std::vector<Finding> diagnose(const DiagnosisInput& in) {
  LauncherEnv launch = parse_launcher_env(in.env);
  const CudaView& v = in.mapping.view;
  RuleInput r{in, in.snapshot, v, launch, gpus_hidden_on_purpose(v), bound_by_gpumap(in.env),
              in.env.get("CUDA_VISIBLE_DEVICES").value_or("")};
  std::vector<Finding> out;
  for (const std::vector<Rule>* table : {&entry_rules(), &host_rules(), &launcher_rules()})
    for (const Rule& rule : *table) {
      Report report(out, rule.id);
      rule.check(r, report);
    }
  return out;
}

}  // namespace gpumap
