// gpumap snapshot save|diff [FILE]: record this host's GPU numbering, and say later in words what
// changed since (a replaced board, a moved GPU, a driver update, MIG, CUDA's order).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>

#include "cli/command.h"
#include "env/cuda_device_order.h"
#include "fake/host_file.h"
#include "model/error.h"
#include "os/host_id.h"
#include "os/state_file.h"
#include "output/snapshot_file.h"

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

/// The default snapshot file.  A simulated host gets its own, so that trying gpumap out with
/// --simulate never replaces the real host's snapshot.
std::string default_path(const DriverSource& d) {
  std::string dir = state_dir();
  if (dir.empty())
    throw Error(kExitUsage, "snapshot: no default location (HOME and XDG_STATE_HOME are unset)",
                "name the file: gpumap snapshot save FILE");
  if (!d.simulated) return dir + "/snapshot.json";
  std::string stem = d.host_file.substr(d.host_file.rfind('/') + 1);
  if (stem.size() > 5 && stem.substr(stem.size() - 5) == ".json") stem.resize(stem.size() - 5);
  return dir + "/snapshot-simulated-" + stem + ".json";
}

/// This host's mapping now: NVML's numbering plus CUDA's base order under each CUDA_DEVICE_ORDER,
/// as gpumap knows it (from NVML where that is exact, else from the driver or this boot's cache).
MappingSnapshot take_snapshot(Context& ctx) {
  MappingSnapshot m = mapping_snapshot_of(ctx.snapshot());
  m.gpumap_version = GPUMAP_VERSION;
  m.saved_at = utc_now();
  if (ctx.driver().simulated) {
    fake::FakeHost h = fake::load_host_file(ctx.driver().host_file);
    m.hostname = h.hostname.empty() ? "simulated" : h.hostname;
    m.boot_id = h.boot_id;
  } else {
    m.hostname = read_hostname();
    m.boot_id = read_boot_id();
  }
  for (DeviceOrder order : {DeviceOrder::kFastestFirst, DeviceOrder::kPciBusId}) {
    Environment e = ctx.env();
    e.unset("CUDA_VISIBLE_DEVICES");
    e.set("CUDA_DEVICE_ORDER", device_order_name(order));
    SnapshotOrder o;
    o.order = device_order_name(order);
    try {
      Mapping mp = ctx.mapping(e, false);
      o.devices = mp.base_order;
      o.source = mp.source;
    } catch (const Error& err) {  // CUDA failed: NVML's numbering is still worth recording
      o.error = err.what();
    }
    m.cuda_orders.push_back(std::move(o));
  }
  return m;
}

std::string summary(const MappingSnapshot& s) {
  return "saved " + s.saved_at + " on " + (s.hostname.empty() ? std::string("an unnamed host") : s.hostname) +
         ", driver " + s.driver_version.value_or("N/A") + ", " + std::to_string(s.gpus.size()) + " GPU" +
         (s.gpus.size() == 1 ? "" : "s");
}

MappingSnapshot load_snapshot(const std::string& path, bool is_default) {
  FileText f = read_small_file(path, kMaxSnapshotBytes);
  if (f.error == ENOENT)
    throw Error(kExitUsage, "no snapshot at " + path,
                "save one first, while the numbering is right: gpumap snapshot save" + (is_default ? "" : " " + path));
  if (f.error)
    throw Error(kExitUsage, "cannot read snapshot " + path + ": " + std::strerror(f.error),
                "name a snapshot file that this user can read");
  if (f.too_big) throw Error(kExitUsage, "snapshot " + path + " is larger than 16 MiB: not a gpumap snapshot");
  return parse_mapping_snapshot(f.text, path);
}

std::string file_arg(const Args& args, Context& ctx, bool* is_default = nullptr) {
  const auto& p = args.positionals();
  if (p.size() > 2)
    throw Error(kExitUsage, "snapshot " + p[0] + ": unexpected argument `" + p[2] + "`",
                "usage: gpumap snapshot " + p[0] + " [FILE]");
  if (is_default) *is_default = p.size() < 2;
  if (p.size() == 2 && p[1].empty()) throw Error(kExitUsage, "snapshot " + p[0] + ": FILE is empty");
  return p.size() == 2 ? p[1] : default_path(ctx.driver());
}

