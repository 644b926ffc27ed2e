#include "prom/http_config.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <set>

#include "model/error.h"
#include "os/state_file.h"

namespace gpumap {
namespace {

constexpr size_t kMaxConfigBytes = size_t{1} << 20;

std::string read_file_checked(const std::string& path, const std::string& what) {
  FileText f = read_small_file(path, kMaxConfigBytes);
  auto fail = [&](const std::string& why) {
    return Error(kExitUsage, what + " " + path + ": " + why, "give the path of a readable regular file");
  };
  if (f.too_big) throw fail("larger than 1 MiB");
  if (!f.not_regular.empty()) throw fail("is " + f.not_regular + ", not a regular file");
  if (f.error == EISDIR) throw fail("is a folder, not a file");
  if (f.error) throw fail(std::strerror(f.error));
  return f.text;
}

/// Prometheus strips a secret file's trailing newline (and only whitespace at its end).
std::string secret_from_file(const std::string& path, const std::string& what) {
  std::string s = read_file_checked(path, what);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i + 1 == in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    size_t slash = path.rfind('/');
    dir_ = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  }

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    throw Error(kExitUsage, "--http.config.file " + path_ + ": " + key + ": " + why,
                "the format is Prometheus's HTTP client config (docs/fleet.md): basic_auth, authorization, tls_config, http_headers");
  }

  /// The keys of map `n` (at `where`), each checked against `known`.
  void check_keys(const YAML::Node& n, const std::string& where, const std::set<std::string>& known) const {
    if (!n.IsMap()) fail(where, "is not a mapping of keys");
    for (const auto& kv : n) {
      std::string k = kv.first.as<std::string>();
      if (!known.count(k))
        fail(where.empty() ? k : where + "." + k, "is not a key gpumap reads (it would be ignored, so it is refused)");
    }
  }

  /// Every mapping under `n` (at `where`): its keys are strings and none is given twice.  yaml-cpp
  /// keeps both of a repeated key and `n[key]` answers the first, so `insecure_skip_verify: true`
  /// then `false` would have turned verification off; Prometheus's strict reader refuses it too.
  void check_unique(const YAML::Node& n, const std::string& where) const {
    if (n.IsSequence())
      for (const auto& e : n) check_unique(e, where);
    if (!n.IsMap()) return;
    std::set<std::string> seen;
    for (const auto& kv : n) {
      std::string line = "line " + std::to_string(kv.first.Mark().line + 1);
      if (!kv.first.IsScalar()) fail(where.empty() ? "a key" : where, line + ": a key must be a plain string, not a list or a mapping");
      std::string k = kv.first.as<std::string>();
      std::string at = where.empty() ? k : where + "." + k;
      if (!seen.insert(k).second) fail("`" + at + "`", line + ": is given twice; keep one (which one counts would be a guess)");
      check_unique(kv.second, at);
    }
  }

  /// A credential goes into an HTTP header: a control character (NUL, VT, a tab, DEL...) there is
  /// a paste or an encoding accident, never a secret a server expects.
  void check_printable(const std::string& v, const std::string& key) const {
    for (unsigned char c : v)
      if (c < 0x20 || c == 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", c);
        fail(key, std::string("holds the control character ") + hex + "; credentials are printable text (check the file's encoding)");
      }
  }

  std::string str(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(key, "is not a string");
    return n.as<std::string>();
  }

  bool boolean(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(key, "is not true or false");
    std::string v = n.as<std::string>();
    if (v == "true") return true;
    if (v == "false") return false;
    fail(key, "is `" + v + "`, not true or false");
  }

  const std::string& dir() const { return dir_; }

  std::string file(const YAML::Node& n, const std::string& key) const {
    std::string f = str(n, key);
    if (f.empty()) fail(key, "is empty");
    return f[0] == '/' ? f : dir_ + f;
  }

 private:
  std::string path_, dir_;
};

HttpAuth parse_root(const Reader& r, const YAML::Node& root);

/// Headers gpumap writes itself, or that only an authentication setting may set: refused in
/// http_headers, as prometheus/common refuses its reserved ones.
bool reserved_header(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> reserved = {
      "authorization", "host", "content-encoding", "content-length", "content-type", "user-agent", "connection",
      "keep-alive", "proxy-authenticate", "proxy-authorization", "www-authenticate", "accept", "accept-encoding",
      "transfer-encoding", "te", "trailer", "upgrade", "expect"};
  return reserved.count(name) > 0;
}

