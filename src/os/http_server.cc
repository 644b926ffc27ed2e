#include "os/http_server.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <set>
#include <thread>

#include "model/error.h"
#include "model/text.h"

namespace gpumap {

struct TlsContext {
  SSL_CTX* ctx = nullptr;
  ~TlsContext() {
    if (ctx) SSL_CTX_free(ctx);
  }
};

namespace {

using Clock = std::chrono::steady_clock;

const char* reason(int status) {
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
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
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

HttpResponse plain(int status, const std::string& body) {
  HttpResponse r;
  r.status = status;
  r.body = body;
  return r;
}

struct Client {
  int fd = -1;
  SSL* ssl = nullptr;
  std::string peer;      // its address, for the per-peer limit
  std::string in, out;
  size_t sent = 0;
  ConnState state = ConnState::kConnected;     // what it means: state_row(state)
  bool want_write = false, want_read = false;  // TLS: what the last call waits for
  bool gzip = false;
  std::string authorization;  // its Authorization header, while kAuthWait
  size_t poll_at = SIZE_MAX;  // its entry in this round's poll list (SIZE_MAX: accepted this round)
  HttpRequest req;
  Clock::time_point started, deadline;  // deadline: the one its state's row names
  Clock::time_point progressed;  // while writing: when the client last took a byte of the answer
};

// An answer none of whose bytes the client took for this long is stuck behind a full window: its
// connection is the first answer closed to make room (a scraper reading takes bytes every round trip).
constexpr double kStalledS = 1.0;
// A new connection is not closed to enforce a limit before this age: a scraper's request arrives
// within it and is then being answered, never closed for room.
constexpr double kGraceS = 0.1;

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string peer_of(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (ss.ss_family == AF_INET) inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof buf);
  else if (ss.ss_family == AF_INET6) inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, buf, sizeof buf);
  std::string p = buf;
  if (p.rfind("::ffff:", 0) == 0) p = p.substr(7);  // one IPv4 client is one peer, however it arrives
  return p;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<std::string> base64_decode(const std::string& in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad || (v[k] = val(c)) < 0) {
        return std::nullopt;
      }
    }
    uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

std::string ssl_errors() {
  std::string all;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!all.empty()) all += "; ";
    all += buf;
  }
  return all.empty() ? "unknown error" : all;
}

int accept_any_certificate(int, X509_STORE_CTX*) { return 1; }

}  // namespace

