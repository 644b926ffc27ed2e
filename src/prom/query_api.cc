#include "prom/query_api.h"

#include <cctype>
#include <cstdio>
#include <exception>
#include <optional>
#include <thread>
#include <utility>

#include "model/error.h"
#include "model/text.h"
#include "prom/http_config.h"

namespace gpumap {
namespace {

/// A refusal for the query's size, by the engines' words: Mimir's "the query exceeded the maximum
/// number of series (limit: 150000 series)", VictoriaMetrics' "cannot select more than
/// -search.maxUniqueTimeseries=300000 time series" and "too long query; ... mustn't exceed
/// -search.maxQueryLen", Prometheus's "query processing would load too many samples into memory".
bool limit_refusal(const PromError& e) {
  if (e.error_type() == "bad_answer" || e.error_type() == "too_large" || e.error_type() == "timeout" ||
      e.error_type() == "canceled")
    return false;
  std::string t = e.what();
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : {"exceeded the maximum", "exceed", "limit", "too many", "cannot select more than", "too long query"})
    if (t.find(w) != std::string::npos) return true;
  return false;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

HttpUrl prometheus_url(const std::string& text) {
  if (text.empty())
    throw Error(kExitUsage, "fleet: no Prometheus to ask", "give --prometheus http://HOST:9090 or set $GPUMAP_PROMETHEUS");
  std::string why;
  std::optional<HttpUrl> url = parse_http_url(text, &why);
  if (!url)
    throw Error(kExitUsage, "--prometheus `" + printable(text) + "`: " + why,
                "give Prometheus's base URL, e.g. --prometheus http://prometheus:9090");
  return *url;
}

namespace {

// What a transport failure means for a Prometheus query, with the fix (never returns).
[[noreturn]] void throw_transport_error(const HttpError& e, const std::string& where, double timeout_s) {
  switch (e.kind()) {
    case HttpFailure::kRefused:
      throw Error(kExitError, where + " refused the connection (nothing listens there)",
                  "is Prometheus running? check --prometheus or $GPUMAP_PROMETHEUS (its web port, 9090 by default)");
    case HttpFailure::kResolve:
      throw Error(kExitError, where + ": " + e.what(), "check the host name in --prometheus or $GPUMAP_PROMETHEUS");
    case HttpFailure::kTimeout:
      throw Error(kExitError, where + " did not answer within " + seconds_text(timeout_s) + " s: " + e.what(),
                  "check that the URL is Prometheus's and that it is up; a slow server needs a larger --timeout "
                  "(or narrow the query with --node)");
    case HttpFailure::kTls:
      throw Error(kExitError, where + ": " + e.what(),
                  "give its CA in --http.config.file (tls_config: {ca_file: FILE}); an https URL needs a server that "
                  "speaks TLS");
    case HttpFailure::kProtocol:
      if (std::string(e.what()).rfind("the request's head", 0) == 0)  // gpumap's own request: nothing was sent
        throw Error(kExitUsage, where + ": " + e.what(),
                    "shorten http_headers in --http.config.file, or the URL's path prefix");
      throw Error(kExitError, where + " did not answer as an HTTP server: " + e.what(),
                  "check the URL's scheme and port: it must be Prometheus's web address (http://HOST:9090)");
    case HttpFailure::kUnreachable: break;
  }
  throw Error(kExitError, where + " cannot be reached: " + e.what(),
              "check the address and the network between here and it");
}

// What the answer's parser refused (too large, not a query answer, over the engine's limits, the
// engine's own error), with the fix (never returns).
[[noreturn]] void throw_refusal(const PromError& e, const HttpAnswer& r, const std::string& where,
                                const std::string& query) {
  if (e.error_type() == "too_large")
    throw Error(
        kExitError, where + " answered more than gpumap takes (" + std::string(e.what()) + ")",
        "narrow the query with --node or --processes with-findings; if the fleet is that large, please report it "
        "(docs/fleet.md, \"Memory\")");
  if (e.error_type() == "bad_answer") {
    if (r.status == 404)
      throw Error(kExitError, where + " has no query API (HTTP 404 for /api/v1/query)",
                  "give Prometheus's base URL (http://HOST:9090), with its path prefix when it is behind a proxy");
    throw Error(kExitError,
                where + " answered HTTP " + std::to_string(r.status) + " with something other than a query answer (" +
                    e.what() + ")",
                "check that the URL is Prometheus's (or Thanos's, Mimir's, VictoriaMetrics') query API");
  }
  if (limit_refusal(e))
    throw PromLimitError(
        kExitError, where + " refused the query for its size (" + e.error_type() + ": " + e.what() + "): " + query,
        "narrow it with --node, or raise the engine's limit (Mimir/Cortex: max_fetched_series_per_query; "
        "VictoriaMetrics: -search.maxUniqueTimeseries, -search.maxQueryLen; Prometheus: --query.max-samples)");
  std::string hint = e.error_type() == "timeout" || e.error_type() == "execution" || e.error_type() == "unavailable"
                         ? "narrow the query with --node, or raise the server's --query.timeout / --query.max-samples"
                         : "this query is gpumap's: please report it with the message";
  throw Error(kExitError, where + " refused the query (" + e.error_type() + ": " + e.what() + "): " + query, hint);
}

}  // namespace

PromResult instant_query(const HttpUrl& url, HttpTransport& http, const std::string& query, double now, double timeout_s,
                         PromBudget& budget) {
  char when[32];
  std::snprintf(when, sizeof when, "%.3f", now);
  // A form in a POST's body (Prometheus, Thanos, Mimir, Cortex and VictoriaMetrics take it): a
  // query of any size never lengthens the request's head past a proxy's buffers.  GET only when
  // the server answers 405 or 501 to the POST.
  // nocache=1: VictoriaMetrics evaluates an instant query within -search.latencyOffset (30 s)
  // of its clock at now - 30 s unless it is set, which would show a node's last read 30 s late
  // and a node down 30 s after its failed scrape; Prometheus, Thanos and Mimir ignore it.
  std::string form = "query=" + url_encode(query) + "&time=" + when + "&timeout=" +
                     url_encode(seconds_text(timeout_s)) + "&nocache=1";  // seconds (the API takes a float)
  const std::string where = "Prometheus at " + url.shown();
  // The answer is parsed as it arrives, into samples counted in the read's budget; what the
  // parser refuses is said below, once the status is known.
  HttpAnswer r;
  PromResult res;
  std::optional<PromError> refused;
  bool get = false;
  auto consume = [&](const HttpAnswer& head, BodySource& body) {
    r = head;
    if (r.status == 401 || r.status == 403) return;       // its body is not read
    if (!get && (r.status == 405 || r.status == 501)) return;  // no POST here: asked again by GET
    try {
      res = parse_prom_query(body, budget);
    } catch (const PromError& e) {
      refused = e;
    }
  };
  try {
    http.post_form_streamed(url, "/api/v1/query", form, timeout_s, consume);
    if (r.status == 405 || r.status == 501) {
      const std::string target = "/api/v1/query?" + form;
      if (target.size() + url.path_prefix.size() + 1024 > kHttpMaxRequestHead)
        throw Error(kExitError,
                    where + " answered HTTP " + std::to_string(r.status) + " to a POST of the query, and the query (" +
                        std::to_string(form.size()) + " bytes) is too long to send in a GET's URL",
                    "let POST through to /api/v1/query (Prometheus, Thanos, Mimir and VictoriaMetrics take it; check the "
                    "proxy in front), or narrow the query with --node");
      get = true;
      res = PromResult{};
      http.get_streamed(url, target, timeout_s, consume);
    }
  } catch (const HttpError& e) {
    throw_transport_error(e, where, timeout_s);
  }
  if (r.status == 401 || r.status == 403)
    throw Error(kExitError, where + " refused the query: HTTP " + std::to_string(r.status) + " " + r.reason,
                "give credentials in --http.config.file (basic_auth with password_file, or authorization with "
                "credentials_file; docs/fleet.md), never on the command line");
  if (refused) throw_refusal(*refused, r, where, query);
  if (r.status / 100 != 2)
    throw Error(kExitError, where + " answered HTTP " + std::to_string(r.status) + " " + r.reason, "check the URL and the server's log");
  return res;
}

void instant_queries(const HttpUrl& url, HttpTransport& http, const std::vector<PromAsk>& asks, double now,
                     double timeout_s, PromBudget& budget) {
  for (const std::exception_ptr& e : instant_queries_each(url, http, asks, now, timeout_s, budget))
    if (e) std::rethrow_exception(e);
}

std::vector<std::exception_ptr> instant_queries_each(const HttpUrl& url, HttpTransport& http, const std::vector<PromAsk>& asks,
                                                     double now, double timeout_s, PromBudget& budget) {
  std::vector<std::exception_ptr> failed(asks.size());
  if (!http.concurrent()) {
    for (size_t i = 0; i < asks.size(); ++i) try {
        *asks[i].second = instant_query(url, http, *asks[i].first, now, timeout_s, budget);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    return failed;
  }
  std::vector<std::thread> threads;
  threads.reserve(asks.size());
  for (size_t i = 0; i < asks.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        *asks[i].second = instant_query(url, http, *asks[i].first, now, timeout_s, budget);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  return failed;
}


std::unique_ptr<HttpTransport> prometheus_transport(const std::string& http_config_file) {
  HttpAuth auth = http_config_file.empty() ? HttpAuth{} : load_http_config(http_config_file);
  return socket_transport(auth);
}

}  // namespace gpumap