/// http_headers (promtool's format): `NAME: {values: [...], files: [...]}` (a header line per
/// value, a file's text without its trailing newline); `secrets:` inline are refused, a secret
/// belongs in a file.
void parse_headers(const Reader& r, const YAML::Node& h, HttpAuth& a) {
  if (!h.IsMap()) r.fail("http_headers", "is not a mapping of header names");
  std::set<std::string> seen;
  for (const auto& kv : h) {
    std::string name = kv.first.as<std::string>();
    std::string key = "http_headers." + name;
    if (name.empty() || name.find_first_not_of("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") !=
                            std::string::npos)
      r.fail(key, "is not a header name (letters, digits and -, e.g. X-Scope-OrgID)");
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!seen.insert(lower).second) r.fail(key, "is given twice (header names are case-insensitive); keep one");
    if (reserved_header(name))
      r.fail(key, "is a header gpumap sets itself or that an authentication setting sets (basic_auth, authorization)");
    const YAML::Node& spec = kv.second;
    r.check_keys(spec, key, {"values", "secrets", "files"});
    if (spec["secrets"])
      r.fail(key + ".secrets",
             "inline secrets are refused: a secret goes in a file (readable by you alone) named under `files:` "
             "(e.g. files: [/etc/gpumap/tenant]), or, when it is no secret, under `values:`");
    std::vector<std::string> values;
    auto list = [&](const char* field) -> std::vector<std::string> {
      std::vector<std::string> out;
      if (!spec[field]) return out;
      const YAML::Node& l = spec[field];
      if (!l.IsSequence()) r.fail(key + "." + field, "is not a list (e.g. " + std::string(field) + ": [gpumap])");
      for (const auto& e : l) out.push_back(r.str(e, key + "." + field));
      return out;
    };
    for (std::string& v : list("values")) values.push_back(std::move(v));
    for (const std::string& f : list("files")) {
      if (f.empty()) r.fail(key + ".files", "names an empty path");
      std::string path = f[0] == '/' ? f : r.dir() + f;
      values.push_back(secret_from_file(path, "--http.config.file's " + key + ".files"));
    }
    if (values.empty()) r.fail(key, "has no value (values: [...] or files: [...])");
    for (const std::string& v : values) {
      r.check_printable(v, key);  // CR, LF: a header split in two
      a.headers.emplace_back(name, v);
    }
  }
}

}  // namespace

std::string basic_authorization(const std::string& user, const std::string& password) {
  return "Basic " + base64(user + ":" + password);
}

HttpAuth parse_http_config(const std::string& text, const std::string& path) {
  Reader r(path);
  YAML::Node root;
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() > 1) r.fail("---", "holds several YAML documents; give one");
    if (!docs.empty()) root = docs[0];
  } catch (const YAML::Exception& e) {
    throw Error(kExitUsage, "--http.config.file " + path + ": not YAML: " + e.what(), "check the file's indentation and quotes");
  }
  HttpAuth a;
  if (!root || root.IsNull()) return a;
  try {
    return parse_root(r, root);
  } catch (const YAML::Exception& e) {  // a shape the checks above did not foresee: still the file's fault
    throw Error(kExitUsage, "--http.config.file " + path + ": " + e.what(), "check the file against docs/fleet.md");
  }
}

