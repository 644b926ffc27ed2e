// `gpumap serve --web.config.file FILE`: the Prometheus exporter-toolkit's web configuration
// (https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md), the file
// node_exporter and dcgm-exporter read, for TLS and basic authentication.  The subset gpumap
// serves: tls_server_config (cert_file, key_file, min_version, max_version, client_ca_file,
// client_auth_type) and basic_auth_users (bcrypt hashes).  Strict as exporter-toolkit is: an
// unknown key is an error naming it; a key exporter-toolkit knows and gpumap does not serve
// (cipher_suites, http_server_config, ...) is an error saying so, never silently ignored.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace gpumap {

/// Go's tls.ClientAuthType, by exporter-toolkit's names.
enum class ClientAuth { kNone, kRequest, kRequireAny, kVerifyIfGiven, kRequireAndVerify };

struct TlsServerConfig {
  std::string cert_file, key_file;  // PEM; both required (paths relative to the config file's folder)
  std::string client_ca_file;       // PEM CA bundle for client certificates, or ""
  ClientAuth client_auth = ClientAuth::kNone;
  int min_version = 0x0303;         // TLS1_2_VERSION (exporter-toolkit's default)
  int max_version = 0;              // 0: the newest OpenSSL has
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash
};

/// Parses the YAML text of a web config file; `name` (the file) is named in errors and relative
/// paths are resolved against its folder.  Throws Error(kExitUsage) naming the file, the key and
/// the fix.  Checks the form of every value, not the files' contents (load_tls does).
WebConfig parse_web_config(const std::string& yaml_text, const std::string& name);
/// Reads and parses `path`: Error(kExitUsage) when it cannot be read or is malformed.  Fails
/// closed: a folder, a device, a FIFO, a file over 1 MiB or a read that fails is an error naming
/// the file, never an empty config (which would serve plain HTTP without authentication).
WebConfig read_web_config(const std::string& path);

/// The largest file the web config (and the files it names) may be.
inline constexpr size_t kWebConfigMaxBytes = size_t{1} << 20;

/// The text of a file the web config names or is (`what`: "--web.config.file",
/// "tls_server_config.cert_file", ...): opened once, without blocking (O_NONBLOCK, so a FIFO never
/// holds the start), checked with fstat to be a regular file of at most kWebConfigMaxBytes before
/// a byte is read, then read whole.  Error(kExitUsage) naming `what`, the file and the fix.
std::string read_config_file(const std::string& path, const std::string& what);

/// The highest bcrypt cost gpumap serve accepts (web config users): each check of a password
/// costs 2^cost rounds, 14 is about 16 times the default 10 (about 1 s on a server core), and a
/// higher cost lets one login hold the server for seconds or, at 31, for days.
inline constexpr int kMaxBcryptCost = 14;
/// The cost of a bcrypt hash ("$2b$10$..."), or -1 when it has none.
int bcrypt_cost(const std::string& hash);

/// Whether `password` matches `hash` (a crypt(3) hash: bcrypt `$2y$`/`$2b$`/`$2a$`, checked by
/// libcrypt's crypt_r).  A hash libcrypt cannot read matches nothing.  Constant-time comparison.
bool password_matches(const std::string& password, const std::string& hash);

/// A hash libcrypt accepts as bcrypt ("$2a$", "$2b$" or "$2y$", cost, 53 characters).
bool is_bcrypt_hash(const std::string& hash);

}  // namespace gpumap