int save(const Args& args, Context& ctx) {
  bool is_default = false;
  std::string path = file_arg(args, ctx, &is_default);
  FileText old = read_small_file(path, kMaxSnapshotBytes);
  if (old.error == EISDIR)
    throw Error(kExitUsage, "snapshot save: " + path + " is a folder", "name a file, e.g. " + path + "/snapshot.json");
  if (old.error && old.error != ENOENT)
    throw Error(kExitError, "snapshot save: cannot read the existing " + path + ": " + std::strerror(old.error));
  if (!old.error && (old.too_big || (!old.text.empty() && !looks_like_mapping_snapshot(old.text))))
    throw Error(kExitUsage, "snapshot save: " + path + " exists and is not a gpumap snapshot; not replacing it",
                "name another file, or remove that one first if it is yours to lose");
  if (is_default) {
    std::string dir = path.substr(0, path.rfind('/'));
    if (std::string e = make_dirs(dir, geteuid() == 0 ? 0755 : 0700); !e.empty())
      throw Error(kExitError, "snapshot save: " + e, "name a FILE in a folder you can write");
  }
  MappingSnapshot now = take_snapshot(ctx);
  Json j = mapping_snapshot_json(now);
  if (std::string e = write_file_atomically(path, dump(j), 0644); !e.empty())
    throw Error(kExitError, "snapshot save: " + e, "nothing was changed: the previous file, if any, is as it was");
  if (ctx.json()) {
    std::cout << dump({{"simulated", now.simulated}, {"saved", path}, {"snapshot", j}});
    return kExitOk;
  }
  std::cout << "Saved the numbering of " << now.gpus.size() << " GPU" << (now.gpus.size() == 1 ? "" : "s")
            << " (driver " << now.driver_version.value_or("N/A") << ") to " << path << "\n";
  for (const SnapshotOrder& o : now.cuda_orders)
    if (!o.error.empty()) std::cout << "  note: CUDA's " << o.order << " order is not recorded: " << o.error << "\n";
  std::cout << "Check it later with: gpumap snapshot diff" << (is_default ? "" : " " + path) << "\n";
  return kExitOk;
}

int diff(const Args& args, Context& ctx) {
  bool is_default = false;
  std::string path = file_arg(args, ctx, &is_default);
  return snapshot_check(ctx, path, is_default);
}

int run(const Args& args, Context& ctx) {
  const auto& p = args.positionals();
  if (p.empty() || (p[0] != "save" && p[0] != "diff"))
    throw Error(kExitUsage, p.empty() ? "snapshot needs an action: save or diff" : "snapshot: unknown action `" + p[0] + "`",
                "gpumap snapshot save [FILE]   then later   gpumap snapshot diff [FILE]");
  return p[0] == "save" ? save(args, ctx) : diff(args, ctx);
}

}  // namespace

int snapshot_check(Context& ctx, const std::string& path, bool is_default) {
  MappingSnapshot saved = load_snapshot(path, is_default);
  MappingSnapshot now = take_snapshot(ctx);
  SnapshotDiff d = diff_mapping_snapshots(saved, now);
  int code = d.changes.empty() ? kExitOk : kExitMismatch;
  if (ctx.json()) {
    std::cout << dump(snapshot_diff_json(path, saved, now, d));
    return code;
  }
  std::cout << host_banner(ctx.snapshot()) << "Snapshot " << path << ": " << summary(saved) << "\n";
  if (d.changes.empty()) {
    std::cout << "SAME: the GPU numbering matches the snapshot.\n";
  } else {
    std::cout << "CHANGED: " << d.changes.size() << " difference" << (d.changes.size() == 1 ? "" : "s") << ":\n";
    for (const SnapshotChange& c : d.changes) std::cout << "  - " << c.message << "\n      breaks: " << c.breaks << "\n";
  }
  for (const std::string& n : d.notes) std::cout << "  note: " << n << "\n";
  if (!d.changes.empty())
    std::cout << "When the new numbering is intended, record it: gpumap snapshot save" << (is_default ? "" : " " + path)
              << "\n";
  return code;
}

Command snapshot_command() {
  return {"snapshot", "record the GPU numbering; later say what changed and what it breaks",
          "gpumap snapshot save [FILE] | gpumap snapshot diff [FILE]   [--json] [--simulate HOST]",
          "save: records this host's mapping (per GPU the nvidia-smi index, /dev/nvidiaN minor, UUID, PCI bus\n"
          "id, name, MIG devices; CUDA's base order under FASTEST_FIRST and PCI_BUS_ID; driver and CUDA\n"
          "versions; host name, boot id, time) to FILE, atomically; it will not replace a file that is not a\n"
          "gpumap snapshot.  diff: compares the host now with FILE and says what changed and what that\n"
          "breaks.  FILE defaults to /var/lib/gpumap/snapshot.json for root, else\n"
          "$XDG_STATE_HOME/gpumap/snapshot.json (~/.local/state/gpumap/); $GPUMAP_STATE_DIR overrides the\n"
          "folder.  Exit codes: diff 0 when the numbering is the same (a reboot alone is no difference), 4 when\n"
          "it differs; 2 when FILE is missing, damaged or from a newer gpumap; 1 when it cannot be written.\n"
          "Format and health-check examples: docs/snapshot.md.",
          {}, true, run};
}

}  // namespace gpumap
