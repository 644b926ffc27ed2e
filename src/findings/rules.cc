#include "model/text.h"
#include "findings/rules.h"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "env/launcher.h"
#include "env/nvidia_visible_devices.h"
#include "model/pci.h"
#include "resolve/base_order.h"
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

bool looks_like_bare_uuid(const std::string& raw) {
  // 8 hex digits then '-': a UUID written without "GPU-".
  if (raw.size() < 9 || raw[8] != '-') return false;
  for (int i = 0; i < 8; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(raw[i]))) return false;
  return true;
}

void add(std::vector<Finding>& out, const char* id, Severity sev, std::string msg, std::string fix) {
  out.push_back({id, sev, std::move(msg), std::move(fix)});
}

// Why an entry that ends the list names no GPU, in the words a user reads.
std::string cut_reason(const EntryDecision& d) {
  switch (d.outcome) {
    case EntryOutcome::kOutOfRange:
      return d.entry.negative ? "a negative number names no GPU"
                              : "index " + std::to_string(d.entry.index) + " is past the last GPU";
    case EntryOutcome::kNoMatch: return "no GPU's UUID starts with it";
    case EntryOutcome::kAmbiguous: return "it is the start of " + std::to_string(d.candidates.size()) + " GPUs' UUIDs";
    case EntryOutcome::kMixedKind: return "it mixes an index with UUIDs";
    default: return d.entry.reason.empty() ? "it names no GPU" : d.entry.reason;
  }
}

// What the user most likely wanted, as a UUID list: the entries that named a GPU.
std::string uuid_fix(const CudaView& v) {
  std::vector<std::string> uuids;
  std::set<std::string> seen;
  for (const EntryDecision& d : v.entries)
    if (!d.uuid.empty() && seen.insert(d.uuid).second) uuids.push_back(d.uuid);
  if (uuids.empty()) return "";
  return "export CUDA_VISIBLE_DEVICES=" + join(uuids, ",");
}

/// "CUDA_VISIBLE_DEVICES entry 2 `x` has" or "CUDA_VISIBLE_DEVICES entries 1 `a`, 3 `b` (and 7 more) have":
/// at most five entries quoted, so the message stays short for any list.
/// An entry as quoted in a message: in backquotes, cut after 64 bytes (at a character
/// boundary) with "…", so a megabyte-long entry is not repeated into every message.
std::string quoted(const std::string& raw) {
  if (raw.size() <= 64) return "`" + raw + "`";
  size_t cut = 64;
  while (cut > 0 && (static_cast<unsigned char>(raw[cut]) & 0xC0) == 0x80) --cut;
  return "`" + raw.substr(0, cut) + "…`";
}

std::string entries_phrase(const CudaView& v, const std::vector<size_t>& idx) {
  std::string s = std::string("CUDA_VISIBLE_DEVICES ") + (idx.size() == 1 ? "entry " : "entries ");
  for (size_t k = 0; k < idx.size() && k < 5; ++k)
    s += (k ? ", " : "") + std::to_string(idx[k] + 1) + " " + quoted(v.entries[idx[k]].entry.raw);
  if (idx.size() > 5) s += " (and " + std::to_string(idx.size() - 5) + " more)";
  return s + (idx.size() == 1 ? " has" : " have");
}

