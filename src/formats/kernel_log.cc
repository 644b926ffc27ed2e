#include "formats/kernel_log.h"

#include <algorithm>
#include <string>

namespace gpumap {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Reads decimal digits at `s` (at most 19, so no overflow); nullopt when none.
std::optional<uint64_t> read_number(std::string_view& s) {
  size_t n = 0;
  uint64_t v = 0;
  while (n < s.size() && n < 19 && is_digit(s[n])) v = v * 10 + static_cast<uint64_t>(s[n++] - '0');
  if (n == 0) return std::nullopt;
  s.remove_prefix(n);
  return v;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

/// "0000:00:06" (domain:bus:device, as the driver writes it) or a full "0000:00:06.0".
std::optional<PciAddress> xid_address(std::string_view pci) {
  std::string text(pci);
  if (text.find('.') == std::string::npos) text += ".0";
  return parse_pci_address(text);
}

/// A name or pid value up to the next ", " (or the end): `name=python3, channel ...`.
std::string_view take_value(std::string_view& s) {
  size_t end = s.find(", ");
  std::string_view v = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end + 2);
  return v;
}

bool unknown_value(std::string_view v) { return v.empty() || v == "'<unknown>'" || v == "<unknown>"; }

}  // namespace

std::optional<KernelLine> split_kernel_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty() || line.front() == ' ') return std::nullopt;  // kmsg's " KEY=VALUE" continuation
  KernelLine out;
  // /dev/kmsg: "PRI,SEQ,USEC,FLAGS[,...];MESSAGE"
  size_t semi = line.find(';');
  if (semi != std::string_view::npos && semi > 0 && is_digit(line.front())) {
    std::string_view head = line.substr(0, semi);
    std::string_view h = head;
    auto pri = read_number(h);
    if (pri && starts_with(h, ",")) {
      h.remove_prefix(1);
      auto seq = read_number(h);
      if (seq && starts_with(h, ",")) {
        h.remove_prefix(1);
        auto usec = read_number(h);
        if (usec && (h.empty() || h.front() == ',')) {
          out.seq = *seq;
          out.usec = usec;
          out.message = line.substr(semi + 1);
          return out;
        }
      }
    }
  }
  // dmesg: "[  123.456789] MESSAGE" (also after a syslog prefix: "... kernel: [ 966.503025] NVRM: ...")
  std::string_view rest = line;
  size_t kernel = rest.find("kernel: ");
  if (kernel != std::string_view::npos) rest.remove_prefix(kernel + 8);
  if (starts_with(rest, "[")) {
    std::string_view t = rest.substr(1);
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    auto secs = read_number(t);
    if (secs && starts_with(t, ".")) {
      t.remove_prefix(1);
      std::string_view frac = t;
      auto us = read_number(t);
      size_t digits = frac.size() - t.size();
      if (us && starts_with(t, "]") && digits <= 9) {
        uint64_t micro = *us;
        for (size_t d = digits; d < 6; ++d) micro *= 10;
        for (size_t d = 6; d < digits; ++d) micro /= 10;
        if (*secs < (uint64_t{1} << 40)) out.usec = *secs * 1000000 + micro;
        t.remove_prefix(1);
        while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
        rest = t;
      }
    }
  }
  out.message = rest;
  return out;
}

std::optional<KernelXid> parse_xid_message(std::string_view message) {
  size_t at = message.find("NVRM: Xid (");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view whole = message.substr(at);
  std::string_view s = whole.substr(11);
  size_t close = s.find("): ");
  if (close == std::string_view::npos || close > 64) return std::nullopt;
  std::string_view pci = s.substr(0, close);
  if (starts_with(pci, "PCI:")) pci.remove_prefix(4);
  s.remove_prefix(close + 3);
  auto xid = read_number(s);
  if (!xid || *xid > 0xFFFFFFFFull) return std::nullopt;
  KernelXid x;
  x.pci = std::string(pci);
  x.address = xid_address(pci);
  x.xid = static_cast<uint32_t>(*xid);
  x.message = std::string(whole.substr(0, kMaxKernelLineBytes));
  if (starts_with(s, ",")) s.remove_prefix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (starts_with(s, "pid=")) {
    s.remove_prefix(4);
    std::string_view v = take_value(s);
    std::string_view digits = v;
    auto pid = read_number(digits);
    if (pid && digits.empty() && *pid > 0 && *pid <= 0xFFFFFFFFull) x.pid = static_cast<uint32_t>(*pid);
    if (starts_with(s, "name=")) {
      s.remove_prefix(5);
      std::string_view name = take_value(s);
      if (!unknown_value(name)) x.process_name = std::string(name.substr(0, 256));
    }
  }
  x.detail = std::string(s.substr(0, kMaxKernelLineBytes));
  return x;
}

KernelLog parse_kernel_log(std::string_view text) {
  KernelLog log;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    auto l = split_kernel_line(line);
    if (!l) continue;
    ++log.lines;
    if (l->message.find("NVRM: ") == std::string_view::npos) continue;
    if (auto x = parse_xid_message(l->message)) {
      x->seq = l->seq;
      x->usec = l->usec;
      log.xids.push_back(std::move(*x));
      if (log.xids.size() > 2 * kMaxKernelXids) {  // keep the newest, in amortised O(1)
        log.xids.erase(log.xids.begin(), log.xids.begin() + static_cast<long>(kMaxKernelXids));
      }
      continue;
    }
    // "NVRM: GPU at PCI:0000:2b:00: GPU-..."
    std::string_view m = l->message;
    size_t at = m.find("NVRM: GPU at PCI:");
    if (at == std::string_view::npos) continue;
    m.remove_prefix(at + 17);
    size_t colon = m.find(": ");
    if (colon == std::string_view::npos || colon > 32) continue;
    std::string_view uuid = m.substr(colon + 2);
    uuid = uuid.substr(0, uuid.find_first_of(" ,"));
    if (!starts_with(uuid, "GPU-") || uuid.size() > 64) continue;
    log.gpus.push_back({std::string(m.substr(0, colon)), xid_address(m.substr(0, colon)), std::string(uuid)});
    if (log.gpus.size() > 2 * kMaxKernelXids) log.gpus.erase(log.gpus.begin(), log.gpus.begin() + static_cast<long>(kMaxKernelXids));
  }
  if (log.xids.size() > kMaxKernelXids) log.xids.erase(log.xids.begin(), log.xids.end() - static_cast<long>(kMaxKernelXids));
  return log;
}

std::string kernel_uuid_of(const KernelLog& log, const KernelXid& x) {
  for (auto it = log.gpus.rbegin(); it != log.gpus.rend(); ++it)
    if ((it->address && x.address && *it->address == *x.address) || it->pci == x.pci) return it->uuid;
  return "";
}

}  // namespace gpumap
