#include "formats/snapshot_file.h"

#include <limits>

#include "model/error.h"
#include "model/json_bounds.h"

namespace gpumap {
namespace {

Json mig_json(const SnapshotMig& m) {
  return {{"uuid", m.uuid},
          {"gpu_instance_id", json_or_null(m.gpu_instance_id)},
          {"compute_instance_id", json_or_null(m.compute_instance_id)}};
}

Json gpu_entry_json(const SnapshotGpu& g) {
  Json j;
  j["nvml_index"] = g.nvml_index;
  j["minor_number"] = json_or_null(g.minor_number);
  j["uuid"] = g.uuid;
  j["pci_bus_id"] = g.pci_bus_id;
  j["name"] = g.name;
  j["mig_enabled"] = json_or_null(g.mig_enabled);
  Json mig = Json::array();
  for (const SnapshotMig& m : g.mig_devices) mig.push_back(mig_json(m));
  j["mig_devices"] = mig;
  return j;
}

// Reads one snapshot file, naming the field that is wrong.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(const std::string& what) const {
    // `snapshot save` replaces only a file that is a gpumap snapshot: never suggest it for another.
    throw Error(kExitUsage, "snapshot " + path_ + ": " + what,
                is_snapshot_ ? "save a new one with `gpumap snapshot save " + path_ + "` (docs/snapshot.md)"
                             : "this file is not a gpumap snapshot, and `snapshot save` never replaces such a file: "
                               "save to another path (`gpumap snapshot save FILE`), or remove this one first");
  }
  /// From here on the file carries the snapshot format marker (save may replace it).
  void is_snapshot() { is_snapshot_ = true; }

  const Json& field(const Json& obj, const std::string& key, const std::string& where) const {
    if (!obj.contains(key)) fail("\"" + where + key + "\" is missing");
    return obj.at(key);
  }
  std::string str(const Json& obj, const std::string& key, const std::string& where) const {
    const Json& v = field(obj, key, where);
    if (!v.is_string()) fail("\"" + where + key + "\" must be a string");
    return v.get<std::string>();
  }
  std::optional<std::string> opt_str(const Json& obj, const std::string& key, const std::string& where) const {
    const Json& v = field(obj, key, where);
    if (v.is_null()) return std::nullopt;
    return str(obj, key, where);
  }
  template <class T>
  std::optional<T> opt_uint(const Json& obj, const std::string& key, const std::string& where) const {
    const Json& v = field(obj, key, where);
    if (v.is_null()) return std::nullopt;
    if (!v.is_number_unsigned() || v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      fail("\"" + where + key + "\" must be a whole number or null");
    return static_cast<T>(v.get<uint64_t>());
  }
  std::optional<bool> opt_bool(const Json& obj, const std::string& key, const std::string& where) const {
    const Json& v = field(obj, key, where);
    if (v.is_null()) return std::nullopt;
    if (!v.is_boolean()) fail("\"" + where + key + "\" must be true, false or null");
    return v.get<bool>();
  }
  const Json& array(const Json& obj, const std::string& key, const std::string& where) const {
    const Json& v = field(obj, key, where);
    if (!v.is_array()) fail("\"" + where + key + "\" must be an array");
    return v;
  }

  SnapshotGpu gpu(const Json& g, const std::string& where) const {
    if (!g.is_object()) fail("\"" + where + "\" must be an object");
    std::string w = where + ".";
    SnapshotGpu out;
    auto index = opt_uint<uint32_t>(g, "nvml_index", w);
    if (!index) fail("\"" + w + "nvml_index\" must be a whole number");
    out.nvml_index = *index;
    out.minor_number = opt_uint<uint32_t>(g, "minor_number", w);
    out.uuid = str(g, "uuid", w);
    out.pci_bus_id = str(g, "pci_bus_id", w);
    out.name = str(g, "name", w);
    out.mig_enabled = opt_bool(g, "mig_enabled", w);
    size_t i = 0;
    for (const Json& m : array(g, "mig_devices", w)) {
      std::string mw = w + "mig_devices[" + std::to_string(i++) + "]";
      if (!m.is_object()) fail("\"" + mw + "\" must be an object");
      mw += ".";
      out.mig_devices.push_back({str(m, "uuid", mw), opt_uint<uint32_t>(m, "gpu_instance_id", mw),
                                 opt_uint<uint32_t>(m, "compute_instance_id", mw)});
    }
    return out;
  }

  SnapshotOrder order(const std::string& name, const Json& o) const {
    std::string w = "cuda_order." + name;
    if (!o.is_object()) fail("\"" + w + "\" must be an object");
    w += ".";
    SnapshotOrder out;
    out.order = name;
    if (o.contains("error")) {
      out.error = str(o, "error", w);
      return out;
    }
    out.source = str(o, "source", w);
    for (const Json& u : array(o, "devices", w)) {
      if (!u.is_string()) fail("\"" + w + "devices\" must list UUIDs as strings");
      out.devices.push_back(u.get<std::string>());
    }
    return out;
  }

 private:
  std::string path_;
  bool is_snapshot_ = false;
};

Json parse_or_null(const std::string& text) {
  if (json_bounds_error(text)) return nullptr;
  Json j = Json::parse(text, nullptr, false);
  return j.is_discarded() ? Json(nullptr) : j;
}

}  // namespace

