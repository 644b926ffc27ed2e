#include "prom/query_result.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <istream>
#include <limits>
#include <optional>
#include <streambuf>

#include "formats/json.h"

namespace gpumap {
namespace {

[[noreturn]] void bad(const std::string& what) { throw PromError("bad_answer", "not a Prometheus query answer: " + what); }
[[noreturn]] void too_large(const std::string& what) {
  throw PromError("too_large", "the answer is larger than gpumap takes: " + what);
}

/// A sample value as the API writes it: a string ("1", "NaN", "+Inf", "-Inf", "1e-05").
std::optional<double> number_of(const std::string& s) {
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "+Inf" || s == "Inf") return std::numeric_limits<double>::infinity();
  if (s == "-Inf") return -std::numeric_limits<double>::infinity();
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) return std::nullopt;
  return d;
}

double sample_value(const std::string& s) {
  std::optional<double> v = number_of(s);
  if (!v) bad("the sample value `" + s.substr(0, 40) + "` is not a number");
  return *v;
}

/// The body as a stream buffer for the JSON reader, 64 KiB at a time.  It looks at each byte once
/// before the reader does: a string or a bare token (a number, a literal) longer than
/// PromBudget::kMaxToken is refused here, so the reader never holds one.
class SourceBuf : public std::streambuf {
 public:
  explicit SourceBuf(BodySource& body) : body_(body) {}
  size_t bytes() const { return bytes_; }

 protected:
  int_type underflow() override {
    size_t n = body_.read(buf_, sizeof buf_);
    if (n == 0) return traits_type::eof();
    bytes_ += n;
    scan(n);
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  void scan(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      char c = buf_[i];
      if (in_string_) {
        if (escaped_) escaped_ = false;
        else if (c == '\\') escaped_ = true;
        else if (c == '"') in_string_ = false, run_ = 0;
        if (in_string_ && ++run_ > PromBudget::kMaxToken)
          too_large("a string longer than " + std::to_string(PromBudget::kMaxToken >> 10) + " KiB");
      } else if (c == '"') {
        in_string_ = true;
        run_ = 0;
      } else if (c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':' || c == ' ' || c == '\n' ||
                 c == '\r' || c == '\t') {
        run_ = 0;
      } else if (++run_ > PromBudget::kMaxToken) {
        too_large("a number or word longer than " + std::to_string(PromBudget::kMaxToken >> 10) + " KiB");
      }
    }
  }
  BodySource& body_;
  char buf_[65536];
  size_t bytes_ = 0, run_ = 0;
  bool in_string_ = false, escaped_ = false;
};

/// The answer's parts as the JSON reader's events bring them (SAX), into samples: nothing of
/// the text is kept but what the answer is made of, each sample counted in the budget before it is
/// kept.  What is wrong is remembered and said at the end in the order the API's fields are
/// checked (a `status: error` first), or at once when the answer is known to be a success whose
/// result is wrong (a hostile `[],[],...` is not read to its end).
class Reader {
 public:
  explicit Reader(PromBudget& budget) : budget_(budget) {}

  // The roles of a container, by where it is.
  enum class Role { kRoot, kData, kResult, kSample, kMetric, kPair, kWarnings, kSkip };
  struct Frame {
    Role role;
    std::string key;   // an object's last key
    size_t index = 0;  // an array's elements so far
  };

