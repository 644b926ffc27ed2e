#include "findings/rules.h"

#include <cctype>
#include <map>
#include <set>

#include "findings/fold.h"
#include "findings/rule_table.h"
#include "model/text.h"
#include "resolve/allocation.h"
#include "model/uuid.h"
#include "resolve/base_order.h"
#include "resolve/container_view.h"
#include "resolve/cuda_rules.h"
#include "resolve/launch_env.h"

namespace gpumap {

bool bound_by_gpumap(const Environment& env) { return parse_launcher_env(env).bound; }

std::string bound_rank_advice(const std::string& rank_variable, std::optional<uint32_t> keep_visible_own) {
  if (keep_visible_own) {
    const std::string own = *keep_visible_own == 1 ? "cuda:0" : "cuda:0-" + std::to_string(*keep_visible_own - 1);
    return "this rank's own GPU(s) are " + own + "; the other ranks' GPUs stay visible after them (for CUDA IPC "
           "and peer access), so use cuda:0 (torch.cuda.set_device(0)), never cuda:$" + rank_variable + " nor " +
           rank_variable + " % torch.cuda.device_count(): both name another rank's GPU here";
  }
  return "this rank sees only its own GPU(s), numbered from cuda:0: use cuda:0 (torch.cuda.set_device(0)), not "
         "cuda:$" + rank_variable + " (set_device(" + rank_variable + ") fails with `invalid device ordinal` on every rank "
         "but 0); code that must keep the rank can use int(os.environ[\"" + rank_variable +
         "\"]) % torch.cuda.device_count()";
}

namespace {

// What one entry spells, as entries CUDA would read the way the user meant (CvdEntryForm).
std::vector<std::string> spelled(const CvdEntry& e, const Snapshot& s) {
  switch (e.form) {
    case CvdEntryForm::kBareUuid: return {"GPU-" + e.raw};
    case CvdEntryForm::kPciAddress:
      for (const Gpu& g : s.gpus)
        if (g.pci && g.pci == e.pci) return {g.uuid};
      return {};
    case CvdEntryForm::kMiscasedWord: {
      std::string r = e.raw;
      for (size_t k = 0; k < 3; ++k) r[k] = static_cast<char>(std::toupper(static_cast<unsigned char>(r[k])));
      return {r};
    }
    case CvdEntryForm::kSpaceBeforeUuid: return {e.raw.substr(e.raw.find_first_not_of(" \t\n\r\f\v"))};
    case CvdEntryForm::kLegacyMig:  // MIG-GPU-<uuid>/<gi>/<ci>: the MIG device with those instance ids
      for (const Gpu& g : s.gpus) {
        std::string rest = e.raw.substr(4);
        if (rest.rfind(g.uuid + "/", 0) != 0) continue;
        for (const MigDevice& m : g.mig_devices) {
          std::string ids = rest.substr(g.uuid.size());
          if (m.gpu_instance_id && m.compute_instance_id &&
              ids == "/" + std::to_string(*m.gpu_instance_id) + "/" + std::to_string(*m.compute_instance_id))
            return {m.uuid};
        }
      }
      return {};
    case CvdEntryForm::kBlank:
    case CvdEntryForm::kContainerKeyword: return {};
    case CvdEntryForm::kPlain: break;
  }
  if (e.kind != CvdEntryKind::kInteger) return {e.raw};
  if (e.negative) return {};
  std::vector<std::string> out = {std::to_string(e.index)};
  // `0;1`, `0 1`: the numbers after another separator than a comma were meant too.
  std::string piece;
  for (char c : e.trailing + ";") {
    if (c != ';' && c != ':' && c != ' ' && c != '\t') {
      piece += c;
      continue;
    }
    if (!piece.empty() && e.trailing.find_first_of(";: \t") != std::string::npos)
      for (const CvdEntry& p : parse_cuda_visible_devices(piece))
        if (p.kind == CvdEntryKind::kInteger && !p.negative) out.push_back(std::to_string(p.index));
    piece.clear();
  }
  return out;
}

// An entry written as a plain index (`1`, not `-1`, `1.5` or a PCI address CUDA reads as one).
bool written_as_index(const CvdEntry& e) {
  return e.kind == CvdEntryKind::kInteger && e.form == CvdEntryForm::kPlain && !e.negative;
}

// Index entries on a MIG host that nvidia-smi's reading and CUDA's give different devices for
// (RuleInput::mig_indices).  `cuda_order`: the order CUDA reads the indices in.
bool mig_indices_misread(const Snapshot& s, const CudaView& v, const std::vector<std::string>& cuda_order) {
  if (!s.any_mig() || !v.visible_set || gpus_hidden_on_purpose(v) || cuda_order.empty()) return false;
  bool any = false, differs = false;
  for (const EntryDecision& d : v.entries) {
    if (d.entry.kind != CvdEntryKind::kInteger) continue;
    if (!written_as_index(d.entry) || d.entry.index >= s.gpus.size()) return false;  // not an nvidia-smi number
    any = true;
    std::vector<std::string> smi = nvidia_smi_reading(s, d.entry.index);
    std::string cuda = d.entry.index < cuda_order.size() ? cuda_order[d.entry.index] : std::string();
    bool same = false;
    for (const std::string& u : smi) same |= same_uuid_hex(u, cuda);
    differs |= !same;
  }
  return any && differs;
}

}  // namespace

std::vector<std::string> nvidia_smi_reading(const Snapshot& s, uint64_t nvml_index) {
  for (const Gpu& g : s.gpus) {
    if (g.nvml_index != nvml_index) continue;
    if (!g.mig_enabled.value_or(false) || g.mig_devices.empty()) return {g.uuid};
    std::vector<std::string> out;
    for (const MigDevice& m : g.mig_devices) out.push_back(m.uuid);
    return out;
  }
  return {};
}

std::optional<uint32_t> outer_number_here(const RuleInput& r, uint64_t n) {
  if (r.in.in_container) {
    for (size_t i = 0; i < r.host_index.size() && i < r.s.gpus.size(); ++i)
      if (r.host_index[i] == n) return r.s.gpus[i].nvml_index;
    return std::nullopt;
  }
  if (r.alloc.reading != SlurmIdReading::kMinors || n > UINT32_MAX) return std::nullopt;
  std::string u = r.alloc.uuid_of_slurm_id(static_cast<uint32_t>(n));
  if (u.empty()) return std::nullopt;
  int here = r.s.nvml_index_of(u);
  return here < 0 ? std::nullopt : std::optional<uint32_t>(static_cast<uint32_t>(here));
}

std::string outer_number_kind(const RuleInput& r) {
  if (r.in.in_container) return r.host_index.empty() ? "" : "the host's number";
  return r.alloc.reading == SlurmIdReading::kMinors ? "Slurm's global id" : "";
}

namespace {

bool plain_index(const CvdEntry& e) {
  return e.kind == CvdEntryKind::kInteger && e.form == CvdEntryForm::kPlain && !e.sign && !e.negative &&
         e.trailing.empty() && !e.wider_than_32_bits;
}

}  // namespace

bool written_in_outer_numbers(const RuleInput& r) {
  if (outer_number_kind(r).empty() || !r.v.visible_set) return false;
  bool any = false, differs = false;
  for (const EntryDecision& d : r.v.entries) {
    const CvdEntry& e = d.entry;
    if (e.kind != CvdEntryKind::kInteger) continue;
    if (!plain_index(e)) return false;
    std::optional<uint32_t> here = outer_number_here(r, e.index);
    if (!here) return false;
    any = true;
    differs |= *here != e.index;
  }
  return any && differs;
}

std::optional<uint32_t> outer_number_of_entry(const RuleInput& r, const CvdEntry& e) {
  if (!plain_index(e)) return std::nullopt;
  if (e.index < r.s.gpus.size() && !written_in_outer_numbers(r)) return std::nullopt;
  return outer_number_here(r, e.index);
}

std::optional<uint32_t> container_number_of_host_index(const RuleInput& r, const CvdEntry& e) {
  return r.in.in_container ? outer_number_of_entry(r, e) : std::nullopt;
}

std::vector<std::string> meant_gpus(const RuleInput& r) {
  if (r.meant) return *r.meant;
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::map<std::string, std::string> read;  // entry text -> the GPU it names alone ("" none)
  for (const EntryDecision& d : r.v.entries) {
    // On a MIG host whose indices read as nvidia-smi's numbers, the GPU nvidia-smi numbers so
    // (mig-index-entries): its MIG devices, or the whole GPU.
    if (r.mig_indices && written_as_index(d.entry)) {
      for (const std::string& u : nvidia_smi_reading(r.s, d.entry.index))
        if (seen.insert(u).second) out.push_back(u);
      continue;
    }
    // An outer number (the host's inside a container, Slurm's global id under a device cgroup) meant
    // the GPU that has it, whatever its number here and whatever CUDA's order.
    if (std::optional<uint32_t> here = outer_number_of_entry(r, d.entry)) {
      for (const Gpu& g : r.s.gpus)
        if (g.nvml_index == *here && seen.insert(g.uuid).second) out.push_back(g.uuid);
      continue;
    }
    for (const std::string& text : spelled(d.entry, r.s)) {
      auto [it, fresh] = read.try_emplace(text);
      if (fresh) {
        CudaView alone = predict_cuda_view(r.meant_order, std::string("PCI_BUS_ID"), text);
        if (alone.error == CudaInitError::kNone && alone.uuids.size() == 1) it->second = alone.uuids.front();
      }
      if (!it->second.empty() && seen.insert(it->second).second) out.push_back(it->second);
    }
  }
  r.meant = out;
  return out;
}

// What CUDA shows for whole GPUs: a GPU in MIG mode shows its MIG devices in its place.
std::vector<std::string> cuda_devices_of(const Snapshot& s, const std::vector<std::string>& gpus) {
  std::vector<std::string> out;
  for (const std::string& u : gpus) {
    const Gpu* g = s.find_uuid(u);
    if (g && g->mig_enabled.value_or(false))
      for (const MigDevice& m : g->mig_devices) out.push_back(m.uuid);
    else
      out.push_back(u);
  }
  return out;
}


std::vector<std::string> meant_allowed(const RuleInput& r, std::string* left_out) {
  std::vector<std::string> meant = meant_gpus(r);
  // Never a GPU outside the allocation: pasted, the fix would put the program on another job's GPU.
  std::vector<std::string> uuids = allowed_only(r.s, r.alloc, meant);
  if (uuids.size() < meant.size()) {
    std::vector<std::string> outside;
    for (const std::string& u : meant)
      if (!r.alloc.allows(r.s, u)) outside.push_back(r.s.describe(u));
    std::string said = join(outside, ", ") + " left out: outside " + r.alloc.setting();
    if (uuids.empty()) {
      uuids = cuda_devices_of(r.s, r.alloc.uuids);
      said += "; the allocation's GPUs instead";
    }
    if (left_out) *left_out = said;
  }
  return uuids;
}

std::string meant_fix(const RuleInput& r, std::optional<CvdForm> form, bool say_gives) {
  std::string left_out;
  std::vector<std::string> uuids = meant_allowed(r, &left_out);
  if (uuids.empty()) return "";
  bool written_as_uuids = false;
  for (const EntryDecision& d : r.v.entries)
    written_as_uuids |= d.entry.kind == CvdEntryKind::kUuid || (d.entry.form != CvdEntryForm::kPlain &&
                                                                 d.entry.form != CvdEntryForm::kBlank);
  if (!form) form = written_as_uuids ? CvdForm::kUuid : CvdForm::kIndex;
  // One shell comment: the GPUs it gives (when asked), then what was left out of the list.
  std::vector<std::string> said;
  if (say_gives) said.push_back(gives_comment(r.s, uuids).substr(4));
  if (!left_out.empty()) said.push_back(left_out);
  std::string comment = said.empty() ? "" : "  # " + join(said, "; ");
  LaunchVisibility lv = launch_visibility(r.s, uuids, *form);
  // Indices that would themselves read as outer numbers of other GPUs here (a step's Slurm ids under a
  // device cgroup, a container's host numbers) would be warned about again: UUIDs say it once.
  if (lv.form == CvdForm::kIndex && !outer_number_kind(r).empty()) {
    bool all_outer = true, differs = false;
    for (const CvdEntry& e : parse_cuda_visible_devices(lv.cuda_visible_devices)) {
      std::optional<uint32_t> here = outer_number_here(r, e.index);
      uint64_t k = e.index;
      all_outer &= here.has_value();
      differs |= here && *here != k;
    }
    if (all_outer && differs) lv = launch_visibility(r.s, uuids, CvdForm::kUuid);
  }
  // Under an invalid CUDA_DEVICE_ORDER nothing is read: every rewritten list fixes the order too.
  bool order_too = r.v.order.order == DeviceOrder::kInvalid;
  if (lv.form == CvdForm::kUuid)
    return std::string("export ") + (order_too ? "CUDA_DEVICE_ORDER=PCI_BUS_ID " : "") + "CUDA_VISIBLE_DEVICES=" +
           lv.cuda_visible_devices + comment;
  return "export " + lv.assignments() + comment;
}

std::string gives_comment(const Snapshot& s, const std::vector<std::string>& uuids) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < uuids.size(); ++i) {
    int idx = s.nvml_index_of(uuids[i]);
    bool mig = s.find_device(uuids[i]).mig != nullptr;  // a slice: "nvidia-smi GPU 0 MIG device 1"
    parts.push_back("cuda:" + std::to_string(i) + " = " +
                    (idx >= 0 && !mig ? "nvidia-smi GPU " + std::to_string(idx) : s.describe(uuids[i])));
  }
  return parts.empty() ? "" : "  # " + join(parts, ", ");
}