void entry_rules(const DiagnosisInput& in, std::vector<Finding>& out) {
  const CudaView& v = in.mapping.view;
  const Snapshot& s = in.snapshot;
  // Fixes that cover the whole list are built once, not once per entry: a list of 65 000
  // entries stays linear.
  std::optional<std::string> whole_uuid_fix, whole_case_fix;
  auto all_uuids_fix = [&]() -> const std::string& {
    if (!whole_uuid_fix) whole_uuid_fix = uuid_fix(v);
    return *whole_uuid_fix;
  };
  auto case_fix = [&]() -> const std::string& {
    if (!whole_case_fix) {
      std::string fixed;
      for (const EntryDecision& e : v.entries) {
        std::string r = e.entry.raw;
        if (r.size() >= 4 && strncasecmp(r.c_str(), "gpu-", 4) == 0) r = "GPU-" + r.substr(4);
        else if (r.size() >= 4 && strncasecmp(r.c_str(), "mig-", 4) == 0) r = "MIG-" + r.substr(4);
        fixed += (fixed.empty() ? "" : ",") + r;
      }
      whole_case_fix = "export CUDA_VISIBLE_DEVICES=" + fixed;
    }
    return *whole_case_fix;
  };
  // Rules whose fix rewrites the whole list report once, naming the entries: one finding per
  // entry would repeat that list-long fix (a 65 000-entry list would need gigabytes).
  std::vector<size_t> spaced, miscased;
  // One finding per rule per list, for the first entry that trips it; the later ones are
  // counted and the first few named (a list of 65 000 repeated entries gave 64 992 duplicate-gpu
  // findings, 70 MB of JSON).  A finding is built only for that first entry: its fix may be as
  // long as the list.
  std::map<std::string, std::pair<size_t, std::vector<size_t>>> per_rule;  // id -> (finding, later entries)
  size_t current = 0;
  auto add_once = [&](const char* id, Severity sev, std::string msg, const std::string& fix) {
    auto [it, first] = per_rule.try_emplace(id, out.size(), std::vector<size_t>{});
    if (first) add(out, id, sev, std::move(msg), fix);
    else it->second.second.push_back(current);
  };
  for (size_t i = 0; i < v.entries.size(); ++i) {
    const EntryDecision& d = v.entries[i];
    const std::string& raw = d.entry.raw;
    current = i;
    std::string at = "CUDA_VISIBLE_DEVICES entry " + std::to_string(i + 1) + " " + quoted(raw);
    if (looks_like_bare_uuid(raw))
      add_once("uuid-without-prefix", Severity::kError,
          at + " is a UUID without `GPU-`: CUDA reads it as the number " +
              (d.entry.kind == CvdEntryKind::kInteger ? std::to_string(d.entry.index) : std::string("(none)")) +
              ", not as that GPU",
          "export CUDA_VISIBLE_DEVICES=GPU-" + raw);
    else if (auto pci = parse_pci_address(raw)) {
      std::string meant;
      for (const Gpu& g : s.gpus)
        if (g.pci && *g.pci == *pci) meant = g.uuid;
      add_once("pci-address-entry", Severity::kError,
          at + " is a PCI address, which CUDA does not accept: it reads the leading digits as the index " +
              std::to_string(d.entry.index) +
              (d.outcome == EntryOutcome::kVisible ? " and gives you " + s.describe(d.uuid) : ""),
          meant.empty() ? "name GPUs by UUID (gpumap which " + raw + ")" : "export CUDA_VISIBLE_DEVICES=" + meant);
    } else if (raw.rfind("MIG-GPU-", 0) == 0) {
      add_once("mig-legacy-form", Severity::kError,
          at + " uses the legacy MIG-GPU-<uuid>/<gi>/<ci> form, which drivers since R470 do not accept",
          "use the MIG device UUIDs that `nvidia-smi -L` prints (MIG-...)");
    } else if (d.outcome == EntryOutcome::kVisible && d.entry.kind == CvdEntryKind::kInteger &&
               raw.find_first_of(";: ") != std::string::npos && raw.find_first_of("0123456789") != std::string::npos &&
               raw.find_first_not_of(" \t") != std::string::npos &&
               raw.substr(raw.find_first_of("0123456789")).find_first_not_of("0123456789") != std::string::npos) {
      add_once("entry-separator", Severity::kWarning,
          at + ": CUDA reads only the leading number (" + std::to_string(d.entry.index) + ") and ignores `" +
              raw.substr(raw.find_first_of("0123456789") + std::to_string(d.entry.index).size()) +
              "`; only commas separate entries",
          "separate entries with commas only, e.g. export CUDA_VISIBLE_DEVICES=1,0");
    } else if (d.entry.kind == CvdEntryKind::kInteger && !looks_like_bare_uuid(raw) && !parse_pci_address(raw)) {
      // Measured: `0x1` is GPU 0, `1.5` and `1e0` are GPU 1: only the leading decimal digits count.
      size_t start = raw.find_first_not_of(" \t\n\r\f\v");
      if (start != std::string::npos && (raw[start] == '+' || raw[start] == '-')) ++start;
      size_t tail = raw.find_first_not_of("0123456789", start);
      if (tail != std::string::npos && raw.find_first_not_of(" \t\n\r\f\v", tail) != std::string::npos)
        add_once("index-trailing-text", Severity::kWarning,
            at + ": CUDA reads the decimal number " + std::to_string(d.entry.index) + " and ignores `" +
                raw.substr(tail) + "`" + (raw.find("0x") != std::string::npos ? " (hex is not read)" : ""),
            "write plain decimal indices (or UUIDs): e.g. export CUDA_VISIBLE_DEVICES=" + std::to_string(d.entry.index));
    }
    if (d.entry.kind == CvdEntryKind::kInvalid && !raw.empty() && raw[0] != ' ' && raw[0] != '\t' &&
        raw.find("GPU-") == std::string::npos && !looks_like_bare_uuid(raw) && raw.rfind("MIG-", 0) != 0) {
      static const std::set<std::string> words = {"all", "none", "void", "NoDevFiles"};
      if (words.count(raw))
        add_once("container-keyword", Severity::kError,
            at + " is a container-toolkit keyword (NVIDIA_VISIBLE_DEVICES); CUDA reads it as no GPU",
            raw == "all" ? "unset CUDA_VISIBLE_DEVICES"
                         : "export CUDA_VISIBLE_DEVICES=-1   (no GPU on purpose; unset it to see every GPU)");
    }
    if (d.outcome == EntryOutcome::kInvalid && !raw.empty() && (raw[0] == ' ' || raw[0] == '\t') &&
        raw.find("GPU-") != std::string::npos)
      spaced.push_back(i);
    if (d.outcome == EntryOutcome::kMixedKind)
      add_once("mixed-entry-kinds", Severity::kError,
          at + " mixes an index with UUIDs: CUDA stops reading the list there, so it and every later entry are dropped",
          "use one kind of entry: all UUIDs (gpumap which ...)");
    if (raw.size() >= 4 && raw.compare(0, 4, "GPU-") != 0 && raw.compare(0, 4, "MIG-") != 0 &&
        (strncasecmp(raw.c_str(), "gpu-", 4) == 0 || strncasecmp(raw.c_str(), "mig-", 4) == 0))
      miscased.push_back(i);
    if (d.entry.kind == CvdEntryKind::kUuid && raw.rfind("MIG-", 0) == 0 && raw.rfind("MIG-GPU-", 0) != 0 &&
        d.outcome == EntryOutcome::kVisible && !d.uuid.empty() && d.uuid.rfind("GPU-", 0) == 0)
      add_once("mig-word-on-gpu", Severity::kWarning,
          at + " is written `MIG-` but its digits are a whole GPU's UUID: the driver matches the digits only, so this "
               "process gets all of " + s.describe(d.uuid) + ", not a MIG slice",
          "export CUDA_VISIBLE_DEVICES=" + d.uuid + "   (or a MIG device UUID from nvidia-smi -L)");
    if (d.entry.kind == CvdEntryKind::kUuid && !d.entry.ignored_tail.empty()) {
      // The parser kept what the driver does not read (after the 32nd digit or the 36th character).
      size_t pos = raw.size() - d.entry.ignored_tail.size();
      add_once("uuid-trailing-ignored", Severity::kWarning,
          at + ": CUDA reads at most 32 hex digits or 36 characters after `" + raw.substr(0, 4) + "` and ignores the rest (`" +
              d.entry.ignored_tail + "`); a typo or a glued-on second UUID there goes unnoticed",
          "export CUDA_VISIBLE_DEVICES=" + raw.substr(0, pos) + "   (one UUID per comma-separated entry)");
    }
    if (d.entry.kind == CvdEntryKind::kInteger) {
      size_t p = raw.find_first_not_of(" \t");
      bool signed_entry = p != std::string::npos && (raw[p] == '-' || raw[p] == '+');
      std::string digits;
      size_t q = raw.find_first_of("0123456789");
      if (q != std::string::npos) digits = raw.substr(q, raw.find_first_not_of("0123456789", q) - q);
      size_t nz = digits.find_first_not_of('0');
      std::string sig = nz == std::string::npos ? "0" : digits.substr(nz);
      bool overflow = sig.size() > 10 || (sig.size() == 10 && sig > "4294967295");
      if (overflow)
        add_once("index-overflow", Severity::kError,
            at + " is larger than 32 bits: CUDA keeps only the low 32 bits and reads it as index " +
                std::to_string(d.entry.index) + (d.outcome == EntryOutcome::kVisible ? " (" + s.describe(d.uuid) + ")" : ""),
            "name GPUs by UUID: gpumap which GPU...");
      else if (signed_entry)
        add_once("signed-index", Severity::kWarning,
            at + " has a sign: CUDA reads it like strtoul, so `-0` is index 0 and any other negative number names no GPU",
            "write plain indices (0,1) or UUIDs");
    }
    if (d.outcome == EntryOutcome::kDuplicate)
      add_once("duplicate-gpu", Severity::kError,
          at + " names " + s.describe(d.uuid) + " again: a repeated GPU makes cuInit fail (CUDA_ERROR_INVALID_DEVICE)",
          all_uuids_fix());
  }
  for (const auto& [id, rule] : per_rule) {
    const std::vector<size_t>& more = rule.second;
    if (more.empty()) continue;
    std::string& m = out[rule.first].message;
    m += " (the same for " + std::to_string(more.size()) + " more entr" + (more.size() == 1 ? "y" : "ies") + ": ";
    for (size_t k = 0; k < more.size() && k < 5; ++k) m += (k ? ", " : "") + std::to_string(more[k] + 1);
    m += more.size() > 5 ? ", ...)" : ")";
  }
  if (!spaced.empty())
    add(out, "space-before-uuid", Severity::kError,
        entries_phrase(v, spaced) + " white space before `GPU-`: CUDA accepts spaces before numbers but not before UUIDs",
        all_uuids_fix().empty() ? "remove the spaces after the commas" : all_uuids_fix());
  if (!miscased.empty())
    add(out, "uuid-prefix-case", Severity::kError,
        entries_phrase(v, miscased) + " a `gpu-`/`mig-` word not in upper case: it is case-sensitive (only `GPU-`/`MIG-` are "
        "read as UUIDs; the hex digits may be any case), so CUDA reads " + (miscased.size() == 1 ? "this entry" : "these entries") +
        " as no GPU",
        case_fix());
  if (v.cut_at && v.error != CudaInitError::kInvalidDevice) {
    size_t i = *v.cut_at;
    const EntryDecision& d = v.entries[i];
    std::string why = cut_reason(d);
    size_t dropped = v.entries.size() - i - 1;
    std::string msg = "CUDA_VISIBLE_DEVICES entry " + std::to_string(i + 1) + " " + quoted(d.entry.raw) + " names no GPU (" +
                      why + "): CUDA ignores it" + (dropped ? " and the " + std::to_string(dropped) + " entr" +
                                                                  (dropped == 1 ? "y" : "ies") + " after it" : "");
    msg += v.uuids.empty() ? ", so no GPU is visible" : ", so only cuda:0..cuda:" + std::to_string(v.uuids.size() - 1) + " exist";
    bool trailing_empty = d.entry.raw.empty() && dropped == 0 && i > 0;
    if (!trailing_empty) add(out, "list-cut-short", v.uuids.empty() ? Severity::kError : Severity::kWarning, msg, uuid_fix(v));
  }
}

