// TLS set-up for both sides of the HTTP layer, through OpenSSL: the server's context from a web
// config's tls_server_config (os/web_config.h) and the client's session from an HttpAuth (the
// Prometheus client's tls_config, prom/http_config.h).  For http/ files only (it names OpenSSL's types).
#pragma once
#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "http/client.h"
#include "os/web_config.h"

namespace gpumap {

struct TlsContext {
  SSL_CTX* ctx = nullptr;
  ~TlsContext() {
    if (ctx) SSL_CTX_free(ctx);
  }
};

/// OpenSSL's error queue as text ("unknown error" when empty); empties it.
std::string tls_errors();

/// The context of a web config's tls_server_config: its certificate chain, key, client CAs and
/// client_auth_type.  Error(kExitUsage) naming the file when one cannot be loaded.
std::unique_ptr<TlsContext> server_tls(const TlsServerConfig& t);

struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};
/// A client session on the connected socket `fd` to `host` (the URL's host): TLS 1.2 or newer
/// (1.3 when tls13_only), the certificate checked against auth.ca_file (else the system's CAs) and
/// against auth.server_name (else `host`) unless insecure_skip_verify; SNI for a name; the client
/// certificate when given.  HttpError(kTls) when a file cannot be loaded.  Not yet shaken hands.
std::unique_ptr<SSL, SslFree> client_tls(const HttpAuth& auth, const std::string& host, int fd);

}  // namespace gpumap
