#include "os/ca_paths.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

// A file system of the paths named: `files` readable files, `dirs` folders.
struct Fs {
  std::set<std::string> files, dirs;
  std::string fallback(const std::string& file = "/usr/lib/ssl/cert.pem", const std::string& dir = "/usr/lib/ssl/certs") const {
    return fallback_ca_bundle(file, dir, [&](const std::string& p) { return files.count(p) > 0; },
                              [&](const std::string& p) { return dirs.count(p) > 0; });
  }
};

// Issue 56 item 9: the portable OpenSSL looks only under /usr/lib/ssl (Debian's layout); on RHEL,
// which the .rpm targets, https to a system-trusted Prometheus failed without ca_file.
TEST(CaPaths, TheDefaultsServeWhereTheyExist) {
  EXPECT_EQ((Fs{{"/usr/lib/ssl/cert.pem", "/etc/ssl/certs/ca-certificates.crt"}, {}}).fallback(), "");
  EXPECT_EQ((Fs{{"/etc/ssl/certs/ca-certificates.crt"}, {"/usr/lib/ssl/certs"}}).fallback(), "");  // Debian: certs/ links /etc/ssl/certs
}

TEST(CaPaths, EachDistributionsBundleIsFoundWhenTheDefaultsAreAbsent) {
  EXPECT_EQ((Fs{{"/etc/pki/tls/certs/ca-bundle.crt", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"}, {"/etc/pki"}}).fallback(),
            "/etc/pki/tls/certs/ca-bundle.crt");  // RHEL 9
  EXPECT_EQ((Fs{{"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"}, {}}).fallback(),
            "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem");  // RHEL without the legacy link
  EXPECT_EQ((Fs{{"/etc/ssl/ca-bundle.pem"}, {}}).fallback(), "/etc/ssl/ca-bundle.pem");  // SUSE
  EXPECT_EQ((Fs{{"/etc/ssl/cert.pem"}, {}}).fallback(), "/etc/ssl/cert.pem");            // Alpine
  EXPECT_EQ((Fs{{"/etc/ssl/certs/ca-certificates.crt"}, {}}).fallback(), "/etc/ssl/certs/ca-certificates.crt");  // emptied /usr/lib/ssl
  EXPECT_EQ((Fs{{}, {}}).fallback(), "");  // nothing: the defaults fail as before
  EXPECT_EQ((Fs{{"/etc/ssl/cert.pem"}, {}}).fallback("", ""), "/etc/ssl/cert.pem");
  ASSERT_EQ(common_ca_bundles().size(), 5u);
  EXPECT_EQ(common_ca_bundles().front(), "/etc/ssl/certs/ca-certificates.crt");
}

// On this machine's real file system: an emptied default location (a folder that does not
// exist) finds Debian's bundle, which the test machine has.
TEST(CaPaths, OnThisMachineAMissingDefaultFindsTheSystemBundle) {
  std::string got = fallback_ca_bundle("/nonexistent/ssl/cert.pem", "/nonexistent/ssl/certs");
  if (got.empty()) GTEST_SKIP() << "this machine has none of the common CA bundles";
  EXPECT_NE(std::find(common_ca_bundles().begin(), common_ca_bundles().end(), got), common_ca_bundles().end()) << got;
  EXPECT_EQ(fallback_ca_bundle("/nonexistent/ssl/cert.pem", "/"), "");  // an existing default folder serves
}

}  // namespace
}  // namespace gpumap
