#include "resolve/framework_view.h"

#include <cstdint>
#include <iterator>

namespace gpumap {
namespace {

// Python's str predicates that torch's parser uses, as code-point ranges (Python 3.12, Unicode
// 15.0: generated with unicodedata; str.isdecimal, str.isdigit and not isdecimal, str.isspace).
// Every decimal range starts at a digit zero and holds whole runs of ten.
struct CodeRange {
  char32_t first, last;
};
constexpr CodeRange kPythonDecimal[] = {
    {0x30, 0x39}, {0x660, 0x669}, {0x6F0, 0x6F9}, {0x7C0, 0x7C9}, {0x966, 0x96F}, {0x9E6, 0x9EF},
    {0xA66, 0xA6F}, {0xAE6, 0xAEF}, {0xB66, 0xB6F}, {0xBE6, 0xBEF}, {0xC66, 0xC6F}, {0xCE6, 0xCEF},
    {0xD66, 0xD6F}, {0xDE6, 0xDEF}, {0xE50, 0xE59}, {0xED0, 0xED9}, {0xF20, 0xF29}, {0x1040, 0x1049},
    {0x1090, 0x1099}, {0x17E0, 0x17E9}, {0x1810, 0x1819}, {0x1946, 0x194F}, {0x19D0, 0x19D9},
    {0x1A80, 0x1A89}, {0x1A90, 0x1A99}, {0x1B50, 0x1B59}, {0x1BB0, 0x1BB9}, {0x1C40, 0x1C49},
    {0x1C50, 0x1C59}, {0xA620, 0xA629}, {0xA8D0, 0xA8D9}, {0xA900, 0xA909}, {0xA9D0, 0xA9D9},
    {0xA9F0, 0xA9F9}, {0xAA50, 0xAA59}, {0xABF0, 0xABF9}, {0xFF10, 0xFF19}, {0x104A0, 0x104A9},
    {0x10D30, 0x10D39}, {0x11066, 0x1106F}, {0x110F0, 0x110F9}, {0x11136, 0x1113F}, {0x111D0, 0x111D9},
    {0x112F0, 0x112F9}, {0x11450, 0x11459}, {0x114D0, 0x114D9}, {0x11650, 0x11659}, {0x116C0, 0x116C9},
    {0x11730, 0x11739}, {0x118E0, 0x118E9}, {0x11950, 0x11959}, {0x11C50, 0x11C59}, {0x11D50, 0x11D59},
    {0x11DA0, 0x11DA9}, {0x11F50, 0x11F59}, {0x16A60, 0x16A69}, {0x16AC0, 0x16AC9}, {0x16B50, 0x16B59},
    {0x1D7CE, 0x1D7FF}, {0x1E140, 0x1E149}, {0x1E2F0, 0x1E2F9}, {0x1E4F0, 0x1E4F9}, {0x1E950, 0x1E959},
    {0x1FBF0, 0x1FBF9},
};
constexpr CodeRange kPythonDigitOnly[] = {
    {0xB2, 0xB3}, {0xB9, 0xB9}, {0x1369, 0x1371}, {0x19DA, 0x19DA}, {0x2070, 0x2070}, {0x2074, 0x2079},
    {0x2080, 0x2089}, {0x2460, 0x2468}, {0x2474, 0x247C}, {0x2488, 0x2490}, {0x24EA, 0x24EA},
    {0x24F5, 0x24FD}, {0x24FF, 0x24FF}, {0x2776, 0x277E}, {0x2780, 0x2788}, {0x278A, 0x2792},
    {0x10A40, 0x10A43}, {0x10E60, 0x10E68}, {0x11052, 0x1105A}, {0x1F100, 0x1F10A},
};
constexpr CodeRange kPythonSpace[] = {
    {0x9, 0xD}, {0x1C, 0x20}, {0x85, 0x85}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
};

template <size_t N>
bool in(const CodeRange (&table)[N], char32_t c) {
  for (const CodeRange& r : table)
    if (c >= r.first && c <= r.last) return true;
  return false;
}

int decimal_value(char32_t c) {
  for (const CodeRange& r : kPythonDecimal)
    if (c >= r.first && c <= r.last) return static_cast<int>((c - r.first) % 10);
  return -1;
}

bool py_isdigit(char32_t c) { return in(kPythonDecimal, c) || in(kPythonDigitOnly, c); }
bool py_isspace(char32_t c) { return in(kPythonSpace, c); }

// UTF-8 as Python's os.getenv decodes it (surrogateescape): a byte that is not part of valid
// UTF-8 becomes U+DC80..U+DCFF, which is neither a digit nor a space.
std::u32string decode(const std::string& s) {
  std::u32string out;
  size_t i = 0;
  while (i < s.size()) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    char32_t c = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = len > 0 && i + len <= s.size();
    for (int k = 1; ok && k < len; ++k) {
      unsigned char cont = static_cast<unsigned char>(s[i + k]);
      if ((cont >> 6) != 2) ok = false;
      else c = (c << 6) | (cont & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8 either.
    if (ok && ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
               (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF))
      ok = false;
    if (!ok) {
      out.push_back(0xDC00 + b);
      ++i;
      continue;
    }
    out.push_back(c);
    i += len;
  }
  return out;
}

std::string encode(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) {
    if (c >= 0xDC80 && c <= 0xDCFF) out.push_back(static_cast<char>(c - 0xDC00));
    else if (c < 0x80) out.push_back(static_cast<char>(c));
    else if (c < 0x800) { out.push_back(static_cast<char>(0xC0 | (c >> 6))); out.push_back(static_cast<char>(0x80 | (c & 0x3F))); }
    else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == ',') out.emplace_back();
    else out.back().push_back(c);
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

std::string shown(const std::string& s) {
  std::string out;
  for (unsigned char c : s.substr(0, 60)) {
    if (c < 0x20 || c == 0x7F) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return "`" + out + (s.size() > 60 ? "…" : "") + "`";
}

// CPython's limit on int(str) (sys.int_info.default_max_str_digits).
constexpr size_t kPythonIntMaxDigits = 4300;

// One integer entry as torch's `_strtoul(elem.strip())` reads it.
struct TorchInt {
  enum Kind { kNone, kValue, kRaises } kind = kNone;  // kNone: -1 (no sign or digit first)
  bool negative = false;  // a minus and a value other than 0: ends the list
  std::string value;      // kValue: ASCII decimal digits, no leading zeros ("0" for zero)
  std::string raises;     // kRaises: the ValueError's text
};

TorchInt torch_strtoul(const std::string& elem_bytes) {
  std::u32string s = decode(elem_bytes);
  size_t b = 0, e = s.size();
  while (b < e && py_isspace(s[b])) ++b;
  while (e > b && py_isspace(s[e - 1])) --e;
  s = s.substr(b, e - b);
  TorchInt r;
  size_t n = 0;
  while (n < s.size() && (py_isdigit(s[n]) || (n == 0 && (s[n] == U'+' || s[n] == U'-')))) ++n;
  if (n == 0) return r;  // -1: ends the list
  std::u32string lit = s.substr(0, n);
  bool sign = lit[0] == U'+' || lit[0] == U'-';
  size_t digits = lit.size() - (sign ? 1 : 0);
  bool digit_only = false;
  for (size_t i = sign ? 1 : 0; i < lit.size(); ++i)
    if (decimal_value(lit[i]) < 0) digit_only = true;
  r.kind = TorchInt::kRaises;
  if (digits == 0 || digit_only) {
    r.raises = "ValueError: invalid literal for int() with base 10: '" + encode(lit) + "'";
    return r;
  }
  if (digits > kPythonIntMaxDigits) {
    r.raises = "ValueError: Exceeds the limit (" + std::to_string(kPythonIntMaxDigits) +
               " digits) for integer string conversion: value has " + std::to_string(digits) +
               " digits; use sys.set_int_max_str_digits() to increase the limit";
    return r;
  }
  r.kind = TorchInt::kValue;
  for (size_t i = sign ? 1 : 0; i < lit.size(); ++i) {
    char d = static_cast<char>('0' + decimal_value(lit[i]));
    if (r.value.empty() && d == '0') continue;
    r.value.push_back(d);
  }
  if (r.value.empty()) r.value = "0";
  r.negative = lit[0] == U'-' && r.value != "0";
  return r;
}

// value >= count, for a decimal string without leading zeros.
bool at_least(const std::string& value, size_t count) {
  std::string c = std::to_string(count);
  if (value.size() != c.size()) return value.size() > c.size();
  return value >= c;
}

}  // namespace

TorchView predict_torch_view(const std::vector<std::string>& nvml_uuids,
                             const std::optional<std::string>& cuda_visible_devices) {
  TorchView t;
  size_t raw_count = nvml_uuids.size();
  if (!cuda_visible_devices) {  // list(range(64)), trimmed at NVML's count
    t.device_count = static_cast<unsigned>(raw_count < 64 ? raw_count : 64);
    return t;
  }
  const std::string& var = *cuda_visible_devices;
  std::vector<std::string> entries = split_commas(var);
  for (const char* word : {"GPU-", "MIG-"}) {
    if (!starts_with(var, word)) continue;
    // parse_list_with_prefix: entries as written until one does not start with the word; an
    // entry written twice (byte for byte) empties the list.
    std::vector<std::string> kept;
    for (size_t i = 0; i < entries.size(); ++i) {
      for (const std::string& k : kept)
        if (k == entries[i]) {
          t.device_count = 0;
          t.reason = "entry " + std::to_string(i + 1) + " " + shown(entries[i]) +
                     " repeats an earlier one: torch's parser then returns no device at all";
          return t;
        }
      if (!starts_with(entries[i], word)) {
        if (i + 1 < entries.size() || !entries[i].empty())
          t.reason = "entry " + std::to_string(i + 1) + " " + shown(entries[i]) + " does not start with `" + word +
                     "`: torch's parser stops there";
        break;
      }
      kept.push_back(entries[i]);
    }
    if (std::string(word) == "MIG-") {
      t.defers_to_driver = true;
      t.reason = "the first entry starts with `MIG-`: torch skips its NVML count and asks the driver";
      return t;
    }
    // _transform_uuid_to_ordinals: each entry must be the start of exactly one NVML UUID, as
    // written (case-sensitive, dashes where NVML has them, nothing after the UUID).
    std::vector<size_t> picked;
    for (size_t i = 0; i < kept.size(); ++i) {
      std::vector<size_t> matches;
      for (size_t g = 0; g < nvml_uuids.size(); ++g)
        if (starts_with(nvml_uuids[g], kept[i])) matches.push_back(g);
      if (matches.size() != 1) {
        t.reason = "entry " + std::to_string(i + 1) + " " + shown(kept[i]) +
                   (matches.empty() ? " is not the start of any NVML UUID as written (torch compares the text: "
                                      "case, dashes and anything after the UUID count; the driver reads the hex)"
                                    : " is the start of several NVML UUIDs") +
                   ": torch stops there";
        break;
      }
      for (size_t p : picked)
        if (p == matches[0]) {
          t.device_count = 0;
          t.reason = "entry " + std::to_string(i + 1) + " " + shown(kept[i]) +
                     " names a GPU already named: torch then counts no device at all";
          return t;
        }
      picked.push_back(matches[0]);
    }
    t.device_count = static_cast<unsigned>(picked.size());
    return t;
  }
  // Integers: _strtoul(elem.strip()) per entry; a repeat empties the list, a negative (or no
  // number) ends it, `+`, `-`, digits Python's int() refuses and over 4300 digits raise.
  std::vector<std::string> values;
  for (size_t i = 0; i < entries.size(); ++i) {
    TorchInt x = torch_strtoul(entries[i]);
    if (x.kind == TorchInt::kRaises) {
      t.raises = x.raises;
      t.reason = "entry " + std::to_string(i + 1) + " " + shown(entries[i]) +
                 " makes torch's parser call int() on what Python cannot read as a number: device_count() raises";
      return t;
    }
    if (x.kind == TorchInt::kValue && !x.negative) {
      bool repeat = false;
      for (const std::string& v : values) repeat = repeat || v == x.value;
      if (repeat) {
        t.device_count = 0;
        t.reason = "entry " + std::to_string(i + 1) + " " + shown(entries[i]) +
                   " repeats an earlier index: torch's parser then returns no device at all";
        return t;
      }
      values.push_back(x.value);
      continue;
    }
    t.reason = "entry " + std::to_string(i + 1) + " " + shown(entries[i]) +
               (x.kind == TorchInt::kValue ? " is negative"
                                           : " has no number where torch looks (after white space, an optional sign)") +
               ": torch's parser stops there";
    break;
  }
  size_t count = values.size();
  for (size_t i = 0; i < values.size(); ++i)
    if (at_least(values[i], raw_count)) {
      count = i;
      t.reason = "index " + values[i] + " is not below NVML's " + std::to_string(raw_count) +
                 " GPUs: torch counts the entries before it";
      break;
    }
  t.device_count = static_cast<unsigned>(count);
  return t;
}

unsigned driver_device_count(const CudaView& driver) {
  return driver.error == CudaInitError::kNone ? static_cast<unsigned>(driver.uuids.size()) : 0;
}

std::optional<unsigned> torch_device_count(const TorchView& t, const CudaView& driver) {
  if (!t.raises.empty()) return std::nullopt;
  if (t.defers_to_driver) return driver_device_count(driver);
  return t.device_count;
}

bool torch_differs_from_driver(const TorchView& t, const CudaView& driver) {
  std::optional<unsigned> n = torch_device_count(t, driver);
  return !n || *n != driver_device_count(driver);
}

std::optional<FrameworkVersion> parse_framework_version(const std::string& text) {
  FrameworkVersion v;
  int* parts[3] = {&v.major, &v.minor, &v.patch};
  size_t i = 0;
  for (int k = 0; k < 3; ++k) {
    size_t start = i;
    long n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 6) n = n * 10 + (text[i++] - '0');
    if (i == start) {
      if (k == 0) return std::nullopt;
      break;
    }
    *parts[k] = static_cast<int>(n);
    if (i >= text.size() || text[i] != '.') break;
    ++i;
  }
  return v;
}

std::string framework_uuid_failure(const std::string& framework, const std::string& version, bool mig_entry) {
  std::optional<FrameworkVersion> v = parse_framework_version(version);
  if (!v) return "";
  if (framework == "torch" && *v < FrameworkVersion{2, 0, 0})
    return "torch " + version + " parses CUDA_VISIBLE_DEVICES itself and reads only integers, so with UUID entries "
           "torch.cuda.device_count() is 0 and the model stays on the CPU or `.to(\"cuda\")` fails (pytorch#90543; "
           "UUIDs are read from torch 2.0, pytorch#92315)";
  if (framework == "vllm" && !(FrameworkVersion{0, 20, 1} < *v))
    return "vLLM " + version + " turns each CUDA_VISIBLE_DEVICES entry into a number with int() "
           "(Platform.device_id_to_physical_device_id), so a " + std::string(mig_entry ? "MIG-" : "GPU-") +
           " UUID stops it at start with `ValueError: invalid literal for int()` (vllm#41848 on 0.20.1, #20939 on "
           "0.9.2)";
  return "";
}

}  // namespace gpumap
