// gpumap map (the default command): cuda:N -> physical GPU for an environment.
#include <fstream>
#include <iostream>

#include "cli/command.h"
#include "session/explain.h"
#include "model/error.h"
#include "model/text.h"
#include "output/render.h"
#include "session/which.h"  // parse_cuda_ordinal, answer_cuda_ordinal (resolve/gpu_selector.h)
#include "session/map_batch.h"

namespace gpumap {
namespace {

// One line for logs (the Slurm TaskProlog prints it per task): who, where, cuda:N -> GPU, traps.
std::string one_line(const Snapshot& s, const Environment& env, const Mapping& m, const std::vector<Finding>& findings) {
  std::string who;  // "gpumap: rank 1 on node7:", or just "gpumap:" outside Slurm
  if (auto rank = env.get("SLURM_PROCID")) who += " rank " + *rank;
  if (auto node = env.get("SLURMD_NODENAME")) who += " on " + *node;
  std::string out = "gpumap:" + who + (who.empty() ? "" : ":");
  if (m.view.error != CudaInitError::kNone) {
    out += std::string(" CUDA would fail (") + cuda_error_name(m.view.error) + ")";
  } else if (m.view.uuids.empty()) {
    out += " no GPU";
  } else {
    for (size_t i = 0; i < m.view.uuids.size(); ++i) {
      int idx = s.nvml_index_of(m.view.uuids[i]);
      out += std::string(i ? "," : "") + " cuda:" + std::to_string(i) + " = nvidia-smi " +
             (idx >= 0 ? std::to_string(idx) : "?") + " " + m.view.uuids[i];
    }
  }
  std::vector<std::string> traps;
  for (const Finding& f : findings)
    if (f.severity != Severity::kInfo) traps.push_back(f.id);
  out += "; " + std::to_string(traps.size()) + " finding(s)";
  for (size_t i = 0; i < traps.size(); ++i) out += (i ? ", " : ": ") + traps[i];
  if (!traps.empty()) out += " (run gpumap doctor)";
  return out;
}

// map --batch FILE: one prediction per line of FILE, one output line each.
int run_batch(const Args& args, Context& ctx, const Environment& env) {
  for (const char* other : {"--check", "--probe", "--line"})
    if (args.has(other))
      throw Error(kExitUsage, std::string("map: --batch and ") + other + " together: --batch only predicts",
                  "run the driver's side per value yourself (tools/device/difftest.sh does), or drop --batch");
  if (!args.positionals().empty())
    throw Error(kExitUsage, "map: --batch and cuda:N together", "drop the cuda:N arguments: each line is answered whole");
  std::string path = *args.value("--batch");
  std::ifstream file;
  if (path != "-") {
    file.open(path);
    if (!file) throw Error(kExitUsage, "map --batch " + path + ": cannot be opened", "give a readable file, or - for stdin");
  }
  std::vector<BatchCase> cases = read_batch(path == "-" ? std::cin : file, path);
  const Snapshot& s = ctx.session().snapshot();
  predict_batch(ctx.session(), env, cases, [&](const BatchCase& c, const Environment& e, const Mapping& m) {
    if (ctx.json()) {
      Json j = document(s);
      j["line"] = c.line;
      j["environment"] = environment_json(e);
      j["cuda"] = mapping_json(s, m);
      j["torch"] = torch_view_json(s, e, m);
      std::cout << dump(j, true);
    } else {
      std::cout << "line " << c.line << ":";
      if (m.view.error != CudaInitError::kNone) std::cout << " CUDA would fail (" << cuda_error_name(m.view.error) << ")";
      else if (m.view.uuids.empty()) std::cout << " no GPU";
      for (size_t i = 0; i < m.view.uuids.size(); ++i) {
        int idx = s.nvml_index_of(m.view.uuids[i]);
        std::cout << (i ? "," : "") << " cuda:" << i << " = nvidia-smi " << (idx >= 0 ? std::to_string(idx) : "?") << " "
                  << m.view.uuids[i];
      }
      std::cout << "\n";
    }
  });
  std::cout.flush();
  return kExitOk;
}

int run(const Args& args, Context& ctx) {
  Environment env = apply_env_options(ctx, args);
  if (args.has("--batch")) return run_batch(args, ctx, env);
  const Snapshot& s = ctx.session().snapshot();
  bool check = args.has("--check");
  if (check && args.has("--probe"))
    throw Error(kExitUsage, "map: --probe and --check together: --check already asks the driver and compares it with the prediction",
                "use --check to compare, or --probe to show only the driver's answer");
  if (args.has("--line") && ctx.json())
    throw Error(kExitUsage, "map: --line and --json together: --line is one line of text for logs",
                "use --json for the document, or --line for the log line");
  for (const std::string& spec : args.positionals())
    if (!parse_cuda_ordinal(spec))
      throw Error(kExitUsage, "map: `" + spec + "` is not cuda:N",
                  "gpumap map cuda:4 says which GPU cuda:4 is here; to name GPUs another way use gpumap which " + spec);
  Mapping m = ctx.session().mapping(env, args.has("--probe"));
  std::optional<Mapping> driver;
  if (check) driver = ctx.session().mapping(env, true);
  auto agrees = [&](const Mapping& predicted) {
    return driver->view.uuids == predicted.view.uuids && driver->view.error == predicted.view.error;
  };
  bool agree = !driver || agrees(m);
  // A prediction from the order cached earlier this boot that the driver contradicts: the cache
  // is out of date (something reordered CUDA within the boot).  Ask for the order again, which
  // rewrites the cache, and predict with it.
  bool refreshed_cache = false;
  if (driver && !agree && m.source == "cache") {
    m = ctx.session().mapping(env, false, true);
    refreshed_cache = true;
    agree = agrees(m);
  }
  std::vector<CudaOrdinalAnswer> asked;
  for (const std::string& spec : args.positionals()) asked.push_back(answer_cuda_ordinal(s, m.view, spec));
  std::vector<Finding> findings = environment_findings(ctx.session(), env, m);

  if (args.has("--line")) {
    std::cout << printable(one_line(s, env, m, findings)) << "\n";  // SLURMD_NODENAME and the like
    return kExitOk;
  }
  // Inside a container or a step whose device cgroup renumbered its GPUs: the outer number beside.
  GpuPlace where = gpu_place(ctx.session(), env);
  if (ctx.json()) {
    Json j = snapshot_json(s);
    j["cuda"] = mapping_json(s, m, &where);
    if (!asked.empty()) j["asked_cuda"] = asked_cuda_json(asked);
    Json hidden = Json::array();
    for (const Gpu* g : gpus_not_visible(s, m.view)) hidden.push_back(g->nvml_index);
    j["not_visible"] = hidden;
    j["torch"] = torch_view_json(s, env, m);
    j["environment"] = environment_json(env);
    j["findings"] = findings_json(findings);
    if (driver)
      j["check"] = {{"agree", agree}, {"predicted", mapping_json(s, m)}, {"driver", mapping_json(s, *driver)},
                    {"refreshed_cache", refreshed_cache}};
    std::cout << dump(j);
    return check && !agree ? kExitMismatch : kExitOk;
  }

  std::cout << host_banner(s);
  for (const CudaOrdinalAnswer& x : asked) std::cout << "\n" << fit_line("In" + x.sentence.substr(2) + ".");
  std::cout << (asked.empty() ? "" : "\n") << fit_line("CUDA view (" + m.source + "): " + m.order_note) << "\n";
  if (m.view.error != CudaInitError::kNone) {
    if (m.view.error == CudaInitError::kDriverCrash)
      std::cout << "CUDA would CRASH as it starts: cuInit does not return (DRIVER_CRASH)\n";
    else
      std::cout << "CUDA would FAIL to initialise: " << cuda_error_name(m.view.error) << " ("
                << cuda_error_code(m.view.error) << ")\n";
    std::cout << fit_line("  because " + m.view.error_reason);
  } else {
    std::vector<std::vector<std::string>> rows;
    const char* outer_column = nullptr;  // HOST or SLURM ID, beside NVIDIA-SMI
    for (const std::string& u : m.view.uuids)
      if (auto o = outer_number(s, where, u)) outer_column = o->column;
    for (size_t i = 0; i < m.view.uuids.size(); ++i) {
      const Gpu* g = s.find_device(m.view.uuids[i]).gpu;
      rows.push_back({"cuda:" + std::to_string(i), g ? std::to_string(g->nvml_index) : "?", m.view.uuids[i],
                      g ? g->pci_bus_id : "?", device_name(s, m.view.uuids[i]), memory_cell(s, m.view.uuids[i])});
      if (outer_column) {
        auto o = outer_number(s, where, m.view.uuids[i]);
        rows.back().insert(rows.back().begin() + 2, o ? std::to_string(o->value) : "?");
      }
    }
    std::vector<std::string> heads = {"CUDA", "NVIDIA-SMI", "UUID", "PCI BUS ID", "NAME", "MEMORY USED"};
    if (outer_column) heads.insert(heads.begin() + 2, outer_column);
    std::cout << render_table(heads, rows, term_style(), {"NAME"});
  }
  std::vector<std::string> hidden;
  for (const Gpu* g : gpus_not_visible(s, m.view)) hidden.push_back("GPU " + std::to_string(g->nvml_index) + " (" + g->uuid + ")");
  if (!hidden.empty() && m.view.error == CudaInitError::kNone) {
    std::cout << "\n" << fit_line("Not visible to this process: " + join(hidden, ", "));
  }
  std::string vars = "Variables:";
  bool any = false;
  for (const std::string& n : relevant_variables())
    if (auto v = env.get(n)) {
      vars += (any ? "  " : " ") + n + "=" + (v->empty() ? "''" : *v);
      any = true;
    }
  if (!any) vars += " none set (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER unset)";
  std::cout << "\n" << fit_line(vars) << render_findings(findings);
  if (driver) {
    std::string said = "Check against the driver: " + std::string(agree ? "AGREE" : "DISAGREE") + " (driver said ";
    if (driver->view.error != CudaInitError::kNone) said += cuda_error_name(driver->view.error);
    else
      for (size_t i = 0; i < driver->view.uuids.size(); ++i)
        said += (i ? ", " : "") + std::string("cuda:") + std::to_string(i) + "=" + s.describe(driver->view.uuids[i]);
    std::cout << "\n" << printable(said + ")") << "\n";
    if (refreshed_cache)
      std::cout << fit_line("The CUDA order cached earlier this boot was out of date (it disagreed with the driver): "
                            "gpumap asked the driver again and rewrote the cache; the prediction above uses the new "
                            "order.  Other cached orders refresh the same way: gpumap map --check");
  }
  return check && !agree ? kExitMismatch : kExitOk;
}

}  // namespace

Command map_command() {
  std::vector<OptionSpec> opts = env_options();
  opts.push_back(probe_option());
  opts.push_back(watch_option());
  opts.push_back({"--check", false, false, "", "predict and ask the driver; exit 4 if they disagree"});
  opts.push_back({"--batch", true, false, "FILE",
                  "predict for each line of FILE (JSON: {\"CUDA_VISIBLE_DEVICES\": ..., \"CUDA_DEVICE_ORDER\": ...}; - for stdin), "
                  "one answer per line"});
  opts.push_back({"--line", false, false, "",
                  "one line: rank and node (Slurm), cuda:N -> nvidia-smi index and UUID, warnings/errors (for logs)"});
  return {"map", "which physical GPU each cuda:N is, for this environment (the default)",
          "gpumap [map] [cuda:N]... [--json | --line] [--env NAME=VALUE]... [--unset NAME]...\n"
          "      [--probe | --check | --batch FILE] [--watch SECONDS]",
          "Shows, for this process's environment (or the one given with --env/--unset), which physical GPU\n"
          "each cuda:N is: the nvidia-smi index, UUID, PCI bus id and name; the GPUs it cannot see; the\n"
          "variables in force; and every trap found.  When CUDA would fail to initialise it says which\n"
          "error and why.  The view is predicted from NVML without cuInit wherever that is exact; on\n"
          "mixed-model or MIG hosts the driver's order is asked once per boot and cached.  With cuda:N\n"
          "(`gpumap map cuda:4`, or `gpumap cuda:4`) it first says which GPU that cuda:N is here; exit 2\n"
          "when it does not exist.  With --batch FILE it predicts, in one process, for each line of FILE\n"
          "(a JSON object setting CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER: a string, null for unset,\n"
          "NAME_hex for bytes that are not UTF-8), one line of output each (--json: one document per line).\n"
          "--watch SECONDS refreshes until Ctrl-C (JSON: one document per line).",
          opts, true, [](const Args& a, Context& c) { return run_watchable(a, c, run); }};
}

}  // namespace gpumap
