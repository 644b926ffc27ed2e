// Benchmark: the findings (diagnose) for CUDA_VISIBLE_DEVICES lists of 1 000 to 65 536 entries
// that trip per-entry rules, then (issue 25 point 5) the prediction and the findings for values of
// 12 500 to 100 000 characters in the long forms the differential test generates.  Prints the time
// and the time per entry or per character, which stays flat when the work is linear in the
// value's length; no assertion.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "findings/rules.h"
#include "resolve/cuda_rules.h"

using namespace gpumap;

int main() {
  Snapshot s;
  s.gpus.resize(8);
  std::vector<std::string> order;
  char uuid[64];
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    std::snprintf(uuid, sizeof uuid, "GPU-%08zx-0000-4000-8000-000000000000", i + 1);
    s.gpus[i].nvml_index = static_cast<uint32_t>(i);
    s.gpus[i].uuid = uuid;
    order.push_back(uuid);
  }
  // Prediction + findings for one value: one row, the time per `unit` (an entry, or 1000 characters).
  auto row = [&](const std::string& cvd, size_t n, const char* label, double unit) {
    Environment env = Environment::from_strings({"CUDA_VISIBLE_DEVICES=" + cvd});
    auto t0 = std::chrono::steady_clock::now();
    Mapping m;
    m.view = predict_cuda_view(order, std::nullopt, cvd);
    m.base_order = order;
    std::vector<Finding> f = diagnose({s, env, m});
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-8zu %-14s %12.1f %14.2f %10zu\n", n, label, ms, ms * 1000 * unit / static_cast<double>(n), f.size());
  };
  std::printf("%-8s %-14s %12s %14s %10s\n", "ENTRIES", "KIND", "TOTAL (ms)", "PER ENTRY (us)", "FINDINGS");
  for (const char* kind : {"gpu-case", "space-uuid", "duplicate"}) {
    for (size_t n : {1000u, 8000u, 65536u}) {
      std::string cvd;
      for (size_t i = 0; i < n; ++i) {
        std::string e = std::string(kind) == "gpu-case"     ? "gpu-0000000" + std::to_string(i % 8 + 1)
                         : std::string(kind) == "space-uuid" ? " " + order[i % 8]
                                                             : order[0];
        cvd += (i ? "," : "") + e;
      }
      row(cvd, n, kind, 1);
    }
  }
  // By characters: the long forms of tools/difftest/gen.py (long_value), each cut to n characters.
  std::printf("\n%-8s %-14s %12s %14s %10s\n", "CHARS", "FORM", "TOTAL (ms)", "PER KCHAR (us)", "FINDINGS");
  const std::string u1 = order[1];
  for (const char* form : {"spaces", "zeros", "dashes", "empties", "tail", "short-entries", "uuid-prefixes", "unicode-junk"}) {
    for (size_t n : {12500u, 25000u, 50000u, 100000u}) {
      std::string f(form), cvd;
      if (f == "spaces") cvd = std::string(n - 1, ' ') + "1";
      else if (f == "zeros") cvd = std::string(n - 1, '0') + "1";
      else if (f == "dashes") cvd = "GPU-" + u1.substr(4, 8) + std::string(n - 36, '-') + u1.substr(13);
      else if (f == "empties") cvd = "0" + std::string(n - 1, ',');
      else if (f == "tail") cvd = "1," + std::string(n - 2, 'x');
      else if (f == "unicode-junk")
        for (size_t i = 0; cvd.size() < n; ++i) cvd += i % 2 ? "\u00a0" : "\u0661,";  // NBSP, Arabic-Indic one
      else
        for (size_t i = 0; cvd.size() < n; ++i)
          cvd += (i ? "," : "") + (f == "short-entries" ? std::to_string(i % 8) : order[i % 8].substr(0, 4 + i % 33));
      cvd.resize(n, ',');
      row(cvd, n, form, 1000);
    }
  }
  return 0;
}
