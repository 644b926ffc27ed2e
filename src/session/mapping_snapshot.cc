#include "session/mapping_snapshot.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "env/cuda_device_order.h"
#include "formats/host_file.h"
#include "formats/snapshot_file.h"
#include "model/error.h"
#include "os/host_id.h"
#include "os/state_file.h"

namespace gpumap {
namespace {

constexpr size_t kMaxSnapshotBytes = 16u << 20;

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string default_snapshot_path(const Session& s) {
  const std::string& dir = s.seams().state_dir;
  if (dir.empty())
    throw Error(kExitUsage, "snapshot: no default location (HOME and XDG_STATE_HOME are unset)",
                "name the file: gpumap snapshot save FILE");
  const DriverSource& d = s.driver();
  if (!d.simulated) return dir + "/snapshot.json";
  std::string stem = d.host_file.substr(d.host_file.rfind('/') + 1);
  if (stem.size() > 5 && stem.substr(stem.size() - 5) == ".json") stem.resize(stem.size() - 5);
  return dir + "/snapshot-simulated-" + stem + ".json";
}

MappingSnapshot take_mapping_snapshot(Session& s) {
  MappingSnapshot m = mapping_snapshot_of(s.snapshot());
  m.gpumap_version = GPUMAP_VERSION;
  m.saved_at = utc_now();
  if (s.driver().simulated) {  // a simulated host is its own machine, named by its file
    SimHost h = load_host_file(s.driver().host_file);
    m.hostname = h.hostname.empty() ? "simulated" : h.hostname;
    m.boot_id = h.boot_id;
  } else {
    m.hostname = read_hostname();
    m.boot_id = read_boot_id();
  }
  for (DeviceOrder order : {DeviceOrder::kFastestFirst, DeviceOrder::kPciBusId}) {
    Environment e = s.env();
    e.unset("CUDA_VISIBLE_DEVICES");
    e.set("CUDA_DEVICE_ORDER", device_order_name(order));
    SnapshotOrder o;
    o.order = device_order_name(order);
    try {
      Mapping mp = s.mapping(e, false);
      o.devices = mp.base_order;
      o.source = mp.source;
    } catch (const Error& err) {  // CUDA failed: NVML's numbering is still worth recording
      o.error = err.what();
    }
    m.cuda_orders.push_back(std::move(o));
  }
  return m;
}

MappingSnapshot save_mapping_snapshot(Session& s, const std::string& path, bool create_folder) {
  // Not followed and not opened unless a regular file: a FIFO never blocks the save, a device
  // node or a link (even dangling) is refused, never replaced.
  FileText old = read_small_file(path, kMaxSnapshotBytes, false);
  if (!old.not_regular.empty())
    throw Error(kExitUsage, "snapshot save: " + path + " is " + old.not_regular + ", not a gpumap snapshot; not replacing it",
                "name a regular file, e.g. /var/lib/gpumap/snapshot.json");
  if (old.error == EISDIR)
    throw Error(kExitUsage, "snapshot save: " + path + " is a folder", "name a file, e.g. " + path + "/snapshot.json");
  if (old.error && old.error != ENOENT)
    throw Error(kExitError, "snapshot save: cannot read the existing " + path + ": " + std::strerror(old.error));
  if (!old.error && (old.too_big || (!old.text.empty() && !looks_like_mapping_snapshot(old.text))))
    throw Error(kExitUsage, "snapshot save: " + path + " exists and is not a gpumap snapshot; not replacing it",
                "name another file, or remove that one first if it is yours to lose");
  if (create_folder && path.find('/') != std::string::npos) {
    if (std::string e = make_dirs(path.substr(0, path.rfind('/')), geteuid() == 0 ? 0755 : 0700); !e.empty())
      throw Error(kExitError, "snapshot save: " + e, "name a FILE in a folder you can write");
  }
  MappingSnapshot now = take_mapping_snapshot(s);
  if (std::string e = write_file_atomically(path, dump(mapping_snapshot_json(now)), 0644); !e.empty())
    throw Error(kExitError, "snapshot save: " + e, "nothing was changed: the previous file, if any, is as it was");
  return now;
}

MappingSnapshot load_mapping_snapshot(const std::string& path, const std::string& save_command) {
  FileText f = read_small_file(path, kMaxSnapshotBytes);
  if (f.error == ENOENT)
    throw Error(kExitUsage, "no snapshot at " + path, "save one first, while the numbering is right: " + save_command);
  if (!f.not_regular.empty())
    throw Error(kExitUsage, "cannot read snapshot " + path + ": it is " + f.not_regular + ", not a file",
                "name a snapshot file saved by gpumap snapshot save");
  if (f.error)
    throw Error(kExitUsage, "cannot read snapshot " + path + ": " + std::strerror(f.error),
                "name a snapshot file that this user can read");
  if (f.too_big) throw Error(kExitUsage, "snapshot " + path + " is larger than 16 MiB: not a gpumap snapshot");
  return parse_mapping_snapshot(f.text, path);
}

SnapshotCheck check_mapping_snapshot(Session& s, const std::string& path, const std::string& save_command) {
  SnapshotCheck c;
  c.path = path;
  c.save_command = save_command;
  c.saved = load_mapping_snapshot(path, save_command);
  c.now = take_mapping_snapshot(s);
  c.diff = diff_mapping_snapshots(c.saved, c.now);
  c.code = c.diff.changes.empty() ? kExitOk : kExitMismatch;
  return c;
}

}  // namespace gpumap
