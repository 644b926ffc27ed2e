#include "http/url.h"

#include <algorithm>
#include <cctype>

namespace gpumap {

std::string HttpUrl::shown() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return scheme + "://" + h + ":" + std::to_string(port) + path_prefix;
}

std::optional<HttpUrl> parse_http_url(const std::string& text, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<HttpUrl> {
    if (why) *why = w;
    return std::nullopt;
  };
  HttpUrl u;
  std::string rest;
  if (text.rfind("http://", 0) == 0) {
    u.scheme = "http";
    u.port = 80;
    rest = text.substr(7);
  } else if (text.rfind("https://", 0) == 0) {
    u.scheme = "https";
    u.port = 443;
    rest = text.substr(8);
  } else {
    return fail("it does not start with http:// or https://");
  }
  size_t slash = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  if (authority.find('@') != std::string::npos)
    return fail("it has a user and password in it (they would show in `ps`); put them in --http.config.file");
  if (path.find_first_of("?#") != std::string::npos) return fail("it has a query or fragment; give the server's base URL");
  for (char c : text)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return fail("it has a space or a control character");
  std::string port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return fail("its IPv6 address has no closing `]`");
    u.host = authority.substr(1, close - 1);
    std::string after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return fail("junk after its IPv6 address");
      port = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
    if (u.host.find(':') != std::string::npos) return fail("an IPv6 address needs brackets: http://[::1]:9090");
  }
  if (u.host.empty()) return fail("it names no host");
  if (authority.find(':') != std::string::npos && authority.back() == ':') return fail("its port is empty");
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return fail("its port `" + port + "` is not a number");
    u.port = std::stoi(port);
    if (u.port < 1 || u.port > 65535) return fail("its port " + port + " is not between 1 and 65535");
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  u.path_prefix = path;
  return u;
}

std::string url_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace gpumap