std::pair<std::string, uint16_t> parse_listen_address(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Error(kExitUsage, "--listen " + text + ": " + why,
                 "give HOST:PORT, e.g. --listen 127.0.0.1:9467 (loopback), --listen 0.0.0.0:9467 (every IPv4 address), "
                 "--listen [::1]:9467");
  };
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw bad("no HOST:PORT");
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.back() != ']') throw bad("an IPv6 address goes in brackets");
    host = host.substr(1, host.size() - 2);
    in6_addr a6;
    if (inet_pton(AF_INET6, host.c_str(), &a6) != 1) throw bad("`" + host + "` is not an IPv6 address");
  } else if (host != "localhost") {
    in_addr a4;
    if (inet_pton(AF_INET, host.c_str(), &a4) != 1) throw bad("`" + host + "` is not an IPv4 address (or localhost, or [IPv6])");
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535)
    throw bad("the port must be a number from 0 to 65535");
  return {host, static_cast<uint16_t>(std::stoul(port))};
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  std::string v4 = host;
  if (v4.size() > 7 && strncasecmp(v4.c_str(), "::ffff:", 7) == 0) v4 = v4.substr(7);  // IPv4-mapped
  in_addr a4;
  return inet_pton(AF_INET, v4.c_str(), &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
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

std::optional<int> activation_socket(const std::optional<std::string>& listen_pid,
                                     const std::optional<std::string>& listen_fds) {
  if (!listen_pid || !listen_fds) return std::nullopt;
  if (*listen_pid != std::to_string(getpid())) return std::nullopt;  // meant for another process
  auto bad = [](const std::string& why) {
    return Error(kExitUsage, "socket activation: " + why,
                 "give gpumap serve one ListenStream= socket (contrib/systemd/gpumap-serve.socket), or start it "
                 "without LISTEN_FDS/LISTEN_PID");
  };
  if (*listen_fds != "1") throw bad("LISTEN_FDS=" + *listen_fds + ": gpumap serve takes exactly one socket");
  const int fd = 3;  // SD_LISTEN_FDS_START
  int accepting = 0, type = 0;
  socklen_t len = sizeof accepting;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0)
    throw bad(std::string("descriptor 3 is not a socket: ") + std::strerror(errno));
  len = sizeof type;
  getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len);
  sockaddr_storage ss = {};
  len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (!accepting || type != SOCK_STREAM || (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
    throw bad("descriptor 3 is not a listening TCP socket");
  fcntl(fd, F_SETFD, FD_CLOEXEC);  // the probe children never inherit it
  return fd;
}

struct BasicAuth::State {
  struct Job {
    std::string key, password, hash;
    bool known = false;  // a user of the config (else `hash` is the dummy one and nothing matches)
  };
  std::mutex m;
  std::condition_variable cv;
  std::deque<Job> queue;
  std::set<std::string> waiting;  // keys queued or being checked
  std::set<std::string> allowed, denied;
  std::deque<std::string> allowed_order, denied_order;  // oldest first, to forget past the bounds
  bool stop = false, busy = false;
  size_t runs = 0;
  int wake_r = -1, wake_w = -1;
  Verify verify;
  ~State() {
    if (wake_r >= 0) close(wake_r);
    if (wake_w >= 0) close(wake_w);
  }
  void remember(const std::string& key, bool ok) {
    std::set<std::string>& set = ok ? allowed : denied;
    std::deque<std::string>& order = ok ? allowed_order : denied_order;
    if (!set.insert(key).second) return;
    order.push_back(key);
    if (order.size() > (ok ? kMaxAllowed : kMaxDenied)) {
      set.erase(order.front());
      order.pop_front();
    }
  }
};

namespace {

// The checking thread: one bcrypt check at a time, off the server's loop.
void check_credentials(std::shared_ptr<BasicAuth::State> st) {
  std::unique_lock<std::mutex> lock(st->m);
  for (;;) {
    st->cv.wait(lock, [&] { return st->stop || !st->queue.empty(); });
    if (st->stop) return;
    BasicAuth::State::Job job = std::move(st->queue.front());
    st->queue.pop_front();
    st->busy = true;
    lock.unlock();
    bool ok = st->verify(job.password, job.hash) && job.known;
    lock.lock();
    st->busy = false;
    ++st->runs;
    st->waiting.erase(job.key);
    st->remember(job.key, ok);
    char b = 1;
    [[maybe_unused]] ssize_t n = write(st->wake_w, &b, 1);
    st->cv.notify_all();
  }
}

// What the caches are keyed by: the user and a SHA-256 of the password (never the password).
std::string credential_key(const std::string& user, const std::string& password) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  std::string both = user + ":" + password;  // a user holds no ':'
  SHA256(reinterpret_cast<const unsigned char*>(both.data()), both.size(), digest);
  return user + ":" + std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

}  // namespace

BasicAuth::BasicAuth(std::map<std::string, std::string> users, Verify verify)
    : st_(std::make_shared<State>()), users_(std::move(users)) {
  st_->verify = verify ? std::move(verify) : Verify(password_matches);
  int p[2];
  if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) throw Error(kExitError, std::string("pipe: ") + std::strerror(errno));
  st_->wake_r = p[0];
  st_->wake_w = p[1];
  // A hash for unknown users, of the default cost: the same work as a known user's of that cost.
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", kDefaultCost, nullptr, 0, salt, sizeof salt)) {
    crypt_data data;
    std::memset(&data, 0, sizeof data);
    if (const char* h = crypt_r("gpumap: no such user", salt, &data)) dummy_hash_ = h;
  }
  std::thread(check_credentials, st_).detach();  // it holds the state; ends when told to stop
}

BasicAuth::~BasicAuth() {
  std::lock_guard<std::mutex> lock(st_->m);
  st_->stop = true;
  st_->queue.clear();
  st_->cv.notify_all();
}

int BasicAuth::wake_fd() const { return st_->wake_r; }

size_t BasicAuth::checks_run() const {
  std::lock_guard<std::mutex> lock(st_->m);
  return st_->runs;
}

BasicAuth::Verdict BasicAuth::check(const std::string& authorization) {
  if (authorization.size() < 6 || strncasecmp(authorization.c_str(), "Basic ", 6) != 0) return Verdict::kDenied;
  std::optional<std::string> pair = base64_decode(trim(authorization.substr(6)));
  if (!pair) return Verdict::kDenied;
  size_t colon = pair->find(':');
  if (colon == std::string::npos) return Verdict::kDenied;
  std::string user = pair->substr(0, colon), password = pair->substr(colon + 1);
  std::string key = credential_key(user, password);
  auto it = users_.find(user);
  std::lock_guard<std::mutex> lock(st_->m);
  if (st_->allowed.count(key)) return Verdict::kAllowed;
  if (st_->denied.count(key)) return Verdict::kDenied;
  if (st_->waiting.count(key)) return Verdict::kPending;
  if (st_->queue.size() >= kMaxQueued) return Verdict::kBusy;
  if (it == users_.end() && dummy_hash_.empty()) return Verdict::kDenied;
  st_->queue.push_back({key, password, it != users_.end() ? it->second : dummy_hash_, it != users_.end()});
  st_->waiting.insert(key);
  st_->cv.notify_all();
  return Verdict::kPending;
}

