#include "env/cuda_visible_devices.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "model/text.h"

namespace gpumap {
namespace {

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

CvdEntry parse_uuid_entry(std::string_view e) {
  CvdEntry out;
  out.raw = std::string(e);
  std::string_view rest = e.substr(4);
  if (rest.empty()) {  // measured: `GPU-` alone names no GPU, `GPU--` names every GPU (see below)
    out.kind = CvdEntryKind::kInvalid;
    out.reason = "`" + std::string(e.substr(0, 4)) + "` with nothing after it";
    return out;
  }
  // Measured (driver 580.159.04, docs/driver-rules.md): the driver reads at most 36 characters
  // after the prefix (a UUID's 32 hex digits and 4 dashes) and stops early at the 32nd hex digit;
  // dashes anywhere are skipped but count toward the 36; what it does not read is ignored.
  const size_t window = std::min(rest.size(), kUuidEntryWindow);
  size_t i = 0;
  for (; i < window && out.uuid_hex.size() < 32; ++i) {
    char c = rest[i];
    if (c == '-') continue;
    if (!is_hex(c)) {
      out.kind = CvdEntryKind::kInvalid;
      out.uuid_hex.clear();
      out.reason = "`" + std::string(1, c) + "` is not a hex digit of a UUID";
      if (e.substr(0, 8) == "MIG-GPU-")
        out.reason = "the legacy `MIG-GPU-<uuid>/<gi>/<ci>` form is not accepted by this driver; "
                     "use the MIG device's own `MIG-<uuid>`";
      return out;
    }
    out.uuid_hex.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  out.kind = CvdEntryKind::kUuid;
  out.mig_word = e.substr(0, 4) == "MIG-";
  out.ignored_tail = std::string(rest.substr(i));
  if (out.uuid_hex.empty())
    out.reason = "only dashes in the first " + std::to_string(kUuidEntryWindow) +
                 " characters: an empty UUID prefix, which matches every GPU";
  else if (!out.ignored_tail.empty())
    out.reason = "`" + out.ignored_tail + "` after " +
                 (out.uuid_hex.size() >= 32 ? std::string("the full UUID") : "the first " + std::to_string(kUuidEntryWindow) + " characters") +
                 " is ignored";
  return out;
}

CvdEntry parse_integer_entry(std::string_view e) {
  CvdEntry out;
  out.raw = std::string(e);
  size_t i = 0;
  while (i < e.size() && std::isspace(static_cast<unsigned char>(e[i]))) ++i;
  bool negative = false;
  bool sign = false;
  if (i < e.size() && (e[i] == '+' || e[i] == '-')) {
    sign = true;
    negative = e[i++] == '-';
  }
  size_t digits_start = i;
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  uint64_t v = 0;
  bool overflow = false;
  for (; i < e.size() && e[i] >= '0' && e[i] <= '9'; ++i) {
    uint64_t d = static_cast<uint64_t>(e[i] - '0');
    if (v > (max - d) / 10) overflow = true;
    else v = v * 10 + d;
  }
  if (i == digits_start) {
    out.kind = CvdEntryKind::kInvalid;
    if (e.empty()) out.reason = "empty entry";
    else if (e.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos) out.reason = "only white space";
    else if (std::isspace(static_cast<unsigned char>(e[0])) && e.find("GPU-") != std::string_view::npos)
      out.reason = "white space before `GPU-` is not allowed";
    else out.reason = "not a number and not a `GPU-`/`MIG-` UUID";
    return out;
  }
  // strtoul: overflow saturates to ULONG_MAX; a minus sign negates modulo 2^64.
  uint64_t ul = overflow ? max : (negative ? (~v + 1) : v);
  out.kind = CvdEntryKind::kInteger;
  out.sign = sign;
  out.digits = std::string(e.substr(digits_start, i - digits_start));
  out.trailing = std::string(e.substr(i));
  out.wider_than_32_bits = overflow || v > 0xffffffffull;
  out.index = ul & 0xffffffffull;  // the driver keeps 32 bits (measured: 4294967297 -> 1)
  out.negative = negative && (v != 0 || overflow);
  std::string notes;
  if (overflow) notes = "overflows, which CUDA reads as no GPU";
  else if (negative && v != 0) notes = "negative";
  else if (out.index != ul) notes = "is cut to 32 bits: CUDA reads it as " + std::to_string(out.index);
  if (i < e.size()) {
    std::string tail(e.substr(i));
    if (!notes.empty()) notes += "; ";
    notes += "`" + tail + "` after the number is ignored";
  }
  if (digits_start > 0 && e[0] != '+' && e[0] != '-') {
    if (!notes.empty()) notes += "; ";
    notes += "leading white space is skipped";
  }
  out.reason = notes;
  return out;
}

bool starts_with_word(std::string_view e, std::string_view word) {
  if (e.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(e[i])) != std::tolower(static_cast<unsigned char>(word[i]))) return false;
  return true;
}

// What the entry looks like it was meant to be (CvdEntryForm), from its text.
CvdEntryForm form_of(std::string_view e, CvdEntryKind kind) {
  if (e.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos) return CvdEntryForm::kBlank;
  if (e.size() >= 9 && e[8] == '-' && std::all_of(e.begin(), e.begin() + 8, is_hex)) return CvdEntryForm::kBareUuid;
  if (parse_pci_address(e)) return CvdEntryForm::kPciAddress;
  if (e.substr(0, 8) == "MIG-GPU-") return CvdEntryForm::kLegacyMig;
  if (e == "all" || e == "none" || e == "void" || e == "NoDevFiles") return CvdEntryForm::kContainerKeyword;
  if (e.substr(0, 4) != "GPU-" && e.substr(0, 4) != "MIG-" && (starts_with_word(e, "gpu-") || starts_with_word(e, "mig-")))
    return CvdEntryForm::kMiscasedWord;
  if (kind == CvdEntryKind::kInvalid && std::isspace(static_cast<unsigned char>(e[0])) && e.find("GPU-") != std::string_view::npos)
    return CvdEntryForm::kSpaceBeforeUuid;
  return CvdEntryForm::kPlain;
}

}  // namespace

std::vector<CvdEntry> parse_cuda_visible_devices(std::string_view value) {
  std::vector<CvdEntry> out;
  for (const std::string& piece : split(value, ',')) {
    std::string_view e = piece;
    if (e.substr(0, 4) == "GPU-" || e.substr(0, 4) == "MIG-") out.push_back(parse_uuid_entry(e));
    else out.push_back(parse_integer_entry(e));
    out.back().form = form_of(e, out.back().kind);
    if (out.back().form == CvdEntryForm::kPciAddress) out.back().pci = parse_pci_address(e);
  }
  return out;
}

}  // namespace gpumap
