#include "session/list.h"

#include "session/lease_gpus.h"
#include "session/which.h"

namespace gpumap {

ListAnswer answer_list(Session& session, const ListRequest& request) {
  ListAnswer a;
  ReadOptions read;
  read.sensors = request.sensors;
  a.snapshot = &session.snapshot(read);
  if (request.leases) a.leases = read_gpu_leases(session);
  // Inside a container or a Slurm step under a device cgroup: each GPU's number outside.
  if (request.place) a.where = gpu_place(session, session.env());
  if (request.cuda_ordinals) {
    std::vector<std::string> uuids = session.mapping().view.uuids;
    for (size_t i = 0; i < uuids.size(); ++i)
      if (const Gpu* g = a.snapshot->find_device(uuids[i]).gpu) a.cuda_ordinal.emplace(g->uuid, static_cast<int>(i));
  }
  return a;
}

}  // namespace gpumap