bool BasicAuth::allows(const std::string& authorization) {
  for (;;) {
    // The count of finished checks is read before the check is queued: the worker may finish it
    // before this thread waits, and a count read after that would wait for a check that never comes.
    size_t runs;
    {
      std::lock_guard<std::mutex> lock(st_->m);
      runs = st_->runs;
    }
    Verdict v = check(authorization);
    if (v != Verdict::kPending) return v == Verdict::kAllowed;
    std::unique_lock<std::mutex> lock(st_->m);
    st_->cv.wait(lock, [&] { return st_->runs != runs || st_->stop; });
  }
}

namespace {

// A PEM file's bytes as an OpenSSL memory BIO.
struct Bio {
  BIO* b;
  explicit Bio(const std::string& text) : b(BIO_new_mem_buf(text.data(), static_cast<int>(text.size()))) {
    if (!b) throw Error(kExitError, "OpenSSL: out of memory");
  }
  ~Bio() { BIO_free(b); }
  Bio(const Bio&) = delete;
  Bio& operator=(const Bio&) = delete;
};

// An encrypted key is refused, never asked for on the terminal (OpenSSL's default callback).
int no_passphrase(char*, int, int, void*) { return -1; }

// After a loop of PEM reads: whether it stopped at the end of the file (OpenSSL's "no start
// line"), not at a malformed block.  Clears the end's error.
bool pem_ended() {
  unsigned long e = ERR_peek_last_error();
  if (e == 0 || (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)) {
    ERR_clear_error();
    return true;
  }
  return false;
}

std::unique_ptr<TlsContext> make_tls(const TlsServerConfig& t) {
  auto tls = std::make_unique<TlsContext>();
  auto bad = [&](const std::string& what, const std::string& file) {
    return Error(kExitUsage, "--web.config.file: " + what + " " + file + ": " + ssl_errors(),
                 "give a PEM certificate (cert_file) and its private key (key_file) this user may read");
  };
  tls->ctx = SSL_CTX_new(TLS_server_method());
  if (!tls->ctx) throw Error(kExitError, "OpenSSL: cannot make a TLS context: " + ssl_errors());
  SSL_CTX_set_min_proto_version(tls->ctx, t.min_version);
  if (t.max_version) SSL_CTX_set_max_proto_version(tls->ctx, t.max_version);
  SSL_CTX_set_options(tls->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(tls->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Each file is opened once, checked (a regular file, at most 1 MiB: a FIFO or a device is
  // refused, never waited on) and read by read_config_file; OpenSSL parses the bytes.
  const std::string cert = read_config_file(t.cert_file, "tls_server_config.cert_file");
  {
    Bio in(cert);
    X509* leaf = PEM_read_bio_X509_AUX(in.b, nullptr, no_passphrase, nullptr);
    bool ok = leaf && SSL_CTX_use_certificate(tls->ctx, leaf) == 1;
    X509_free(leaf);
    if (!ok) throw bad("cert_file", t.cert_file);
    while (X509* ca = PEM_read_bio_X509(in.b, nullptr, no_passphrase, nullptr)) {  // the rest of the chain
      if (SSL_CTX_add0_chain_cert(tls->ctx, ca) != 1) {
        X509_free(ca);
        throw bad("cert_file", t.cert_file);
      }
    }
    if (!pem_ended()) throw bad("cert_file", t.cert_file);
  }
  {
    const std::string key_text = read_config_file(t.key_file, "tls_server_config.key_file");
    Bio in(key_text);  // (reads the string in place: it outlives the BIO)
    EVP_PKEY* key = PEM_read_bio_PrivateKey(in.b, nullptr, no_passphrase, nullptr);
    bool ok = key && SSL_CTX_use_PrivateKey(tls->ctx, key) == 1 && SSL_CTX_check_private_key(tls->ctx) == 1;
    EVP_PKEY_free(key);
    if (!ok) throw bad("key_file (unreadable, encrypted, or not the key of cert_file " + t.cert_file + ")", t.key_file);
  }
  if (!t.client_ca_file.empty()) {
    const std::string ca_text = read_config_file(t.client_ca_file, "tls_server_config.client_ca_file");
    Bio in(ca_text);
    X509_STORE* store = SSL_CTX_get_cert_store(tls->ctx);
    STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
    int count = 0;
    while (X509* ca = PEM_read_bio_X509(in.b, nullptr, no_passphrase, nullptr)) {
      bool ok = X509_STORE_add_cert(store, ca) == 1;
      if (ok && names) {
        if (X509_NAME* n = X509_NAME_dup(X509_get_subject_name(ca)); n && !sk_X509_NAME_push(names, n)) X509_NAME_free(n);
      }
      X509_free(ca);
      if (!ok) {
        sk_X509_NAME_pop_free(names, X509_NAME_free);
        throw bad("client_ca_file", t.client_ca_file);
      }
      ++count;
    }
    if (count == 0 || !pem_ended()) {
      sk_X509_NAME_pop_free(names, X509_NAME_free);
      throw bad("client_ca_file (no PEM certificate in it)", t.client_ca_file);
    }
    if (names) SSL_CTX_set_client_CA_list(tls->ctx, names);
  }
  switch (t.client_auth) {
    case ClientAuth::kNone: SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_NONE, nullptr); break;
    case ClientAuth::kRequest: SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_PEER, accept_any_certificate); break;
    case ClientAuth::kRequireAny:
      SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any_certificate);
      break;
    case ClientAuth::kVerifyIfGiven: SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_PEER, nullptr); break;
    case ClientAuth::kRequireAndVerify:
      SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  return tls;
}

}  // namespace

