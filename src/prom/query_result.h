// Prometheus's HTTP query API answer (`/api/v1/query`), parsed by a pure function: the samples of
// an instant vector or a scalar, or the error Prometheus gave (errorType and error).
#pragma once
#include <map>
#include <string>
#include <vector>

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
};

/// Prometheus answered `status: error` (or something that is not its answer).
class PromError : public std::exception {
 public:
  PromError(std::string error_type, std::string message)
      : error_type_(std::move(error_type)), message_(std::move(message)) {}
  /// Prometheus's errorType (`bad_data`, `timeout`, `canceled`, `execution`, `internal`,
  /// `unavailable`, `not_found`), or "bad_answer" when the text is not a query answer at all.
  const std::string& error_type() const { return error_type_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string error_type_, message_;
};

/// Parses the body of an `/api/v1/query` answer.  Throws PromError for `status: error`
/// (its errorType and error), and ("bad_answer") for a body that is not JSON or not shaped as the
/// API documents it, naming what was wrong.
PromResult parse_prom_query(const std::string& body);

}  // namespace gpumap
