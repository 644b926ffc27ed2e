// contrib/kubernetes/ as a cluster would take it: the alert rules (contrib/prometheus/) pass promtool
// and are the ones docs/metrics.md shows, the DaemonSet asks only for what docs/kubernetes.md says
// (host PIDs, the pod-resources socket and CDI folder read-only, no GPU taken, no API token), its
// probes and ports meet `gpumap serve`'s, and the image's runtime packages hold every library the
// binaries load.
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "cli_helpers.h"
#include "formats/cdi_spec.h"

namespace gpumap::testing {
namespace {

const std::string kDir = std::string(GPUMAP_SOURCE_DIR) + "/contrib/kubernetes/";
const std::string kRules = std::string(GPUMAP_SOURCE_DIR) + "/contrib/prometheus/";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// alert name -> expr of a rule file's groups.
std::map<std::string, std::string> alerts(const YAML::Node& doc) {
  std::map<std::string, std::string> out;
  for (const YAML::Node& g : doc["groups"])
    for (const YAML::Node& r : g["rules"]) out[r["alert"].as<std::string>()] = r["expr"].as<std::string>();
  return out;
}

TEST(ContribKubernetes, AlertRulesPassPromtoolAndAreTheDocs) {
  ASSERT_EQ(access("/usr/bin/promtool", X_OK), 0) << "promtool is not installed (scripts/deps.sh installs it)";
  CliRun check =
      run_program({"/usr/bin/promtool", "check", "rules", kRules + "gpumap-rules.yml", kRules + "gpumap-alerts.yml"});
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  std::string md = slurp(std::string(GPUMAP_SOURCE_DIR) + "/docs/metrics.md");
  size_t at = md.find("```yaml\ngroups:\n- name: gpumap\n");
  ASSERT_NE(at, std::string::npos) << "docs/metrics.md's alert block";
  at += 8;
  std::string block = md.substr(at, md.find("```", at) - at);
  std::map<std::string, std::string> docs = alerts(YAML::Load(block));
  std::map<std::string, std::string> shipped = alerts(YAML::LoadFile(kRules + "gpumap-alerts.yml"));
  EXPECT_GE(docs.size(), 17u);
  EXPECT_EQ(docs, shipped) << "contrib/prometheus/gpumap-alerts.yml and docs/metrics.md disagree";
  for (const char* name : {"GpuPodOutsideAllocation", "GpuRankOnWrongGpu", "GpuAllocatedButIdle", "GpumapScrapeDown",
                           "GpumapCudaProbeFailing", "GpumapExporterDown"})
    EXPECT_EQ(shipped.count(name), 1u) << name;
}

TEST(ContribKubernetes, TheDaemonSetAsksOnlyForWhatItNeeds) {
  std::vector<YAML::Node> docs = YAML::LoadAllFromFile(kDir + "gpumap-daemonset.yaml");
  YAML::Node ds, svc;
  for (const YAML::Node& d : docs) {
    if (d["kind"].as<std::string>() == "DaemonSet") ds = d;
    if (d["kind"].as<std::string>() == "Service") svc = d;
  }
  ASSERT_TRUE(ds && svc);
  YAML::Node pod = ds["spec"]["template"]["spec"];
  EXPECT_TRUE(pod["hostPID"].as<bool>()) << "NVML reports host PIDs";
  EXPECT_FALSE(pod["automountServiceAccountToken"].as<bool>()) << "no API server, no token";
  EXPECT_FALSE(pod["hostNetwork"]) << "not needed";
  ASSERT_EQ(pod["containers"].size(), 1u);
  YAML::Node c = pod["containers"][0];
  for (const char* kind : {"requests", "limits"})
    if (c["resources"][kind]) { EXPECT_FALSE(c["resources"][kind]["nvidia.com/gpu"]) << "an exporter must not take a GPU"; }
  std::set<std::string> mounts;
  for (const YAML::Node& m : c["volumeMounts"]) {
    std::string path = m["mountPath"].as<std::string>();
    mounts.insert(path);
    if (path != "/tmp") { EXPECT_TRUE(m["readOnly"] && m["readOnly"].as<bool>()) << path << " must be read-only"; }
  }
  EXPECT_EQ(mounts, (std::set<std::string>{"/var/lib/kubelet/pod-resources", "/var/run/cdi", "/etc/cdi", "/tmp", "/sys/fs/cgroup"}));
  // Issue 56 item 5: the pod runs in a cgroup namespace of its own; the host's cgroup tree where
  // gpumap reads owners (ProcFs's /sys/fs/cgroup) lets it check who made a pod's folders.
  bool host_cgroups = false;
  for (const YAML::Node& v : pod["volumes"])
    if (v["name"].as<std::string>() == "host-cgroup")
      host_cgroups = v["hostPath"]["path"].as<std::string>() == "/sys/fs/cgroup" && v["hostPath"]["type"].as<std::string>() == "Directory";
  EXPECT_TRUE(host_cgroups) << "the host's /sys/fs/cgroup, as a Directory";
  for (const YAML::Node& m : c["volumeMounts"])
    if (m["mountPath"].as<std::string>() == "/sys/fs/cgroup") { EXPECT_EQ(m["name"].as<std::string>(), "host-cgroup"); }
  for (const std::string& dir : kCdiSpecDirs)  // the folders gpumap-kubelet reads by default
    EXPECT_TRUE(mounts.count(dir)) << dir << " (CDI specs) is not mounted";
  EXPECT_TRUE(c["securityContext"]["readOnlyRootFilesystem"].as<bool>());
  EXPECT_FALSE(c["securityContext"]["privileged"]) << "capabilities, not privileged";
  // The socket gpumap is told is the one mounted; serve listens on the port the probes and Service use.
  std::string socket;
  for (const YAML::Node& e : c["env"])
    if (e["name"].as<std::string>() == "GPUMAP_KUBELET_SOCKET") socket = e["value"].as<std::string>();
  EXPECT_EQ(socket.rfind("/var/lib/kubelet/pod-resources/", 0), 0u) << socket;
  std::vector<std::string> cmd = c["command"].as<std::vector<std::string>>();
  ASSERT_GE(cmd.size(), 4u);
  EXPECT_EQ(cmd[1], "serve");
  EXPECT_EQ(cmd[3], "0.0.0.0:" + std::to_string(c["ports"][0]["containerPort"].as<int>()));
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_EQ(svc["spec"]["ports"][0]["targetPort"].as<std::string>(), c["ports"][0]["name"].as<std::string>());
  // The options gpumap serve is given are its own (serve refuses an unknown option with exit 2).
  CliRun help = gpumap({cmd[1], cmd[2], cmd[3], "--help"});
  EXPECT_EQ(help.code, 0) << help.err;
  YAML::Node monitor = YAML::LoadFile(kDir + "gpumap-servicemonitor.yaml");
  EXPECT_TRUE(monitor["spec"]["endpoints"][0]["honorLabels"].as<bool>()) << "keeps gpumap's pod labels";
  EXPECT_EQ(monitor["spec"]["endpoints"][0]["port"].as<std::string>(), c["ports"][0]["name"].as<std::string>());
}

/// The lines of a shell command's output.
std::vector<std::string> lines_of(const std::string& command) {
  CliRun r = run_program({"/bin/sh", "-c", command});
  EXPECT_EQ(r.code, 0) << command << ": " << r.err;
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

/// `packages` and everything they depend on (Depends and Pre-Depends, recursively, every
/// alternative), from dpkg's own records of what is installed here: apt's package lists are not
/// needed (a machine whose packages came with its image may have none).
std::set<std::string> dependency_closure(const std::vector<std::string>& packages) {
  std::string todo;
  for (const std::string& p : packages) todo += " " + p;
  std::set<std::string> out;
  for (const std::string& l : lines_of(
           "todo='" + todo + "'; seen=' '; "
           "while [ -n \"$(echo $todo)\" ]; do set -- $todo; p=$1; shift; todo=\"$*\"; "
           "case \"$seen\" in *\" $p \"*) continue ;; esac; seen=\"$seen$p \"; "
           "todo=\"$todo $(dpkg-query -W -f='${Depends}, ${Pre-Depends}' \"$p\" 2>/dev/null | tr ',|' '\\n\\n' | "
           "sed 's/([^)]*)//g; s/:any//g; s/ //g' | grep -v '^$' | tr '\\n' ' ')\"; done; printf '%s\\n' $seen"))
    out.insert(l);
  return out;
}

bool installed(const std::string& package) {
  return run_program({"/usr/bin/dpkg-query", "-W", "-f=${Status}", package}).out.find("install ok installed") !=
         std::string::npos;
}

// Every library gpumap (and gpumap-kubelet, when built) loads comes from a package the image's
// runtime stage installs or one of their dependencies (what apt-get installs with them), or from
// the base image (libc6, libgcc-s1, libstdc++6).
TEST(ContribKubernetes, TheImageInstallsEveryLibraryTheBinariesLoad) {
  std::string dockerfile = slurp(kDir + "Dockerfile");
  size_t slim = dockerfile.find("FROM debian:bookworm-slim");
  ASSERT_NE(slim, std::string::npos);
  std::string install = dockerfile.substr(slim);
  install = install.substr(install.find("--no-install-recommends"));
  install = install.substr(0, install.find("&&"));
  std::vector<std::string> named;
  std::istringstream words(install.substr(install.find('\\') + 1));
  for (std::string w; words >> w;)
    if (w != "\\") named.push_back(w);
  ASSERT_GE(named.size(), 4u) << install;
  // What apt-get install pulls in with them (Depends and Pre-Depends, recursively).  The binaries
  // here load those very packages, so each is installed on this machine.
  for (const std::string& n : named) EXPECT_TRUE(installed(n)) << n << " is not installed here (a misspelt package?)";
  std::set<std::string> closure = dependency_closure(named);
  std::vector<std::string> binaries = {GPUMAP_BINARY};
#ifdef GPUMAP_KUBELET_BINARY
  binaries.push_back(GPUMAP_KUBELET_BINARY);
#endif
  for (const std::string& bin : binaries) {
    std::vector<std::string> libs = lines_of("ldd '" + bin + "' | awk '$3 ~ /^\\// {print $3}'");
    ASSERT_GE(libs.size(), 2u) << bin;
    // One dpkg -S for every form of every path (dpkg knows a file by the path its package ships:
    // /lib or /usr/lib on a merged /usr).
    std::string forms;
    for (const std::string& l : libs) forms += " '" + l + "' \"$(realpath '" + l + "')\"";
    std::map<std::string, std::string> owner;  // file name -> package
    for (const std::string& l : lines_of("dpkg -S" + forms + " 2>/dev/null; true")) {
      size_t colon = l.find(": ");
      if (colon == std::string::npos) continue;
      std::string path = l.substr(colon + 2);
      owner[path.substr(path.rfind('/') + 1)] = l.substr(0, l.find(':'));
    }
    // A sanitizer build loads its runtime and what that needs, and its instrumented code calls
    // libatomic (gpumap-kubelet built with -fsanitize=address NEEDs libatomic.so.1; the release
    // build does not): the image's release binaries load none of these, so they are left out.
    std::set<std::string> sanitizer;
    for (const auto& [file, pkg] : owner)
      if (pkg.rfind("libasan", 0) == 0 || pkg.rfind("libubsan", 0) == 0) {
        sanitizer.insert("libatomic1");
        for (const std::string& d : dependency_closure({pkg})) sanitizer.insert(d);
      }
    for (const std::string& lib : libs) {
      std::string file = lib.substr(lib.rfind('/') + 1);
      std::string real = lines_of("realpath '" + lib + "'").at(0);
      std::string pkg = owner.count(file) ? owner[file] : owner[real.substr(real.rfind('/') + 1)];
      if (pkg.empty()) {
        ADD_FAILURE() << bin << ": no package ships " << lib;
        continue;
      }
      if (pkg == "libc6" || pkg == "libgcc-s1" || pkg == "libstdc++6") continue;
      if (sanitizer.count(pkg)) continue;  // the sanitizer pass's own
      EXPECT_EQ(closure.count(pkg), 1u) << bin << " loads " << lib << " (" << pkg << "), which the image does not install";
    }
  }
}

}  // namespace
}  // namespace gpumap::testing
