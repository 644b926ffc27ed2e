#include "findings/rules.h"

#include <cctype>
#include <map>
#include <set>

#include "findings/rule_table.h"
#include "model/text.h"
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

bool gpus_hidden_on_purpose(const CudaView& v) {
  if (!v.visible_set || v.entries.size() != 1) return false;
  const CvdEntry& e = v.entries.front().entry;
  return e.form == CvdEntryForm::kBlank || (e.kind == CvdEntryKind::kInteger && e.negative);
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

}  // namespace

std::optional<uint32_t> container_number_of_host_index(const RuleInput& r, const CvdEntry& e) {
  if (e.kind != CvdEntryKind::kInteger || e.form != CvdEntryForm::kPlain || e.sign || e.negative || !e.trailing.empty() ||
      e.wider_than_32_bits || e.index < r.s.gpus.size())
    return std::nullopt;
  for (size_t i = 0; i < r.host_index.size() && i < r.s.gpus.size(); ++i)
    if (r.host_index[i] == e.index) return r.s.gpus[i].nvml_index;
  return std::nullopt;
}

std::vector<std::string> meant_gpus(const RuleInput& r) {
  if (r.meant) return *r.meant;
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::map<std::string, std::string> read;  // entry text -> the GPU it names alone ("" none)
  for (const EntryDecision& d : r.v.entries) {
    // A host number inside a container meant that GPU, which has another number here.
    std::optional<uint32_t> here = container_number_of_host_index(r, d.entry);
    for (const std::string& text : here ? std::vector<std::string>{std::to_string(*here)} : spelled(d.entry, r.s)) {
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

std::string meant_fix(const RuleInput& r, std::optional<CvdForm> form) {
  std::vector<std::string> uuids = meant_gpus(r);
  if (uuids.empty()) return "";
  bool written_as_uuids = false;
  for (const EntryDecision& d : r.v.entries)
    written_as_uuids |= d.entry.kind == CvdEntryKind::kUuid || (d.entry.form != CvdEntryForm::kPlain &&
                                                                 d.entry.form != CvdEntryForm::kBlank);
  if (!form) form = written_as_uuids ? CvdForm::kUuid : CvdForm::kIndex;
  LaunchVisibility lv = launch_visibility(r.s, uuids, *form);
  if (lv.form == CvdForm::kUuid) return "export CUDA_VISIBLE_DEVICES=" + lv.cuda_visible_devices;
  return "export " + lv.assignments();
}

std::string gives_comment(const Snapshot& s, const std::vector<std::string>& uuids) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < uuids.size(); ++i) {
    int idx = s.nvml_index_of(uuids[i]);
    parts.push_back("cuda:" + std::to_string(i) + " = " +
                    (idx >= 0 ? "nvidia-smi GPU " + std::to_string(idx) : s.describe(uuids[i])));
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
  bool ambiguous = in.fastest_first_order && *in.fastest_first_order != pci &&
                   v.order.order == DeviceOrder::kFastestFirst && v.visible_set && written_index &&
                   !gpus_hidden_on_purpose(v);
  bool by_pci = ambiguous || v.order.order == DeviceOrder::kInvalid;
  RuleInput r{in,        in.snapshot, v, launch, gpus_hidden_on_purpose(v), bound_by_gpumap(in.env),
              in.env.get("CUDA_VISIBLE_DEVICES").value_or(""), ambiguous, by_pci ? pci : in.mapping.base_order,
              std::nullopt, in.in_container ? host_indices(in.snapshot, in.env.get("NVIDIA_VISIBLE_DEVICES"))
                                            : std::vector<uint32_t>{}};
  std::vector<Finding> out;
  for (const std::vector<Rule>* table : {&entry_rules(), &host_rules(), &launcher_rules(), &framework_rules()})
    for (const Rule& rule : *table) {
      Report report(out, rule.id);
      rule.check(r, report);
    }
  return out;
}

}  // namespace gpumap
