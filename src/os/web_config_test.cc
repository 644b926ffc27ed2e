#include "os/web_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "model/error.h"
#include "os/http_server.h"

namespace gpumap {
namespace {

// Openwall's crypt_blowfish test vectors (also in libxcrypt's and John the Ripper's tests).
const char* kUU = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";    // "U*U"
const char* kUUU = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK";  // "U*U*"

std::string error_of(const std::string& yaml) {
  try {
    parse_web_config(yaml, "/etc/gpumap/web.yml");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage) << yaml;
    return e.what();
  }
  return "";
}

TEST(WebConfig, ChecksBcryptWithLibcrypt) {
  EXPECT_TRUE(password_matches("U*U", kUU));
  EXPECT_FALSE(password_matches("U*U*", kUU));
  EXPECT_TRUE(password_matches("U*U*", kUUU));
  EXPECT_FALSE(password_matches("", kUU));
  // $2y$ and $2b$ are the same algorithm for these passwords (htpasswd -B writes $2y$).
  std::string y = kUU, b = kUU;
  y[2] = 'y';
  b[2] = 'b';
  EXPECT_TRUE(password_matches("U*U", y));
  EXPECT_TRUE(password_matches("U*U", b));
  // A hash libcrypt cannot read matches nothing, not even its own text.
  EXPECT_FALSE(password_matches("x", "plain"));
  EXPECT_FALSE(password_matches("U*U", std::string(kUU).substr(0, 40)));
  EXPECT_FALSE(password_matches(std::string("U*U\0x", 5), kUU));
  EXPECT_TRUE(is_bcrypt_hash(kUU));
  EXPECT_FALSE(is_bcrypt_hash("$1$abc$def"));
  EXPECT_FALSE(is_bcrypt_hash(std::string(kUU) + "x"));
}

TEST(WebConfig, ReadsExporterToolkitFormat) {
  WebConfig c = parse_web_config(std::string("# exporter-toolkit's example\n"
                                             "tls_server_config:\n"
                                             "  cert_file: server.crt\n"
                                             "  key_file: /etc/ssl/server.key\n"
                                             "  client_auth_type: \"RequireAndVerifyClientCert\"\n"
                                             "  client_ca_file: ca.crt\n"
                                             "  min_version: TLS13\n"
                                             "basic_auth_users:\n"
                                             "  alice: ") + kUU + "\n  'bob': '" + kUUU + "'\n",
                                 "/etc/gpumap/web.yml");
  ASSERT_TRUE(c.tls);
  EXPECT_EQ(c.tls->cert_file, "/etc/gpumap/server.crt");  // relative to the file's folder
  EXPECT_EQ(c.tls->key_file, "/etc/ssl/server.key");
  EXPECT_EQ(c.tls->client_ca_file, "/etc/gpumap/ca.crt");
  EXPECT_EQ(c.tls->client_auth, ClientAuth::kRequireAndVerify);
  EXPECT_EQ(c.tls->min_version, 0x0304);
  EXPECT_EQ(c.basic_auth_users.size(), 2u);
  EXPECT_EQ(c.basic_auth_users["bob"], kUUU);
  // Flow style and an empty file are YAML too.
  c = parse_web_config("{tls_server_config: {cert_file: a, key_file: b}}", "w.yml");
  EXPECT_EQ(c.tls->cert_file, "a");
  EXPECT_EQ(c.tls->min_version, 0x0303);  // TLS 1.2 unless said
  EXPECT_FALSE(parse_web_config("", "w.yml").tls);
  EXPECT_FALSE(parse_web_config("# nothing\n", "w.yml").tls);
}

TEST(WebConfig, RefusesWhatItDoesNotServeNamingTheKey) {
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, cert_flie: c}").find("unknown key `tls_server_config.cert_flie`"),
            std::string::npos);
  EXPECT_NE(error_of("basic_auth: {a: b}").find("unknown key `basic_auth`"), std::string::npos);
  EXPECT_NE(error_of("http_server_config: {http2: false}").find("`http_server_config` is not supported"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, cipher_suites: [x]}").find("not supported"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a}").find("both cert_file and key_file"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, min_version: TLS14}").find("TLS14"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, client_auth_type: Always}").find("Always"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, client_auth_type: RequireAndVerifyClientCert}")
                .find("needs client_ca_file"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, client_ca_file: c}").find("without a client_auth_type"),
            std::string::npos);
  EXPECT_NE(error_of("basic_auth_users: {alice: hunter2}").find("basic_auth_users.alice: not a bcrypt hash"), std::string::npos);
  EXPECT_NE(error_of("basic_auth_users: [alice]").find("must map"), std::string::npos);
  EXPECT_NE(error_of("- a\n- b\n").find("top level"), std::string::npos);
  EXPECT_NE(error_of("a: [unclosed").find("not YAML"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, min_version: TLS13, max_version: TLS12}")
                .find("max_version"),
            std::string::npos);
  // Every message names the file.
  EXPECT_NE(error_of("x: 1").find("/etc/gpumap/web.yml"), std::string::npos);
}