Json mapping_snapshot_json(const MappingSnapshot& s) {
  Json j;
  j["format"] = kSnapshotFormat;
  j["version"] = kSnapshotVersion;
  j["gpumap_version"] = s.gpumap_version;
  j["saved_at"] = s.saved_at;
  j["hostname"] = s.hostname;
  j["boot_id"] = s.boot_id;
  j["simulated"] = s.simulated;
  j["source"] = s.source;
  j["driver_version"] = json_or_null(s.driver_version);
  j["cuda_driver_version"] = json_or_null(s.cuda_driver_version);
  Json gpus = Json::array();
  for (const SnapshotGpu& g : s.gpus) gpus.push_back(gpu_entry_json(g));
  j["gpus"] = gpus;
  Json orders = Json::object();
  for (const SnapshotOrder& o : s.cuda_orders)
    orders[o.order] = o.error.empty() ? Json{{"devices", o.devices}, {"source", o.source}} : Json{{"error", o.error}};
  j["cuda_order"] = orders;
  return j;
}

bool looks_like_mapping_snapshot(const std::string& text) {
  Json j = parse_or_null(text);
  return j.is_object() && j.contains("format") && j["format"] == kSnapshotFormat;
}

MappingSnapshot parse_mapping_snapshot(const std::string& text, const std::string& path) {
  Reader r(path);
  if (auto e = json_bounds_error(text)) r.fail("not a gpumap snapshot (" + *e + ")");
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) r.fail("is not valid JSON (damaged or cut short)");
  if (!j.is_object() || !j.contains("format") || j["format"] != kSnapshotFormat)
    r.fail(std::string("is not a gpumap snapshot (no \"format\": \"") + kSnapshotFormat + "\")");
  r.is_snapshot();
  const Json& v = r.field(j, "version", "");
  if (!v.is_number_integer() || v.get<int64_t>() < 1) r.fail("\"version\" must be a whole number from 1");
  if (v.get<int64_t>() > kSnapshotVersion)
    throw Error(kExitUsage,
                "snapshot " + path + " has format version " + std::to_string(v.get<int64_t>()) +
                    ", written by a newer gpumap; this gpumap " GPUMAP_VERSION " reads version " +
                    std::to_string(kSnapshotVersion),
                "upgrade gpumap, or save a new snapshot with this one (`gpumap snapshot save " + path + "`)");
  MappingSnapshot s;
  s.gpumap_version = r.str(j, "gpumap_version", "");
  s.saved_at = r.str(j, "saved_at", "");
  s.hostname = r.str(j, "hostname", "");
  s.boot_id = r.str(j, "boot_id", "");
  const Json& sim = r.field(j, "simulated", "");
  if (!sim.is_boolean()) r.fail("\"simulated\" must be true or false");
  s.simulated = sim.get<bool>();
  s.source = r.str(j, "source", "");
  s.driver_version = r.opt_str(j, "driver_version", "");
  if (auto c = r.opt_uint<uint32_t>(j, "cuda_driver_version", ""); c && *c <= 1000000) s.cuda_driver_version = static_cast<int>(*c);
  else if (c) r.fail("\"cuda_driver_version\" is out of range");
  size_t i = 0;
  for (const Json& g : r.array(j, "gpus", "")) s.gpus.push_back(r.gpu(g, "gpus[" + std::to_string(i++) + "]"));
  const Json& orders = r.field(j, "cuda_order", "");
  if (!orders.is_object()) r.fail("\"cuda_order\" must be an object");
  for (const auto& [name, o] : orders.items()) s.cuda_orders.push_back(r.order(name, o));
  return s;
}

}  // namespace gpumap
