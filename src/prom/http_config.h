// promtool's and Prometheus's HTTP client configuration (`--http.config.file`, the YAML of
// prometheus/common's HTTPClientConfig): how `gpumap fleet` authenticates to Prometheus and checks
// its certificate, with every secret in a file, never on the command line.
#pragma once
#include <string>

#include "prom/http_client.h"

namespace gpumap {

/// Parses the YAML `text` of the config file `path` (relative file names are relative to its
/// folder, as Prometheus reads them); the files it names are read now (passwords, credentials).
/// Keys: basic_auth {username, username_file, password, password_file}; authorization {type
/// (default Bearer), credentials, credentials_file}; bearer_token, bearer_token_file (the older
/// spelling); tls_config {ca_file, cert_file, key_file, server_name, insecure_skip_verify,
/// min_version}.  Error(kExitUsage) naming the file and the key for an unknown key, two
/// authentications at once, a file that cannot be read, or a value of the wrong type: a setting
/// gpumap would not apply is never ignored.
HttpAuth parse_http_config(const std::string& text, const std::string& path);

/// Reads `path` (a regular file of at most 1 MiB, opened without blocking) and parses it.
HttpAuth load_http_config(const std::string& path);

/// "Basic " + base64("user:password").
std::string basic_authorization(const std::string& user, const std::string& password);

}  // namespace gpumap
