// Prometheus's HTTP query API answer (`/api/v1/query`), parsed as its bytes arrive: the samples of
// an instant vector or a scalar, or the error Prometheus gave (errorType and error).  No JSON tree
// is built: each sample is counted against a budget before it is kept (issue 56 item 1).
#pragma once
#include <atomic>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "http/message.h"

namespace gpumap {

struct PromSample {
  std::map<std::string, std::string> labels;  // the metric's labels (`__name__` among them when kept)
  double value = 0;                           // NaN, +Inf and -Inf as Prometheus writes them
  double timestamp = 0;                       // seconds since the epoch: the evaluation time
};

struct PromResult {
  std::string result_type;          // "vector" or "scalar" ("matrix" and "string" are refused)
  std::vector<PromSample> samples;  // a scalar: one sample without labels
  std::vector<std::string> warnings;
  /// The engine said the answer may lack series: a `warnings` array (Thanos's partial response: a
  /// store or shard did not answer; Prometheus's own) or VictoriaMetrics' `isPartial: true`.
  bool partial = false;
};

/// Prometheus answered `status: error` (or something that is not its answer).
class PromError : public std::exception {
 public:
  PromError(std::string error_type, std::string message)
      : error_type_(std::move(error_type)), message_(std::move(message)) {}
  /// Prometheus's errorType (`bad_data`, `timeout`, `canceled`, `execution`, `internal`,
  /// `unavailable`, `not_found`), "bad_answer" when the text is not a query answer at all, or
  /// "too_large" when it is past the answers' budget (PromBudget).
  const std::string& error_type() const { return error_type_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string error_type_, message_;
};

/// What the answers of one read (a fleet's queries, asked at once) may hold together, counted
/// before anything is kept: the samples, and their bytes as held (label text plus a fixed cost per
/// label and per sample, about what std::map and std::string take).  Past either: PromError
/// ("too_large").  Per answer, the JSON may nest kMaxDepth deep and a string or number may be
/// kMaxToken bytes; nothing else of an answer is held (docs/fleet.md, "Memory").
class PromBudget {
 public:
  static constexpr size_t kBytes = size_t{512} << 20, kSamples = 4'000'000;
  static constexpr size_t kMaxDepth = 32, kMaxToken = size_t{64} << 10;
  static constexpr size_t kSampleCost = 128, kLabelCost = 128;
  explicit PromBudget(size_t max_bytes = kBytes, size_t max_samples = kSamples)
      : max_bytes_(max_bytes), max_samples_(max_samples) {}
  /// Counts `bytes` and `samples` more (from any thread); PromError("too_large") past the budget.
  void take(size_t bytes, size_t samples);
  size_t bytes() const { return bytes_; }

 private:
  std::atomic<size_t> bytes_{0}, samples_{0};
  size_t max_bytes_, max_samples_;
};

/// Parses an `/api/v1/query` answer's body as `body` brings it, its samples counted in `budget`.
/// Throws PromError for `status: error` (its errorType and error), ("bad_answer") for a body that
/// is not JSON or not shaped as the API documents it, naming what was wrong, and ("too_large")
/// past the budget; what `body` throws (HttpError) comes out.
PromResult parse_prom_query(BodySource& body, PromBudget& budget);
/// The same from memory, with a budget of its own.
PromResult parse_prom_query(const std::string& body);

}  // namespace gpumap
