#include "resolve/snapshot_diff.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "model/pci.h"
#include "model/text.h"
#include "model/uuid.h"

namespace gpumap {

MappingSnapshot mapping_snapshot_of(const Snapshot& s) {
  MappingSnapshot m;
  m.simulated = s.simulated;
  m.source = s.source;
  m.driver_version = s.driver_version;
  m.cuda_driver_version = s.cuda_driver_version;
  for (const Gpu& g : s.gpus) {
    SnapshotGpu sg;
    sg.nvml_index = g.nvml_index;
    sg.minor_number = g.minor_number;
    sg.uuid = g.uuid;
    sg.pci_bus_id = g.pci ? format_pci_nvml(*g.pci) : g.pci_bus_id;
    sg.name = g.name;
    sg.mig_enabled = g.mig_enabled;
    for (const MigDevice& d : g.mig_devices) sg.mig_devices.push_back({d.uuid, d.gpu_instance_id, d.compute_instance_id});
    m.gpus.push_back(std::move(sg));
  }
  return m;
}

std::string cuda_version_text(const std::optional<int>& v) {
  if (!v) return "N/A";
  return std::to_string(*v / 1000) + "." + std::to_string(*v % 1000 / 10);
}

namespace {

// PCI slots compare parsed (NVML and other writers differ in case and domain width).
std::string slot_key(const std::string& bus_id) {
  auto a = parse_pci_address(bus_id);
  return a ? format_pci_nvml(*a) : bus_id;
}

std::string index_text(uint32_t i) { return "nvidia-smi GPU " + std::to_string(i); }

// "GPU-28554ffd" for lists of several devices.
std::string short_uuid(const std::string& u) { return u.size() > 12 ? u.substr(0, 12) : u; }

struct Side {
  const MappingSnapshot& snap;
  std::map<std::string, const SnapshotGpu*> by_uuid, by_slot;
  std::map<std::string, std::string> parent_of;  // MIG uuid hex -> parent GPU uuid hex
  explicit Side(const MappingSnapshot& s) : snap(s) {
    for (const SnapshotGpu& g : s.gpus) {
      by_uuid[uuid_hex(g.uuid)] = &g;
      by_slot[slot_key(g.pci_bus_id)] = &g;
      for (const SnapshotMig& m : g.mig_devices) parent_of[uuid_hex(m.uuid)] = uuid_hex(g.uuid);
    }
  }
  const SnapshotGpu* uuid(const std::string& u) const {
    auto it = by_uuid.find(uuid_hex(u));
    return it == by_uuid.end() ? nullptr : it->second;
  }
  const SnapshotGpu* slot(const std::string& bus) const {
    auto it = by_slot.find(slot_key(bus));
    return it == by_slot.end() ? nullptr : it->second;
  }
  const SnapshotOrder* order(const std::string& name) const {
    for (const SnapshotOrder& o : snap.cuda_orders)
      if (o.order == name) return &o;
    return nullptr;
  }
};

class Differ {
 public:
  Differ(const MappingSnapshot& before, const MappingSnapshot& now) : old_(before), new_(now) {}

  SnapshotDiff run() {
    host_notes();
    versions();
    for (const SnapshotGpu& o : old_.snap.gpus) old_gpu(o);
    for (const SnapshotGpu& n : new_.snap.gpus) new_gpu(n);
    for (const SnapshotOrder& o : old_.snap.cuda_orders) order(o);
    return std::move(out_);
  }

 private:
  const Side old_, new_;
  SnapshotDiff out_;
  std::map<std::string, std::string> replaced_by_;  // old uuid hex -> new uuid hex (same slot)

  void add(std::string kind, std::string message, std::string breaks, std::string uuid, std::string before,
           std::string after) {
    out_.changes.push_back({std::move(kind), std::move(message), std::move(breaks), std::move(uuid),
                            std::move(before), std::move(after)});
  }

  void host_notes() {
    const MappingSnapshot &b = old_.snap, &n = new_.snap;
    if (!b.hostname.empty() && !n.hostname.empty() && b.hostname != n.hostname)
      out_.notes.push_back("the snapshot was saved on host " + b.hostname + ", this is " + n.hostname);
    if (b.simulated != n.simulated)
      out_.notes.push_back(std::string("the snapshot was saved from ") + (b.simulated ? "a simulated host" : "a real driver") +
                           ", this is " + (n.simulated ? "a simulated host" : "the real driver"));
    if (!b.boot_id.empty() && !n.boot_id.empty() && b.boot_id != n.boot_id)
      out_.notes.push_back("the host was rebooted since the snapshot (boot id " + b.boot_id + " -> " + n.boot_id +
                           "); a reboot alone is no difference");
  }

