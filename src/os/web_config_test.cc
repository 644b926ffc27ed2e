#include "os/web_config.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "model/error.h"
#include "http/server.h"

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
  // A key given twice is an error naming it (yaml-cpp keeps both; the last used to count).
  EXPECT_NE(error_of(std::string("basic_auth_users:\n  alice: ") + kUU + "\n  alice: " + kUUU + "\n")
                .find("`basic_auth_users.alice` is given twice"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("basic_auth_users: {alice: ") + kUU + "}\nbasic_auth_users: {}\n").find("`basic_auth_users` is given twice"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, cert_file: c}").find("`tls_server_config.cert_file` is given twice"),
            std::string::npos);
  // Every message names the file.
  EXPECT_NE(error_of("x: 1").find("/etc/gpumap/web.yml"), std::string::npos);
}

// Issue 46, item 3: a cost above kMaxBcryptCost is refused at start, naming the user and the cost
// (cost 31 as the first user kept serve from starting; as another, one login froze it).
TEST(WebConfig, BcryptCostsAboveTheMaximumAreRefusedAtStart) {
  std::string h14 = std::string(kUU), h15 = h14, h31 = h14;
  h14.replace(4, 2, "14");
  h15.replace(4, 2, "15");
  h31.replace(4, 2, "31");
  EXPECT_EQ(bcrypt_cost(h14), 14);
  EXPECT_EQ(parse_web_config("basic_auth_users: {alice: '" + h14 + "'}", "w.yml").basic_auth_users.size(), 1u);
  std::string e = error_of("basic_auth_users: {alice: '" + std::string(kUU) + "', bob: '" + h31 + "'}");
  EXPECT_NE(e.find("basic_auth_users.bob: bcrypt cost 31 is above gpumap serve's maximum of 14"), std::string::npos) << e;
  e = error_of("basic_auth_users: {carol: '" + h15 + "'}");
  EXPECT_NE(e.find("basic_auth_users.carol: bcrypt cost 15"), std::string::npos) << e;
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

// A temporary folder, removed at the end.
struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/gpumap-webcfg-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
    return path + "/" + name;
  }
};

std::string read_error(const std::string& path) {
  try {
    read_web_config(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage) << path;
    return std::string(e.what()) + " | " + e.hint();
  }
  return "";
}

// Issue 46, items 4 and 5: a config path that is not a readable regular file of at most 1 MiB is
// an error naming it (gpumap serve exits), never an empty config served as plain HTTP.
TEST(WebConfig, AConfigThatCannotBeReadFailsClosed) {
  TempDir dir;
  std::string e = read_error(dir.path);  // what Docker makes of a missing bind-mounted file
  EXPECT_NE(e.find("--web.config.file " + dir.path + ": is a folder"), std::string::npos) << e;
  EXPECT_NE(e.find("bind mount"), std::string::npos) << e;
  e = read_error("/proc/self/mem");  // open succeeds, read fails
  EXPECT_NE(e.find("/proc/self/mem: cannot be read"), std::string::npos) << e;
  e = read_error(dir.path + "/missing.yml");
  EXPECT_NE(e.find("missing.yml: No such file"), std::string::npos) << e;
  if (geteuid() != 0) {  // (root reads a file of mode 000)
    std::string locked = dir.file("locked.yml", "basic_auth_users: {}\n");
    chmod(locked.c_str(), 0);
    EXPECT_NE(read_error(locked).find("Permission denied"), std::string::npos);
  }
  std::string big = dir.file("big.yml", "# " + std::string(kWebConfigMaxBytes, 'x') + "\n");
  EXPECT_NE(read_error(big).find("larger than 1 MiB"), std::string::npos);
  // An empty first YAML document with the users in a second one: an error, not "no users".
  std::string two = dir.file("two.yml", std::string("---\n---\nbasic_auth_users:\n  alice: ") + kUU + "\n");
  e = read_error(two);
  EXPECT_NE(e.find("holds 2 YAML documents"), std::string::npos) << e;
  // One document after a `---` is one document.
  EXPECT_EQ(read_web_config(dir.file("one.yml", std::string("---\nbasic_auth_users:\n  alice: ") + kUU + "\n"))
                .basic_auth_users.size(),
            1u);
}

// A device is refused from fstat, before a byte is read: /dev/zero would be read for ever (the
// old reader took 8.4 GB); a FIFO is opened without blocking (the old reader waited for a
// writer).  In a child with an alarm, so the old code fails instead of hanging.
TEST(WebConfigDeathTest, ADeviceOrAFifoIsRefusedWithoutReadingIt) {
  EXPECT_EXIT(
      {
        alarm(60);
        std::string e = read_error("/dev/zero");
        std::fprintf(stderr, "%s\n", e.c_str());
        std::_Exit(e.empty() ? 1 : 3);
      },
      testing::ExitedWithCode(3), "/dev/zero: is not a regular file \\(a device\\)");
  TempDir dir;
  std::string fifo = dir.path + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EXIT(
      {
        alarm(60);
        std::string e = read_error(fifo);
        std::fprintf(stderr, "%s\n", e.c_str());
        std::_Exit(e.empty() ? 1 : 3);
      },
      testing::ExitedWithCode(3), "fifo: is not a regular file \\(a FIFO\\)");
}

// A FIFO as cert_file is refused at start, never waited on (it held the start until a signal).
TEST(WebConfigDeathTest, AFifoAsCertFileIsRefusedNotWaitedOn) {
  TempDir dir;
  std::string fifo = dir.path + "/cert.pem";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  WebConfig web = parse_web_config("tls_server_config: {cert_file: cert.pem, key_file: cert.pem}", dir.path + "/web.yml");
  EXPECT_EXIT(
      {
        alarm(60);
        try {
          HttpServer server("127.0.0.1", 0, {}, web);
        } catch (const Error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::_Exit(3);
        }
        std::_Exit(1);
      },
      testing::ExitedWithCode(3), "tls_server_config.cert_file .*cert.pem: is not a regular file \\(a FIFO\\)");
}

// The certificate, its chain and key, and a client CA are read from the bytes read_config_file
// read (openssl(1) makes them; skipped without it).
TEST(WebConfig, LoadsCertificateKeyAndClientCaFromTheFilesRead) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) GTEST_SKIP() << "no openssl(1)";
  TempDir dir;
  std::string cmd = "cd " + dir.path +
                    " && openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 -subj /CN=localhost "
                    ">/dev/null 2>&1 && cp cert.pem ca.pem && cat cert.pem cert.pem > chain.pem";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  WebConfig web = parse_web_config(
      "tls_server_config: {cert_file: chain.pem, key_file: key.pem, client_ca_file: ca.pem, "
      "client_auth_type: VerifyClientCertIfGiven}",
      dir.path + "/web.yml");
  HttpServer server("127.0.0.1", 0, {}, web);
  EXPECT_TRUE(server.tls());
  // The key of another certificate, or a CA file without a certificate, is an error naming the file.
  dir.file("empty.pem", "");
  web.tls->client_ca_file = dir.path + "/empty.pem";
  try {
    HttpServer bad("127.0.0.1", 0, {}, web);
    ADD_FAILURE() << "a CA file without a certificate was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("empty.pem"), std::string::npos) << e.what();
  }
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
  // Two Authorization headers: refused (400), not the last one counted (issue 46, item 12).
  EXPECT_EQ(parse_request_head("GET /metrics HTTP/1.1\r\nAuthorization: Basic Ym9iOlUqVQ==\r\n"
                               "authorization: Basic YWxpY2U6VSpV\r\n")
                .refuse,
            400);
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