void HttpServer::setup(const WebConfig& web, BasicAuth::Verify verify) {
  set_nonblocking(fd_);
  sockaddr_storage ss = {};
  socklen_t len = sizeof ss;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                         : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  char buf[INET6_ADDRSTRLEN] = "";
  if (ss.ss_family == AF_INET) inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, buf, sizeof buf);
  else if (ss.ss_family == AF_INET6) inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof buf);
  host_ = buf;
  if (web.tls) tls_ = make_tls(*web.tls);
  if (!web.basic_auth_users.empty()) auth_ = std::make_unique<BasicAuth>(web.basic_auth_users, std::move(verify));
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

HttpServer::HttpServer(int listen_fd, HttpLimits limits, const WebConfig& web) : fd_(listen_fd), limits_(limits) {
  setup(web);
}

HttpServer::HttpServer(const std::string& host, uint16_t port, HttpLimits limits, const WebConfig& web,
                       BasicAuth::Verify verify)
    : limits_(limits) {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* res = nullptr;
  std::string port_text = std::to_string(port);
  std::string where = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port_text;
  if (int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &res); rc != 0)
    throw Error(kExitUsage, "--listen " + where + ": " + gai_strerror(rc), "give a numeric address or localhost");
  int err = 0;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      fd_ = fd;
      break;
    }
    err = errno;
    close(fd);
  }
  freeaddrinfo(res);
  if (fd_ < 0)
    throw Error(kExitError, "cannot listen on " + where + ": " + std::strerror(err),
                err == EADDRINUSE ? "another program uses that port: choose another with --listen HOST:PORT"
                                  : "check the address is this machine's, and that this user may use the port");
  try {
    setup(web, std::move(verify));
  } catch (...) {
    close(fd_);
    if (reserve_fd_ >= 0) close(reserve_fd_);
    throw;
  }
}

HttpServer::~HttpServer() {
  if (fd_ >= 0) close(fd_);
  if (reserve_fd_ >= 0) close(reserve_fd_);
}

// What each state of a connection means to serve's loop: one row each (ConnStateRow's fields, in
// order).  docs/metrics.md's table "A connection's states" is checked against these rows.
const std::vector<ConnStateRow>& connection_states() {
  using S = ConnState;
  using D = ConnDeadline;
  using P = OnDeadline;
  using R = RankCase;
  using H = Hangup;
  constexpr int kNever = kNeverEvicted;
  static const std::vector<ConnStateRow> rows = {
      // state          name            poll      TLS    deadline     past it                 rank rank_if when   counted asks  hang-up
      {S::kConnected,   "connected",    POLLIN,    true,  D::kRequest, P::kAnswer408AndClose, 0,     1,     R::kBytesWaiting, false, false, H::kReadEnds},
      {S::kReadingHead, "reading-head", POLLIN,    true,  D::kRequest, P::kAnswer408AndClose, 1,     1,     R::kAlways,       false, false, H::kReadEnds},
      {S::kAuthWait,    "auth-wait",    POLLRDHUP, false, D::kRequest, P::kAnswer503,         kNever, kNever, R::kAlways,      false, true,  H::kPollRdhup},
      {S::kQueued,      "queued",       POLLRDHUP, false, D::kNone,    P::kNothing,           kNever, kNever, R::kAlways,      true,  true,  H::kPollRdhup},
      {S::kWriting,     "writing",      POLLOUT,   true,  D::kWrite,   P::kClose,             3,     2,     R::kStalled,      false, false, H::kWriteFails},
  };
  return rows;
}

