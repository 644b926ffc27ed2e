#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "model/error.h"
#include "model/text.h"

namespace gpumap {

Environment apply_env_options(const Environment& base, const Args& args) {
  Environment e = base;
  for (const std::string& kv : args.values("--env")) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(kExitUsage, "--env `" + kv + "` must be NAME=VALUE",
                  "use --env CUDA_VISIBLE_DEVICES=1,0 (an empty value: --env NAME=); to remove a variable: --unset NAME");
    e.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  for (const std::string& n : args.values("--unset")) e.unset(n);
  return e;
}

OptionSpec cvd_form_option() {
  return {"--cvd-form", true, false, "index|uuid",
          "CUDA_VISIBLE_DEVICES as PCI-order indices with CUDA_DEVICE_ORDER=PCI_BUS_ID (default: every program "
          "accepts it), or as UUIDs (stable across renumbering, but programs that int() the entries fail)"};
}

CvdForm cvd_form(const Args& args) {
  std::string text = args.value("--cvd-form").value_or("index");
  if (auto f = parse_cvd_form(text)) return *f;
  throw Error(kExitUsage, "--cvd-form `" + text + "` is not index or uuid",
              "--cvd-form index (plain indices, for programs that int() the entries) or --cvd-form uuid");
}

Environment apply_env_options(Context& ctx, const Args& args) {
  Environment e = apply_env_options(ctx.env(), args);
  std::optional<std::string> nvd;
  for (const std::string& kv : args.values("--env"))
    if (kv.rfind("NVIDIA_VISIBLE_DEVICES=", 0) == 0) nvd = kv.substr(std::string("NVIDIA_VISIBLE_DEVICES=").size());
  if (nvd && !ctx.in_container()) ctx.enter_container(*nvd);  // inside one, the runtime already read it
  return e;
}

OptionSpec json_file_option() {
  return {"--json-file", true, false, "FILE", "also write the mapping (and lease) as one JSON document to FILE"};
}

void report_launch(const Args& args, const Context& ctx, const Json& doc, const std::string& text) {
  if (auto path = args.value("--json-file")) {
    std::ofstream f(*path, std::ios::trunc);
    if (f) f << dump(doc);
    if (!f || !f.flush())
      throw Error(kExitError, "cannot write --json-file " + *path + ": " + std::strerror(errno),
                  "give a writable path (the command was not started)");
  }
  std::string out = ctx.json() ? dump(doc) : printable_lines(text);  // GPU names, paths: from outside
  std::cout.flush();
  std::fputs(out.c_str(), stderr);
  std::fflush(stderr);
}

OptionSpec probe_option() {
  return {"--probe", false, false, "", "ask the CUDA driver (cuInit in a child process) instead of predicting"};
}

std::vector<OptionSpec> env_options() {
  return {{"--env", true, true, "NAME=VALUE", "reason about this value instead of this process's (repeatable); "
           "NVIDIA_VISIBLE_DEVICES=... on a host outside a container: what a container started with it sees"},
          {"--unset", true, true, "NAME", "reason as if NAME were unset (repeatable)"}};
}

}  // namespace gpumap
