#include "output/snapshot_view.h"

namespace gpumap {

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

}  // namespace gpumap
