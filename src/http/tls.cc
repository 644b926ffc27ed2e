#include "http/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>

#include "model/error.h"
#include "os/ca_paths.h"

namespace gpumap {
namespace {

int accept_any_certificate(int, X509_STORE_CTX*) { return 1; }

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


struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};

}  // namespace

std::string tls_errors() {
  std::string all;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!all.empty()) all += "; ";
    all += buf;
  }
  return all.empty() ? "unknown error" : all;
}


std::unique_ptr<TlsContext> server_tls(const TlsServerConfig& t) {
  auto tls = std::make_unique<TlsContext>();
  auto bad = [&](const std::string& what, const std::string& file) {
    return Error(kExitUsage, "--web.config.file: " + what + " " + file + ": " + tls_errors(),
                 "give a PEM certificate (cert_file) and its private key (key_file) this user may read");
  };
  tls->ctx = SSL_CTX_new(TLS_server_method());
  if (!tls->ctx) throw Error(kExitError, "OpenSSL: cannot make a TLS context: " + tls_errors());
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

std::unique_ptr<SSL, SslFree> client_tls(const HttpAuth& auth, const std::string& host, int fd) {
  std::unique_ptr<SSL_CTX, SslCtxFree> ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) throw HttpError(HttpFailure::kTls, tls_errors());
  SSL_CTX_set_min_proto_version(ctx.get(), auth.tls13_only ? TLS1_3_VERSION : TLS1_2_VERSION);
  if (!auth.insecure_skip_verify) {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    int ok = auth.ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx.get())
                                   : SSL_CTX_load_verify_locations(ctx.get(), auth.ca_file.c_str(), nullptr);
    if (ok != 1) throw HttpError(HttpFailure::kTls, "cannot load the CA file " + auth.ca_file + ": " + tls_errors());
    // os/ca_paths.h: where OpenSSL's default CA location is absent (the portable build on RHEL's
    // layout), the first common system bundle is loaded too.
    if (std::string b = auth.ca_file.empty() ? fallback_ca_bundle(X509_get_default_cert_file(), X509_get_default_cert_dir()) : "";
        !b.empty() && SSL_CTX_load_verify_locations(ctx.get(), b.c_str(), nullptr) != 1)
      ERR_clear_error();
  }
  if (!auth.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), auth.cert_file.c_str()) != 1)
      throw HttpError(HttpFailure::kTls, "cannot load the client certificate " + auth.cert_file + ": " + tls_errors());
    if (SSL_CTX_use_PrivateKey_file(ctx.get(), auth.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
      throw HttpError(HttpFailure::kTls, "cannot load the client key " + auth.key_file + ": " + tls_errors());
  }
  std::unique_ptr<SSL, SslFree> ssl(SSL_new(ctx.get()));  // holds its own reference to ctx
  if (!ssl) throw HttpError(HttpFailure::kTls, tls_errors());
  const std::string& name = auth.server_name.empty() ? host : auth.server_name;
  bool is_ip = name.find(':') != std::string::npos ||
               std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  if (!is_ip) SSL_set_tlsext_host_name(ssl.get(), name.c_str());
  if (!auth.insecure_skip_verify) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl.get());
    int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) : X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
    if (ok != 1) throw HttpError(HttpFailure::kTls, "cannot check the certificate against `" + name + "`");
  }
  SSL_set_fd(ssl.get(), fd);
  return ssl;
}

}  // namespace gpumap
