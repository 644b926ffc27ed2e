// gpumap top: the live view (top/top_app.h), or one frame as text with --once.
#include <algorithm>
#include <cctype>
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "model/text.h"
#include "output/style.h"
#include "session/top.h"
#include "top/top_app.h"

namespace gpumap {
namespace {

TopColumn sort_column(const std::string& name) {
  if (std::optional<TopColumn> c = top_column_named(name)) return *c;
  std::vector<std::string> words = top_column_words();
  throw Error(kExitUsage, "--sort " + name + ": not a column" + did_you_mean(name, words), "one of " + join(words, ", "));
}

int run(const Args& args, Context& ctx) {
  if (ctx.json())
    throw Error(kExitUsage, "gpumap top has no --json", "frames for programs: gpumap ps --json --watch 1");
  TopView view;
  view.interval_s = args.number("--interval", 0.25, 3600).value_or(1.0);
  view.tree = args.has("--tree");
  view.show_info = args.has("--all");
  if (auto s = args.value("--sort")) view.sort = sort_column(*s);
  if (auto f = args.value("--filter")) {
    if (auto err = top_filter_error(*f)) throw Error(kExitUsage, "--filter: " + *err, "");
    view.filter = *f;
  }
  const Session& base = ctx.session();
  // A fresh snapshot per frame; the processes' command lines and environments are kept between
  // frames (ProcCache): only the reader thread calls this.
  auto read = [driver = base.driver(), env = base.env(), seams = base.seams(), cache = std::make_shared<ProcCache>()] {
    Session fresh(driver, env, seams);
    return read_top_frame(fresh, cache.get());
  };
  const TermStyle& st = term_style();
  if (args.has("--once")) {
    view.utf8 = st.utf8;
    std::cout << top_once(read(), view, st.width, st.color);
    return kExitOk;
  }
  return run_top({view, st.color}, read);
}

}  // namespace

Command top_command() {
  return {"top", "the live view: GPUs, their processes, each process's own cuda:N and its traps",
          "gpumap top [--once] [--interval SECONDS] [--sort COLUMN] [--filter TEXT] [--tree] [--all]",
          "A full-screen view that refreshes every --interval seconds (default 1): one block per GPU\n"
          "(nvidia-smi index, its cuda:N in this shell, name, utilisation and memory with history, lease\n"
          "and Slurm job; one line per GPU when the blocks would take a third of the screen, c toggles),\n"
          "the GPU processes (pid, user, GPU, the cuda:N the process itself calls it, GPU memory, SM %,\n"
          "CPU %, resident memory, run time, job, rank, command) and the findings, once per GPU.  Keys: h shows them all; q quits.\n"
          "Enter on a process shows its CUDA variables, its own cuda:N map and its findings with fixes.\n"
          "The driver is read apart from the drawing: a hung driver leaves the screen usable and says\n"
          "the data is stale.  Needs a terminal of at least 80x24.  --once prints one frame as text\n"
          "(no escape codes into a pipe) for scripts and bug reports.  For programs: gpumap ps --json --watch.",
          {{"--once", false, false, "", "print one frame as text and exit"},
           {"--interval", true, false, "SECONDS", "seconds between reads (0.25 to 3600, default 1; + and - change it)"},
           {"--sort", true, false, "COLUMN",
            "sort by pid, user, gpu, cuda, mem, sm, cpu, rss, time, job, rank or command (mem, sm, cpu, rss and time: "
            "largest first)"},
           {"--filter", true, false, "TEXT", "user:NAME, gpu:N, job:ID, pid:N, or text in the command"},
           {"--tree", false, false, "", "show processes under their parents"},
           {"--all", false, false, "", "show info findings too"}},
          false,
          run};
}

}  // namespace gpumap
