#include "os/ca_paths.h"

#include <sys/stat.h>
#include <unistd.h>

namespace gpumap {

const std::vector<std::string>& common_ca_bundles() {
  static const std::vector<std::string> kBundles = {
      "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu (and Alpine, Arch, Gentoo)
      "/etc/pki/tls/certs/ca-bundle.crt",                   // RHEL, Fedora, Rocky, Alma
      "/etc/ssl/ca-bundle.pem",                             // SUSE
      "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // RHEL, Fedora: the bundle the link above names
      "/etc/ssl/cert.pem",                                  // Alpine, macOS-style, OpenBSD
  };
  return kBundles;
}

std::string fallback_ca_bundle(const std::string& default_file, const std::string& default_dir,
                               const std::function<bool(const std::string&)>& readable_file,
                               const std::function<bool(const std::string&)>& is_dir) {
  if ((!default_file.empty() && readable_file(default_file)) || (!default_dir.empty() && is_dir(default_dir))) return "";
  for (const std::string& b : common_ca_bundles())
    if (readable_file(b)) return b;
  return "";
}

std::string fallback_ca_bundle(const std::string& default_file, const std::string& default_dir) {
  auto readable_file = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), R_OK) == 0;
  };
  auto is_dir = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  };
  return fallback_ca_bundle(default_file, default_dir, readable_file, is_dir);
}

}  // namespace gpumap