bool has_index_entries(const CudaView& v) {
  for (const EntryDecision& d : v.entries)
    if (d.entry.kind == CvdEntryKind::kInteger) return true;
  return false;
}

std::vector<Finding> diagnose(const DiagnosisInput& in) {
  LauncherEnv launch = parse_launcher_env(in.env);
  const CudaView& v = in.mapping.view;
  std::vector<std::string> pci = pci_order(in.snapshot);
  // Only entries written as indices: a PCI address or a bare UUID CUDA happens to read as a number
  // means the GPU it spells, and its own rule says so.
  bool written_index = false;
  for (const EntryDecision& d : v.entries)
    written_index |= d.entry.kind == CvdEntryKind::kInteger && d.entry.form == CvdEntryForm::kPlain;
  // On a MIG host no order makes an index nvidia-smi's number (it counts MIG slices): mig_indices.
  bool ambiguous = !in.snapshot.any_mig() && in.fastest_first_order && *in.fastest_first_order != pci &&
                   v.order.order == DeviceOrder::kFastestFirst && v.visible_set && written_index &&
                   !gpus_hidden_on_purpose(v);
  bool by_pci = ambiguous || v.order.order == DeviceOrder::kInvalid;
  RuleInput r{in,        in.snapshot, v, launch, gpus_hidden_on_purpose(v), bound_by_gpumap(in.env),
              in.env.get("CUDA_VISIBLE_DEVICES").value_or(""), ambiguous, by_pci ? pci : in.mapping.base_order,
              std::nullopt, in.in_container ? host_indices(in.snapshot, in.env.get("NVIDIA_VISIBLE_DEVICES"))
                                            : std::vector<uint32_t>{}};
  r.alloc = read_allocation(in.snapshot, launch);
  r.mig_indices = v.order.order != DeviceOrder::kInvalid && mig_indices_misread(in.snapshot, v, in.mapping.base_order);
  std::vector<Finding> out;
  for (const std::vector<Rule>* table : {&entry_rules(), &host_rules(), &layer_rules(), &launcher_rules(), &framework_rules()})
    for (const Rule& rule : *table) {
      Report report(out, rule.id);
      rule.check(r, report);
    }
  return fold_by_cause(std::move(out));  // one finding per cause, the others as its evidence
}

}  // namespace gpumap
