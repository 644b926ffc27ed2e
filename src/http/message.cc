#include "http/message.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "model/ascii.h"
#include "model/error.h"
#include "model/text.h"

namespace gpumap {
namespace {

using ascii::lower;

/// Optional white space (spaces and tabs) off both ends, as RFC 9110 calls it around a field value.
std::string trim_ows(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

[[noreturn]] void protocol(const std::string& what) { throw HttpError(HttpFailure::kProtocol, what); }

/// `line`'s header (name: value) into `headers` (names in lower case; a repeated one: the last).
void add_header(const std::string& line, std::map<std::string, std::string>& headers) {
  size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0) protocol("a header line without a name: `" + line.substr(0, 40) + "`");
  headers[lower(trim_ows(line.substr(0, colon)))] = trim_ows(line.substr(colon + 1));
}

std::string mib(size_t n) { return std::to_string(n >> 20) + " MiB"; }

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

namespace {

/// `n` bytes at `p` as raw deflate ended by a sync flush: byte-aligned, no last block, so pieces
/// made one by one join into one deflate stream.  Empty for no bytes.
std::string deflate_piece(const char* p, size_t n) {
  std::string out;
  if (n == 0) return out;
  z_stream z = {};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error(kExitError, "zlib: cannot start a deflate stream");
  char buf[1 << 16];
  size_t at = 0;
  int rc = Z_OK;
  do {
    size_t take = std::min<size_t>(n - at, size_t{1} << 30);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p + at));
    z.avail_in = static_cast<uInt>(take);
    at += take;
    int flush = at == n ? Z_SYNC_FLUSH : Z_NO_FLUSH;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      rc = deflate(&z, flush);
      out.append(buf, sizeof buf - z.avail_out);
    } while (rc == Z_OK && z.avail_out == 0);
  } while (rc == Z_OK && at < n);
  deflateEnd(&z);
  if (rc != Z_OK && rc != Z_BUF_ERROR) throw Error(kExitError, "zlib: deflate failed");
  return out;
}

uint32_t crc_of(const std::string& s) {
  uLong c = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < s.size();) {  // (crc32 takes an unsigned int of bytes at a time)
    size_t take = std::min<size_t>(s.size() - at, size_t{1} << 30);
    c = crc32(c, reinterpret_cast<const Bytef*>(s.data() + at), static_cast<uInt>(take));
    at += take;
  }
  return static_cast<uint32_t>(c);
}

void put_le32(std::string& out, uint64_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// An answer's own bytes as a piece (none when empty).
void own_piece(std::vector<WirePiece>& pieces, std::string bytes) {
  if (bytes.empty()) return;
  auto own = std::make_shared<const std::string>(std::move(bytes));
  pieces.push_back({own, own->data(), own->size()});
}

}  // namespace

const std::string& SharedBody::deflated() const {
  std::call_once(once_, [this] {
    deflated_ = deflate_piece(text_.data(), text_.size());
    crc_ = crc_of(text_);
    deflated_bytes_ = deflated_.capacity();
  });
  return deflated_;
}

uint32_t SharedBody::crc() const {
  deflated();
  return crc_;
}

std::string HttpResponse::full_body() const { return body + (shared ? shared->text() : std::string()) + tail; }

std::vector<WirePiece> response_pieces(const HttpResponse& r, bool head_only, bool gzip) {
  static const std::string kNone;
  const std::string& mid = r.shared ? r.shared->text() : kNone;
  size_t plain = r.body.size() + mid.size() + r.tail.size();
  bool zipped = gzip && r.status == 200 && plain > 0;
  std::string before = r.body, after = r.tail;  // the bytes around the shared part, as sent
  size_t length = plain;
  if (zipped) {
    // One gzip member (RFC 1952): header, the deflate pieces, an empty last block, CRC-32, size.
    uLong crc = crc_of(r.body);
    if (!mid.empty()) crc = crc32_combine(crc, r.shared->crc(), static_cast<z_off_t>(mid.size()));
    crc = crc32_combine(crc, crc_of(r.tail), static_cast<z_off_t>(r.tail.size()));
    before = std::string("\x1f\x8b\x08\0\0\0\0\0\0\x03", 10) + deflate_piece(r.body.data(), r.body.size());
    after = deflate_piece(r.tail.data(), r.tail.size()) + std::string("\x03\0", 2);  // the last block, empty
    put_le32(after, crc);
    put_le32(after, plain);  // ISIZE: the size modulo 2^32
    length = before.size() + (mid.empty() ? 0 : r.shared->deflated().size()) + after.size();
  }
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + http_reason(r.status) + "\r\n";
  head += "Content-Type: " + r.content_type + "\r\n";
  if (zipped) head += "Content-Encoding: gzip\r\n";
  if (r.status == 200) head += "Vary: Accept-Encoding\r\n";
  head += "Content-Length: " + std::to_string(length) + "\r\n";
  if (r.status == 405) head += "Allow: GET, HEAD\r\n";
  for (const auto& [k, v] : r.headers) head += k + ": " + v + "\r\n";
  head += "Connection: close\r\n\r\n";
  std::vector<WirePiece> pieces;
  if (head_only) {
    own_piece(pieces, std::move(head));
    return pieces;
  }
  own_piece(pieces, head + before);
  if (!mid.empty()) {
    const std::string& bytes = zipped ? r.shared->deflated() : mid;
    if (!bytes.empty()) pieces.push_back({r.shared, bytes.data(), bytes.size()});
  }
  own_piece(pieces, std::move(after));
  return pieces;
}

