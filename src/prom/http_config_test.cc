#include "prom/http_config.h"

#include <fstream>

#include <gtest/gtest.h>

#include "cli_helpers.h"
#include "fake_session.h"
#include "model/error.h"

namespace gpumap {
namespace {

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(HttpConfig, BasicAuthFromAPasswordFileRelativeToTheConfig) {
  std::string dir = testing::temp_dir("http-config");
  write_file(dir + "/pw", "s3cret\n");
  HttpAuth a = parse_http_config("basic_auth:\n  username: prom\n  password_file: pw\n", dir + "/http.yml");
  EXPECT_EQ(a.authorization, basic_authorization("prom", "s3cret"));
  EXPECT_EQ(basic_authorization("prom", "s3cret"), "Basic cHJvbTpzM2NyZXQ=");
  EXPECT_EQ(basic_authorization("a", "b"), "Basic YTpi");
  EXPECT_EQ(basic_authorization("ab", "cd"), "Basic YWI6Y2Q=");
}

TEST(HttpConfig, AuthorizationAndTls) {
  std::string dir = testing::temp_dir("http-config-tls");
  write_file(dir + "/token", "tok\n");
  write_file(dir + "/ca.pem", "x");
  HttpAuth a = parse_http_config(
      "authorization:\n  credentials_file: " + dir + "/token\ntls_config:\n  ca_file: ca.pem\n  server_name: prom.example\n",
      dir + "/http.yml");
  EXPECT_EQ(a.authorization, "Bearer tok");
  EXPECT_EQ(a.ca_file, dir + "/ca.pem");
  EXPECT_EQ(a.server_name, "prom.example");
  EXPECT_FALSE(a.insecure_skip_verify);
  HttpAuth b = parse_http_config("authorization: {type: Token, credentials: abc}\ntls_config: {insecure_skip_verify: true}\n", "h.yml");
  EXPECT_EQ(b.authorization, "Token abc");
  EXPECT_TRUE(b.insecure_skip_verify);
  EXPECT_EQ(parse_http_config("", "h.yml").authorization, "");
}

TEST(HttpConfig, WhatGpumapWouldNotApplyIsRefused) {
  auto code = [](const std::string& yaml) { return testing::code_of([&] { parse_http_config(yaml, "/nonexistent/h.yml"); }); };
  EXPECT_EQ(code("proxy_url: http://proxy:3128\n"), kExitUsage);  // unknown: never silently ignored
  EXPECT_EQ(code("basic_auth: {username: a, password: b}\nauthorization: {credentials: c}\n"), kExitUsage);
  EXPECT_EQ(code("basic_auth: {password: b}\n"), kExitUsage);
  EXPECT_EQ(code("basic_auth: {username: a, password_file: missing}\n"), kExitUsage);
  EXPECT_EQ(code("tls_config: {cert_file: c.pem}\n"), kExitUsage);
  EXPECT_EQ(code("tls_config: {insecure_skip_verify: maybe}\n"), kExitUsage);
  EXPECT_EQ(code("a: [\n"), kExitUsage);
  EXPECT_EQ(code("{}\n---\nbasic_auth: {username: a}\n"), kExitUsage);
  try {
    parse_http_config("tls_config: {ca_file: ca.pem, cipher_suites: [x]}\n", "/etc/h.yml");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tls_config.cipher_suites"), std::string::npos) << e.what();
  }
  EXPECT_EQ(testing::code_of([] { load_http_config("/nonexistent/http.yml"); }), kExitUsage);
  EXPECT_EQ(testing::code_of([] { load_http_config("/dev/zero"); }), kExitUsage);
}

}  // namespace
}  // namespace gpumap
