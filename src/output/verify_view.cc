#include "output/verify_view.h"

#include "findings/fix_line.h"
#include "model/error.h"
#include "model/text.h"
#include "output/json_view.h"
#include "output/render.h"

namespace gpumap {

std::string fix_assignments(const VerifyAnswer& a) { return assignments_line(a.fix); }

Json verify_json(const VerifyAnswer& a) {
  const Snapshot& s = *a.snapshot;
  Json j = document(s);
  j["ok"] = !a.refusal;
  j["prefix"] = a.prefix;
  j["expected"] = cuda_devices_json(s, a.expected);
  j["cuda"] = mapping_json(s, a.mapping);
  j["differences"] = a.differences;
  j["fix"] = Json(nullptr);
  for (const auto& [name, value] : a.fix) j["fix"][name] = value;
  return j;
}

std::string verify_text(const VerifyAnswer& a, const TermStyle& st) {
  const Snapshot& s = *a.snapshot;
  if (!a.refusal) {
    std::string line = "OK: ";
    const std::vector<std::string>& want = a.expected;
    const std::vector<std::string>& got = a.mapping.view.uuids;
    for (size_t i = 0; i < want.size(); ++i) line += (i ? ", " : "") + std::string("cuda:") + std::to_string(i) + " = " + s.describe(want[i]);
    if (a.prefix && got.size() > want.size()) line += " (and " + std::to_string(got.size() - want.size()) + " more visible)";
    return fit_line(line, st);
  }
  std::string out = a.code == kExitCudaWouldFail ? "FAIL (CUDA would not initialise):\n" : "MISMATCH:\n";
  for (const std::string& d : a.differences) out += fit_line("  " + d, st);
  return out + printable("fix (before CUDA starts): export " + fix_assignments(a)) + "\n";
}

std::string render_verify(const VerifyAnswer& a, bool json) { return json ? dump(verify_json(a)) : verify_text(a); }

}  // namespace gpumap
