#include "os/web_config.h"

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "model/error.h"

namespace gpumap {
namespace {

const char* kFix = "the format is exporter-toolkit's web-config.yml (docs/metrics.md, \"TLS and basic authentication\")";

Error bad(const std::string& name, const std::string& what) { return Error(kExitUsage, "--web.config.file " + name + ": " + what, kFix); }

std::string folder_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

std::string scalar(const YAML::Node& n, const std::string& name, const std::string& key) {
  if (!n.IsScalar()) throw bad(name, "`" + key + "` must be a string");
  return n.as<std::string>();
}

// Keys exporter-toolkit knows that gpumap does not serve: named as such, never ignored.
const std::set<std::string> kTlsNotServed = {"cert", "key", "client_ca", "cipher_suites", "curve_preferences",
                                              "prefer_server_cipher_suites", "client_allowed_sans"};

int tls_version(const std::string& v, const std::string& name, const std::string& key) {
  if (v == "TLS10") return 0x0301;
  if (v == "TLS11") return 0x0302;
  if (v == "TLS12") return 0x0303;
  if (v == "TLS13") return 0x0304;
  throw bad(name, "`" + key + ": " + v + "` is not a TLS version: give TLS10, TLS11, TLS12 or TLS13");
}

// A key given twice: yaml-cpp keeps both, and which one counts would be the reader's guess (a
// second `basic_auth_users:` or `cert_file:` edited in below the first).  An error naming it.
void once(std::set<std::string>& seen, const std::string& key, const std::string& where, const std::string& name) {
  if (!seen.insert(key).second) throw bad(name, "`" + where + "` is given twice: keep one");
}

TlsServerConfig parse_tls(const YAML::Node& n, const std::string& name, const std::string& dir) {
  if (!n.IsMap()) throw bad(name, "`tls_server_config` must be a mapping");
  TlsServerConfig t;
  std::string auth;
  auto path = [&](const std::string& p) { return p.empty() || p[0] == '/' ? p : dir + p; };
  std::set<std::string> seen;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) throw bad(name, "a key of tls_server_config must be a string");
    std::string key = kv.first.as<std::string>();
    const std::string where = "tls_server_config." + key;
    once(seen, key, where, name);
    if (key == "cert_file") t.cert_file = path(scalar(kv.second, name, where));
    else if (key == "key_file") t.key_file = path(scalar(kv.second, name, where));
    else if (key == "client_ca_file") t.client_ca_file = path(scalar(kv.second, name, where));
    else if (key == "client_auth_type") auth = scalar(kv.second, name, where);
    else if (key == "min_version") t.min_version = tls_version(scalar(kv.second, name, where), name, where);
    else if (key == "max_version") t.max_version = tls_version(scalar(kv.second, name, where), name, where);
    else if (kTlsNotServed.count(key)) throw bad(name, "`" + where + "` is not supported by gpumap serve: remove it");
    else throw bad(name, "unknown key `" + where + "`");
  }
  if (t.cert_file.empty() || t.key_file.empty())
    throw bad(name, "tls_server_config needs both cert_file and key_file");
  if (auth.empty() || auth == "NoClientCert") t.client_auth = ClientAuth::kNone;
  else if (auth == "RequestClientCert") t.client_auth = ClientAuth::kRequest;
  else if (auth == "RequireAnyClientCert" || auth == "RequireClientCert") t.client_auth = ClientAuth::kRequireAny;
  else if (auth == "VerifyClientCertIfGiven") t.client_auth = ClientAuth::kVerifyIfGiven;
  else if (auth == "RequireAndVerifyClientCert") t.client_auth = ClientAuth::kRequireAndVerify;
  else
    throw bad(name, "`client_auth_type: " + auth +
                        "` is not one of NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, "
                        "RequireAndVerifyClientCert");
  bool verifies = t.client_auth == ClientAuth::kVerifyIfGiven || t.client_auth == ClientAuth::kRequireAndVerify;
  if (verifies && t.client_ca_file.empty()) throw bad(name, "client_auth_type " + auth + " needs client_ca_file");
  if (!t.client_ca_file.empty() && t.client_auth == ClientAuth::kNone)
    throw bad(name, "client_ca_file is set without a client_auth_type (e.g. RequireAndVerifyClientCert)");
  if (t.max_version && t.max_version < t.min_version) throw bad(name, "max_version is older than min_version");
  return t;
}

}  // namespace

int bcrypt_cost(const std::string& h) {
  if (h.size() < 7 || h[0] != '$' || h[1] != '2' || h[3] != '$' || h[6] != '$' || !isdigit(static_cast<unsigned char>(h[4])) ||
      !isdigit(static_cast<unsigned char>(h[5])))
    return -1;
  return (h[4] - '0') * 10 + (h[5] - '0');
}

bool is_bcrypt_hash(const std::string& h) {
  // $2b$10$ + 22 salt + 31 hash characters of bcrypt's base64.
  if (h.size() != 60 || h[0] != '$' || h[1] != '2' || (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') || h[3] != '$' ||
      h[6] != '$')
    return false;
  if (!isdigit(static_cast<unsigned char>(h[4])) || !isdigit(static_cast<unsigned char>(h[5]))) return false;
  int cost = (h[4] - '0') * 10 + (h[5] - '0');
  if (cost < 4 || cost > 31) return false;
  for (size_t i = 7; i < h.size(); ++i) {
    char c = h[i];
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '/')) return false;
  }
  return true;
}