const ConnStateRow& state_row(ConnState s) { return connection_states()[static_cast<size_t>(s)]; }

short poll_events(ConnState s, bool tls_wants_read, bool tls_wants_write) {
  const ConnStateRow& row = state_row(s);
  if (row.tls_turns && tls_wants_read) return POLLIN;
  if (row.tls_turns && tls_wants_write) return POLLOUT;
  return row.events;
}

int eviction_rank(ConnState s, bool bytes_waiting, bool stalled) {
  const ConnStateRow& row = state_row(s);
  bool alt = (row.when == RankCase::kBytesWaiting && bytes_waiting) || (row.when == RankCase::kStalled && stalled);
  return alt ? row.rank_if : row.rank;
}

// serve's connections, and the transitions between their states as functions of their own.  One
// round of the loop (run): poll what each state's row waits for, take new connections (a burst,
// making room or pausing when short of descriptors), then step each connection through what came,
// then trim the connections past the limits.
struct HttpServer::Loop {
  using It = std::list<Client>::iterator;
  HttpServer& s;
  const Handler& handler;
  int wake_fd;
  std::list<Client> clients;
  std::map<std::string, size_t> per_peer;
  size_t requests = 0;  // clients in a state counted against max_requests
  Clock::time_point accept_paused_until;

  void run(const volatile sig_atomic_t* stop);
  // Taking connections.
  void accept_burst();
  int accept_when_short(sockaddr_storage& ss, socklen_t& len);
  void take(int cfd, const std::string& peer);
  void refuse(int cfd, const char* why);
  // A connection's round and its transitions.
  bool step(Client& c, short rev, Clock::time_point now);  // false: close it
  bool on_readable(Client& c, Clock::time_point now);
  void on_head(Client& c, const ParsedHead& p, Clock::time_point now);
  bool on_auth_verdict(Client& c, Clock::time_point now);
  void on_answer(Client& c);
  bool on_writable(Client& c, Clock::time_point now);
  bool on_deadline(Client& c);
  void admit(Client& c);
  void answer(Client& c, const HttpResponse& r);
  void enter(Client& c, ConnState next);
  ssize_t io(Client& c, bool write, char* buf, size_t n);
  // Room.
  It drop(It it);
  It victim(const std::string& peer, double min_age_s);
  bool evict_from(const std::string& peer, double min_age_s = 0);
  bool make_room(const std::string& newcomer, double min_age_s = 0);
  void trim();
};

void HttpServer::serve(const Handler& handler, const volatile sig_atomic_t* stop, int wake_fd) {
  Loop loop{*this, handler, wake_fd, {}, {}, 0, {}};
  loop.run(stop);
}

namespace {
void drain(int fd) {
  char buf[64];
  while (read(fd, buf, sizeof buf) > 0) {
  }
}
}  // namespace

void HttpServer::Loop::run(const volatile sig_atomic_t* stop) {
  while (!*stop) {
    std::vector<pollfd> fds;
    bool accepting = Clock::now() >= accept_paused_until;
    fds.push_back({accepting ? s.fd_ : -1, POLLIN, 0});
    if (wake_fd >= 0) fds.push_back({wake_fd, POLLIN, 0});
    if (s.auth_) fds.push_back({s.auth_->wake_fd(), POLLIN, 0});
    bool asking = false;
    for (Client& c : clients) {
      asking |= state_row(c.state).asks_again;
      c.poll_at = fds.size();
      fds.push_back({c.fd, poll_events(c.state, c.want_read, c.want_write), 0});
    }
    int timeout_ms = asking ? 50 : 200;  // a signal's flag is seen within 200 ms
    if (!accepting) timeout_ms = std::min(timeout_ms, 100);
    int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) throw Error(kExitError, std::string("poll: ") + std::strerror(errno));
    size_t k = 0;
    if (fds[k++].revents & POLLIN) accept_burst();
    if (wake_fd >= 0 && (fds[k++].revents & POLLIN)) drain(wake_fd);
    if (s.auth_ && (fds[k++].revents & POLLIN)) drain(s.auth_->wake_fd());  // a check finished: its clients ask below
    auto now = Clock::now();
    for (auto it = clients.begin(); it != clients.end();) {
      short rev = it->poll_at < fds.size() ? fds[it->poll_at].revents : 0;
      it = step(*it, rev, now) ? std::next(it) : drop(it);
    }
    trim();
  }
  while (!clients.empty()) drop(clients.begin());
}

