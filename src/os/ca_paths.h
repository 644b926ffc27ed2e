// Where the system's trusted CA certificates are, for a TLS client whose OpenSSL was built for
// another distribution's layout: the portable build's OpenSSL (Debian 11's, linked in) looks only
// under /usr/lib/ssl (OPENSSLDIR: cert.pem and certs/), which RHEL, SUSE and Alpine do not have, so
// https to a system-trusted server failed there unless a ca_file was given (issue 56 item 9).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace gpumap {

/// The bundle files distributions keep their trusted CAs in, in the order tried: Debian/Ubuntu,
/// RHEL/Fedora (the legacy link), SUSE, RHEL/Fedora's extracted bundle, Alpine/BSD-style.
const std::vector<std::string>& common_ca_bundles();

/// The CA bundle a client should load besides OpenSSL's defaults: "" when OpenSSL's default file
/// (`default_file`, X509_get_default_cert_file()) is a readable file or its default folder
/// (`default_dir`, X509_get_default_cert_dir()) exists, so the defaults serve; else the first of
/// common_ca_bundles() that `readable_file` accepts; "" when none does (the defaults then fail as
/// before, and the error says to give tls_config.ca_file).  Pure: the file system is `readable_file`
/// (a regular file this process may read) and `is_dir`.
std::string fallback_ca_bundle(const std::string& default_file, const std::string& default_dir,
                               const std::function<bool(const std::string&)>& readable_file,
                               const std::function<bool(const std::string&)>& is_dir);

/// fallback_ca_bundle on this machine's file system.
std::string fallback_ca_bundle(const std::string& default_file, const std::string& default_dir);

}  // namespace gpumap
