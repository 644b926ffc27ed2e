#include "http/message.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "model/error.h"
#include "model/text.h"

namespace gpumap {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Optional white space (spaces and tabs) off both ends, as RFC 9110 calls it around a field value.
std::string trim_ows(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

[[noreturn]] void protocol(const std::string& what) { throw HttpError(HttpFailure::kProtocol, what); }

/// The chunked body starting at `pos`: the content when complete, std::nullopt when more is needed.
std::optional<std::string> dechunk(const std::string& raw, size_t pos, bool eof, size_t max_body) {
  std::string body;
  for (;;) {
    size_t eol = raw.find("\r\n", pos);
    if (eol == std::string::npos) {
      if (raw.size() - pos > 1024) protocol("a chunk size line is longer than 1 KiB");
      if (eof) protocol("the connection closed inside a chunked body");
      return std::nullopt;
    }
    std::string line = raw.substr(pos, eol - pos);
    line = line.substr(0, line.find(';'));  // chunk extensions are ignored
    line = trim_ows(line);
    if (line.empty() || line.size() > 15 || !std::all_of(line.begin(), line.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
      protocol("a bad chunk size `" + line.substr(0, 32) + "`");
    size_t n = std::stoull(line, nullptr, 16);
    pos = eol + 2;
    if (n == 0) {  // trailers until an empty line
      for (;;) {
        size_t e = raw.find("\r\n", pos);
        if (e == std::string::npos) {
          if (eof) protocol("the connection closed inside a chunked body's trailer");
          return std::nullopt;
        }
        if (e == pos) return body;
        pos = e + 2;
      }
    }
    if (n > max_body || body.size() + n > max_body) protocol("the answer is larger than " + std::to_string(max_body >> 20) + " MiB");
    if (raw.size() < pos + n + 2) {
      if (eof) protocol("the connection closed inside a chunk");
      return std::nullopt;
    }
    if (raw.compare(pos + n, 2, "\r\n") != 0) protocol("a chunk does not end with CRLF");
    body.append(raw, pos, n);
    pos += n + 2;
  }
}


}  // namespace

const char* http_reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

std::string format_response(const HttpResponse& r, bool head_only, bool gzip) {
  std::string body = r.body;
  bool zipped = gzip && r.status == 200 && !body.empty();
  if (zipped) body = gzip_compress(body);
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + http_reason(r.status) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\n";
  if (zipped) out += "Content-Encoding: gzip\r\n";
  if (r.status == 200) out += "Vary: Accept-Encoding\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  if (r.status == 405) out += "Allow: GET, HEAD\r\n";
  for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

HttpResponse plain_response(int status, const std::string& body) {
  HttpResponse r;
  r.status = status;
  r.body = body;
  return r;
}

ParsedHead parse_request_head(const std::string& head) {
  ParsedHead p;
  size_t eol = head.find('\n');
  std::string line = head.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  size_t a = line.find(' '), b = a == std::string::npos ? a : line.find(' ', a + 1);
  if (a == std::string::npos || b == std::string::npos || line.find(' ', b + 1) != std::string::npos) {
    p.refuse = 400;
    return p;
  }
  p.method = line.substr(0, a);
  std::string target = line.substr(a + 1, b - a - 1), version = line.substr(b + 1);
  for (char c : p.method)
    if (c < 'A' || c > 'Z') p.refuse = 400;
  for (unsigned char c : target)
    if (c <= 0x20 || c >= 0x7f) p.refuse = 400;
  if (p.method.empty() || target.empty() || target[0] != '/') p.refuse = 400;
  if (p.refuse) return p;
  if (version.rfind("HTTP/", 0) != 0) {
    p.refuse = 400;
    return p;
  }
  if (version != "HTTP/1.0" && version != "HTTP/1.1") {
    p.refuse = 505;
    return p;
  }
  if (p.method != "GET" && p.method != "HEAD") {
    p.refuse = 405;
    return p;
  }
  p.path = target.substr(0, target.find('?'));
  // The headers the server reads; the others are not looked at.
  bool seen_authorization = false;
  size_t pos = eol == std::string::npos ? head.size() : eol + 1;
  while (pos < head.size()) {
    size_t end = head.find('\n', pos);
    if (end == std::string::npos) end = head.size();
    std::string h = head.substr(pos, end - pos);
    pos = end + 1;
    size_t colon = h.find(':');
    if (colon == std::string::npos) continue;
    std::string name = lower(trim(h.substr(0, colon))), value = trim(h.substr(colon + 1));
    if (name == "authorization") {
      // Two credentials: which one counts is where proxies and servers disagree (a proxy that
      // checks the first while the server takes the last).  Refused, as Go's net/http does.
      if (seen_authorization) {
        p.refuse = 400;
        return p;
      }
      seen_authorization = true;
      p.authorization = value;
    } else if (name == "accept-encoding") {
      p.accept_gzip = p.accept_gzip || accepts_gzip(value);
    } else if (name == "x-prometheus-scrape-timeout-seconds") {
      char* stop = nullptr;
      double t = std::strtod(value.c_str(), &stop);
      if (stop && *stop == '\0' && !value.empty() && t > 0 && t < 1e6) p.scrape_timeout_s = t;
    }
  }
  return p;
}

bool accepts_gzip(const std::string& accept_encoding) {
  for (const std::string& item : split(accept_encoding, ',')) {
    size_t semi = item.find(';');
    std::string coding = lower(trim(item.substr(0, semi)));
    if (coding != "gzip" && coding != "x-gzip" && coding != "*") continue;
    double q = 1;
    if (semi != std::string::npos) {
      std::string param = lower(trim(item.substr(semi + 1)));
      if (param.rfind("q=", 0) == 0) q = std::strtod(param.c_str() + 2, nullptr);
    }
    if (q > 0) return true;
  }
  return false;
}

std::string gzip_compress(const std::string& body) {
  z_stream z = {};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error(kExitError, "zlib: cannot start a gzip stream");
  std::string out(deflateBound(&z, body.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error(kExitError, "zlib: gzip failed");
  return out;
}

std::optional<HttpAnswer> parse_http_response(const std::string& raw, bool eof, size_t max_body) {
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) {
    if (raw.size() > 64 * 1024) protocol("the answer's head is longer than 64 KiB");
    if (eof) protocol(raw.empty() ? "the server closed the connection without answering" : "the connection closed inside the answer's head");
    return std::nullopt;
  }
  HttpAnswer r;
  size_t eol = raw.find("\r\n");
  std::string status_line = raw.substr(0, eol);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12 || status_line[8] != ' ')
    protocol("not an HTTP/1.x answer: `" + status_line.substr(0, 40) + "`");
  std::string code = status_line.substr(9, 3);
  if (!std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; })) protocol("a bad status code `" + code + "`");
  r.status = std::stoi(code);
  r.reason = status_line.size() > 13 ? status_line.substr(13) : "";
  size_t pos = eol + 2;
  while (pos < head_end) {
    size_t e = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, e - pos);
    pos = e + 2;
    size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) protocol("a header line without a name: `" + line.substr(0, 40) + "`");
    r.headers[lower(trim_ows(line.substr(0, colon)))] = trim_ows(line.substr(colon + 1));
  }
  size_t body_start = head_end + 4;
  bool no_body = r.status / 100 == 1 || r.status == 204 || r.status == 304;
  auto te = r.headers.find("transfer-encoding");
  auto cl = r.headers.find("content-length");
  if (no_body) return r;
  if (te != r.headers.end() && lower(te->second) != "identity") {
    if (lower(te->second) != "chunked") protocol("an unsupported Transfer-Encoding `" + te->second + "`");
    std::optional<std::string> b = dechunk(raw, body_start, eof, max_body);
    if (!b) return std::nullopt;
    r.body = std::move(*b);
    return r;
  }
  if (cl != r.headers.end()) {
    const std::string& v = cl->second;
    if (v.empty() || v.size() > 15 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
      protocol("a bad Content-Length `" + v.substr(0, 32) + "`");
    size_t n = std::stoull(v);
    if (n > max_body) protocol("the answer is larger than " + std::to_string(max_body >> 20) + " MiB");
    if (raw.size() - body_start < n) {
      if (eof) protocol("the connection closed after " + std::to_string(raw.size() - body_start) + " of " + v + " bytes");
      return std::nullopt;
    }
    r.body = raw.substr(body_start, n);
    return r;
  }
  if (raw.size() - body_start > max_body) protocol("the answer is larger than " + std::to_string(max_body >> 20) + " MiB");
  if (!eof) return std::nullopt;
  r.body = raw.substr(body_start);
  return r;
}


}  // namespace gpumap
