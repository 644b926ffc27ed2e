#include "session/verify.h"

#include "findings/fix_line.h"
#include "model/error.h"
#include "model/text.h"
#include "model/uuid.h"
#include "resolve/base_order.h"
#include "resolve/cuda_rules.h"
#include "resolve/gpu_selector.h"
#include "session/which.h"

namespace gpumap {

std::string expected_uuid(const Snapshot& s, const std::string& spec) { return select_device(s, spec); }


std::string cvd_uuid_form(const Snapshot& s, const std::vector<std::string>& uuids) {
  return join(cuda_targets(s, uuids), ",");
}

VerifyAnswer verify_gpus(Session& session, const Environment& env, const std::vector<std::string>& specs, bool prefix,
                         bool probe) {
  std::vector<std::string> expected = expected_uuids(session.snapshot(), specs);
  return verify_mapping(session.snapshot(), session.mapping(env, probe), std::move(expected), prefix);
}

std::vector<std::string> expected_uuids(const Snapshot& s, const std::vector<std::string>& specs) {
  std::vector<std::string> expected;
  for (const std::string& spec : specs)
    for (const std::string& piece : split_gpu_specs(spec)) expected.push_back(expected_uuid(s, piece));
  if (expected.empty()) throw Error(kExitUsage, "no GPU is expected (the list is empty)", "name at least one GPU, e.g. 0");
  require_distinct(expected);  // a repeated GPU makes cuInit fail: no CUDA view can match it
  return expected;
}

namespace {

// Whether `got` is what was expected (only its first n with `prefix`).
bool gives_expected(const std::vector<std::string>& got, const std::vector<std::string>& expected, bool prefix) {
  if (got.size() < expected.size() || (!prefix && got.size() != expected.size())) return false;
  for (size_t i = 0; i < expected.size(); ++i)
    if (!same_uuid_hex(got[i], expected[i])) return false;
  return true;
}

// The differences in one short line, each said once (the message of a refusal; `differences` keeps
// every one with its UUIDs): the first GPU that differs, the other differences counted, and the
// GPUs visible past the expected ones as one range.
std::string summary(const Snapshot& s, const VerifyAnswer& v, bool prefix) {
  const std::vector<std::string>& got = v.mapping.view.uuids;
  if (v.mapping.view.error != CudaInitError::kNone) return v.differences.front();
  std::vector<std::string> parts;
  size_t differ = 0;
  for (size_t i = 0; i < v.expected.size(); ++i) {
    if (i < got.size() && same_uuid_hex(got[i], v.expected[i])) continue;
    if (differ++ > 0) continue;
    std::string n = "cuda:" + std::to_string(i);
    parts.push_back(i >= got.size() ? n + " does not exist; expected " + s.describe(v.expected[i])
                                    : n + " is " + s.describe(got[i]) + "; expected " + s.describe(v.expected[i]));
  }
  if (differ > 1) parts.back() += " (and " + std::to_string(differ - 1) + " more)";
  if (!prefix && got.size() > v.expected.size()) {
    size_t first = v.expected.size(), last = got.size() - 1;
    parts.push_back((first == last ? "cuda:" + std::to_string(first) + " is visible"
                                   : "cuda:" + std::to_string(first) + " to cuda:" + std::to_string(last) + " are visible") +
                    " but not expected (allow more visible GPUs with the prefix option)");
  }
  return join(parts, "; ");
}

}  // namespace

VerifyAnswer verify_mapping(const Snapshot& s, Mapping mapping, std::vector<std::string> expected, bool prefix) {
  VerifyAnswer v;
  v.snapshot = &s;
  v.prefix = prefix;
  v.expected = std::move(expected);
  v.mapping = std::move(mapping);
  const std::vector<std::string>& got = v.mapping.view.uuids;
  int code = kExitOk;
  if (v.mapping.view.error != CudaInitError::kNone) {
    code = kExitCudaWouldFail;
    v.differences.push_back(std::string("cuInit would fail with ") + cuda_error_name(v.mapping.view.error) + ": " +
                            v.mapping.view.error_reason);
  } else {
    for (size_t i = 0; i < v.expected.size(); ++i) {
      std::string n = "cuda:" + std::to_string(i);
      if (i >= got.size()) v.differences.push_back(n + " does not exist; expected " + s.describe_with_uuid(v.expected[i]));
      else if (!same_uuid_hex(got[i], v.expected[i]))
        v.differences.push_back(n + " is " + s.describe_with_uuid(got[i]) + "; expected " + s.describe_with_uuid(v.expected[i]));
    }
    if (!prefix)
      for (size_t i = v.expected.size(); i < got.size(); ++i)
        v.differences.push_back("cuda:" + std::to_string(i) + " is " + s.describe_with_uuid(got[i]) +
                                ", not expected (allow more visible GPUs with the prefix option)");
    code = v.differences.empty() ? kExitOk : kExitMismatch;
  }
  if (code == kExitOk) return v;
  std::string cvd = cvd_uuid_form(s, v.expected);
  if (v.mapping.view.order.order == DeviceOrder::kInvalid) {
    // No CUDA_VISIBLE_DEVICES helps while the order is invalid; with PCI_BUS_ID the list as written may.
    v.fix.push_back({"CUDA_DEVICE_ORDER", "PCI_BUS_ID"});
    std::optional<std::string> list;
    if (v.mapping.view.visible_set) {
      std::vector<std::string> raw;
      for (const EntryDecision& d : v.mapping.view.entries) raw.push_back(d.entry.raw);
      list = join(raw, ",");
    }
    CudaView fixed = predict_cuda_view(pci_order(s), "PCI_BUS_ID", list);
    if (fixed.error == CudaInitError::kNone && gives_expected(fixed.uuids, v.expected, prefix)) cvd.clear();
  }
  if (!cvd.empty()) v.fix.push_back({"CUDA_VISIBLE_DEVICES", cvd});
  std::string what = code == kExitCudaWouldFail ? "CUDA would not initialise: " : "the visible GPUs are not the expected ones: ";
  v.code = code;
  v.refusal = Refusal{code, what + summary(s, v, prefix),
                      "set " + assignments_line(v.fix) + " before CUDA starts (or run under `gpumap run`)", ""};
  return v;
}

}  // namespace gpumap
