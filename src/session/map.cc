#include "session/map.h"

#include "model/error.h"
#include "resolve/resolve_mapping.h"
#include "session/explain.h"
#include "session/which.h"

namespace gpumap {

MapAnswer answer_map(Session& session, const Environment& env, const MapRequest& request) {
  if (request.check && request.probe)
    throw Error(kExitUsage, "map: --probe and --check together: --check already asks the driver and compares it with the prediction",
                "use --check to compare, or --probe to show only the driver's answer");
  for (const std::string& spec : request.asked)
    if (!parse_cuda_ordinal(spec))
      throw Error(kExitUsage, "map: `" + spec + "` is not cuda:N",
                  "gpumap map cuda:4 says which GPU cuda:4 is here; to name GPUs another way use gpumap which " + spec);
  const Snapshot& s = session.snapshot();
  MapAnswer a;
  a.env = env;
  a.mapping = session.mapping(env, request.probe);
  if (request.check) {
    MapCheck c;
    c.driver = session.mapping(env, true);
    auto agrees = [&](const Mapping& predicted) {
      return c.driver.view.uuids == predicted.view.uuids && c.driver.view.error == predicted.view.error;
    };
    c.agree = agrees(a.mapping);
    // A prediction from the order cached earlier this boot that the driver contradicts: the cache
    // is out of date (something reordered CUDA within the boot).  Ask for the order again, which
    // rewrites the cache, and predict with it.
    if (!c.agree && a.mapping.source == "cache") {
      a.mapping = session.mapping(env, false, true);
      c.refreshed_cache = true;
      c.agree = agrees(a.mapping);
    }
    a.check = std::move(c);
  }
  for (const std::string& spec : request.asked) a.asked.push_back(answer_cuda_ordinal(s, a.mapping.view, spec));
  for (const Gpu* g : gpus_not_visible(s, a.mapping.view)) a.not_visible.push_back({g->nvml_index, g->uuid});
  a.findings = environment_findings(session, env, a.mapping);
  // Inside a container or a step whose device cgroup renumbered its GPUs: the outer number beside.
  a.where = gpu_place(session, env);
  return a;
}

}  // namespace gpumap
