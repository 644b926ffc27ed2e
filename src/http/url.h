// The URL of an HTTP server as a person gives it (--prometheus), and percent-encoding.  Pure.
#pragma once
#include <optional>
#include <string>

namespace gpumap {

/// `http://host:port/prefix` as given to --prometheus.
struct HttpUrl {
  std::string scheme;       // "http" or "https"
  std::string host;         // a name, an IPv4 address, or an IPv6 address without its brackets
  int port = 0;             // 80 / 443 unless given
  std::string path_prefix;  // "" or "/prometheus" (a Prometheus behind a reverse proxy); no trailing '/'
  /// The URL as it is shown in messages (scheme://host:port/prefix).
  std::string shown() const;
};

/// Parses `text`; std::nullopt with `why` set for anything but http(s)://HOST[:PORT][/PATH] (user
/// information in the URL is refused: a password on the command line is what --http.config.file avoids).
std::optional<HttpUrl> parse_http_url(const std::string& text, std::string* why);

/// Percent-encodes `s` for a query string's value (RFC 3986's unreserved characters kept).
std::string url_encode(const std::string& s);

}  // namespace gpumap