  void versions() {
    const MappingSnapshot &b = old_.snap, &n = new_.snap;
    if (b.driver_version != n.driver_version) {
      std::string was = b.driver_version.value_or("N/A"), is = n.driver_version.value_or("N/A");
      add("driver_changed", "driver " + was + " → " + is,
          "driver libraries copied or pinned for " + was +
              " (outside the container toolkit's injection) fail with \"driver/library version mismatch\"; "
              "CUDA's order is read again under the new driver",
          "", was, is);
    }
    if (b.cuda_driver_version != n.cuda_driver_version) {
      std::string was = cuda_version_text(b.cuda_driver_version), is = cuda_version_text(n.cuda_driver_version);
      add("cuda_version_changed", "CUDA (driver API) " + was + " → " + is,
          "the newest CUDA toolkit this driver runs is now " + is + ": applications built with a newer one fail with "
              "\"CUDA driver version is insufficient for CUDA runtime version\"",
          "", was, is);
    }
  }

  void old_gpu(const SnapshotGpu& o) {
    if (const SnapshotGpu* n = new_.uuid(o.uuid)) {
      same_board(o, *n);
      return;
    }
    const SnapshotGpu* n = new_.slot(o.pci_bus_id);
    if (n && !old_.uuid(n->uuid)) {
      replaced_by_[uuid_hex(o.uuid)] = uuid_hex(n->uuid);
      std::string msg = index_text(o.nvml_index) + " is now " + n->uuid + " (was " + o.uuid + "): the board in slot " +
                        slot_key(o.pci_bus_id) + " was replaced";
      if (n->nvml_index != o.nvml_index) msg += "; it is nvidia-smi GPU " + std::to_string(n->nvml_index) + " now";
      if (n->name != o.name) msg += " (" + o.name + " → " + n->name + ")";
      add("gpu_replaced", msg,
          "settings that name " + o.uuid +
              " (CUDA_VISIBLE_DEVICES=GPU-..., Slurm gres.conf, dashboards, alerts) find no GPU; index-based settings "
              "now run on the new board",
          n->uuid, o.uuid, n->uuid);
      return;
    }
    add("gpu_missing",
        "a GPU is missing: " + index_text(o.nvml_index) + " " + o.uuid + " (" + o.name + ", slot " +
            slot_key(o.pci_bus_id) + ") is gone",
        "settings that name it select nothing, and every GPU after it in PCI order is numbered one lower "
        "(nvidia-smi index, /dev/nvidiaN, cuda:N)",
        o.uuid, o.uuid, "");
  }

  void same_board(const SnapshotGpu& o, const SnapshotGpu& n) {
    bool index = o.nvml_index != n.nvml_index, slot = slot_key(o.pci_bus_id) != slot_key(n.pci_bus_id);
    if (index || slot) {
      std::string msg = n.uuid + " moved";
      std::vector<std::string> breaks;
      if (index) {
        msg += " from index " + std::to_string(o.nvml_index) + " to " + std::to_string(n.nvml_index);
        breaks.push_back("`nvidia-smi -i " + std::to_string(o.nvml_index) + "`, CUDA_VISIBLE_DEVICES=" +
                         std::to_string(o.nvml_index) + " with PCI_BUS_ID and scripts that use index " +
                         std::to_string(o.nvml_index) + " now get another GPU");
      }
      if (slot) {
        msg += std::string(index ? " and" : "") + " from slot " + slot_key(o.pci_bus_id) + " to " + slot_key(n.pci_bus_id);
        breaks.push_back("anything that names its PCI bus id (udev rules, gres.conf, monitoring) points at another slot");
      } else {
        msg += " (same slot " + slot_key(n.pci_bus_id) + ")";
      }
      add("gpu_moved", msg, join(breaks, "; "), n.uuid,
          std::to_string(o.nvml_index) + " " + slot_key(o.pci_bus_id), std::to_string(n.nvml_index) + " " + slot_key(n.pci_bus_id));
    }
    if (o.minor_number && n.minor_number && *o.minor_number != *n.minor_number) {
      std::string was = "/dev/nvidia" + std::to_string(*o.minor_number), is = "/dev/nvidia" + std::to_string(*n.minor_number);
      add("minor_number_changed", n.uuid + " is now " + is + " (was " + was + ")",
          "Slurm gres.conf File=" + was + ", container --device lists and cgroup device rules now give another GPU",
          n.uuid, was, is);
    }
    mig(o, n);
  }

