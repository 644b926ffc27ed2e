// gpumap snapshot save|diff [FILE]: record this host's GPU numbering, and say later in words what
// changed since (a replaced board, a moved GPU, a driver update, MIG, CUDA's order).
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "formats/snapshot_file.h"
#include "model/error.h"
#include "model/text.h"
#include "output/render.h"
#include "output/snapshot_view.h"
#include "session/mapping_snapshot.h"

namespace gpumap {
namespace {

std::string summary(const MappingSnapshot& s) {
  return "saved " + s.saved_at + " on " + (s.hostname.empty() ? std::string("an unnamed host") : s.hostname) +
         ", driver " + s.driver_version.value_or("N/A") + ", " + std::to_string(s.gpus.size()) + " GPU" +
         (s.gpus.size() == 1 ? "" : "s");
}

std::string file_arg(const Args& args, Context& ctx, bool* is_default = nullptr) {
  const auto& p = args.positionals();
  if (p.size() > 2)
    throw Error(kExitUsage, "snapshot " + p[0] + ": unexpected argument `" + p[2] + "`",
                "usage: gpumap snapshot " + p[0] + " [FILE]");
  if (is_default) *is_default = p.size() < 2;
  if (p.size() == 2 && p[1].empty()) throw Error(kExitUsage, "snapshot " + p[0] + ": FILE is empty");
  return p.size() == 2 ? p[1] : default_snapshot_path(ctx.session());
}

int save(const Args& args, Context& ctx) {
  bool is_default = false;
  std::string path = file_arg(args, ctx, &is_default);
  MappingSnapshot now = save_mapping_snapshot(ctx.session(), path, is_default);
  if (ctx.json()) {
    std::cout << dump({{"simulated", now.simulated}, {"saved", path}, {"snapshot", mapping_snapshot_json(now)}});
    return kExitOk;
  }
  std::ostringstream out;  // the driver's version, paths and errors: printed printable
  out << "Saved the numbering of " << now.gpus.size() << " GPU" << (now.gpus.size() == 1 ? "" : "s") << " (driver "
      << now.driver_version.value_or("N/A") << ") to " << path << "\n";
  for (const SnapshotOrder& o : now.cuda_orders)
    if (!o.error.empty()) out << "  note: CUDA's " << o.order << " order is not recorded: " << o.error << "\n";
  out << "Check it later with: gpumap snapshot diff" << (is_default ? "" : " " + path) << "\n";
  std::cout << printable_lines(out.str());
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
  std::string save_command = "gpumap snapshot save" + (is_default ? "" : " " + path);
  SnapshotCheck check = check_mapping_snapshot(ctx.session(), path, save_command);
  const SnapshotDiff& d = check.diff;
  int code = check.code;
  if (ctx.json()) {
    std::cout << dump(snapshot_diff_json(path, check.saved, check.now, d));
    return code;
  }
  // Both snapshots' hostnames, driver versions, GPU names and UUIDs are quoted: printed printable.
  std::ostringstream out;
  out << "Snapshot " << path << ": " << summary(check.saved) << "\n";
  if (d.changes.empty()) {
    out << "SAME: the GPU numbering matches the snapshot.\n";
  } else {
    out << "CHANGED: " << d.changes.size() << " difference" << (d.changes.size() == 1 ? "" : "s") << ":\n";
    for (const SnapshotChange& c : d.changes) out << "  - " << c.message << "\n      breaks: " << c.breaks << "\n";
  }
  for (const std::string& n : d.notes) out << "  note: " << n << "\n";
  if (!d.changes.empty()) out << "When the new numbering is intended, record it: " << save_command << "\n";
  std::cout << host_banner(ctx.session().snapshot()) << printable_lines(out.str());
  return code;
}

Command snapshot_command() {
  Command c{"snapshot", "record the GPU numbering; later say what changed and what it breaks",
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
  c.subcommands = {"save", "diff"};
  return c;
}

}  // namespace gpumap
