#include "env/pod_cgroup.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "model/ascii.h"

namespace gpumap {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

bool is_hex(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c); });
}

/// A pod UID as the kubelet writes it (dashes, or underscores under systemd) in canonical form.
std::optional<std::string> pod_uid(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  s = ascii::lower(std::move(s));
  static const size_t kGroups[] = {8, 4, 4, 4, 12};
  std::vector<std::string> parts = split(s, '-');
  if (parts.size() != 5) return std::nullopt;
  for (size_t i = 0; i < 5; ++i)
    if (parts[i].size() != kGroups[i] || !is_hex(parts[i])) return std::nullopt;
  return s;
}

/// The container a path segment names: "cri-containerd-<ID>.scope", "crio-<ID>.scope",
/// "docker-<ID>.scope", "libpod-<ID>.scope", or a bare 64-hex ID (cgroupfs layouts).
std::optional<ContainerCgroup> container_segment(const std::string& seg) {
  static const std::pair<const char*, const char*> kPrefixes[] = {
      {"cri-containerd-", "containerd"}, {"crio-", "cri-o"}, {"docker-", "docker"}, {"libpod-", "podman"}};
  std::string name = seg;
  if (name.size() > 6 && name.compare(name.size() - 6, 6, ".scope") == 0) name.resize(name.size() - 6);
  for (const auto& [prefix, runtime] : kPrefixes) {
    size_t n = std::char_traits<char>::length(prefix);
    if (name.compare(0, n, prefix) == 0) {
      std::string id = name.substr(n);
      if (id.size() == 64 && is_hex(id)) return ContainerCgroup{id, runtime};  // "crio-conmon-..." is not
      return std::nullopt;
    }
  }
  if (name.size() == 64 && is_hex(name)) return ContainerCgroup{name, ""};
  return std::nullopt;
}

/// Each line's path ("0::/a/b" or "4:memory:/a/b"), first the v2 line.
std::vector<std::string> paths(const std::string& text) {
  std::vector<std::string> v2, v1;
  for (const std::string& line : split(text, '\n')) {
    size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    (line.compare(0, a, "0") == 0 && b == a + 1 ? v2 : v1).push_back(line.substr(b + 1));
  }
  v2.insert(v2.end(), v1.begin(), v1.end());
  return v2;
}

}  // namespace

std::optional<PodCgroup> parse_pod_cgroup(const std::string& text) {
  for (const std::string& path : paths(text)) {
    std::vector<std::string> segs = split(path, '/');
    for (size_t i = 0; i < segs.size(); ++i) {
      const std::string& seg = segs[i];
      std::optional<PodCgroup> pod;
      // systemd: ...kubepods[-QOS]-pod<UID>.slice
      size_t at = seg.find("kubepods");
      size_t p = seg.rfind("-pod");
      if (at != std::string::npos && p != std::string::npos && seg.size() > 6 &&
          seg.compare(seg.size() - 6, 6, ".slice") == 0) {
        if (std::optional<std::string> uid = pod_uid(seg.substr(p + 4, seg.size() - 6 - p - 4))) {
          std::string qos = seg.substr(at + 8, p - at - 8);  // "", "-burstable", "-besteffort"
          pod = PodCgroup{*uid, qos.empty() ? "guaranteed" : qos.substr(1), "", "", "", 0};
        }
      }
      // cgroupfs: /kubepods[/QOS]/pod<UID>
      if (!pod && seg.compare(0, 3, "pod") == 0 && i > 0) {
        bool under = segs[i - 1] == "kubepods" || (i > 1 && segs[i - 2] == "kubepods");
        if (std::optional<std::string> uid = pod_uid(seg.substr(3)); uid && under)
          pod = PodCgroup{*uid, segs[i - 1] == "kubepods" ? "guaranteed" : segs[i - 1], "", "", "", 0};
      }
      if (!pod) continue;
      if (pod->qos != "guaranteed" && pod->qos != "burstable" && pod->qos != "besteffort") continue;
      if (i + 1 < segs.size())
        if (std::optional<ContainerCgroup> c = container_segment(segs[i + 1])) {
          pod->container_id = c->id;
          pod->runtime = c->runtime;
        }
      pod->path = path;
      pod->pod_segment = i;
      return pod;
    }
  }
  return std::nullopt;
}

std::string pod_cgroup_untrusted(const PodCgroup& pod, const std::string& owned_path,
                                 const std::vector<std::optional<uint32_t>>& owners) {
  std::vector<std::string> segs = split(pod.path, '/');
  std::string user_unit;  // the innermost (user@N.service says whose)
  for (size_t i = 0; i < pod.pod_segment && i < segs.size(); ++i) {
    const std::string& s = segs[i];
    if (s == "user.slice" || (s.rfind("user-", 0) == 0 && s.size() > 11 && s.compare(s.size() - 6, 6, ".slice") == 0) ||
        (s.rfind("user@", 0) == 0 && s.size() > 13 && s.compare(s.size() - 8, 8, ".service") == 0))
      user_unit = s;
  }
  if (!user_unit.empty())
    return "its cgroup is under " + user_unit + ", a user's delegated cgroup tree, not the kubelet's: " + pod.path;
  // Issue 56 item 5: owners that could not be read (gpumap in a cgroup namespace of its own
  // without the host's tree) let the name alone decide, and a delegated folder named like a pod
  // was that pod.  Now what cannot be verified is not attributed, and says so.
  const std::string unread =
      " could not be read to check that root made it (gpumap sees another cgroup tree: in a container, mount "
      "the host's /sys/fs/cgroup there and share its PID namespace, docs/kubernetes.md), so it is not taken as "
      "the pod its name says";
  if (owned_path != pod.path) return "the owner of its cgroup folder " + pod.path + unread;
  std::string at;
  for (size_t i = 1; i < segs.size(); ++i) {
    at += "/" + segs[i];
    if (i < pod.pod_segment) continue;
    if (i >= owners.size() || !owners[i]) return "the owner of its cgroup folder " + at + unread;
    if (*owners[i] != 0)
      return "its cgroup folder " + at + " is owned by uid " + std::to_string(*owners[i]) +
             ", not root: only root makes the kubelet's folders";
  }
  return "";
}

std::optional<ContainerCgroup> parse_container_cgroup(const std::string& text) {
  if (parse_pod_cgroup(text)) return std::nullopt;  // a pod's container: parse_pod_cgroup says it
  for (const std::string& path : paths(text)) {
    std::vector<std::string> segs = split(path, '/');
    for (size_t i = 0; i < segs.size(); ++i) {
      std::optional<ContainerCgroup> c = container_segment(segs[i]);
      if (!c) continue;
      if (c->runtime.empty()) {  // a bare ID: only under docker/ (cgroupfs) is it a container's
        if (i == 0 || segs[i - 1] != "docker") continue;
        c->runtime = "docker";
      }
      return c;
    }
  }
  return std::nullopt;
}

}  // namespace gpumap