TEST(WebConfig, BasicAuthHeader) {
  BasicAuth auth(std::map<std::string, std::string>{{"alice", kUU}});
  // "alice:U*U" and "alice:U*U*" in base64.
  EXPECT_TRUE(auth.allows("Basic YWxpY2U6VSpV"));
  EXPECT_TRUE(auth.allows("basic YWxpY2U6VSpV"));  // the scheme is case-insensitive
  EXPECT_TRUE(auth.allows("Basic YWxpY2U6VSpV"));  // the second time from memory
  EXPECT_FALSE(auth.allows("Basic YWxpY2U6VSpVKg=="));
  EXPECT_FALSE(auth.allows("Basic Ym9iOlUqVQ=="));  // bob:U*U: no such user
  EXPECT_FALSE(auth.allows("Bearer YWxpY2U6VSpV"));
  EXPECT_FALSE(auth.allows("Basic !!!!"));
  EXPECT_FALSE(auth.allows("Basic YWxpY2U="));  // "alice", no colon
  EXPECT_FALSE(auth.allows(""));
}

TEST(HttpServer, ReadsTheHeadersItServes) {
  ParsedHead p = parse_request_head(
      "GET /metrics HTTP/1.1\r\nHost: a\r\naccept-encoding: deflate, GZIP;q=0.5\r\n"
      "X-Prometheus-Scrape-Timeout-Seconds: 2.5\r\nAuthorization:  Basic YWxpY2U6VSpV \r\n");
  EXPECT_EQ(p.refuse, 0);
  EXPECT_TRUE(p.accept_gzip);
  ASSERT_TRUE(p.scrape_timeout_s);
  EXPECT_DOUBLE_EQ(*p.scrape_timeout_s, 2.5);
  EXPECT_EQ(p.authorization, "Basic YWxpY2U6VSpV");
  EXPECT_FALSE(parse_request_head("GET / HTTP/1.1\r\nX-Prometheus-Scrape-Timeout-Seconds: -1\r\n").scrape_timeout_s);
  EXPECT_FALSE(parse_request_head("GET / HTTP/1.1\r\nX-Prometheus-Scrape-Timeout-Seconds: 1e999\r\n").scrape_timeout_s);
  EXPECT_FALSE(parse_request_head("GET / HTTP/1.1\r\nX-Prometheus-Scrape-Timeout-Seconds: 3s\r\n").scrape_timeout_s);
  EXPECT_TRUE(accepts_gzip("gzip"));
  EXPECT_TRUE(accepts_gzip("*"));
  EXPECT_FALSE(accepts_gzip("gzip;q=0"));
  EXPECT_FALSE(accepts_gzip("identity, br"));
  EXPECT_FALSE(accepts_gzip(""));
  EXPECT_TRUE(is_loopback_host("::ffff:127.0.0.1"));
  EXPECT_FALSE(is_loopback_host("::ffff:10.0.0.1"));
}

TEST(HttpServer, SocketActivationIsForThisProcessOnly) {
  EXPECT_FALSE(activation_socket(std::nullopt, std::nullopt));
  EXPECT_FALSE(activation_socket("1", "1"));  // another process's (pid 1)
  std::string me = std::to_string(getpid());
  EXPECT_THROW(activation_socket(me, "2"), Error);
  // Descriptor 3 here is whatever the test runner has (or nothing): not a listening TCP socket.
  EXPECT_THROW(activation_socket(me, "1"), Error);
}

}  // namespace
}  // namespace gpumap