bool gpus_hidden_on_purpose(const CudaView& v) {
  if (!v.visible_set || v.entries.size() != 1) return false;
  const CvdEntry& e = v.entries.front().entry;
  bool blank = e.raw.find_first_not_of(" \t\n\r\f\v") == std::string::npos;
  return blank || (e.kind == CvdEntryKind::kInteger && e.negative);
}

// Slurm GPU id k as the k-th /dev/nvidiaN by minor number (gres.conf `File=/dev/nvidia[0-N]`, the
// common layout; without minor numbers, nvidia-smi's order).  nullptr when there is no such GPU.
const Gpu* gpu_for_slurm_id(const Snapshot& s, uint32_t id) {
  std::vector<const Gpu*> gpus;
  for (const Gpu& g : s.gpus) gpus.push_back(&g);
  std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu* a, const Gpu* b) {
    if (a->minor_number && b->minor_number) return *a->minor_number < *b->minor_number;
    return a->nvml_index < b->nvml_index;
  });
  return id < gpus.size() ? gpus[id] : nullptr;
}

void slurm_rules(const DiagnosisInput& in, const LauncherEnv& launch, std::vector<Finding>& out) {
  const CudaView& v = in.mapping.view;
  const Snapshot& s = in.snapshot;
  // The step's ids when set, else the job's.
  bool step = launch.slurm_step_gpus.has_value();
  const std::optional<IntList>& ids = step ? launch.slurm_step_gpus : launch.slurm_job_gpus;
  if (!ids || !ids->error.empty() || ids->values.empty()) return;
  std::string name = step ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS";
  std::vector<std::string> global;
  for (uint32_t id : ids->values) global.push_back(std::to_string(id));
  if (v.visible_set) {
    // Slurm's GPU ids are node-global; inside the step CUDA numbers the allocated GPUs from 0.
    if (bound_by_gpumap(in.env)) return;  // bind narrowed the step on purpose: bound-rank says what to use
    bool beyond = false;
    for (uint32_t id : ids->values) beyond |= id >= v.uuids.size();
    add(out, "slurm-global-ids", Severity::kInfo,
        name + "=" + join(global, ",") + " are node-global GPU ids; inside the step CUDA numbers the allocated GPUs "
               "from 0 (CUDA_VISIBLE_DEVICES=" + in.env.get("CUDA_VISIBLE_DEVICES").value_or("") +
               "). Never use these ids as cuda:N" + (beyond ? ": some of them do not exist as cuda:N here" : ""),
        "use cuda:0..cuda:" + std::to_string(v.uuids.empty() ? 0 : v.uuids.size() - 1) + " (or $SLURM_LOCALID for one GPU per task)");
    return;
  }
  if (v.error != CudaInitError::kNone) return;
  // CUDA_VISIBLE_DEVICES unset: CUDA sees every GPU this process can open, not only the allocation.
  std::vector<std::string> allocated;
  std::vector<std::string> names;
  for (uint32_t id : ids->values) {
    const Gpu* g = gpu_for_slurm_id(s, id);
    if (!g) {
      allocated.clear();
      break;
    }
    allocated.push_back(g->uuid);
    names.push_back(std::to_string(g->nvml_index));
  }
  std::string assume = " (assuming Slurm's GPU id k is the k-th /dev/nvidiaN, as with gres.conf `File=/dev/nvidia[0-" +
                       std::to_string(s.gpus.empty() ? 0 : s.gpus.size() - 1) +
                       "]`; `scontrol show job -d $SLURM_JOB_ID` shows the real IDX)";
  if (allocated.empty()) {
    // Ids beyond this process's GPUs: a device cgroup renumbered them; only the count can be checked.
    if (v.uuids.size() > ids->values.size())
      add(out, "slurm-gpus-not-applied", Severity::kWarning,
          name + "=" + join(global, ",") + " allocates " + std::to_string(ids->values.size()) +
              " GPU(s), but CUDA_VISIBLE_DEVICES is unset and CUDA sees " + std::to_string(v.uuids.size()) +
              ": cuda:" + std::to_string(ids->values.size()) + " and above are GPUs outside the allocation",
          "export CUDA_VISIBLE_DEVICES=<the allocated GPUs' UUIDs>   (gpumap which ...; srun sets it when the "
          "step asks for GPUs: srun --gpus=N)");
    return;
  }
  std::vector<std::string> sorted_now = v.uuids, sorted_alloc = allocated;
  std::sort(sorted_now.begin(), sorted_now.end());
  std::sort(sorted_alloc.begin(), sorted_alloc.end());
  if (sorted_now == sorted_alloc) return;
  std::vector<std::string> outside;
  for (size_t i = 0; i < v.uuids.size(); ++i)
    if (std::find(allocated.begin(), allocated.end(), v.uuids[i]) == allocated.end())
      outside.push_back("cuda:" + std::to_string(i) + " = " + s.describe(v.uuids[i]));
  add(out, "slurm-gpus-not-applied", Severity::kWarning,
      name + "=" + join(global, ",") + " allocates nvidia-smi GPU(s) " + join(names, ",") + assume +
          ", but CUDA_VISIBLE_DEVICES is unset, so CUDA sees every GPU: " + join(outside, ", ") +
          (outside.size() == 1 ? " is" : " are") + " outside the allocation (another job's GPUs)",
      "export " + launch_visibility(s, allocated, CvdForm::kIndex).assignments());
}

}  // namespace

