#include "output/job_map_view.h"

#include "model/text.h"

namespace gpumap {

std::string job_map_messages(const JobMapAnswer& a) {
  std::string out;
  for (const JobMapResult::Skipped& k : a.done.skipped) out += "gpumap job-map: warning: " + printable(k.reason) + "\n";
  for (const std::string& n : a.notes) out += "gpumap job-map: note: " + n + "\n";
  return out;
}

Json job_map_json(const JobMapAnswer& a) {
  Json skipped = Json::array();
  for (const JobMapResult::Skipped& k : a.done.skipped) skipped.push_back({{"file", k.file}, {"reason", k.reason}});
  return {{"job_id", a.job_id}, {"dir", a.dir}, {"action", a.prolog ? "prolog" : "epilog"}, {"files", a.done.changed},
          {"skipped", skipped}, {"notes", a.notes}};
}

std::string job_map_text(const JobMapAnswer& a) {
  std::string out = "gpumap job-map: job " + a.job_id + (a.prolog ? " added to" : " removed from");
  for (const std::string& f : a.done.changed) out += " " + printable(a.dir) + "/" + f;
  return out + (a.done.changed.empty() ? " no file" : "") + "\n";
}

std::string render_job_map(const JobMapAnswer& a, bool json) { return json ? dump(job_map_json(a)) : job_map_text(a); }

}  // namespace gpumap
