#include "output/doctor_view.h"

#include "output/json_view.h"
#include "output/render.h"

namespace gpumap {

Json doctor_json(const DoctorAnswer& a) {
  Json j = document(*a.snapshot);
  j["environment"] = environment_json(a.environment);
  j["findings"] = findings_json(a.findings);
  j["counts"] = {{"error", a.errors}, {"warning", a.warnings}, {"info", a.infos}};
  j["combined_fix"] = a.combined_fix.empty() ? Json(nullptr) : Json(a.combined_fix);  // one line for every fix above
  j["ok"] = a.errors == 0;
  j["renumbering"] = a.renumbering.empty() ? Json(nullptr) : Json(a.renumbering);
  return j;
}

std::string doctor_text(const DoctorAnswer& a, const TermStyle& st) {
  std::string out = host_banner(*a.snapshot, st);
  // The numbering, said whenever it is not what it looks like: not a finding, a fact of this run,
  // under the banner (one line more, so one cause still fits eight).
  if (!a.renumbering.empty()) out += fit_line(a.renumbering, st);
  if (a.findings.empty())
    out += a.renumbering.empty() ? "\nNo traps found: cuda:N numbering is what it looks like.\n" : "\nNo traps found.\n";
  else
    out += render_findings(a.findings, st);
  // Never wrapped: it is pasted.
  if (!a.combined_fix.empty()) out += "\nAll the fixes above in one line:\n  " + a.combined_fix + "\n";
  // The severities' own words, as the tags and --json's counts say them ("note" is a finding's line).
  out += "\n" + std::to_string(a.errors) + " error(s), " + std::to_string(a.warnings) + " warning(s), " +
         std::to_string(a.infos) + " info\n";
  return out;
}

std::string render_doctor(const DoctorAnswer& a, bool json) { return json ? dump(doctor_json(a)) : doctor_text(a); }

}  // namespace gpumap
