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

TEST(HttpConfig, HttpHeadersFromValuesAndFilesAsPromtoolReadsThem) {
  std::string dir = testing::temp_dir("http-config-headers");
  write_file(dir + "/tenant", "team-a\n");
  HttpAuth a = parse_http_config(
      "http_headers:\n  X-Scope-OrgID:\n    files: [tenant]\n  X-Extra:\n    values: [one, two]\n", dir + "/http.yml");
  EXPECT_EQ(a.headers, (std::vector<std::pair<std::string, std::string>>{{"X-Scope-OrgID", "team-a"}, {"X-Extra", "one"}, {"X-Extra", "two"}}));
  EXPECT_EQ(a.authorization, "");
  // With basic_auth beside it: both apply.
  write_file(dir + "/pw", "pw\n");
  HttpAuth b = parse_http_config("basic_auth: {username: u, password_file: pw}\nhttp_headers: {X-Scope-OrgID: {values: [gpumap]}}\n",
                                 dir + "/http.yml");
  EXPECT_EQ(b.authorization, basic_authorization("u", "pw"));
  EXPECT_EQ(b.headers.size(), 1u);
}

TEST(HttpConfig, HttpHeadersRefusedWithTheFix) {
  auto refused = [](const std::string& yaml, const std::string& words) {
    try {
      parse_http_config(yaml, "/etc/gpumap/h.yml");
      ADD_FAILURE() << "accepted: " << yaml;
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  // Inline secrets: the message names the fix (a file under files:).
  refused("http_headers: {X-Scope-OrgID: {secrets: [s3cret]}}\n", "inline secrets are refused: a secret goes in a file");
  refused("http_headers: {X-Scope-OrgID: {secrets: [s3cret]}}\n", "files:");
  refused("http_headers: {Authorization: {values: [x]}}\n", "http_headers.Authorization");
  refused("http_headers: {host: {values: [x]}}\n", "gpumap sets itself");
  refused("http_headers: {\"X Bad\": {values: [x]}}\n", "is not a header name");
  refused("http_headers: {X-A: {values: [x]}, x-a: {values: [y]}}\n", "given twice");
  refused("http_headers: {X-A: {}}\n", "has no value");
  refused("http_headers: {X-A: {values: x}}\n", "is not a list");
  refused("http_headers: {X-A: {value: [x]}}\n", "http_headers.X-A.value");
  refused("http_headers: {X-A: {values: [\"a\\r\\nEvil: 1\"]}}\n", "control character");
  refused("http_headers: {X-A: {files: [/nonexistent/tenant]}}\n", "/nonexistent/tenant");
  refused("http_headers: [X-A]\n", "http_headers");
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


std::string message_of(const std::string& yaml) {
  try {
    parse_http_config(yaml, "/nonexistent/h.yml");
  } catch (const Error& e) {
    return std::string(e.what()) + " [exit " + std::to_string(e.exit_code()) + "]";
  }
  return "(accepted)";
}

// Issue 56 item 4: with a key given twice the first one won, so `insecure_skip_verify: true`
// followed by `false` turned verification off.  Every level refuses a repeated key, naming it and
// its line (as the web config and Prometheus's strict reader do).
TEST(HttpConfig, AKeyGivenTwiceIsRefusedAtEveryLevelNamingItsLine) {
  struct Case {
    std::string yaml, key, line;
  } cases[] = {
      {"tls_config:\n  insecure_skip_verify: true\n  insecure_skip_verify: false\n", "tls_config.insecure_skip_verify", "line 3"},
      {"tls_config:\n  insecure_skip_verify: true\ntls_config:\n  insecure_skip_verify: false\n", "tls_config", "line 3"},
      {"basic_auth: {username: a, password: b}\nbasic_auth: {username: c, password: d}\n", "basic_auth", "line 2"},
      {"basic_auth:\n  username: a\n  password: b\n  username: c\n", "basic_auth.username", "line 4"},
      {"authorization:\n  credentials: a\n  credentials: b\n", "authorization.credentials", "line 3"},
      {"bearer_token: a\nbearer_token: b\n", "bearer_token", "line 2"},
  };
  for (const Case& c : cases) {
    std::string m = message_of(c.yaml);
    EXPECT_NE(m.find("[exit 2]"), std::string::npos) << c.yaml << " -> " << m;
    EXPECT_NE(m.find("`" + c.key + "`"), std::string::npos) << c.yaml << " -> " << m;
    EXPECT_NE(m.find(c.line), std::string::npos) << c.yaml << " -> " << m;
    EXPECT_NE(m.find("twice"), std::string::npos) << c.yaml << " -> " << m;
  }
}

// Issue 56 item 13: a complex key was an internal error (exit 1); NUL or VT in credentials were
// sent as they were.
TEST(HttpConfig, AComplexKeyAndControlCharactersInCredentialsAreUsageErrors) {
  EXPECT_NE(message_of("? [a, b]\n: c\n").find("[exit 2]"), std::string::npos) << message_of("? [a, b]\n: c\n");
  EXPECT_NE(message_of("tls_config:\n  ? {x: 1}\n  : c\n").find("line 2"), std::string::npos);
  for (std::string yaml : {"basic_auth: {username: \"a\\0b\", password: c}\n", "basic_auth: {username: a, password: \"p\\vw\"}\n",
                           "authorization: {credentials: \"t\\x01k\"}\n", "bearer_token: \"t\\x7fk\"\n",
                           "authorization: {type: \"To\\tken\", credentials: x}\n"}) {
    std::string m = message_of(yaml);
    EXPECT_NE(m.find("[exit 2]"), std::string::npos) << yaml << " -> " << m;
    EXPECT_NE(m.find("control character"), std::string::npos) << yaml << " -> " << m;
  }
  std::string dir = testing::temp_dir("http-config-ctl");
  write_file(dir + "/pw", std::string("pass\x0bword\n"));
  EXPECT_EQ(testing::code_of([&] { parse_http_config("basic_auth: {username: a, password_file: pw}\n", dir + "/h.yml"); }), kExitUsage);
  // A password with spaces and non-ASCII letters stays accepted.
  EXPECT_EQ(parse_http_config("basic_auth: {username: a, password: \"p w é\"}\n", "h.yml").authorization,
            basic_authorization("a", "p w é"));
}

}  // namespace
}  // namespace gpumap
