#include "prom/query_api.h"

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

PromResult instant_query(const HttpUrl& url, HttpTransport& http, const std::string& query, double now, double timeout_s,
                         PromBudget& budget) {
  char when[32];
  std::snprintf(when, sizeof when, "%.3f", now);
  std::string target = "/api/v1/query?query=" + url_encode(query) + "&time=" + when + "&timeout=" +
                       url_encode(seconds_text(timeout_s));  // seconds (the API takes a float)
  const std::string where = "Prometheus at " + url.shown();
  // The answer is parsed as it arrives, into samples counted in the read's budget; what the
  // parser refuses is said below, once the status is known.
  HttpAnswer r;
  PromResult res;
  std::optional<PromError> refused;
  try {
    http.get_streamed(url, target, timeout_s, [&](const HttpAnswer& head, BodySource& body) {
      r = head;
      if (r.status == 401 || r.status == 403) return;  // its body is not read
      try {
        res = parse_prom_query(body, budget);
      } catch (const PromError& e) {
        refused = e;
      }
    });
  } catch (const HttpError& e) {
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
                    "give its CA in --http.config.file (tls_config: {ca_file: FILE}); an https URL needs a server that speaks TLS");
      case HttpFailure::kProtocol:
        throw Error(kExitError, where + " did not answer as an HTTP server: " + e.what(),
                    "check the URL's scheme and port: it must be Prometheus's web address (http://HOST:9090)");
      case HttpFailure::kUnreachable:
        break;
    }
    throw Error(kExitError, where + " cannot be reached: " + e.what(), "check the address and the network between here and it");
  }
  if (r.status == 401 || r.status == 403)
    throw Error(kExitError, where + " refused the query: HTTP " + std::to_string(r.status) + " " + r.reason,
                "give credentials in --http.config.file (basic_auth with password_file, or authorization with "
                "credentials_file; docs/fleet.md), never on the command line");
  if (refused) {
    const PromError& e = *refused;
    if (e.error_type() == "too_large")
      throw Error(kExitError, where + " answered more than gpumap takes (" + std::string(e.what()) + ")",
                  "narrow the query with --node or --processes with-findings; if the fleet is that large, please report it "
                  "(docs/fleet.md, \"Memory\")");
    if (e.error_type() == "bad_answer") {
      if (r.status == 404)
        throw Error(kExitError, where + " has no query API (HTTP 404 for /api/v1/query)",
                    "give Prometheus's base URL (http://HOST:9090), with its path prefix when it is behind a proxy");
      throw Error(kExitError, where + " answered HTTP " + std::to_string(r.status) + " with something other than a query answer (" +
                                  e.what() + ")",
                  "check that the URL is Prometheus's (or Thanos's, Mimir's, VictoriaMetrics') query API");
    }
    std::string hint = e.error_type() == "timeout" || e.error_type() == "execution" || e.error_type() == "unavailable"
                           ? "narrow the query with --node, or raise the server's --query.timeout / --query.max-samples"
                           : "this query is gpumap's: please report it with the message";
    throw Error(kExitError, where + " refused the query (" + e.error_type() + ": " + e.what() + "): " + query, hint);
  }
  if (r.status / 100 != 2)
    throw Error(kExitError, where + " answered HTTP " + std::to_string(r.status) + " " + r.reason, "check the URL and the server's log");
  return res;
}

void instant_queries(const HttpUrl& url, HttpTransport& http, const std::vector<PromAsk>& asks, double now,
                     double timeout_s, PromBudget& budget) {
  if (!http.concurrent()) {
    for (auto [query, into] : asks) *into = instant_query(url, http, *query, now, timeout_s, budget);
    return;
  }
  std::vector<std::exception_ptr> failed(asks.size());
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
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}


std::unique_ptr<HttpTransport> prometheus_transport(const std::string& http_config_file) {
  HttpAuth auth = http_config_file.empty() ? HttpAuth{} : load_http_config(http_config_file);
  return socket_transport(auth);
}

}  // namespace gpumap