std::vector<Finding> diagnose(const DiagnosisInput& in) {
  std::vector<Finding> out;
  const Snapshot& s = in.snapshot;
  const CudaView& v = in.mapping.view;
  const bool hidden = gpus_hidden_on_purpose(v);
  const bool bound = bound_by_gpumap(in.env);
  if (v.order.order == DeviceOrder::kInvalid)
    add(out, "device-order-invalid", Severity::kError,
        "CUDA_DEVICE_ORDER: " + v.order.reason + ". cuInit fails with CUDA_ERROR_INVALID_DEVICE; PyTorch then reports "
        "is_available() == False while nvidia-smi shows the GPUs",
        "export CUDA_DEVICE_ORDER=PCI_BUS_ID");
  // Measured: values this long are ignored by cuInit as if unset (docs/driver-rules.md).
  if (v.visible_too_long)
    add(out, "value-too-long", Severity::kError,
        "CUDA_VISIBLE_DEVICES is " + std::to_string(in.env.get("CUDA_VISIBLE_DEVICES").value_or("").size()) +
            " bytes long: the driver ignores a value of " + std::to_string(kCudaVisibleDevicesIgnoredBytes) +
            " bytes or more as if it were unset, so this process sees every GPU (" + std::to_string(v.uuids.size()) +
            "), not the ones listed",
        "");
  if (v.order.too_long)
    add(out, "value-too-long", Severity::kWarning,
        "CUDA_DEVICE_ORDER is " + v.order.reason + ": CUDA uses its default FASTEST_FIRST order", "export CUDA_DEVICE_ORDER=PCI_BUS_ID");
  if (hidden && v.order.order != DeviceOrder::kInvalid)
    add(out, "gpus-hidden", Severity::kInfo,
        "CUDA_VISIBLE_DEVICES=`" + in.env.get("CUDA_VISIBLE_DEVICES").value_or("") +
            "` hides every GPU from CUDA: this process runs without a GPU (cuInit returns CUDA_ERROR_NO_DEVICE, "
            "torch.cuda.is_available() is False). That is the usual way to run CPU-only",
        "to use GPUs: unset CUDA_VISIBLE_DEVICES, or name them: gpumap which GPU...");
  if (!hidden) entry_rules(in, out);
  if (!hidden && v.error != CudaInitError::kNone && v.order.order != DeviceOrder::kInvalid) {
    // Never advise unsetting a variable that is not set (a host with no GPU at all).
    std::string fix = !uuid_fix(v).empty()                         ? uuid_fix(v)
                      : in.env.get("CUDA_VISIBLE_DEVICES")          ? "unset CUDA_VISIBLE_DEVICES, or list GPUs that exist: gpumap which GPU..."
                      : s.gpus.empty()                              ? "check the driver and the GPUs: nvidia-smi (gpumap list shows none)"
                                                                    : "run `gpumap list` and `nvidia-smi`: NVML lists GPUs that CUDA cannot use";
    add(out, "cuda-init-fails", Severity::kError,
        std::string("cuInit would fail with ") + cuda_error_name(v.error) + ": " + v.error_reason, fix);
  }

  // CUDA's default order against nvidia-smi's, quoting the mapping the table shows.
  std::vector<std::string> pci = pci_order(s);
  if (in.fastest_first_order && *in.fastest_first_order != pci && v.order.order == DeviceOrder::kFastestFirst &&
      v.error == CudaInitError::kNone) {
    if (!v.visible_set) {
      std::vector<std::string> diffs;
      for (size_t i = 0; i < v.uuids.size(); ++i) {
        int idx = s.nvml_index_of(v.uuids[i]);
        if (idx < 0) diffs.push_back("cuda:" + std::to_string(i) + " is a GPU NVML could not identify");
        else if (idx != static_cast<int>(i))
          diffs.push_back("cuda:" + std::to_string(i) + " is nvidia-smi GPU " + std::to_string(idx));
      }
      add(out, "order-differs", Severity::kWarning,
          "CUDA's order differs from nvidia-smi's (FASTEST_FIRST puts the fastest GPU first): " + join(diffs, ", ") +
              ". Code that takes numbers from nvidia-smi lands on the wrong GPU",
          "export CUDA_DEVICE_ORDER=PCI_BUS_ID");
    } else {
      // UUID entries do not depend on the order; index entries count in CUDA's order.
      bool integer_entries = false;
      for (const EntryDecision& d : v.entries) integer_entries |= d.entry.kind == CvdEntryKind::kInteger;
      if (integer_entries) {
        CudaView by_pci = predict_cuda_view(pci, std::string("PCI_BUS_ID"), in.env.get("CUDA_VISIBLE_DEVICES"));
        bool same = by_pci.error == CudaInitError::kNone && by_pci.uuids == v.uuids;
        std::vector<std::string> parts;
        for (size_t i = 0; i < v.uuids.size(); ++i)
          parts.push_back("cuda:" + std::to_string(i) + " = " + s.describe(v.uuids[i]));
        add(out, "visible-devices-without-pci-order", same ? Severity::kInfo : Severity::kWarning,
            "CUDA_VISIBLE_DEVICES uses indices, and without CUDA_DEVICE_ORDER=PCI_BUS_ID they count in CUDA's "
            "order, not nvidia-smi's: `" + in.env.get("CUDA_VISIBLE_DEVICES").value_or("") + "` gives " +
                join(parts, ", ") +
                (same ? " (the same GPUs as in nvidia-smi's order here, by luck of which indices were chosen)" : ""),
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID   (or name GPUs by UUID: gpumap which ...)");
      }
    }
  }

  // Launchers: a local rank is a process number, not a GPU number.
  LauncherEnv launch = parse_launcher_env(in.env);
  for (const LocalRank& r : launch.local_ranks)
    if (!r.error.empty()) add(out, "local-rank-invalid", Severity::kError, r.error, "");
  // Slurm's per-task binding (--gpus-per-task, --gpu-bind=single/map_gpu) gives each task fewer GPUs
  // than the node's share (SLURM_GPUS_ON_NODE): task 1 rightly sees only its own cuda:0.
  const LocalRank* rank = launch.rank();
  const bool slurm_bound_per_task = rank && rank->variable == "SLURM_LOCALID" && launch.slurm_gpus_on_node &&
                                    v.uuids.size() < *launch.slurm_gpus_on_node;
  if (bound && v.error == CudaInitError::kNone) {
    std::string who = rank ? "local rank " + std::to_string(*rank->value) + " (" + rank->variable + ")" : "this process";
    const std::string var = rank ? rank->variable : "LOCAL_RANK";
    add(out, "bound-rank", Severity::kInfo,
        "gpumap bind gave " + who + " its own GPU(s) (GPUMAP_BOUND matches CUDA_VISIBLE_DEVICES" +
            (launch.bound_own ? "; --keep-visible: GPUMAP_BOUND_OWN=" + std::to_string(*launch.bound_own) : "") +
            "): " + bound_rank_advice(var, launch.bound_own),
        launch.bound_own ? "torch.cuda.set_device(0)"
                         : "torch.cuda.set_device(0)   # or: int(os.environ[\"" + var + "\"]) % torch.cuda.device_count()");
  } else if (rank && !slurm_bound_per_task && v.error == CudaInitError::kNone && *rank->value >= v.uuids.size()) {
    add(out, "local-rank-exceeds-visible", Severity::kError,
        rank->variable + "=" + std::to_string(*rank->value) + " but this process sees only " + std::to_string(v.uuids.size()) +
            " GPU(s): cuda:{" + rank->variable + "} does not exist (each rank sees the same list; one GPU per rank "
            "needs as many visible GPUs as ranks, or per-rank CUDA_VISIBLE_DEVICES)",
        "gpumap bind -- CMD   (gives each rank its own GPU)");
  }
  slurm_rules(in, launch, out);

  // torchrun: LOCAL_WORLD_SIZE processes on this node, one GPU each by convention.
  if (!bound && launch.local_world_size && v.error == CudaInitError::kNone && *launch.local_world_size > v.uuids.size())
    add(out, "world-size-exceeds-visible", Severity::kError,
        "LOCAL_WORLD_SIZE=" + std::to_string(*launch.local_world_size) + " processes on this node, but " +
            (v.visible_set ? "CUDA_VISIBLE_DEVICES=" + in.env.get("CUDA_VISIBLE_DEVICES").value_or("") + " leaves "
                           : std::string("this host has ")) +
            std::to_string(v.uuids.size()) + " GPU(s): ranks " + std::to_string(v.uuids.size()) + ".." +
            std::to_string(*launch.local_world_size - 1) + " fail at torch.cuda.set_device(LOCAL_RANK) (invalid device ordinal)",
        "torchrun --nproc-per-node=" + std::to_string(v.uuids.size()) + " ...   (or list " +
            std::to_string(*launch.local_world_size) + " GPUs in CUDA_VISIBLE_DEVICES)");

  // MPS: the MPS server enumerates GPUs itself; clients should name them by UUID.
  if (auto pipe = in.env.get("CUDA_MPS_PIPE_DIRECTORY"); pipe && v.visible_set) {
    bool integer_entries = false;
    for (const EntryDecision& d : v.entries) integer_entries |= d.entry.kind == CvdEntryKind::kInteger;
    if (integer_entries)
      add(out, "mps-index-entries", Severity::kWarning,
          "CUDA_MPS_PIPE_DIRECTORY=" + *pipe + " (an MPS client) with CUDA_VISIBLE_DEVICES indices `" +
              in.env.get("CUDA_VISIBLE_DEVICES").value_or("") + "`: under MPS the indices count within the GPUs the MPS "
              "server was started with, which need not be nvidia-smi's or this shell's numbering",
          uuid_fix(v).empty() ? "name GPUs by UUID: gpumap which GPU..." : uuid_fix(v));
  }

  // device_map / max_memory keys and cuda:N count within the visible list.
  if (v.visible_set && v.error == CudaInitError::kNone && !v.uuids.empty()) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < v.uuids.size(); ++i)
      parts.push_back(std::to_string(i) + " = " + s.describe(v.uuids[i]));
    add(out, "ordinals-are-relative", Severity::kInfo,
        "with CUDA_VISIBLE_DEVICES set, cuda:N, torch.cuda.set_device(N) and the integer keys of device_map / "
        "max_memory (transformers, accelerate) are positions in the visible list, not nvidia-smi numbers: " +
            join(parts, ", "),
        "");
  }

  // NVIDIA_VISIBLE_DEVICES is read by the container runtime only.
  NvidiaVisibleDevices nvd = parse_nvidia_visible_devices(in.env.get("NVIDIA_VISIBLE_DEVICES"));
  if (nvd.mode != NvdMode::kUnset && !in.in_container)
    add(out, "nvidia-visible-devices-outside-container", Severity::kWarning,
        "NVIDIA_VISIBLE_DEVICES=" + in.env.get("NVIDIA_VISIBLE_DEVICES").value_or("") +
            " is set, but only the container runtime reads it; CUDA and nvidia-smi on this host ignore it",
        "to choose GPUs for this process: export CUDA_VISIBLE_DEVICES=<UUIDs> (gpumap which ...)");
  if (in.in_container && nvd.mode == NvdMode::kList)
    add(out, "container-renumbered", Severity::kInfo,
        "inside this container only the injected GPUs exist, numbered from 0 by nvidia-smi and CUDA; host GPU "
        "numbers do not apply here. The UUIDs and PCI bus ids are the host's: use them to match",
        "");
  for (const Gpu& g : s.gpus)
    if (g.mig_enabled.value_or(false))
      add(out, "mig-enabled", Severity::kInfo,
          "nvidia-smi GPU " + std::to_string(g.nvml_index) + " is in MIG mode: CUDA shows its MIG devices (" +
              std::to_string(g.mig_devices.size()) + "), not the GPU; name them by MIG-<uuid>. Drivers before R570 "
              "give a process exactly one MIG device",
          "");
  return out;
}

}  // namespace gpumap