void HttpServer::Loop::accept_burst() {
  for (int round = 0; round < 64; ++round) {  // a burst is taken over several turns, between reads
    sockaddr_storage ss = {};
    socklen_t len = sizeof ss;
    int cfd = accept4(s.fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (cfd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
      cfd = accept_when_short(ss, len);
      if (cfd < 0) {
        accept_paused_until = after(0.1);
        break;
      }
    }
    if (cfd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) accept_paused_until = after(0.1);
      break;
    }
    if (s.reserve_fd_ < 0) s.reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
    take(cfd, peer_of(ss));
  }
}

// Out of descriptors: make room by closing a silent connection and try once more (-1: none taken);
// else the waiting ones stay queued (a scraper among them gets the next room) and the caller pauses
// accepting (a listening socket with a queue is always readable: polling it now would spin).  When
// none of ours holds the descriptors, the first waiting one is answered 503 through the reserve
// descriptor.  (Only connections a second old: room made at once for each client that reconnects
// would be a loop of its own while the descriptors stay short.)
int HttpServer::Loop::accept_when_short(sockaddr_storage& ss, socklen_t& len) {
  if (make_room("", 1.0)) return accept4(s.fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (s.reserve_fd_ >= 0 && clients.empty()) {  // no connection of ours holds them: say so
    close(s.reserve_fd_);
    s.reserve_fd_ = -1;
    int rfd = accept4(s.fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (rfd >= 0) refuse(rfd, "gpumap serve is out of file descriptors");
    s.reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  return -1;
}

// A new connection, in state kConnected.  The limits are enforced after a grace of 0.1 s (trim),
// when a scraper's request has arrived and is being answered; twice the total is the hard bound at
// once, where the address holding the most pays (never one holding fewer than the newcomer would).
void HttpServer::Loop::take(int cfd, const std::string& peer) {
  if (clients.size() >= 2 * s.limits_.max_connections && !make_room(peer)) {
    refuse(cfd, "too many connections");
    return;
  }
  Client c;
  c.fd = cfd;
  c.peer = peer;
  c.started = Clock::now();
  c.deadline = after(s.limits_.request_timeout_s);  // ConnDeadline::kRequest
  if (s.tls_) {
    c.ssl = SSL_new(s.tls_->ctx);
    if (!c.ssl || SSL_set_fd(c.ssl, cfd) != 1) {
      if (c.ssl) SSL_free(c.ssl);
      ERR_clear_error();
      close(cfd);
      return;
    }
    SSL_set_accept_state(c.ssl);
  }
  ++per_peer[peer];
  clients.push_back(std::move(c));  // no events this round (poll_at SIZE_MAX)
}

// A connection that cannot be taken: 503 for HTTP (written once, never waited for), closed for TLS.
void HttpServer::Loop::refuse(int cfd, const char* why) {
  if (!s.tls_) {
    std::string t = format_response(plain(503, std::string(why) + "\n"), false, false);
    ssize_t ignored = send(cfd, t.data(), t.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
  }
  close(cfd);
}

// One round of one connection: the transitions its state and what poll reported allow, in the
// order a request goes through them (a head that arrives is checked, admitted, answered and its
// first bytes written in the same round), then its state's deadline.  false: close it.
bool HttpServer::Loop::step(Client& c, short rev, Clock::time_point now) {
  if (state_row(c.state).hangup == Hangup::kPollRdhup && (rev & (POLLRDHUP | POLLHUP | POLLERR)))
    return false;  // waiting for its answer or its check: a client that hung up frees its place
  if ((c.state == ConnState::kConnected || c.state == ConnState::kReadingHead) && rev && !on_readable(c, now))
    return false;
  if (c.state == ConnState::kAuthWait && !on_auth_verdict(c, now)) return false;
  if (c.state == ConnState::kQueued) on_answer(c);
  if (c.state == ConnState::kWriting && (rev || c.sent == 0) && !on_writable(c, now)) return false;
  return !(state_row(c.state).deadline != ConnDeadline::kNone && now > c.deadline && on_deadline(c));
}

// Bytes (or a TLS record, or its close) came: all there is is read (TLS may hold a whole record
// decrypted).  A complete head goes on (on_head); a head past max_request_bytes is 431.
bool HttpServer::Loop::on_readable(Client& c, Clock::time_point now) {
  enter(c, ConnState::kReadingHead);
  char buf[4096];
  for (;;) {
    ssize_t got = io(c, false, buf, sizeof buf);
    if (got == 0 || got == -2) return false;
    if (got < 0) break;
    c.in.append(buf, static_cast<size_t>(got));
    if (c.in.size() > s.limits_.max_request_bytes + 4) break;
  }
  size_t end = c.in.find("\r\n\r\n");
  if (end == std::string::npos) end = c.in.find("\n\n");
  if (end != std::string::npos && end <= s.limits_.max_request_bytes) {
    on_head(c, parse_request_head(c.in.substr(0, end)), now);
  } else if (c.in.size() > s.limits_.max_request_bytes) {
    answer(c, plain(431, "request head larger than " + std::to_string(s.limits_.max_request_bytes) + " bytes\n"));
  }
  return true;
}

// The head is in: refused (400, 405, 505), or its credentials checked (kAuthWait), or admitted.
void HttpServer::Loop::on_head(Client& c, const ParsedHead& p, Clock::time_point now) {
  c.gzip = p.accept_gzip;
  c.req = {p.method, p.path, now, p.scrape_timeout_s, p.accept_gzip};
  if (p.refuse) {
    answer(c, plain(p.refuse, std::string(reason(p.refuse)) + "\n"));
  } else if (s.auth_) {
    c.authorization = p.authorization;
    enter(c, ConnState::kAuthWait);  // decided by on_auth_verdict, from memory or by the checking thread
  } else {
    admit(c);
  }
}

// The credential check's answer, asked each round: admitted, 401, 503 (too many checks waiting),
// or still pending (503 past the state's deadline).
bool HttpServer::Loop::on_auth_verdict(Client& c, Clock::time_point now) {
  switch (s.auth_->check(c.authorization)) {
    case BasicAuth::Verdict::kAllowed: admit(c); break;
    case BasicAuth::Verdict::kDenied: {
      HttpResponse r = plain(401, "Unauthorized\n");
      r.headers.emplace_back("WWW-Authenticate", "Basic realm=\"gpumap\"");
      answer(c, r);
      break;
    }
    case BasicAuth::Verdict::kBusy:
      answer(c, plain(503, "too many credential checks at once (limit " + std::to_string(BasicAuth::kMaxQueued) + ")\n"));
      break;
    case BasicAuth::Verdict::kPending:
      if (now > c.deadline) return !on_deadline(c);
      break;
  }
  return true;
}

// A request allowed in: counted against max_requests (kQueued), or answered 503 past it.
void HttpServer::Loop::admit(Client& c) {
  if (s.limits_.max_requests && requests >= s.limits_.max_requests) {
    answer(c, plain(503, "too many requests at once (limit " + std::to_string(s.limits_.max_requests) + ")\n"));
  } else {
    enter(c, ConnState::kQueued);
  }
}

// The handler, asked each round until it has the answer.
void HttpServer::Loop::on_answer(Client& c) {
  if (std::optional<HttpResponse> r = handler(c.req)) answer(c, *r);
}

void HttpServer::Loop::answer(Client& c, const HttpResponse& r) {
  c.out = format_response(r, c.req.method == "HEAD", c.gzip);
  c.want_read = c.want_write = false;
  // The answer is made: its slot among the requests being answered is free for anyone's next
  // request (enter).  A client that does not read holds its own connection only (issue 46, item 9).
  enter(c, ConnState::kWriting);
  c.progressed = Clock::now();
}

// The socket (or TLS) takes more of the answer; false when it failed or the answer is all sent
// (Connection: close).
bool HttpServer::Loop::on_writable(Client& c, Clock::time_point now) {
  ssize_t put = io(c, true, c.out.data() + c.sent, c.out.size() - c.sent);
  if (put == 0 || put == -2) return false;
  if (put > 0) {
    c.sent += static_cast<size_t>(put);
    c.progressed = now;
  }
  return c.sent != c.out.size();
}

// Past the deadline its state's row names: what the row says.  true: close it.
bool HttpServer::Loop::on_deadline(Client& c) {
  switch (state_row(c.state).on_deadline) {
    case OnDeadline::kNothing: return false;
    case OnDeadline::kAnswer408AndClose:
      if (!c.ssl) {  // too slow to send its head: say so once, without waiting for it to read
        std::string t = format_response(plain(408, "request not received in time\n"), false, false);
        ssize_t ignored = send(c.fd, t.data(), t.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)ignored;
      }
      return true;
    case OnDeadline::kAnswer503: answer(c, plain(503, "the credential check did not finish in time\n")); return false;
    case OnDeadline::kClose: return true;
  }
  return true;
}

// The one place a connection changes state: what the rows say about leaving one and entering the
// next (its slot among max_requests, its deadline's clock).
void HttpServer::Loop::enter(Client& c, ConnState next) {
  if (state_row(c.state).counted) --requests;
  if (c.state == ConnState::kAuthWait && next != ConnState::kAuthWait) c.authorization.clear();
  c.state = next;
  const ConnStateRow& row = state_row(next);
  if (row.counted) ++requests;
  if (row.deadline == ConnDeadline::kWrite) c.deadline = after(s.limits_.write_timeout_s);
}

// Reads or writes through TLS or the socket: > 0 bytes, 0 the peer closed, -1 not now, -2 failed.
ssize_t HttpServer::Loop::io(Client& c, bool write, char* buf, size_t n) {
  if (!c.ssl) {
    ssize_t r = write ? send(c.fd, buf, n, MSG_NOSIGNAL) : recv(c.fd, buf, n, 0);
    if (r >= 0) return r;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : -2;
  }
  ERR_clear_error();
  int r = write ? SSL_write(c.ssl, buf, static_cast<int>(n)) : SSL_read(c.ssl, buf, static_cast<int>(n));
  c.want_read = c.want_write = false;
  if (r > 0) return r;
  switch (SSL_get_error(c.ssl, r)) {
    case SSL_ERROR_WANT_READ: c.want_read = true; return -1;
    case SSL_ERROR_WANT_WRITE: c.want_write = true; return -1;
    case SSL_ERROR_ZERO_RETURN: return 0;
    default: ERR_clear_error(); return -2;
  }
}

HttpServer::Loop::It HttpServer::Loop::drop(It it) {
  if (it->ssl) {
    SSL_shutdown(it->ssl);  // one close_notify, not waited for
    SSL_free(it->ssl);
    ERR_clear_error();
  }
  close(it->fd);
  if (state_row(it->state).counted) --requests;
  if (--per_peer[it->peer] == 0) per_peer.erase(it->peer);
  return clients.erase(it);
}

// A connection closed to make room, of `peer`: the one that costs the most and promises the least,
// by its state's eviction rank (the rows): one that has sent nothing (no byte heard, none waiting
// to be read); one still sending its head, whatever it sent (a byte, part of a TLS hello: speaking
// buys nothing); an answer stuck behind a full window for kStalledS (the client reads nothing); any
// other answer being written (its request was served).  Oldest first within each: a scraper's
// connection, new and with its request on its way, is the last of its kind.  A request waiting for
// its answer or its credential check is never closed (max_requests and BasicAuth bound those).
HttpServer::Loop::It HttpServer::Loop::victim(const std::string& peer, double min_age_s) {
  auto now = Clock::now();
  auto best = clients.end();
  int best_rank = 4;
  for (auto it = clients.begin(); it != clients.end(); ++it) {
    const Client& c = *it;
    const ConnStateRow& row = state_row(c.state);
    if (c.peer != peer || row.rank == kNeverEvicted) continue;
    if (std::chrono::duration<double>(now - c.started).count() < min_age_s) continue;
    bool waiting = false, stalled = false;
    if (row.when == RankCase::kBytesWaiting) {
      char b;
      waiting = !(recv(c.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    } else if (row.when == RankCase::kStalled) {
      stalled = std::chrono::duration<double>(now - c.progressed).count() >= kStalledS;
    }
    int rank = eviction_rank(c.state, waiting, stalled);
    if (rank < best_rank) {  // (the list is in order of arrival: the first of a rank is its oldest)
      best = it;
      best_rank = rank;
      if (rank == 0) break;
    }
  }
  return best;
}

bool HttpServer::Loop::evict_from(const std::string& peer, double min_age_s) {
  auto v = victim(peer, min_age_s);
  if (v == clients.end()) return false;
  drop(v);
  return true;
}

// Room in all for a connection of `newcomer` ("" when not known yet, or to trim): taken from the
// address that holds the most, never from one that holds fewer than the newcomer would, nor
// (newcomer "") from one holding a single connection: a scraper alone on its address always finds
// room and keeps it; an address holding many pays for its own.
bool HttpServer::Loop::make_room(const std::string& newcomer, double min_age_s) {
  size_t mine = newcomer.empty() ? 1 : per_peer.count(newcomer) ? per_peer[newcomer] : 0;
  std::vector<std::pair<size_t, std::string>> order;
  for (const auto& [p, n] : per_peer) order.emplace_back(n, p);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [n, p] : order) {
    if (n < mine + 1 && p != newcomer) continue;
    if (evict_from(p, min_age_s)) return true;
  }
  return false;
}

// Over a limit, past their grace of 0.1 s: every connection counts, whatever it sent (issue 46,
// item 1: one that had sent a byte was kept until a second old, and 130 that reconnected held the
// hard bound).  An address over its own limit pays; over the total, the one holding most.
void HttpServer::Loop::trim() {
  for (auto p = per_peer.begin(); p != per_peer.end();) {
    std::string peer = p->first;
    size_t over = p->second > s.limits_.max_per_peer ? p->second - s.limits_.max_per_peer : 0;
    ++p;  // (evicting the last one erases its entry)
    while (over-- > 0 && evict_from(peer, kGraceS)) {
    }
  }
  while (clients.size() > s.limits_.max_connections && make_room("", kGraceS)) {
  }
}

}  // namespace gpumap