std::string format_response(const HttpResponse& r, bool head_only, bool gzip) {
  if (!r.shared && (!gzip || r.status != 200 || (r.body.empty() && r.tail.empty()))) {
    // Plain and own (serve's refusals, written when it may be out of descriptors): made here,
    // without the pieces' shared pointers.
    std::string body = r.body + r.tail;
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + http_reason(r.status) + "\r\n";
    out += "Content-Type: " + r.content_type + "\r\n";
    if (r.status == 200) out += "Vary: Accept-Encoding\r\n";
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    if (r.status == 405) out += "Allow: GET, HEAD\r\n";
    for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
    out += "Connection: close\r\n\r\n";
    if (!head_only) out += body;
    return out;
  }
  std::string out;
  for (const WirePiece& p : response_pieces(r, head_only, gzip)) out.append(p.data, p.size);
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

AnswerReader::AnswerReader(size_t max_body) : max_body_(max_body) {}

size_t AnswerReader::max_framing() const { return kHttpMaxHead + max_body_ / 4; }

bool AnswerReader::feed(const char* p, size_t n, std::string& body) {
  size_t i = 0;
  while (i < n && state_ != State::kDone) {
    if (state_ == State::kBody || state_ == State::kChunkData) {  // the content: as much as there is, at once
      size_t take = std::min(n - i, remaining_);
      if (state_ == State::kBody && !sized_) take = n - i;
      body_bytes_ += take;
      if (body_bytes_ > max_body_) protocol("the answer is larger than " + mib(max_body_));
      body.append(p + i, take);
      i += take;
      if (sized_ || state_ == State::kChunkData) remaining_ -= take;
      if (remaining_ == 0 && state_ == State::kChunkData) state_ = State::kChunkEnd;
      else if (remaining_ == 0 && state_ == State::kBody && sized_) state_ = State::kDone;
      continue;
    }
    // A line (the head's, a chunk's size, a chunk's end, a trailer): byte by byte to its LF.
    char c = p[i++];
    if (++framing_ > max_framing())
      protocol(state_ == State::kTrailers ? "the answer's trailer is longer than " + std::to_string(kHttpMaxHead >> 10) + " KiB"
                                          : "the answer's framing (head, chunk lines) is longer than its limit");
    line_ += c;
    if (state_ == State::kHead) {
      if (line_.size() > kHttpMaxHead) protocol("the answer's head is longer than 64 KiB");
      if (line_.size() >= 4 && line_.compare(line_.size() - 4, 4, "\r\n\r\n") == 0) on_head();
      continue;
    }
    if (c != '\n') {
      if (line_.size() > 1024 && state_ == State::kChunkSize) protocol("a chunk size line is longer than 1 KiB");
      if (line_.size() > kHttpMaxHead) protocol("an answer's trailer line is longer than 64 KiB");
      continue;
    }
    std::string line = line_.substr(0, line_.size() - 1);
    line_.clear();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    on_line(line);
  }
  return state_ == State::kDone;
}

void AnswerReader::on_head() {
  std::string raw;
  raw.swap(line_);
  HttpAnswer r;
  size_t eol = raw.find("\r\n");
  std::string status_line = raw.substr(0, eol);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12 || status_line[8] != ' ')
    protocol("not an HTTP/1.x answer: `" + status_line.substr(0, 40) + "`");
  std::string code = status_line.substr(9, 3);
  if (!std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; })) protocol("a bad status code `" + code + "`");
  r.status = std::stoi(code);
  r.reason = status_line.size() > 13 ? status_line.substr(13) : "";
  size_t head_end = raw.size() - 4, pos = eol + 2;
  while (pos < head_end) {
    size_t e = raw.find("\r\n", pos);
    add_header(raw.substr(pos, e - pos), r.headers);
    pos = e + 2;
  }
  // An interim answer (100 Continue, 102, 103 Early Hints) is followed by the answer: skipped, its
  // bytes counted.  101 (a protocol switch gpumap never asks for) is refused.
  if (r.status / 100 == 1) {
    if (r.status == 101) protocol("the server switched protocols (HTTP 101), which gpumap never asks for");
    if (++interim_ > 16) protocol("more than 16 interim (1xx) answers before the answer");
    return;
  }
  head_ = std::move(r);
  head_done_ = true;
  auto te = head_.headers.find("transfer-encoding");
  auto cl = head_.headers.find("content-length");
  if (head_.status == 204 || head_.status == 304) {
    state_ = State::kDone;
  } else if (te != head_.headers.end() && lower(te->second) != "identity") {
    if (lower(te->second) != "chunked") protocol("an unsupported Transfer-Encoding `" + te->second + "`");
    state_ = State::kChunkSize;
  } else if (cl != head_.headers.end()) {
    const std::string& v = cl->second;
    if (v.empty() || v.size() > 15 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
      protocol("a bad Content-Length `" + v.substr(0, 32) + "`");
    remaining_ = std::stoull(v);
    if (remaining_ > max_body_) protocol("the answer is larger than " + mib(max_body_));
    sized_ = true;
    state_ = remaining_ == 0 ? State::kDone : State::kBody;
  } else {
    state_ = State::kBody;  // until the connection ends
  }
}