WebConfig parse_web_config(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(text);
    // One document: a `---` that leaves an empty first one (and the users in a second) would
    // otherwise be read as an empty config, plain HTTP without authentication.
    if (docs.size() > 1)
      throw bad(name, "holds " + std::to_string(docs.size()) +
                          " YAML documents (separated by `---`); a web config is one: keep one document, with "
                          "tls_server_config and basic_auth_users in it");
    if (!docs.empty()) root = docs.front();
  } catch (const YAML::Exception& e) {
    throw bad(name, std::string("not YAML: ") + e.what());
  }
  WebConfig c;
  if (root.IsNull()) return c;  // an empty file: plain HTTP, no authentication (as exporter-toolkit)
  if (!root.IsMap()) throw bad(name, "the top level must be a mapping (tls_server_config:, basic_auth_users:)");
  std::string dir = folder_of(name);
  std::set<std::string> seen;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) throw bad(name, "a key must be a string");
    std::string key = kv.first.as<std::string>();
    once(seen, key, key, name);
    if (key == "tls_server_config") {
      if (!kv.second.IsNull()) c.tls = parse_tls(kv.second, name, dir);
    } else if (key == "basic_auth_users") {
      if (kv.second.IsNull()) continue;
      if (!kv.second.IsMap()) throw bad(name, "`basic_auth_users` must map user names to bcrypt hashes");
      std::set<std::string> users;
      for (const auto& u : kv.second) {
        std::string user = scalar(u.first, name, "basic_auth_users");
        once(users, user, "basic_auth_users." + user, name);
        std::string hash = scalar(u.second, name, "basic_auth_users." + user);
        if (user.empty() || user.find(':') != std::string::npos)
          throw bad(name, "basic_auth_users: user `" + user + "`: a user name is not empty and holds no `:`");
        if (!is_bcrypt_hash(hash))
          throw bad(name, "basic_auth_users." + user +
                              ": not a bcrypt hash ($2y$..., 60 characters): make one with `htpasswd -nBC 10 \"\" | tr -d ':\\n'`");
        // Checked at start, so one login can never hold the server for seconds (cost 31: days).
        if (int cost = bcrypt_cost(hash); cost > kMaxBcryptCost)
          throw Error(kExitUsage,
                      "--web.config.file " + name + ": basic_auth_users." + user + ": bcrypt cost " + std::to_string(cost) +
                          " is above gpumap serve's maximum of " + std::to_string(kMaxBcryptCost) +
                          " (each login check would take about " + std::to_string(1ULL << (cost - 10)) +
                          " times a cost-10 check)",
                      "make the hash again with a cost from 10 to " + std::to_string(kMaxBcryptCost) +
                          ": htpasswd -nBC 10 \"\" | tr -d ':\\n'");
        c.basic_auth_users[user] = hash;
      }
    } else if (key == "http_server_config" || key == "rate_limit") {
      throw bad(name, "`" + key + "` is not supported by gpumap serve: remove it");
    } else {
      throw bad(name, "unknown key `" + key + "`");
    }
  }
  return c;
}

std::string read_config_file(const std::string& path, const std::string& what) {
  const std::string fix = what == "--web.config.file"
                              ? "give the path of a readable web-config.yml file (a folder there is what Docker makes of a "
                                "bind mount whose file is missing on the host)"
                              : "give the path of a readable PEM file (the " + what + " of the web config)";
  auto fail = [&](const std::string& why) { return Error(kExitUsage, what + " " + path + ": " + why, fix); };
  // O_NONBLOCK: opening a FIFO with no writer returns at once (and it is refused below).
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw fail(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st = {};
  if (fstat(fd, &st) != 0) throw fail(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw fail("is a folder, not a file");
  if (!S_ISREG(st.st_mode))
    throw fail(std::string("is not a regular file (a ") +
               (S_ISFIFO(st.st_mode) ? "FIFO" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "device" : S_ISSOCK(st.st_mode) ? "socket" : "special file") +
               ")");
  if (static_cast<unsigned long long>(st.st_size) > kWebConfigMaxBytes) throw fail("larger than 1 MiB");
  // Read to the end, never past the limit (a file in /proc says size 0 and may hold more).
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw fail(std::string("cannot be read: ") + std::strerror(errno));
    if (got == 0) break;
    text.append(buf, static_cast<size_t>(got));
    if (text.size() > kWebConfigMaxBytes) throw fail("larger than 1 MiB");
  }
  return text;
}

WebConfig read_web_config(const std::string& path) {
  return parse_web_config(read_config_file(path, "--web.config.file"), path);
}

bool password_matches(const std::string& password, const std::string& hash) {
  if (password.find('\0') != std::string::npos) return false;
  crypt_data data;
  std::memset(&data, 0, sizeof data);
  const char* got = crypt_r(password.c_str(), hash.c_str(), &data);
  // libxcrypt answers a hash it cannot read with NULL or a string starting with '*'.
  if (!got || got[0] == '*' || std::strlen(got) != hash.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < hash.size(); ++i) diff |= static_cast<unsigned char>(got[i] ^ hash[i]);
  return diff == 0;
}

}  // namespace gpumap
