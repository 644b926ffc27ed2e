// Entry rules: CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER as written, entry by entry, from the
// facts the parser saw (model/cuda_view.h CvdEntry) and what the resolver made of them.
#include <algorithm>
#include <cctype>

#include "env/variable_names.h"
#include "findings/fix_line.h"
#include "findings/rule_table.h"
#include "model/text.h"
#include "resolve/base_order.h"
#include "resolve/cuda_rules.h"

namespace gpumap {
namespace {

/// An entry as quoted in a message: in backquotes, cut after 64 bytes (at a character boundary)
/// with "…", so a megabyte-long entry is not repeated into every message.
std::string quoted(const std::string& raw) {
  if (raw.size() <= 64) return "`" + raw + "`";
  size_t cut = 64;
  while (cut > 0 && (static_cast<unsigned char>(raw[cut]) & 0xC0) == 0x80) --cut;
  return "`" + raw.substr(0, cut) + "…`";
}

std::string entry_at(const CudaView& v, size_t i) {
  return "CUDA_VISIBLE_DEVICES entry " + std::to_string(i + 1) + " " + quoted(v.entries[i].entry.raw);
}

/// "CUDA_VISIBLE_DEVICES entry 2 `x` has" or "CUDA_VISIBLE_DEVICES entries 1 `a`, 3 `b` (and 7 more) have":
/// at most five entries quoted, so the message stays short for any list.
std::string entries_phrase(const CudaView& v, const std::vector<size_t>& idx) {
  std::string s = std::string("CUDA_VISIBLE_DEVICES ") + (idx.size() == 1 ? "entry " : "entries ");
  for (size_t k = 0; k < idx.size() && k < 5; ++k)
    s += (k ? ", " : "") + std::to_string(idx[k] + 1) + " " + quoted(v.entries[idx[k]].entry.raw);
  if (idx.size() > 5) s += " (and " + std::to_string(idx.size() - 5) + " more)";
  return s + (idx.size() == 1 ? " has" : " have");
}

struct Said {
  std::string message, fix, note = {};
};

/// The entries that trip a rule.
template <class Trips>
std::vector<size_t> tripping(const RuleInput& r, Trips trips) {
  std::vector<size_t> hit;
  if (r.hidden) return hit;
  for (size_t i = 0; i < r.v.entries.size(); ++i)
    if (trips(r.v.entries[i])) hit.push_back(i);
  return hit;
}

/// One finding per rule per list, for the first entry that trips it; the later ones are counted and
/// the first few named (a list of 65 000 repeated entries gave 64 992 duplicate-gpu findings, 70 MB of
/// JSON).  `say` runs for that first entry only: its fix may be as long as the list.
template <class Trips, class Say>
void first_entry(const RuleInput& r, Report& report, Severity severity, Trips trips, Say say) {
  std::vector<size_t> hit = tripping(r, trips);
  if (hit.empty()) return;
  Said said = say(hit.front(), r.v.entries[hit.front()]);
  if (hit.size() > 1) {
    size_t more = hit.size() - 1;
    said.message += " (the same for " + std::to_string(more) + " more entr" + (more == 1 ? "y" : "ies") + ": ";
    for (size_t k = 1; k < hit.size() && k < 6; ++k) said.message += (k > 1 ? ", " : "") + std::to_string(hit[k] + 1);
    said.message += more > 5 ? ", ...)" : ")";
  }
  report.add(severity, std::move(said.message), std::move(said.fix), std::move(said.note));
}

bool is_integer(const EntryDecision& d) { return d.entry.kind == CvdEntryKind::kInteger; }

// `0;1`, `0 1`: a separator other than a comma after a number CUDA uses.
bool separator_after_number(const EntryDecision& d) {
  return is_integer(d) && d.entry.form == CvdEntryForm::kPlain && d.outcome == EntryOutcome::kVisible &&
         d.entry.trailing.find_first_of(";: \t") != std::string::npos;
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

// Slurm's word for "this job asked for no GPU": its GPU plugin wrote CUDA_VISIBLE_DEVICES=NoDevFiles
// when the job or step had no GPU on a node whose gres.conf lists GPUs, from 2.5.3 (commit 0e14909e)
// until 19.05 (d618ade0 "Do not set CUDA_VISIBLE_DEVICES=NoDevFiles", gres_common.c
// common_gres_set_env), so old clusters still do.  Inside a job it is no container word.
bool slurm_no_gpu(const RuleInput& r) { return r.cvd == "NoDevFiles" && r.in.env.get("SLURM_JOB_ID").has_value(); }

/// A value a framework reads as its own instruction and replaces before CUDA runs in its workers.
struct FrameworkKeyword {
  const char* prefix;     // the value starts with it (case-sensitive, as the framework compares)
  const char* framework;
  const char* meaning;
};

// jina's docs ("Replicate on multiple GPUs"): `RR` gives each replica of a Flow or Deployment the
// next GPU in turn; `RR0:2` (a Python slice), `RR1,3` (a list) and `RRGPU-...` narrow the GPUs.
constexpr FrameworkKeyword kFrameworkKeywords[] = {
    {"RR", "jina", "round-robin: a Flow or Deployment gives each replica the next GPU in turn (RR0:2, RR1,3 narrow the GPUs) "
                   "and sets that replica's CUDA_VISIBLE_DEVICES itself"},
};

const FrameworkKeyword* framework_keyword_of(const RuleInput& r) {
  for (const FrameworkKeyword& k : kFrameworkKeywords)
    if (r.cvd.rfind(k.prefix, 0) == 0) return &k;
  return nullptr;
}

// The value is another layer's word (Slurm's, a framework's), said by its own finding: the list is
// not cut by a typo and CUDA failing there is that layer's doing, so neither is said again.
bool another_layers_word(const RuleInput& r) { return slurm_no_gpu(r) || framework_keyword_of(r); }

// `unset CUDA_VISIBLE_DEVICES`, the line that gives every GPU when no entry names one here; on a
// host whose CUDA order is not nvidia-smi's, with PCI_BUS_ID too, so order-differs does not follow.
std::string every_gpu_fix(const RuleInput& r) {
  if (r.s.gpus.empty()) return "";  // no GPU here at all (a container given none): no line gives one
  // `none`, `void`, `NoDevFiles` alone asked for no GPU: the line that says so (container-keyword's fix).
  if (r.v.entries.size() == 1 && r.v.entries.front().entry.form == CvdEntryForm::kContainerKeyword &&
      r.v.entries.front().entry.raw != "all")
    return "export CUDA_VISIBLE_DEVICES=-1";
  // Inside a Slurm allocation that does not hold every GPU seen here, "every GPU" is the allocation's.
  if (r.alloc.restricts) {
    LaunchVisibility lv = launch_visibility(r.s, cuda_devices_of(r.s, r.alloc.uuids), CvdForm::kIndex);
    return lv.form == CvdForm::kUuid ? "export CUDA_VISIBLE_DEVICES=" + lv.cuda_visible_devices : "export " + lv.assignments();
  }
  bool order_differs = r.in.fastest_first_order && *r.in.fastest_first_order != pci_order(r.s) &&
                       r.v.order.order == DeviceOrder::kFastestFirst && !r.s.any_mig();
  return std::string("unset CUDA_VISIBLE_DEVICES") + (order_differs ? "; export CUDA_DEVICE_ORDER=PCI_BUS_ID" : "");
}

void device_order_invalid(const RuleInput& r, Report& report) {
  if (r.v.order.order != DeviceOrder::kInvalid) return;
  // Under an invalid order the driver reads no entry, so a list that would trip other rules once the
  // order is fixed (`' 0 '`, a duplicate, a GPU outside the allocation) is rewritten in the same line,
  // and pasting it leaves nothing behind.  A list that reads cleanly is left as written.
  std::string fix = "export CUDA_DEVICE_ORDER=PCI_BUS_ID";
  // CUDA_VISIBLE_DEVICES unset in a step without a device cgroup: the allocation's GPUs with the order.
  if (!r.v.visible_set && r.alloc.restricts) {
    std::string all = every_gpu_fix(r);
    fix = all.find("CUDA_DEVICE_ORDER=PCI_BUS_ID") != std::string::npos ? all : fix + " " + all.substr(7);
  }
  std::string meant = r.v.visible_set && !r.hidden ? meant_fix(r) : "";
  if (meant.rfind("export CUDA_VISIBLE_DEVICES=", 0) == 0)  // the UUID form: add the order
    meant = fix + " " + meant.substr(7);
  if (!meant.empty() && meant != fix + " CUDA_VISIBLE_DEVICES=" + r.cvd) fix = meant;
  report.add(Severity::kError,
             "CUDA_DEVICE_ORDER: " + r.v.order.reason + ". cuInit fails with CUDA_ERROR_INVALID_DEVICE; PyTorch then "
             "reports is_available() == False while nvidia-smi shows the GPUs",
             fix);
}

// Measured: values this long are ignored by cuInit as if unset (docs/driver-rules.md).
void value_too_long(const RuleInput& r, Report& report) {
  if (r.v.visible_too_long)
    report.add(Severity::kError,
               "CUDA_VISIBLE_DEVICES is " + std::to_string(r.cvd.size()) + " bytes long: the driver ignores a value of " +
                   std::to_string(kCudaVisibleDevicesIgnoredBytes) + " bytes or more as if it were unset, so this "
                   "process sees every GPU (" + std::to_string(r.v.uuids.size()) + "), not the ones listed",
               "", "shorten it: one UUID prefix per GPU is enough (GPU-df9ecf4c), or indices");
  if (r.v.order.too_long)
    report.add(Severity::kWarning, "CUDA_DEVICE_ORDER is " + r.v.order.reason + ": CUDA uses its default FASTEST_FIRST order",
               "export CUDA_DEVICE_ORDER=PCI_BUS_ID");
}

void gpus_hidden(const RuleInput& r, Report& report) {
  if (!r.hidden || r.v.order.order == DeviceOrder::kInvalid) return;
  report.add(Severity::kInfo,
             "CUDA_VISIBLE_DEVICES=`" + r.cvd + "` hides every GPU from CUDA: this process runs without a GPU (cuInit "
             "returns CUDA_ERROR_NO_DEVICE, torch.cuda.is_available() is False). That is the usual way to run CPU-only",
             "", "to use GPUs: unset CUDA_VISIBLE_DEVICES, or name them (gpumap which GPU... prints the line)");
}

void uuid_without_prefix(const RuleInput& r, Report& report) {
  first_entry(r, report, Severity::kError, [](const EntryDecision& d) { return d.entry.form == CvdEntryForm::kBareUuid; },
              [&](size_t i, const EntryDecision& d) -> Said {
                return {entry_at(r.v, i) + " is a UUID without `GPU-`: CUDA reads it as the number " +
                            (is_integer(d) ? std::to_string(d.entry.index) : std::string("(none)")) + ", not as that GPU",
                        meant_fix(r).empty() ? "export CUDA_VISIBLE_DEVICES=GPU-" + d.entry.raw : meant_fix(r)};
              });
}

void pci_address_entry(const RuleInput& r, Report& report) {
  first_entry(r, report, Severity::kError, [](const EntryDecision& d) { return d.entry.form == CvdEntryForm::kPciAddress; },
              [&](size_t i, const EntryDecision& d) -> Said {
                bool here = false;
                for (const Gpu& g : r.s.gpus) here |= g.pci && g.pci == d.entry.pci;
                return {entry_at(r.v, i) + " is a PCI address, which CUDA does not accept: it reads the leading digits "
                            "as the index " + std::to_string(d.entry.index) +
                            (d.outcome == EntryOutcome::kVisible ? " and gives you " + r.s.describe(d.uuid) : ""),
                        meant_fix(r),
                        here ? "" : "no GPU here has that address: name GPUs by UUID (gpumap which " + d.entry.raw + ")"};
              });
}

void mig_legacy_form(const RuleInput& r, Report& report) {
  first_entry(r, report, Severity::kError, [](const EntryDecision& d) { return d.entry.form == CvdEntryForm::kLegacyMig; },
              [&](size_t i, const EntryDecision&) -> Said {
                return {entry_at(r.v, i) + " uses the legacy MIG-GPU-<uuid>/<gi>/<ci> form, which drivers since R470 "
                            "do not accept",
                        meant_fix(r), "the MIG device UUIDs are what `nvidia-smi -L` prints (MIG-...)"};
              });
}

void entry_separator(const RuleInput& r, Report& report) {
  first_entry(r, report, Severity::kWarning, separator_after_number, [&](size_t i, const EntryDecision& d) -> Said {
    return {entry_at(r.v, i) + ": CUDA reads only the leading number (" + std::to_string(d.entry.index) + ") and ignores `" +
                d.entry.trailing + "`; only commas separate entries",
            meant_fix(r)};
  });
}

// Measured: `0x1` is GPU 0, `1.5` and `1e0` are GPU 1: only the leading decimal digits count.
void index_trailing_text(const RuleInput& r, Report& report) {
  auto trips = [](const EntryDecision& d) {
    return is_integer(d) && d.entry.form == CvdEntryForm::kPlain && !separator_after_number(d) &&
           d.entry.trailing.find_first_not_of(" \t\n\r\f\v") != std::string::npos;
  };
  first_entry(r, report, Severity::kWarning, trips, [&](size_t i, const EntryDecision& d) -> Said {
    bool hex = d.entry.digits.back() == '0' && (d.entry.trailing[0] == 'x' || d.entry.trailing[0] == 'X');
    return {entry_at(r.v, i) + ": CUDA reads the decimal number " + std::to_string(d.entry.index) + " and ignores `" +
                d.entry.trailing + "`" + (hex ? " (hex is not read)" : ""),
            meant_fix(r)};
  });
}

void container_keyword(const RuleInput& r, Report& report) {
  if (slurm_no_gpu(r)) return;  // slurm-no-gpu-allocated
  first_entry(r, report, Severity::kError,
              [](const EntryDecision& d) { return d.entry.form == CvdEntryForm::kContainerKeyword; },
              [&](size_t i, const EntryDecision& d) -> Said {
                return {entry_at(r.v, i) + " is a container-toolkit keyword (NVIDIA_VISIBLE_DEVICES); CUDA reads it as no GPU",
                        r.v.entries.size() > 1 && !meant_fix(r).empty() ? meant_fix(r)
                        : d.entry.raw == "all"                          ? every_gpu_fix(r)
                                                                        : "export CUDA_VISIBLE_DEVICES=-1",
                        d.entry.raw == "all" ? "" : "-1 hides every GPU on purpose; unset the variable to see every GPU"};
              });
}

void mixed_entry_kinds(const RuleInput& r, Report& report) {
  first_entry(r, report, Severity::kError, [](const EntryDecision& d) { return d.outcome == EntryOutcome::kMixedKind; },
              [&](size_t i, const EntryDecision&) -> Said {
                return {entry_at(r.v, i) + " mixes an index with UUIDs: CUDA stops reading the list there, so it and "
                            "every later entry are dropped",
                        meant_fix(r)};
              });
}

void mig_word_on_gpu(const RuleInput& r, Report& report) {
  auto trips = [](const EntryDecision& d) {
    return d.entry.kind == CvdEntryKind::kUuid && d.entry.mig_word && d.outcome == EntryOutcome::kVisible &&
           d.uuid.rfind("GPU-", 0) == 0;
  };
  first_entry(r, report, Severity::kWarning, trips, [&](size_t i, const EntryDecision& d) -> Said {
    return {entry_at(r.v, i) + " is written `MIG-` but its digits are a whole GPU's UUID: the driver matches the digits "
                "only, so this process gets all of " + r.s.describe(d.uuid) + ", not a MIG slice",
            meant_fix(r), "for a slice, name a MIG device UUID from nvidia-smi -L instead"};
  });
}

void uuid_trailing_ignored(const RuleInput& r, Report& report) {
  auto trips = [](const EntryDecision& d) { return d.entry.kind == CvdEntryKind::kUuid && !d.entry.ignored_tail.empty(); };
  first_entry(r, report, Severity::kWarning, trips, [&](size_t i, const EntryDecision& d) -> Said {
    // The parser kept what the driver does not read (after the 32nd digit or the 36th character).
    const CvdEntry& e = d.entry;
    return {entry_at(r.v, i) + ": CUDA reads at most 32 hex digits or 36 characters after `" + (e.mig_word ? "MIG-" : "GPU-") +
                "` and ignores the rest (`" + e.ignored_tail + "`); a typo or a glued-on second UUID there goes unnoticed",
            meant_fix(r), "one UUID per comma-separated entry"};
  });
}

void index_overflow(const RuleInput& r, Report& report) {
  first_entry(r, report, Severity::kError, [](const EntryDecision& d) { return is_integer(d) && d.entry.wider_than_32_bits; },
              [&](size_t i, const EntryDecision& d) -> Said {
                return {entry_at(r.v, i) + " is larger than 32 bits: CUDA keeps only the low 32 bits and reads it as index " +
                            std::to_string(d.entry.index) +
                            (d.outcome == EntryOutcome::kVisible ? " (" + r.s.describe(d.uuid) + ")" : ""),
                        meant_fix(r)};
              });
}

void signed_index(const RuleInput& r, Report& report) {
  auto trips = [](const EntryDecision& d) { return is_integer(d) && d.entry.sign && !d.entry.wider_than_32_bits; };
  first_entry(r, report, Severity::kWarning, trips, [&](size_t i, const EntryDecision&) -> Said {
    return {entry_at(r.v, i) + " has a sign: CUDA reads it like strtoul, so `-0` is index 0 and any other negative "
                "number names no GPU",
            meant_fix(r)};
  });
}

void duplicate_gpu(const RuleInput& r, Report& report) {
  first_entry(r, report, Severity::kError, [](const EntryDecision& d) { return d.outcome == EntryOutcome::kDuplicate; },
              [&](size_t i, const EntryDecision& d) -> Said {
                return {entry_at(r.v, i) + " names " + r.s.describe(d.uuid) + " again: a repeated GPU makes cuInit fail "
                            "(CUDA_ERROR_INVALID_DEVICE)",
                        meant_fix(r)};
              });
}

// Rules whose fix rewrites the whole list report once, naming the entries: one finding per entry
// would repeat that list-long fix (a 65 000-entry list would need gigabytes).
void space_before_uuid(const RuleInput& r, Report& report) {
  std::vector<size_t> hit = tripping(r, [](const EntryDecision& d) {
    return d.outcome == EntryOutcome::kInvalid && d.entry.form == CvdEntryForm::kSpaceBeforeUuid;
  });
  if (hit.empty()) return;
  report.add(Severity::kError,
             entries_phrase(r.v, hit) + " white space before `GPU-`: CUDA accepts spaces before numbers but not before UUIDs",
             meant_fix(r), "write no space after the commas");
}

void uuid_prefix_case(const RuleInput& r, Report& report) {
  std::vector<size_t> hit = tripping(r, [](const EntryDecision& d) { return d.entry.form == CvdEntryForm::kMiscasedWord; });
  if (hit.empty()) return;
  report.add(Severity::kError,
             entries_phrase(r.v, hit) + " a `gpu-`/`mig-` word not in upper case: it is case-sensitive (only `GPU-`/`MIG-` "
             "are read as UUIDs; the hex digits may be any case), so CUDA reads " +
                 (hit.size() == 1 ? "this entry" : "these entries") + " as no GPU",
             meant_fix(r));
}

void list_cut_short(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  if (r.hidden || !v.cut_at || v.error == CudaInitError::kInvalidDevice || another_layers_word(r)) return;
  size_t i = *v.cut_at;
  const EntryDecision& d = v.entries[i];
  size_t dropped = v.entries.size() - i - 1;
  if (d.entry.raw.empty() && dropped == 0 && i > 0) return;  // a trailing comma
  std::string msg = entry_at(v, i) + " names no GPU (" + cut_reason(d) + "): CUDA ignores it" +
                    (dropped ? " and the " + std::to_string(dropped) + " entr" + (dropped == 1 ? "y" : "ies") + " after it" : "");
  msg += v.uuids.empty()       ? ", so no GPU is visible"
         : v.uuids.size() == 1 ? ", so only cuda:0 exists"
                               : ", so only cuda:0..cuda:" + std::to_string(v.uuids.size() - 1) + " exist";
  if (std::optional<uint32_t> here = container_number_of_host_index(r, d.entry))
    msg += ". Inside this container the GPUs are renumbered from 0 (NVIDIA_VISIBLE_DEVICES=" +
           r.in.env.get("NVIDIA_VISIBLE_DEVICES").value_or("") + "): " + d.entry.raw + " is a host number, and host GPU " +
           d.entry.raw + " is the container's GPU " + std::to_string(*here);
  // The fix: the entries that name a GPU (read as meant); with none, the list's GPUs cannot be had
  // here, so the line that gives every GPU (cuda-init-fails gives the same) and a note.
  std::string fix = meant_fix(r), note;
  if (fix.empty()) {
    fix = every_gpu_fix(r);
    note = "no entry names a GPU here: `gpumap list` shows them, `gpumap which GPU...` prints the line for the ones "
           "you mean";
  }
  report.add(v.uuids.empty() ? Severity::kError : Severity::kWarning, msg, fix, note);
}

void cuda_init_fails(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  if (r.hidden || v.error == CudaInitError::kNone || v.order.order == DeviceOrder::kInvalid || another_layers_word(r)) return;
  // Never advise unsetting a variable that is not set (a host with no GPU at all).
  std::string fix = meant_fix(r), note;
  if (fix.empty() && r.in.env.get("CUDA_VISIBLE_DEVICES") && !r.s.gpus.empty()) {
    fix = every_gpu_fix(r);
    note = "or list GPUs that exist (gpumap which GPU... prints the line)";
  } else if (fix.empty()) {
    note = r.s.gpus.empty() ? "check the driver and the GPUs: nvidia-smi (gpumap list shows none)"
                            : "run `gpumap list` and `nvidia-smi`: NVML lists GPUs that CUDA cannot use";
  }
  std::string what = v.error == CudaInitError::kDriverCrash
                         ? std::string("cuInit would not return (the program crashes or hangs as CUDA starts): ")
                         : std::string("cuInit would fail with ") + cuda_error_name(v.error) + ": ";
  report.add(Severity::kError, what + v.error_reason, fix, note);
}

// Inside a Slurm job that asked for no GPU.  Never `unset` here: on a node without device cgroups
// that reaches the GPUs other jobs hold.
void slurm_no_gpu_allocated(const RuleInput& r, Report& report) {
  if (!slurm_no_gpu(r)) return;
  report.add(Severity::kWarning,
             "no GPU allocated: request --gres=gpu:N / --gpus=N. Slurm (before 19.05) sets CUDA_VISIBLE_DEVICES=NoDevFiles "
             "when a job asks for no GPU on this node, and job " + r.in.env.get("SLURM_JOB_ID").value_or("") +
                 " did, so CUDA sees none (a CPU-only job is right as it is)",
             "",
             "resubmit with GPUs (sbatch/srun --gres=gpu:N or --gpus=N); do not clear the variable: on a node without "
             "device cgroups that reaches GPUs other jobs hold");
}

void framework_keyword(const RuleInput& r, Report& report) {
  const FrameworkKeyword* k = framework_keyword_of(r);
  if (!k) return;
  std::string value = r.cvd.size() > 64 ? r.cvd.substr(0, 64) + "…" : r.cvd;
  report.add(Severity::kInfo,
             "CUDA_VISIBLE_DEVICES=`" + value + "` is " + k->framework + "'s keyword, not a typo: " + k->meaning +
                 ". CUDA itself reads it as no GPU, so a program started here without " + k->framework + " sees none",
             "", std::string("outside ") + k->framework + ", name the GPUs instead (gpumap which GPU... prints the line)");
}

// CUDA_VISIBLE=0, CUDA_VISIBLE_DEVICE, cuda_visible_devices: nothing reads the name.  The fix renames
// it (the literal value, so it pastes and combines); one finding for every such name of the run.
void misspelled_variable(const RuleInput& r, Report& report) {
  std::vector<MisspelledVariable> found = misspelled_variables(r.in.env);
  if (found.empty()) return;
  Environment fixed = r.in.env;
  std::vector<std::string> names, said;
  for (const MisspelledVariable& m : found) {
    // A name with a '-' was set by a program (a shell cannot unset it): the fix sets the right one.
    if (m.name.find('-') == std::string::npos) fixed.unset(m.name);
    if (!fixed.get(m.meant)) fixed.set(m.meant, m.value);
    names.push_back(m.name);
    if (std::find(names.begin(), names.end(), m.meant) == names.end()) names.push_back(m.meant);
    said.push_back(m.name + " (meant " + m.meant + ")");
  }
  const MisspelledVariable& first = found.front();
  std::string message = first.name + " is set but nothing reads it: it looks like a misspelling of " + first.meant + " (" +
                        first.what + ")";
  if (found.size() > 1) {
    message += "; also ";
    for (size_t i = 1; i < said.size() && i < 6; ++i) message += (i > 1 ? ", " : "") + said[i];
    if (said.size() > 6) message += ", ...";
  }
  report.add(Severity::kWarning, message, fix_line_between(r.in.env, fixed, names));
}

// device_map / max_memory keys and cuda:N count within the visible list.
void ordinals_are_relative(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  if (!v.visible_set || v.error != CudaInitError::kNone || v.uuids.empty()) return;
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.uuids.size(); ++i) parts.push_back(std::to_string(i) + " = " + r.s.describe(v.uuids[i]));
  report.add(Severity::kInfo,
             "with CUDA_VISIBLE_DEVICES set, cuda:N, torch.cuda.set_device(N) and the integer keys of device_map / "
             "max_memory (transformers, accelerate) are positions in the visible list, not nvidia-smi numbers: " +
                 join(parts, ", "),
             "");
}

}  // namespace

const std::vector<Rule>& entry_rules() {
  static const std::vector<Rule> table = {
      {"device-order-invalid", device_order_invalid},
      {"value-too-long", value_too_long},
      {"gpus-hidden", gpus_hidden},
      {"uuid-without-prefix", uuid_without_prefix},
      {"pci-address-entry", pci_address_entry},
      {"mig-legacy-form", mig_legacy_form},
      {"entry-separator", entry_separator},
      {"index-trailing-text", index_trailing_text},
      {"container-keyword", container_keyword},
      {"mixed-entry-kinds", mixed_entry_kinds},
      {"mig-word-on-gpu", mig_word_on_gpu},
      {"uuid-trailing-ignored", uuid_trailing_ignored},
      {"index-overflow", index_overflow},
      {"signed-index", signed_index},
      {"duplicate-gpu", duplicate_gpu},
      {"space-before-uuid", space_before_uuid},
      {"uuid-prefix-case", uuid_prefix_case},
      {"list-cut-short", list_cut_short},
      {"cuda-init-fails", cuda_init_fails},
      {"ordinals-are-relative", ordinals_are_relative},
      {"slurm-no-gpu-allocated", slurm_no_gpu_allocated},
      {"framework-keyword", framework_keyword},
      {"misspelled-variable", misspelled_variable},
  };
  return table;
}

}  // namespace gpumap
