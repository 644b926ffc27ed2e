// Prometheus's HTTP query API (`/api/v1/query`), the one place gpumap speaks it: the URL a person
// gives (--prometheus), the request (its target and parameters), the answer's kinds of failure as
// errors naming the URL and the fix, and the parsed result (prom/query_result.h).  session/fleet
// asks its queries here and builds no URL.  The HTTP itself is the HTTP layer's (http/client.h),
// behind its HttpTransport seam.
#pragma once
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/error.h"
#include "prom/http_client.h"
#include "prom/query_result.h"

namespace gpumap {

/// --prometheus's text as a URL: Error(kExitUsage) naming it and the fix when empty or not
/// http(s)://HOST[:PORT][/PATH].
HttpUrl prometheus_url(const std::string& text);

/// One instant query evaluated at `now` (seconds since the epoch) within `timeout_s` (sent as the
/// query's `timeout` too).  Error(kExitError) naming the URL and the fix for every way it can fail:
/// unreachable, refused, not in time (the whole answer: --timeout), TLS, not HTTP, HTTP 401/403, no
/// query API, a query error, an answer past `budget` (shared by the answers of one read).
PromResult instant_query(const HttpUrl& url, HttpTransport& http, const std::string& query, double now, double timeout_s,
                         PromBudget& budget);

/// A query and where its answer goes.
using PromAsk = std::pair<const std::string*, PromResult*>;
/// The queries of one round, each into its answer: all at once when the transport can (largest
/// first: Prometheus answers them on its cores while gpumap parses those already answered).  The
/// first failure, in the order given, is the one thrown.
void instant_queries(const HttpUrl& url, HttpTransport& http, const std::vector<PromAsk>& asks, double now,
                     double timeout_s, PromBudget& budget);

/// The same, each query's failure kept in its place (none: answered) instead of thrown.
std::vector<std::exception_ptr> instant_queries_each(const HttpUrl& url, HttpTransport& http, const std::vector<PromAsk>& asks,
                                                     double now, double timeout_s, PromBudget& budget);

/// The engine refused a query for its size: too many series or samples (Mimir's and Cortex's
/// series-per-query limit, VictoriaMetrics' -search.maxUniqueTimeseries and -search.maxQueryLen,
/// Prometheus's --query.max-samples).  Asked for fewer nodes at a time it may answer.
class PromLimitError : public Error {
 public:
  using Error::Error;
};

/// The transport to Prometheus over real sockets, with TLS and credentials from promtool's
/// --http.config.file (`http_config_file`, "" for none; prom/http_config.h).
std::unique_ptr<HttpTransport> prometheus_transport(const std::string& http_config_file);

}  // namespace gpumap