  bool null() { return scalar(std::nullopt, false); }
  bool boolean(bool b) {
    // VictoriaMetrics' cluster: `"isPartial": true` when a storage node did not answer.
    if (b && stack_.size() == 1 && stack_.back().role == Role::kRoot && stack_.back().key == "isPartial") is_partial_ = true;
    return scalar(std::nullopt, false);
  }
  bool number_integer(Json::number_integer_t v) { return scalar(std::nullopt, true, static_cast<double>(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return scalar(std::nullopt, true, static_cast<double>(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return scalar(std::nullopt, true, v); }
  bool string(Json::string_t& s) { return scalar(std::move(s), false); }
  bool binary(Json::binary_t&) { return scalar(std::nullopt, false); }
  bool key(Json::string_t& k) {
    stack_.back().key = std::move(k);
    return true;
  }
  bool start_object(size_t) { return open(true); }
  bool end_object() { return close(); }
  bool start_array(size_t) { return open(false); }
  bool end_array() { return close(); }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) {
    not_json_ = true;
    return false;
  }

  PromResult finish(size_t bytes);

 private:
  // Where the next value goes: its parent's role and its key (or index).
  Role parent() const { return stack_.empty() ? Role::kSkip : stack_.back().role; }
  const std::string& at_key() const { return stack_.back().key; }

  bool open(bool object) {
    if (stack_.size() >= PromBudget::kMaxDepth)
      too_large("JSON nested deeper than " + std::to_string(PromBudget::kMaxDepth));
    Role role = Role::kSkip;
    if (stack_.empty()) {
      root_object_ = object;
    } else {
      Frame& p = stack_.back();
      if (p.role == Role::kRoot && object && p.key == "data") {
        role = Role::kData, has_data_ = true;
      } else if (p.role == Role::kRoot && !object && p.key == "warnings") {
        role = Role::kWarnings;
      } else if (p.role == Role::kData && p.key == "result") {
        has_result_ = true, result_list_ = !object;
        role = object ? Role::kSkip : Role::kResult;
        if (object) scalar_problem("a sample is not [timestamp, \"value\"]");
      } else if (p.role == Role::kResult) {
        ++p.index;
        scalar_problem("a sample is not [timestamp, \"value\"]");
        if (object) {
          role = Role::kSample, sample_ = PromSample{};
          has_value_ = has_histogram_ = sample_bad_ = false;
          budget_.take(PromBudget::kSampleCost, 1);  // counted before it is read
        } else {
          vector_problem("a vector element is not an object");
        }
      } else if (p.role == Role::kSample && p.key == "metric") {
        if (object) role = Role::kMetric;
        else sample_problem("a `metric` is not an object");
      } else if (p.role == Role::kSample && p.key == "value") {
        has_value_ = true;
        if (object) sample_problem("a sample is not [timestamp, \"value\"]");
        else role = Role::kPair, pair_ts_ = pair_string_ = false;
      } else if (p.role == Role::kSample && p.key == "histogram") {
        has_histogram_ = true;
      } else if (p.role == Role::kPair) {
        ++p.index;  // a container is neither a timestamp nor a value
      } else if (p.role == Role::kData && p.key == "resultType") {
        result_type_.reset();
      }
    }
    if (stack_.empty()) role = object ? Role::kRoot : Role::kSkip;
    stack_.push_back({role, "", 0});
    return true;
  }

  bool close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.role == Role::kPair) {  // [timestamp, "value"], checked as the API's fields are
      if (f.index != 2 || !pair_ts_) sample_problem("a sample is not [timestamp, \"value\"]");
      else if (!pair_string_) sample_problem("a sample value is not a string");
      else if (std::optional<double> v = number_of(pair_value_)) sample_.value = *v;
      else sample_problem("the sample value `" + pair_value_.substr(0, 40) + "` is not a number");
    }
    if (f.role == Role::kSample) {
      if (!has_value_) sample_problem(has_histogram_ ? "a native histogram sample (not a gpumap series)" : "a sample without `value`");
      if (!sample_bad_) samples_.push_back(std::move(sample_));
    }
    return true;
  }

  bool scalar(std::optional<std::string> s, bool number, double v = 0) {
    if (stack_.empty()) {
      root_object_ = false;
      return true;
    }
    Frame& p = stack_.back();
    switch (p.role) {
      case Role::kRoot:
        if (p.key == "status") status_ = s;
        else if (p.key == "errorType") error_type_ = s;
        else if (p.key == "error") error_ = s;
        break;
      case Role::kData:
        if (p.key == "resultType") {
          result_type_ = s;
          if (s && status_ == "success" && *s != "vector" && *s != "scalar")
            bad("the result is a " + s->substr(0, 20) + ", not an instant vector or a scalar");
        } else if (p.key == "result") {
          has_result_ = true, result_list_ = false;
          scalar_problem("a sample is not [timestamp, \"value\"]");
        }
        break;
      case Role::kResult:  // a scalar's [timestamp, "value"], or not a vector's element
        vector_problem("a vector element is not an object");
        if (p.index == 0 && number) scalar_ts_ = v;
        else if (p.index == 1 && s) scalar_value_ = *s;
        else if (p.index == 1) scalar_problem("a sample value is not a string");
        else scalar_problem("a sample is not [timestamp, \"value\"]");
        ++p.index;
        break;
      case Role::kMetric:
        if (!s) {
          sample_problem("the label `" + p.key.substr(0, 40) + "` is not a string");
        } else {
          budget_.take(PromBudget::kLabelCost + p.key.size() + s->size(), 0);
          sample_.labels.emplace(p.key, std::move(*s));
        }
        break;
      case Role::kPair:
        if (p.index == 0 && number) sample_.timestamp = v, pair_ts_ = true;
        else if (p.index == 1 && s) pair_value_ = std::move(*s), pair_string_ = true;
        ++p.index;
        break;
      case Role::kWarnings:
        if (s) {
          budget_.take(PromBudget::kLabelCost + s->size(), 0);
          warnings_.push_back(std::move(*s));
        }
        break;
      case Role::kSample:
        if (p.key == "metric") sample_problem("a `metric` is not an object");
        else if (p.key == "value") has_value_ = true, sample_problem("a sample is not [timestamp, \"value\"]");
        break;
      case Role::kSkip: break;
    }
    return true;
  }

  // A problem of the result read as a vector: said at once when the answer is a vector's success.
  void vector_problem(const std::string& what) {
    if (!vector_problem_) vector_problem_ = what;
    if (status_ == "success" && result_type_ == "vector") bad(what);
  }
  void sample_problem(const std::string& what) {
    sample_bad_ = true;
    vector_problem(what);
  }
  void scalar_problem(const std::string& what) {
    if (!scalar_problem_) scalar_problem_ = what;
  }

  PromBudget& budget_;
  std::vector<Frame> stack_;
  bool not_json_ = false, root_object_ = false, has_data_ = false, has_result_ = false, result_list_ = false;
  std::optional<std::string> status_, error_type_, error_, result_type_, vector_problem_, scalar_problem_;
  std::vector<std::string> warnings_;
  bool is_partial_ = false;
  std::vector<PromSample> samples_;
  PromSample sample_;
  bool has_value_ = false, has_histogram_ = false, sample_bad_ = false, pair_ts_ = false, pair_string_ = false;
  std::string pair_value_;
  std::optional<double> scalar_ts_;
  std::optional<std::string> scalar_value_;
};

// The checks of the whole answer, in the order the API's fields are read.
PromResult Reader::finish(size_t bytes) {
  if (not_json_) bad("the body is not JSON (" + std::to_string(bytes) + " bytes)");
  if (!root_object_ || !status_) bad("no `status`");
  if (*status_ == "error") throw PromError(error_type_.value_or("unknown"), error_.value_or("(no message)"));
  if (*status_ != "success") bad("`status` is `" + status_->substr(0, 40) + "`");
  PromResult r;
  r.warnings = std::move(warnings_);
  r.partial = is_partial_ || !r.warnings.empty();
  if (is_partial_) r.warnings.push_back("the answer is partial (isPartial: a storage node did not answer)");
  if (!has_data_) bad("no `data` object");
  if (!result_type_) bad("no `data.resultType`");
  if (!has_result_) bad("no `data.result`");
  r.result_type = *result_type_;
  if (r.result_type == "scalar") {
    if (scalar_problem_) bad(*scalar_problem_);
    if (!scalar_ts_ || !scalar_value_) bad("a sample is not [timestamp, \"value\"]");
    PromSample s;
    s.timestamp = *scalar_ts_;
    s.value = sample_value(*scalar_value_);
    budget_.take(PromBudget::kSampleCost, 1);
    r.samples.push_back(std::move(s));
    return r;
  }
  if (r.result_type != "vector") bad("the result is a " + r.result_type.substr(0, 20) + ", not an instant vector or a scalar");
  if (!result_list_) bad("`data.result` is not a list");
  if (vector_problem_) bad(*vector_problem_);
  r.samples = std::move(samples_);
  return r;
}

}  // namespace

void PromBudget::take(size_t bytes, size_t samples) {
  size_t b = bytes_.fetch_add(bytes) + bytes, s = samples_.fetch_add(samples) + samples;
  if (b > max_bytes_)
    too_large("its samples would take more than " + std::to_string(max_bytes_ >> 20) + " MiB (with the other answers of this read)");
  if (s > max_samples_) too_large("more than " + std::to_string(max_samples_) + " samples (with the other answers of this read)");
}

PromResult parse_prom_query(BodySource& body, PromBudget& budget) {
  SourceBuf buf(body);
  std::istream in(&buf);
  Reader reader(budget);
  Json::sax_parse(in, &reader);
  return reader.finish(buf.bytes());
}

PromResult parse_prom_query(const std::string& body) {
  StringSource source(body);
  PromBudget budget;
  return parse_prom_query(source, budget);
}

}  // namespace gpumap