namespace {

HttpAuth parse_root(const Reader& r, const YAML::Node& root) {
  HttpAuth a;
  r.check_unique(root, "");
  r.check_keys(root, "", {"basic_auth", "authorization", "bearer_token", "bearer_token_file", "tls_config", "follow_redirects",
                          "enable_http2", "http_headers"});
  int auths = 0;
  if (YAML::Node b = root["basic_auth"]) {
    ++auths;
    r.check_keys(b, "basic_auth", {"username", "username_file", "password", "password_file"});
    if (b["username"] && b["username_file"]) r.fail("basic_auth", "has both username and username_file");
    if (b["password"] && b["password_file"]) r.fail("basic_auth", "has both password and password_file");
    std::string user = b["username"] ? r.str(b["username"], "basic_auth.username")
                       : b["username_file"] ? secret_from_file(r.file(b["username_file"], "basic_auth.username_file"), "basic_auth.username_file")
                                            : "";
    if (user.empty()) r.fail("basic_auth", "names no username");
    std::string pw = b["password"] ? r.str(b["password"], "basic_auth.password")
                     : b["password_file"] ? secret_from_file(r.file(b["password_file"], "basic_auth.password_file"), "basic_auth.password_file")
                                          : "";
    r.check_printable(user, "basic_auth.username");
    r.check_printable(pw, "basic_auth.password");
    a.authorization = basic_authorization(user, pw);
  }
  if (YAML::Node z = root["authorization"]) {
    ++auths;
    r.check_keys(z, "authorization", {"type", "credentials", "credentials_file"});
    std::string type = z["type"] ? r.str(z["type"], "authorization.type") : "Bearer";
    if (type.empty() || type.find_first_of(" \r\n") != std::string::npos) r.fail("authorization.type", "is not one word");
    if (type == "Basic" || type == "basic") r.fail("authorization.type", "Basic: use basic_auth");
    if (z["credentials"] && z["credentials_file"]) r.fail("authorization", "has both credentials and credentials_file");
    std::string cred = z["credentials"] ? r.str(z["credentials"], "authorization.credentials")
                       : z["credentials_file"]
                           ? secret_from_file(r.file(z["credentials_file"], "authorization.credentials_file"), "authorization.credentials_file")
                           : "";
    r.check_printable(type, "authorization.type");
    r.check_printable(cred, "authorization.credentials");
    a.authorization = type + " " + cred;
  }
  if (root["bearer_token"] || root["bearer_token_file"]) {
    ++auths;
    if (root["bearer_token"] && root["bearer_token_file"]) r.fail("bearer_token", "given with bearer_token_file");
    std::string tok = root["bearer_token"] ? r.str(root["bearer_token"], "bearer_token")
                                           : secret_from_file(r.file(root["bearer_token_file"], "bearer_token_file"), "bearer_token_file");
    r.check_printable(tok, "bearer_token");
    a.authorization = "Bearer " + tok;
  }
  if (auths > 1) r.fail("basic_auth/authorization/bearer_token", "more than one way to authenticate; give one");
  if (a.authorization.find_first_of("\r\n") != std::string::npos) r.fail("credentials", "hold a line break");
  if (YAML::Node t = root["tls_config"]) {
    r.check_keys(t, "tls_config", {"ca_file", "cert_file", "key_file", "server_name", "insecure_skip_verify", "min_version"});
    if (t["ca_file"]) a.ca_file = r.file(t["ca_file"], "tls_config.ca_file");
    if (t["cert_file"]) a.cert_file = r.file(t["cert_file"], "tls_config.cert_file");
    if (t["key_file"]) a.key_file = r.file(t["key_file"], "tls_config.key_file");
    if (a.cert_file.empty() != a.key_file.empty()) r.fail("tls_config", "cert_file and key_file go together");
    if (t["server_name"]) a.server_name = r.str(t["server_name"], "tls_config.server_name");
    if (t["insecure_skip_verify"]) a.insecure_skip_verify = r.boolean(t["insecure_skip_verify"], "tls_config.insecure_skip_verify");
    if (t["min_version"]) {
      std::string v = r.str(t["min_version"], "tls_config.min_version");
      if (v != "TLS12" && v != "TLS13") r.fail("tls_config.min_version", "`" + v + "`: gpumap speaks TLS12 and TLS13");
      a.tls13_only = v == "TLS13";
    }
    for (const std::string* f : {&a.ca_file, &a.cert_file, &a.key_file})
      if (!f->empty()) read_file_checked(*f, "--http.config.file's " + *f);  // a bad path is exit 2 now, not a TLS error later
  }
  if (YAML::Node h = root["http_headers"]) parse_headers(r, h, a);
  if (root["follow_redirects"]) r.boolean(root["follow_redirects"], "follow_redirects");  // gpumap never follows one
  if (root["enable_http2"]) r.boolean(root["enable_http2"], "enable_http2");              // HTTP/1.1 only
  return a;
}

}  // namespace

HttpAuth load_http_config(const std::string& path) {
  return parse_http_config(read_file_checked(path, "--http.config.file"), path);
}

}  // namespace gpumap