void AnswerReader::on_line(const std::string& line) {
  if (state_ == State::kChunkEnd) {
    if (!line.empty()) protocol("a chunk does not end with CRLF");
    state_ = State::kChunkSize;
  } else if (state_ == State::kChunkSize) {
    std::string size = trim_ows(line.substr(0, line.find(';')));  // chunk extensions are ignored
    if (size.empty() || size.size() > 15 ||
        !std::all_of(size.begin(), size.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
      protocol("a bad chunk size `" + size.substr(0, 32) + "`");
    remaining_ = std::stoull(size, nullptr, 16);
    if (remaining_ > max_body_ || body_bytes_ + remaining_ > max_body_) protocol("the answer is larger than " + mib(max_body_));
    state_ = remaining_ == 0 ? State::kTrailers : State::kChunkData;
  } else if (state_ == State::kTrailers) {
    if (line.empty()) state_ = State::kDone;
    else if ((trailer_bytes_ += line.size() + 2) > kHttpMaxHead)
      protocol("the answer's trailer is longer than " + std::to_string(kHttpMaxHead >> 10) + " KiB");
  }
}

bool AnswerReader::finish() {
  if (state_ == State::kDone) return true;
  if (state_ == State::kBody && !sized_) {
    state_ = State::kDone;
    return true;
  }
  if (!head_done_) {
    bool nothing = line_.empty() && framing_ == 0;
    protocol(nothing ? "the server closed the connection without answering" : "the connection closed inside the answer's head");
  }
  if (state_ == State::kBody)
    protocol("the connection closed after " + std::to_string(body_bytes_) + " of " + head_.headers["content-length"] + " bytes");
  if (state_ == State::kTrailers) protocol("the connection closed inside a chunked body's trailer");
  if (state_ == State::kChunkData || state_ == State::kChunkEnd) protocol("the connection closed inside a chunk");
  protocol("the connection closed inside a chunked body");
}

size_t StringSource::read(char* out, size_t n) {
  size_t k = std::min(n, text_.size() - at_);
  std::memcpy(out, text_.data() + at_, k);
  at_ += k;
  return k;
}

std::optional<HttpAnswer> parse_http_response(const std::string& raw, bool eof, size_t max_body) {
  AnswerReader reader(max_body);
  std::string body;
  bool done = reader.feed(raw.data(), raw.size(), body);
  if (!done && eof) done = reader.finish();
  if (!done) return std::nullopt;
  HttpAnswer r = reader.head();
  r.body = std::move(body);
  return r;
}

}  // namespace gpumap
