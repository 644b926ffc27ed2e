// What `gpumap fleet` reads from whatever answers its Prometheus URL (issue 56): an HTTP/1.x answer
// (http/message.h's AnswerReader: head, interim answers, chunking, trailers, limits) and the query
// API's body parsed as it arrives (prom/query_result.h, into samples within a budget).  The first
// byte cuts the input into pieces of 1-256 bytes, as a connection might.  Properties: only
// HttpError and PromError are thrown; the body de-chunked piece by piece is the one read whole;
// the samples kept are within the budget; an answer parsed twice is the same answer.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "http/message.h"
#include "prom/query_result.h"

namespace {

/// The body as pieces of `step` bytes.
class Pieces : public gpumap::BodySource {
 public:
  Pieces(const std::string& text, size_t step) : text_(text), step_(step) {}
  size_t read(char* out, size_t n) override {
    size_t k = std::min({n, step_, text_.size() - at_});
    std::copy(text_.data() + at_, text_.data() + at_ + k, out);
    at_ += k;
    return k;
  }

 private:
  const std::string& text_;
  size_t step_, at_ = 0;
};

std::string samples_text(const gpumap::PromResult& r) {
  std::string out = r.result_type + "\n";
  for (const gpumap::PromSample& s : r.samples) {
    for (const auto& [k, v] : s.labels) out += k + "=" + v + ",";
    out += std::to_string(s.value) + "@" + std::to_string(s.timestamp) + "\n";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t step = 1 + data[0];
  const std::string raw(reinterpret_cast<const char*>(data) + 1, size - 1);
  // The answer, in pieces and whole.
  std::string whole_body, body;
  bool whole_ok = false;
  try {
    std::optional<gpumap::HttpAnswer> whole = gpumap::parse_http_response(raw, true, 1 << 20);
    whole_ok = whole.has_value();
    if (whole) whole_body = whole->body;
  } catch (const gpumap::HttpError&) {
  }
  bool done = false;
  try {
    gpumap::AnswerReader reader(1 << 20);
    for (size_t at = 0; at < raw.size() && !done; at += step)
      done = reader.feed(raw.data() + at, std::min(step, raw.size() - at), body);
    if (!done) done = reader.finish();
  } catch (const gpumap::HttpError&) {
    done = false;
  }
  if (done != whole_ok || (done && body != whole_body)) std::abort();
  // The body (or, when the answer is malformed, the raw bytes) as a query answer, in pieces.
  const std::string& text = done ? body : raw;
  gpumap::PromBudget budget(1 << 16, 64);
  std::string first;
  try {
    Pieces p(text, step);
    gpumap::PromResult r = gpumap::parse_prom_query(p, budget);
    if (budget.bytes() > (1 << 16) || r.samples.size() > 64) std::abort();
    first = samples_text(r);
  } catch (const gpumap::PromError&) {
    return 0;
  }
  gpumap::PromBudget again_budget(1 << 16, 64);
  Pieces whole(text, text.size() + 1);
  if (samples_text(gpumap::parse_prom_query(whole, again_budget)) != first) std::abort();
  return 0;
}
