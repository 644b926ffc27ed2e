#include "prom/query_result.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "formats/json.h"

namespace gpumap {
namespace {

[[noreturn]] void bad(const std::string& what) { throw PromError("bad_answer", "not a Prometheus query answer: " + what); }

/// A sample value as the API writes it: a string ("1", "NaN", "+Inf", "-Inf", "1e-05").
double sample_value(const Json& v) {
  if (!v.is_string()) bad("a sample value is not a string");
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "+Inf" || s == "Inf") return std::numeric_limits<double>::infinity();
  if (s == "-Inf") return -std::numeric_limits<double>::infinity();
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) bad("the sample value `" + s.substr(0, 40) + "` is not a number");
  return d;
}

/// [timestamp, "value"].
void read_pair(const Json& pair, PromSample& out) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number()) bad("a sample is not [timestamp, \"value\"]");
  out.timestamp = pair[0].get<double>();
  out.value = sample_value(pair[1]);
}

}  // namespace

PromResult parse_prom_query(const std::string& body) {
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded()) bad("the body is not JSON (" + std::to_string(body.size()) + " bytes)");
  if (!j.is_object() || !j.contains("status") || !j["status"].is_string()) bad("no `status`");
  const std::string status = j["status"].get<std::string>();
  if (status == "error") {
    std::string type = j.contains("errorType") && j["errorType"].is_string() ? j["errorType"].get<std::string>() : "unknown";
    std::string msg = j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>() : "(no message)";
    throw PromError(type, msg);
  }
  if (status != "success") bad("`status` is `" + status.substr(0, 40) + "`");
  PromResult r;
  if (j.contains("warnings") && j["warnings"].is_array())
    for (const Json& w : j["warnings"])
      if (w.is_string()) r.warnings.push_back(w.get<std::string>());
  if (!j.contains("data") || !j["data"].is_object()) bad("no `data` object");
  const Json& data = j["data"];
  if (!data.contains("resultType") || !data["resultType"].is_string()) bad("no `data.resultType`");
  r.result_type = data["resultType"].get<std::string>();
  if (!data.contains("result")) bad("no `data.result`");
  const Json& result = data["result"];
  if (r.result_type == "scalar") {
    PromSample s;
    read_pair(result, s);
    r.samples.push_back(std::move(s));
    return r;
  }
  if (r.result_type != "vector") bad("the result is a " + r.result_type.substr(0, 20) + ", not an instant vector or a scalar");
  if (!result.is_array()) bad("`data.result` is not a list");
  r.samples.reserve(result.size());
  for (const Json& e : result) {
    if (!e.is_object()) bad("a vector element is not an object");
    PromSample s;
    if (e.contains("metric")) {
      const Json& m = e["metric"];
      if (!m.is_object()) bad("a `metric` is not an object");
      for (auto it = m.begin(); it != m.end(); ++it) {
        if (!it.value().is_string()) bad("the label `" + it.key().substr(0, 40) + "` is not a string");
        s.labels.emplace(it.key(), it.value().get<std::string>());
      }
    }
    if (!e.contains("value")) bad(e.contains("histogram") ? "a native histogram sample (not a gpumap series)" : "a sample without `value`");
    read_pair(e["value"], s);
    r.samples.push_back(std::move(s));
  }
  return r;
}

}  // namespace gpumap
