#include "output/snapshot_view.h"

#include <sstream>

#include "formats/snapshot_file.h"
#include "model/text.h"
#include "output/render.h"

namespace gpumap {

namespace {

std::string summary(const MappingSnapshot& s) {
  return "saved " + s.saved_at + " on " + (s.hostname.empty() ? std::string("an unnamed host") : s.hostname) +
         ", driver " + s.driver_version.value_or("N/A") + ", " + std::to_string(s.gpus.size()) + " GPU" +
         (s.gpus.size() == 1 ? "" : "s");
}

}  // namespace

Json snapshot_saved_json(const SnapshotSaved& a) {
  return {{"simulated", a.snapshot.simulated}, {"saved", a.path}, {"snapshot", mapping_snapshot_json(a.snapshot)}};
}

std::string snapshot_saved_text(const SnapshotSaved& a) {
  const MappingSnapshot& now = a.snapshot;
  std::ostringstream out;  // the driver's version, paths and errors: printed printable
  out << "Saved the numbering of " << now.gpus.size() << " GPU" << (now.gpus.size() == 1 ? "" : "s") << " (driver "
      << now.driver_version.value_or("N/A") << ") to " << a.path << "\n";
  for (const SnapshotOrder& o : now.cuda_orders)
    if (!o.error.empty()) out << "  note: CUDA's " << o.order << " order is not recorded: " << o.error << "\n";
  out << "Check it later with: " << a.diff_command << "\n";
  return printable_lines(out.str());
}

std::string snapshot_check_text(const SnapshotCheck& c) {
  const SnapshotDiff& d = c.diff;
  // Both snapshots' hostnames, driver versions, GPU names and UUIDs are quoted: printed printable.
  std::ostringstream out;
  out << "Snapshot " << c.path << ": " << summary(c.saved) << "\n";
  if (d.changes.empty()) {
    out << "SAME: the GPU numbering matches the snapshot.\n";
  } else {
    out << "CHANGED: " << d.changes.size() << " difference" << (d.changes.size() == 1 ? "" : "s") << ":\n";
    for (const SnapshotChange& ch : d.changes) out << "  - " << ch.message << "\n      breaks: " << ch.breaks << "\n";
  }
  for (const std::string& n : d.notes) out << "  note: " << n << "\n";
  if (!d.changes.empty()) out << "When the new numbering is intended, record it: " << c.save_command << "\n";
  return printable_lines(out.str());
}

Json snapshot_diff_json(const std::string& path, const MappingSnapshot& saved, const MappingSnapshot& now,
                        const SnapshotDiff& d) {
  Json j;
  j["simulated"] = now.simulated;
  j["snapshot"] = path;
  j["saved_at"] = saved.saved_at;
  j["saved_on"] = saved.hostname;
  j["same"] = d.changes.empty();
  Json changes = Json::array();
  for (const SnapshotChange& c : d.changes)
    changes.push_back({{"kind", c.kind},
                       {"message", c.message},
                       {"breaks", c.breaks},
                       {"uuid", c.uuid.empty() ? Json(nullptr) : Json(c.uuid)},
                       {"before", c.before.empty() ? Json(nullptr) : Json(c.before)},
                       {"after", c.after.empty() ? Json(nullptr) : Json(c.after)}});
  j["changes"] = changes;
  j["notes"] = d.notes;
  return j;
}

std::string render_snapshot_saved(const SnapshotSaved& a, bool json) {
  return json ? dump(snapshot_saved_json(a)) : snapshot_saved_text(a);
}

std::string render_snapshot_check(const Snapshot& host, const std::string& path, const SnapshotCheck& c, bool json) {
  return json ? dump(snapshot_diff_json(path, c.saved, c.now, c.diff)) : host_banner(host) + snapshot_check_text(c);
}

}  // namespace gpumap
