#include "output/launch_view.h"

#include "output/json_view.h"
#include "output/pick_view.h"

namespace gpumap {

std::string cpu_summary(const LaunchPlan& plan) {
  return plan.cpus.empty() ? "not bound (" + plan.cpus_not_bound + ")" : plan.cpu_list;
}

Json launch_document(const Snapshot& s, const LaunchPlan& plan, const std::vector<std::string>& argv) {
  Json doc = launch_json(s, plan.uuids, plan.exports);
  doc["command"] = argv;
  doc["cpus"] = plan.cpus.empty() ? Json(nullptr) : Json(plan.cpu_list);
  return doc;
}

Json run_json(const LaunchAnswer& a) {
  Json doc = launch_document(*a.snapshot, a.plan, a.argv);
  doc["lease"] = lease_json(a.lease);
  doc["lease"]["dir"] = a.lease_dir;
  return doc;
}

std::string run_text(const LaunchAnswer& a) {
  const LaunchPlan& plan = a.plan;
  const LaunchVisibility& vis = plan.visibility;
  return "gpumap run: leased " + std::to_string(plan.uuids.size()) + " GPU" + (plan.uuids.size() == 1 ? "" : "s") + " (" +
         a.lease_dir + "); " + vis.assignments() + (vis.note.empty() ? "" : " (" + vis.note + ")") + "\n" +
         describe_choice(*a.snapshot, plan.uuids, "  ") + "  CPUs: " + cpu_summary(plan) + "\n";
}

Json bind_json(const BindAnswer& a) {
  const RankBinding& b = a.binding;
  Json doc = launch_document(*a.snapshot, b.plan, a.argv);
  doc["own_devices"] = b.own.size();
  doc["lease"] = nullptr;  // bind takes none: the launcher owns the allocation
  doc["local_rank"] = {{"variable", b.rank.variable}, {"value", *b.rank.value}};
  doc["notes"] = b.notes;
  doc["warnings"] = b.warnings;
  return doc;
}

std::string bind_text(const BindAnswer& a) {
  const Snapshot& s = *a.snapshot;
  const RankBinding& b = a.binding;
  const LaunchPlan& plan = b.plan;
  std::string line = "gpumap bind: local rank " + std::to_string(*b.rank.value) + " (" + b.rank.variable + ")";
  for (size_t i = 0; i < plan.uuids.size(); ++i) {
    int index = s.nvml_index_of(plan.uuids[i]);
    // Its own GPUs with their UUIDs, then the other ranks' (--keep-visible) by index.
    line += std::string(i == 0 ? ": " : i == b.own.size() ? "; the other ranks' kept visible: " : ", ") + "cuda:" +
            std::to_string(i) + " -> GPU " + (index >= 0 ? std::to_string(index) : "?") +
            (i < b.own.size() ? " " + plan.uuids[i] : std::string());
  }
  return line + "; CPUs " + cpu_summary(plan) + "; " + plan.visibility.assignments() +
         (plan.visibility.note.empty() ? "" : " (" + plan.visibility.note + ")") + "\ngpumap bind: " + b.advice + "\n";
}

std::string bind_messages(const BindAnswer& a) {
  std::string out;
  for (const std::string& n : a.binding.notes) out += "gpumap bind: note: " + n + "\n";
  for (const std::string& w : a.binding.warnings) out += "gpumap bind: warning: " + w + "\n";
  return out;
}

}  // namespace gpumap
