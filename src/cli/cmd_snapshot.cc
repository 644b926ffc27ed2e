// gpumap snapshot save|diff [FILE]: record this host's GPU numbering, and say later in words what
// changed since (a replaced board, a moved GPU, a driver update, MIG, CUDA's order).
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/snapshot_view.h"
#include "session/mapping_snapshot.h"

namespace gpumap {
namespace {

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
  SnapshotSaved a;
  a.path = file_arg(args, ctx, &is_default);
  a.diff_command = "gpumap snapshot diff" + (is_default ? "" : " " + a.path);
  // The hint keeps the options that produced the state: a simulated host's snapshot is diffed on it.
  if (std::optional<std::string> host = args.value("--simulate")) a.diff_command += " --simulate " + *host;
  a.snapshot = save_mapping_snapshot(ctx.session(), a.path, is_default);
  std::cout << render_snapshot_saved(a, ctx.json());
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
  SnapshotCheck c = check_mapping_snapshot(ctx.session(), path, "gpumap snapshot save" + (is_default ? "" : " " + path));
  std::cout << render_snapshot_check(ctx.session().snapshot(), path, c, ctx.json());
  return c.code;
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
