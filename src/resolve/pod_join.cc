#include "resolve/pod_join.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "env/nvidia_visible_devices.h"
#include "model/error.h"
#include "model/text.h"
#include "resolve/container_view.h"

namespace gpumap {
namespace {

bool is_nvidia_resource(const std::string& resource) { return resource.rfind("nvidia.com/", 0) == 0; }

void add_once(std::vector<std::string>& list, const std::string& v) {
  if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
}

/// A number stoul reads without overflow (an index: nine digits at most).
bool small_number(const std::string& s) { return s.size() <= 9 && all_digits(s); }

/// The UUID an id of the device plugin names here ("" when none).
std::string uuid_of_id(const std::string& id, const Snapshot& s) {
  if (small_number(id)) {
    uint32_t n = static_cast<uint32_t>(std::stoul(id));
    for (const Gpu& g : s.gpus)
      if (g.nvml_index == n) return g.uuid;
    return "";
  }
  size_t colon = id.find(':');
  if (colon != std::string::npos && small_number(id.substr(0, colon)) && small_number(id.substr(colon + 1))) {
    uint32_t n = static_cast<uint32_t>(std::stoul(id.substr(0, colon)));
    size_t m = std::stoul(id.substr(colon + 1));
    for (const Gpu& g : s.gpus)
      if (g.nvml_index == n && m < g.mig_devices.size()) return g.mig_devices[m].uuid;
    return "";
  }
  Snapshot::DeviceRef d = s.find_device(id);
  if (d.mig) return d.mig->uuid;
  if (d.gpu) return d.gpu->uuid;
  return "";
}

/// The ids of a container's NVIDIA devices, as a set (the form NVIDIA_VISIBLE_DEVICES compares with).
std::set<std::string> device_ids(const PodContainer& c) {
  std::set<std::string> out;
  for (const PodDevices& d : c.devices)
    if (is_nvidia_resource(d.resource)) out.insert(d.ids.begin(), d.ids.end());
  return out;
}

/// NVIDIA_VISIBLE_DEVICES's list entries as written (trimmed, empty ones left out); none for "all",
/// "none", "void" and unset.
std::vector<std::string> nvd_entries(const NvidiaVisibleDevices& nvd) {
  std::vector<std::string> out;
  for (const NvdEntry& e : nvd.entries)
    if (std::string id = trim(e.raw); !id.empty()) out.push_back(id);
  return out;
}

/// nvd_entries as a set (the form a container's device ids compare with).
std::set<std::string> nvd_ids(const std::optional<std::string>& value) {
  std::vector<std::string> ids = nvd_entries(parse_nvidia_visible_devices(value));
  return {ids.begin(), ids.end()};
}

}  // namespace

AllocatedGpus allocated_gpus(const std::vector<PodDevices>& devices, const Snapshot& s) {
  AllocatedGpus out;
  for (const PodDevices& d : devices) {
    if (!is_nvidia_resource(d.resource)) continue;
    for (const std::string& raw : d.ids) {
      size_t replica = raw.find("::");
      std::string id = replica == std::string::npos ? raw : raw.substr(0, replica);
      std::string uuid = uuid_of_id(id, s);
      if (uuid.empty()) {
        out.unknown.push_back(raw);
        continue;
      }
      add_once(out.uuids, uuid);
      if (replica != std::string::npos) add_once(out.shared, uuid);
    }
  }
  return out;
}

namespace {

/// "N" of a device node path "/dev/nvidiaN" (a GPU's minor number).
std::optional<uint32_t> gpu_minor(const std::string& path) {
  const std::string head = "/dev/nvidia";
  if (path.compare(0, head.size(), head) != 0 || !small_number(path.substr(head.size()))) return std::nullopt;
  return static_cast<uint32_t>(std::stoul(path.substr(head.size())));
}

std::vector<std::string> every_gpu(const Snapshot& s) {
  std::vector<std::string> out;
  for (const Gpu& g : s.gpus) out.push_back(g.uuid);
  return out;
}

/// The devices CUDA numbers on `s`: each GPU, or in its place its MIG devices (their own UUIDs).
std::vector<std::string> cuda_devices(const Snapshot& s) {
  std::vector<std::string> out;
  for (const Gpu& g : s.gpus) {
    if (g.mig_devices.empty()) out.push_back(g.uuid);
    for (const MigDevice& d : g.mig_devices) out.push_back(d.uuid);
  }
  return out;
}

}  // namespace

std::vector<std::string> cdi_device_gpus(const std::string& name, const CdiSpecs& cdi, const Snapshot& s) {
  size_t eq = name.find('=');
  if (eq == std::string::npos) return {};
  const std::string kind = name.substr(0, eq), id = name.substr(eq + 1);
  const CdiDevice* spec = nullptr;
  for (const CdiDevice& d : cdi.devices)
    if (d.name == name) spec = &d;
  if (!spec) {  // the NVIDIA kinds' own names
    if (kind.rfind("nvidia.com/", 0) != 0) return {};
    if (id == "all") return every_gpu(s);
    std::string uuid = uuid_of_id(id, s);
    return uuid.empty() ? std::vector<std::string>{} : std::vector<std::string>{uuid};
  }
  std::vector<std::string> gpus;
  bool mig = false;
  for (const std::string& node : spec->device_nodes) {
    if (node.find("/nvidia-caps/") != std::string::npos) mig = true;
    if (std::optional<uint32_t> minor = gpu_minor(node))
      for (const Gpu& g : s.gpus)
        if (g.minor_number == minor) add_once(gpus, g.uuid);
  }
  if (mig) {
    Snapshot::DeviceRef d = s.find_device(uuid_of_id(id, s));
    if (d.mig && d.gpu && std::find(gpus.begin(), gpus.end(), d.gpu->uuid) != gpus.end()) return {d.mig->uuid};
  }
  return gpus;
}

AllocatedGpus container_allocation(const PodContainer& c, const CdiSpecs& cdi, const Snapshot& s) {
  AllocatedGpus a = allocated_gpus(c.devices, s);
  for (const std::string& name : c.cdi_devices) {
    std::vector<std::string> gpus = cdi_device_gpus(name, cdi, s);
    if (gpus.empty()) a.unknown.push_back(name);
    for (const std::string& u : gpus) {
      add_once(a.uuids, u);
      add_once(a.claimed, u);
    }
  }
  return a;
}

AllocatedGpus pod_allocation(const PodInfo& pod, const CdiSpecs& cdi, const Snapshot& s) {
  AllocatedGpus all;
  for (const PodContainer& c : pod.containers) {
    AllocatedGpus a = container_allocation(c, cdi, s);
    for (const std::string& u : a.uuids) add_once(all.uuids, u);
    for (const std::string& u : a.shared) add_once(all.shared, u);
    for (const std::string& u : a.claimed) add_once(all.claimed, u);
    for (const std::string& u : a.unknown) add_once(all.unknown, u);
  }
  return all;
}

std::optional<std::vector<std::string>> nvd_gpus(const std::optional<std::string>& value, const CdiSpecs& cdi,
                                                 const Snapshot& s) {
  NvidiaVisibleDevices nvd = parse_nvidia_visible_devices(value);
  if (nvd.mode == NvdMode::kAll) return every_gpu(s);
  std::vector<std::string> out;
  for (const std::string& id : nvd_entries(nvd)) {
    std::vector<std::string> gpus;
    if (id == "all") {
      gpus = every_gpu(s);
    } else if (id.find('=') != std::string::npos) {
      gpus = cdi_device_gpus(id, cdi, s);
    } else if (std::string uuid = uuid_of_id(id.substr(0, id.find("::")), s); !uuid.empty()) {
      gpus.push_back(uuid);
    }
    if (gpus.empty()) return std::nullopt;  // an entry gpumap cannot place: no judgement
    for (const std::string& u : gpus) add_once(out, u);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

void name_pods(std::vector<ProcessRow>& rows, const PodResources& kubelet, const Snapshot& s) {
  std::map<std::string, std::vector<ProcessRow*>> by_uid;
  for (ProcessRow& r : rows)
    if (r.pod) by_uid[r.pod->uid].push_back(&r);
  for (auto& [uid, members] : by_uid) {
    std::set<std::string> hostnames;
    std::vector<std::set<std::string>> nvds;
    for (const ProcessRow* r : members) {
      if (r->hostname && !r->hostname->empty()) hostnames.insert(*r->hostname);
      std::set<std::string> ids = nvd_ids(r->nvidia_visible_devices);
      if (!ids.empty()) nvds.push_back(ids);
    }
    auto container_matches = [&](const PodInfo& p) {
      for (const PodContainer& c : p.containers) {
        std::set<std::string> ids = device_ids(c);
        if (!ids.empty() && std::find(nvds.begin(), nvds.end(), ids) != nvds.end()) return true;
      }
      return false;
    };
    std::vector<const PodInfo*> by_name, by_devices;
    for (const PodInfo& p : kubelet.pods) {
      if (hostnames.count(p.name)) by_name.push_back(&p);
      if (container_matches(p)) by_devices.push_back(&p);
    }
    const PodInfo* pod = nullptr;
    if (by_name.size() == 1) {
      pod = by_name[0];
    } else {
      // The same name in two namespaces, or no name to go by: the allocated devices decide.
      std::vector<const PodInfo*> both;
      for (const PodInfo* p : by_devices)
        if (by_name.empty() || std::find(by_name.begin(), by_name.end(), p) != by_name.end()) both.push_back(p);
      if (both.size() == 1) pod = both[0];
    }
    if (!pod) continue;
    for (ProcessRow* r : members) {
      r->pod->name = pod->name;
      r->pod->ns = pod->ns;
      const PodContainer* container = pod->containers.size() == 1 ? &pod->containers[0] : nullptr;
      std::set<std::string> ids = nvd_ids(r->nvidia_visible_devices);
      if (!ids.empty())
        for (const PodContainer& c : pod->containers)
          if (device_ids(c) == ids) container = &c;
      if (container) r->pod->container = container->name;
      AllocatedGpus a = container ? container_allocation(*container, kubelet.cdi, s) : pod_allocation(*pod, kubelet.cdi, s);
      r->pod->allocated = a.uuids;
      r->pod->shared = a.shared;
      r->pod->claimed = a.claimed;
      r->pod->allocation_known = true;
      r->pod->visible = nvd_gpus(r->nvidia_visible_devices, kubelet.cdi, s);
    }
  }
}

void container_cuda_views(PsResult& res, const Snapshot& s, const ViewIn& view_in) {
  // One view per (container GPUs, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER): ranks of one job share it.
  struct Made {
    size_t view;
    std::vector<std::string> gpus;  // the container's devices: its GPUs, or their MIG devices it was given
  };
  std::map<std::tuple<std::string, std::optional<std::string>, std::optional<std::string>>, std::optional<Made>> made;
  const std::vector<std::string> host_devices = cuda_devices(s);
  for (ProcessRow& r : res.rows) {
    if (r.state != ProcessState::kRunning || !r.environ_known || !r.view) continue;
    if (!r.pod && !(r.nspid && r.nspid->size() > 1)) continue;  // not in a container layer
    NvdMode mode = parse_nvidia_visible_devices(r.nvidia_visible_devices).mode;
    std::string value;
    if (mode == NvdMode::kList || mode == NvdMode::kAll)
      value = *r.nvidia_visible_devices;
    else if (mode == NvdMode::kVoid && r.pod && r.pod->allocation_known && !r.pod->allocated.empty())
      value = join(r.pod->allocated, ",");
    else
      continue;
    auto key = std::make_tuple(value, r.cuda_visible_devices, r.cuda_device_order);
    auto it = made.find(key);
    if (it == made.end()) {
      std::optional<Made> m;
      try {
        ContainerView inside = container_view(s, value);
        Environment only;
        if (r.cuda_visible_devices) only.set("CUDA_VISIBLE_DEVICES", *r.cuda_visible_devices);
        if (r.cuda_device_order) only.set("CUDA_DEVICE_ORDER", *r.cuda_device_order);
        res.views.push_back(view_in(inside.snapshot, only));
        m = Made{res.views.size() - 1, {}};
        m->gpus = cuda_devices(inside.snapshot);
      } catch (const Error&) {
        // A value the runtime refuses (the container would not have started): no view inside.
      }
      it = made.emplace(key, m).first;
    }
    if (!it->second) continue;
    apply_cuda_view(s, it->second->view, res.views[it->second->view], r);
    r.container_gpus = it->second->gpus;
    r.container_renumbers = it->second->gpus.size() < host_devices.size();
  }
}

}  // namespace gpumap