  void mig(const SnapshotGpu& o, const SnapshotGpu& n) {
    bool was = o.mig_enabled.value_or(false), is = n.mig_enabled.value_or(false);
    std::string who = index_text(n.nvml_index) + " (" + n.uuid + ")";
    if (was != is) {
      if (is)
        add("mig_mode_changed",
            "MIG was turned on on " + who + " (" + std::to_string(n.mig_devices.size()) + " MIG devices)",
            "CUDA sees its MIG devices instead of the whole GPU: CUDA_VISIBLE_DEVICES naming the GPU selects "
            "nothing; name the MIG-... UUIDs",
            n.uuid, "off", "on");
      else
        add("mig_mode_changed", "MIG was turned off on " + who,
            "its MIG-... UUIDs no longer exist (settings naming them select nothing); CUDA sees the whole GPU again",
            n.uuid, "on", "off");
      return;
    }
    if (!is) return;
    std::set<std::string> before, after;
    for (const SnapshotMig& m : o.mig_devices) before.insert(m.uuid);
    for (const SnapshotMig& m : n.mig_devices) after.insert(m.uuid);
    std::vector<std::string> gone, added;
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(), std::back_inserter(gone));
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(added));
    if (gone.empty() && added.empty()) return;
    std::string msg = "the MIG devices of " + who + " changed";
    if (!gone.empty()) msg += ": gone " + join(gone, ", ");
    if (!added.empty()) msg += std::string(gone.empty() ? ": " : "; ") + "new " + join(added, ", ");
    add("mig_devices_changed", msg, "settings that name a gone MIG device select nothing; cuda:N numbering of MIG devices shifts",
        n.uuid, join(std::vector<std::string>(before.begin(), before.end()), ","),
        join(std::vector<std::string>(after.begin(), after.end()), ","));
  }

  void new_gpu(const SnapshotGpu& n) {
    if (old_.uuid(n.uuid)) return;
    for (const auto& [from, to] : replaced_by_)
      if (to == uuid_hex(n.uuid)) return;
    add("gpu_added",
        "a new GPU: " + index_text(n.nvml_index) + " is " + n.uuid + " (" + n.name + ", slot " + slot_key(n.pci_bus_id) + ")",
        "every GPU after it in PCI order is numbered one higher (nvidia-smi index, /dev/nvidiaN, cuda:N), and "
        "CUDA's default order may put it first",
        n.uuid, "", n.uuid);
  }

  // A GPU's identity for order comparisons: its UUID, an old board's successor in its slot, a MIG
  // device's parent GPU.
  std::string identity(const Side& side, const std::string& uuid, bool old_side) const {
    std::string h = uuid_hex(uuid);
    if (auto p = side.parent_of.find(h); p != side.parent_of.end()) h = p->second;
    if (old_side)
      if (auto r = replaced_by_.find(h); r != replaced_by_.end()) h = r->second;
    return h;
  }

  // An order as GPU identities, each once, kept only where both sides have the GPU: the relative
  // order is what matters; missing, new and replaced GPUs are reported on their own.
  std::vector<std::string> comparable(const SnapshotOrder& o, bool old_side) const {
    std::set<std::string> before, now;
    for (const SnapshotGpu& g : old_.snap.gpus) before.insert(identity(old_, g.uuid, true));
    for (const SnapshotGpu& g : new_.snap.gpus) now.insert(identity(new_, g.uuid, false));
    std::vector<std::string> out;
    for (const std::string& u : o.devices) {
      std::string h = identity(old_side ? old_ : new_, u, old_side);
      if (before.count(h) && now.count(h) && std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
    }
    return out;
  }

  std::string listed(const std::vector<std::string>& devices) const {
    std::vector<std::string> s;
    for (const std::string& u : devices) s.push_back(short_uuid(u));
    return join(s, ", ");
  }

  void order(const SnapshotOrder& o) {
    const SnapshotOrder* n = new_.order(o.order);
    if (!o.error.empty()) return;  // not known then: nothing to compare with
    if (!n || !n->error.empty()) {
      add("cuda_order_unavailable",
          "CUDA's " + o.order + " order could not be read now" + (n ? ": " + n->error : std::string()),
          "CUDA programs may fail to start on this host", "", join(o.devices, ","), "");
      return;
    }
    if (comparable(o, true) == comparable(*n, false)) return;
    std::string breaks = o.order == "FASTEST_FIRST"
                             ? "cuda:N in programs and CUDA_VISIBLE_DEVICES=N without CUDA_DEVICE_ORDER=PCI_BUS_ID now "
                               "select other GPUs"
                             : "CUDA_VISIBLE_DEVICES=N with CUDA_DEVICE_ORDER=PCI_BUS_ID now selects other GPUs";
    add("cuda_order_changed",
        "CUDA's " + o.order + " order changed: cuda:0.. was " + listed(o.devices) + ", now " + listed(n->devices), breaks,
        "", join(o.devices, ","), join(n->devices, ","));
  }
};

}  // namespace

SnapshotDiff diff_mapping_snapshots(const MappingSnapshot& before, const MappingSnapshot& now) {
  return Differ(before, now).run();
}

}  // namespace gpumap
