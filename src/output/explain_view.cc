#include "output/explain_view.h"

#include <sstream>

#include "model/text.h"
#include "output/json_view.h"
#include "output/render.h"
#include "output/self_view.h"

namespace gpumap {

Json explain_json(const Explanation& e) {
  const Snapshot& s = *e.snapshot;
  const CudaView& v = e.mapping.view;
  Json j = document(s);
  j["environment"] = environment_json(e.environment);
  j["explanation"] = e.lines;
  Json entries = Json::array();
  for (size_t i = 0; i < v.entries.size(); ++i) {
    const EntryDecision& d = v.entries[i];
    entries.push_back({{"position", i + 1},
                       {"raw", d.entry.raw},
                       {"outcome", entry_outcome_name(d.outcome)},
                       {"cuda_ordinal", d.cuda_ordinal ? Json(*d.cuda_ordinal) : Json(nullptr)},
                       {"uuid", d.uuid.empty() ? Json(nullptr) : Json(d.uuid)},
                       {"text", e.entry_texts[i]}});
  }
  j["entries"] = entries;
  j["cuda"] = mapping_json(s, e.mapping);
  j["findings"] = findings_json(e.findings);
  j["local_device"] = e.local_device ? local_device_json(*e.local_device) : Json(nullptr);
  return j;
}

std::string explain_text(const Explanation& e, const TermStyle& st) {
  const Snapshot& s = *e.snapshot;
  const Mapping& m = e.mapping;
  const CudaView& v = m.view;
  std::string text = host_banner(s, st) + "\n";
  for (const std::string& l : e.lines) text += fit_line(l, st);
  std::ostringstream out;  // quotes the host file's path, variables and UUIDs: printed printable
  out << "\nResult (" << m.source << "): ";
  if (v.error != CudaInitError::kNone)
    out << "cuInit fails with " << cuda_error_name(v.error) << " (" << v.error_reason << ")\n";
  else if (v.uuids.empty())
    out << "no GPU visible\n";
  else {
    out << "\n";
    for (size_t i = 0; i < v.uuids.size(); ++i)
      out << "  cuda:" << i << " = " << s.describe(v.uuids[i]) << " (" << v.uuids[i] << ")\n";
  }
  return text + printable_lines(out.str()) + render_findings(e.findings, st);
}

std::string render_explain(const Explanation& e, bool json) { return json ? dump(explain_json(e)) : explain_text(e); }

}  // namespace gpumap
