// Which pod a GPU process is in, for real: sleeping processes placed in cgroups named as the
// kubelet names them (a test-owned subtree of this machine's cgroup tree, removed afterwards),
// with environments as the NVIDIA device plugin sets them, and a real gRPC server speaking the
// kubelet's pod-resources API (tests/kube/fake_kubelet.cc) that lists their pods.  gpumap finds
// gpumap-kubelet beside itself and asks that socket ($GPUMAP_KUBELET_SOCKET).
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "json_contract.h"
#include "kube/fake_kubelet_server.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

const char* kGpu0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";  // h200x2's GPU 0
const char* kGpu1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";  // and GPU 1

/// Where a cgroup hierarchy is mounted: "cgroup2" (the unified one), or a v1 controller ("pids").
std::string cgroup_mount(const std::string& which) {
  std::ifstream in("/proc/self/mounts");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string dev, dir, type, opts;
    f >> dev >> dir >> type >> opts;
    if (which == "cgroup2" && type == "cgroup2") return dir;
    if (which != "cgroup2" && type == "cgroup" && ("," + opts + ",").find("," + which + ",") != std::string::npos) return dir;
  }
  return "";
}

/// A cgroup path made under `mount` (each missing folder created, removed again from the deepest
/// up on destruction, after the processes moved in are moved back to the hierarchy's root).  Each
/// test process makes its kubelet-named folders below a parent of its own (`gpumap-test-PID`, as a
/// kubelet inside kind or a container runtime nests them), so tests running at once never share a
/// `kubepods.slice` that one of them removes while the other still uses it.
class TestCgroup {
 public:
  TestCgroup(std::string mount, const std::string& path) : mount_(std::move(mount)) {
    std::string at = mount_;
    std::string nested = "gpumap-test-" + std::to_string(getpid()) + "/" + path;
    std::istringstream parts(nested);
    for (std::string p; std::getline(parts, p, '/');) {
      if (p.empty()) continue;
      at += "/" + p;
      if (mkdir(at.c_str(), 0755) == 0) made_.push_back(at);
      else if (errno != EEXIST) ADD_FAILURE() << "mkdir " << at << ": " << strerror(errno);
    }
    leaf_ = at;
  }
  ~TestCgroup() {
    for (int pid : moved_) std::ofstream(mount_ + "/cgroup.procs") << pid << "\n";  // out again, if it still lives
    for (auto it = made_.rbegin(); it != made_.rend(); ++it)
      if (rmdir(it->c_str()) != 0 && errno != ENOENT) ADD_FAILURE() << "rmdir " << *it << ": " << strerror(errno);
  }
  TestCgroup(const TestCgroup&) = delete;
  TestCgroup& operator=(const TestCgroup&) = delete;
  /// Moves `pid` in; its /proc/PID/cgroup then names this path.
  void add(int pid) {
    std::ofstream(leaf_ + "/cgroup.procs") << pid << "\n";
    moved_.push_back(pid);
  }

 private:
  std::string mount_, leaf_;
  std::vector<std::string> made_;
  std::vector<int> moved_;
};

std::string cgroup_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// h200x2 with these processes on GPU 0 and GPU 1.
std::string host_with(const std::vector<int>& gpu0, const std::vector<int>& gpu1) {
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  for (int g = 0; g < 2; ++g) {
    json list = json::array();
    for (int pid : g ? gpu1 : gpu0) list.push_back({{"pid", pid}, {"used_memory_mib", 512}});
    h["gpus"][g]["processes"] = list;
  }
  return write_temp_file("pods-host.json", h.dump());
}

const json& row(const json& ps, int pid, int gpu) {
  for (const json& p : ps["processes"])
    if (p["pid"] == pid && p["nvml_index"] == gpu) return p;
  static const json none;
  ADD_FAILURE() << "no row for pid " << pid << " on GPU " << gpu;
  return none;
}

bool has(const json& p, const std::string& id) {
  for (const json& f : p["findings"])
    if (f["id"] == id) return true;
  return false;
}

const std::string kUidA = "5f8e2b1a-3c4d-4e5f-8a9b-0c1d2e3f4a5b";
const std::string kUidB = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const std::string kUidC = "99999999-8888-4777-8666-555555555555";
const std::string kCtrA(64, 'a'), kCtrB(64, 'b'), kCtrC(64, 'c');

std::string systemd_slice(const std::string& qos, const std::string& uid) {
  std::string u = uid;
  for (char& c : u)
    if (c == '-') c = '_';
  return "kubepods.slice/kubepods-" + qos + ".slice/kubepods-" + qos + "-pod" + u + ".slice";
}

TEST(Pods, ProcessesAreNamedByTheirPodAndAGpuOutsideTheAllocationIsSaid) {
  if (geteuid() != 0) GTEST_SKIP() << "moving processes between cgroups needs root (CI runs as root)";
  std::string v2 = cgroup_mount("cgroup2");
  ASSERT_FALSE(v2.empty()) << "no cgroup2 hierarchy mounted";
  // Pod A (systemd driver, containerd, cgroup v2): the trainer holds GPU 0 and also uses GPU 1.
  // Pod B (cgroupfs driver, CRI-O; on a v1 controller when this machine has one): index strategy.
  // Pod C: in a pod the kubelet does not list (and nothing in its environment names it).
  Sleeper a({"HOSTNAME=train-0", std::string("NVIDIA_VISIBLE_DEVICES=") + kGpu0});
  Sleeper b({"HOSTNAME=infer-7f9c", "NVIDIA_VISIBLE_DEVICES=1"});
  Sleeper c({"HOSTNAME=somewhere"});
  std::string v1 = cgroup_mount("pids");
  TestCgroup ga(v2, systemd_slice("burstable", kUidA) + "/cri-containerd-" + kCtrA + ".scope");
  TestCgroup gb(v1.empty() ? v2 : v1, "kubepods/besteffort/pod" + kUidB + "/crio-" + kCtrB);
  TestCgroup gc(v2, systemd_slice("besteffort", kUidC) + "/cri-containerd-" + kCtrC + ".scope");
  ga.add(a.pid());
  gb.add(b.pid());
  gc.add(c.pid());
  ASSERT_NE(cgroup_of(a.pid()).find(kCtrA), std::string::npos) << cgroup_of(a.pid());
  ASSERT_NE(cgroup_of(b.pid()).find("pod" + kUidB), std::string::npos) << cgroup_of(b.pid());

  PodResources node;
  node.pods = {{"train-0", "ml", {{"trainer", {{"nvidia.com/gpu", {kGpu0}}}, {}}, {"sidecar", {}, {}}}},
               {"infer-7f9c", "serving", {{"vllm", {{"nvidia.com/gpu", {"1"}}}, {}}}},
               {"idle-pod", "ml", {{"main", {{"nvidia.com/gpu", {kGpu1}}}, {}}}}};
  FakeKubelet kubelet(node);
  std::string host = host_with({a.pid()}, {a.pid(), b.pid(), c.pid()});
  std::vector<std::string> env = {"GPUMAP_KUBELET_SOCKET=" + kubelet.socket()};

  CliRun r = gpumap({"ps", "--json", "--simulate", host}, env);
  ASSERT_EQ(r.code, 0) << r.err;
  json ps = json::parse(r.out);
  EXPECT_EQ(ps["kubelet"]["pods"], 3) << ps["kubelet"];
  const json& a0 = row(ps, a.pid(), 0);
  EXPECT_EQ(a0["pod"], "train-0");
  EXPECT_EQ(a0["namespace"], "ml");
  EXPECT_EQ(a0["container"], "trainer");
  EXPECT_EQ(a0["pod_uid"], kUidA);
  EXPECT_EQ(a0["container_id"], kCtrA);
  EXPECT_EQ(a0["pod_allocated"], json::array({kGpu0}));
  EXPECT_FALSE(has(a0, "pod-gpu-outside-allocation")) << a0["findings"];
  const json& a1 = row(ps, a.pid(), 1);
  ASSERT_TRUE(has(a1, "pod-gpu-outside-allocation")) << a1["findings"];
  EXPECT_TRUE(a1["cuda_ordinal"].is_null()) << "GPU 1 is not in its container (GPU 0 alone)";
  EXPECT_FALSE(has(a1, "outside-visible-set")) << "said once, for its pod: " << a1["findings"];
  for (const json& f : a1["findings"])
    if (f["id"] == "pod-gpu-outside-allocation") {
      EXPECT_EQ(f["severity"], "warning");
      EXPECT_NE(f["message"].get<std::string>().find("in pod ml/train-0 (container trainer) uses nvidia-smi GPU 1"),
                std::string::npos) << f["message"];
      EXPECT_EQ(f.value("fix", ""), "") << "nothing to paste: the pod spec is what to check";
    }
  const json& b1 = row(ps, b.pid(), 1);  // index strategy: "1" is nvidia-smi GPU 1, its own
  EXPECT_EQ(b1["pod"], "infer-7f9c");
  EXPECT_EQ(b1["namespace"], "serving");
  EXPECT_EQ(b1["container"], "vllm");
  EXPECT_EQ(b1["pod_allocated"], json::array({kGpu1}));
  EXPECT_EQ(b1["cuda_ordinal"], 0) << "NVIDIA_VISIBLE_DEVICES=1: GPU 1 alone in its container, its cuda:0";
  EXPECT_FALSE(has(b1, "pod-gpu-outside-allocation")) << b1["findings"];
  const json& c1 = row(ps, c.pid(), 1);  // a pod the kubelet does not name: its UID, no guess
  EXPECT_EQ(c1["pod_uid"], kUidC);
  EXPECT_TRUE(c1["pod"].is_null()) << c1;
  EXPECT_TRUE(c1["pod_allocated"].is_null()) << c1;
  EXPECT_FALSE(has(c1, "pod-gpu-outside-allocation"));

  // The table gets a POD column; CSV and metrics the same names (dcgm-exporter's labels).
  CliRun t = gpumap({"ps", "--wide", "--simulate", host}, env);
  EXPECT_NE(t.out.find(" POD "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("ml/train-0"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("serving/infer-7f9c"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("uid 99999999\u2026"), std::string::npos) << t.out;
  CliRun csv = gpumap({"ps", "--simulate", host, "--query=pid,gpu_index,pod,namespace,container,pod_uid", "--format=csv,noheader"}, env);
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find(std::to_string(b.pid()) + ", 1, infer-7f9c, serving, vllm, " + kUidB), std::string::npos) << csv.out;
  CliRun m = gpumap({"metrics", "--simulate", host}, env);
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_NE(m.out.find("container=\"trainer\""), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("namespace=\"ml\""), std::string::npos);
  EXPECT_NE(m.out.find("pod=\"train-0\""), std::string::npos);

  // `gpumap pods`: each pod holding a GPU, its allocation and processes; an idle allocation said.
  CliRun pods = gpumap({"pods", "--json", "--simulate", host}, env);
  ASSERT_EQ(pods.code, 0) << pods.err;
  json pj = json::parse(pods.out);
  ASSERT_EQ(pj["pods"].size(), 3u) << pj["pods"];
  const json& train = pj["pods"][0];
  EXPECT_EQ(train["name"], "train-0");
  EXPECT_EQ(train["uid"], kUidA);
  EXPECT_EQ(train["allocated"][0]["uuid"], kGpu0);
  EXPECT_EQ(train["allocated"][0]["nvml_index"], 0);
  ASSERT_EQ(train["processes"].size(), 2u) << train;  // on GPU 0 and on GPU 1
  EXPECT_EQ(train["processes"][0]["container"], "trainer");
  EXPECT_EQ(train["processes"][0]["cuda_ordinal"], 0);
  EXPECT_EQ(pj["pods"][1]["name"], "infer-7f9c");
  EXPECT_EQ(pj["pods"][1]["processes"][0]["pid"], b.pid());
  const json& idle = pj["pods"][2];
  EXPECT_EQ(idle["name"], "idle-pod");
  EXPECT_TRUE(idle["processes"].empty());
  ASSERT_EQ(idle["findings"].size(), 1u) << idle;
  EXPECT_EQ(idle["findings"][0]["id"], "pod-allocation-idle");
  ASSERT_EQ(pj["unnamed_pods"].size(), 1u) << pj["unnamed_pods"];
  EXPECT_EQ(pj["unnamed_pods"][0]["uid"], kUidC);
  Checker checker(read_contract());  // docs/cli.md's contract
  EXPECT_EQ(checker.check(pj, "pods", "pods"), "");
  EXPECT_TRUE(checker.checked().count("pod_unnamed"));
  CliRun pt = gpumap({"pods", "--wide", "--simulate", host}, env);
  EXPECT_NE(pt.out.find("ml/idle-pod"), std::string::npos) << pt.out;
  EXPECT_NE(pt.out.find("(no GPU process)"), std::string::npos) << pt.out;
  EXPECT_NE(pt.out.find("[info] pod-allocation-idle"), std::string::npos) << pt.out;
  EXPECT_NE(pt.out.find("[warning] pod-gpu-outside-allocation"), std::string::npos) << pt.out;
  EXPECT_NE(pt.out.find("uid " + kUidC), std::string::npos) << pt.out;

  // No kubelet (not a node, or the socket not mounted): said once; the UIDs stay, nothing is guessed.
  std::vector<std::string> gone = {"GPUMAP_KUBELET_SOCKET=/nonexistent/kubelet.sock"};
  CliRun none = gpumap({"ps", "--wide", "--simulate", host}, gone);
  EXPECT_EQ(none.code, 0) << none.err;
  EXPECT_NE(none.out.find("pods: named by their UID only"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("uid 5f8e2b1a\u2026"), std::string::npos) << none.out;
  json nj = json::parse(gpumap({"ps", "--json", "--simulate", host}, gone).out);
  EXPECT_EQ(nj["kubelet"]["error"]["code"], "absent") << nj["kubelet"];
  EXPECT_TRUE(row(nj, a.pid(), 1)["pod"].is_null());
  EXPECT_FALSE(has(row(nj, a.pid(), 1), "pod-gpu-outside-allocation"));
  CliRun pods_gone = gpumap({"pods", "--simulate", host}, gone);
  EXPECT_EQ(pods_gone.code, 1) << "pods cannot do its job without the kubelet";
  EXPECT_NE(pods_gone.out.find("the kubelet could not be asked"), std::string::npos) << pods_gone.out;
  EXPECT_NE(pods_gone.out.find("uid " + kUidA), std::string::npos) << "what the cgroups tell\n" << pods_gone.out;
}

/// h200x2 whose GPUs have each other's minor numbers (GPU 0 is /dev/nvidia1): a CDI device placed by
/// its device node then shows which of the two was read.
std::string host_with_swapped_minors(const std::vector<int>& gpu0, const std::vector<int>& gpu1) {
  std::ifstream in(host_with(gpu0, gpu1));
  json h = json::parse(in);
  h["gpus"][0]["minor_number"] = 1;
  h["gpus"][1]["minor_number"] = 0;
  return write_temp_file("pods-host-minors.json", h.dump());
}

// CDI mode and DRA: a container whose environment says NVIDIA_VISIBLE_DEVICES=void got its GPU as a
// CDI device of a DRA claim, placed through the node's spec files; a container whose image sets
// NVIDIA_VISIBLE_DEVICES=all sees more than it was given; two pods on one GPU with and without
// time-slicing replicas.
TEST(Pods, CdiClaimsVisibleSetsAndSharedGpus) {
  if (geteuid() != 0) GTEST_SKIP() << "moving processes between cgroups needs root (CI runs as root)";
  std::string v2 = cgroup_mount("cgroup2");
  ASSERT_FALSE(v2.empty()) << "no cgroup2 hierarchy mounted";
  const std::string uid_d = "d0000000-0000-4000-8000-00000000000d", uid_e = "e0000000-0000-4000-8000-00000000000e",
                    uid_f = "f0000000-0000-4000-8000-00000000000f", uid_g = "a0000000-0000-4000-8000-00000000000a";
  Sleeper d({"HOSTNAME=dra-train", "NVIDIA_VISIBLE_DEVICES=void"});
  Sleeper e({"HOSTNAME=leaky", "NVIDIA_VISIBLE_DEVICES=all"});
  Sleeper f({"HOSTNAME=ts-a", std::string("NVIDIA_VISIBLE_DEVICES=") + kGpu0});
  Sleeper g({"HOSTNAME=ts-b", std::string("NVIDIA_VISIBLE_DEVICES=") + kGpu0});
  TestCgroup gd(v2, systemd_slice("burstable", uid_d) + "/cri-containerd-" + std::string(64, 'd') + ".scope");
  TestCgroup ge(v2, systemd_slice("burstable", uid_e) + "/cri-containerd-" + std::string(64, 'e') + ".scope");
  TestCgroup gf(v2, systemd_slice("besteffort", uid_f) + "/cri-containerd-" + std::string(64, 'f') + ".scope");
  TestCgroup gg(v2, systemd_slice("besteffort", uid_g) + "/cri-containerd-" + std::string(63, 'f') + "a.scope");
  gd.add(d.pid());
  ge.add(e.pid());
  gf.add(f.pid());
  gg.add(g.pid());

  // The node's spec folders, as nvidia-ctk (YAML, /etc/cdi) and the DRA driver (JSON, /var/run/cdi)
  // write them; and one broken file, said as a problem.
  std::string etc = temp_dir("cdi-etc"), run = temp_dir("cdi-run");
  std::ofstream(etc + "/nvidia.yaml") << "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n"
                                         "- name: \"0\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia1\n"
                                         "containerEdits:\n  env: [NVIDIA_VISIBLE_DEVICES=void]\n";
  std::ofstream(run + "/k8s.gpu.nvidia.com-claim.json")
      << R"({"cdiVersion": "0.6.0", "kind": "k8s.gpu.nvidia.com/device",
             "devices": [{"name": "gpu-a", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}}]})";
  std::ofstream(run + "/broken.yaml") << "kind: [\n";

  PodResources node;
  node.pods = {{"dra-train", "ml", {{"main", {}, {"k8s.gpu.nvidia.com/device=gpu-a"}}}},
               {"leaky", "ml", {{"main", {{"nvidia.com/gpu", {kGpu0}}}, {}}}},
               {"ts-a", "web", {{"main", {{"nvidia.com/gpu", {std::string(kGpu0) + "::0"}}}, {}}}},
               {"ts-b", "web", {{"main", {{"nvidia.com/gpu", {std::string(kGpu0) + "::3"}}}, {}}}}};
  FakeKubelet kubelet(node);
  // /dev/nvidia0 is GPU 1 on this host: the DRA pod holds GPU 1; the leaky pod uses it too.
  std::string host = host_with_swapped_minors({f.pid(), g.pid()}, {d.pid(), e.pid()});
  std::vector<std::string> env = {"GPUMAP_KUBELET_SOCKET=" + kubelet.socket(), "GPUMAP_CDI_DIRS=" + etc + ":" + run};

  CliRun r = gpumap({"ps", "--json", "--simulate", host}, env);
  ASSERT_EQ(r.code, 0) << r.err;
  json ps = json::parse(r.out);
  const json& d1 = row(ps, d.pid(), 1);
  EXPECT_EQ(d1["pod"], "dra-train");
  EXPECT_EQ(d1["pod_allocated"], json::array({kGpu1})) << "the claim's CDI device, placed by /dev/nvidia0";
  EXPECT_FALSE(has(d1, "pod-gpu-outside-allocation")) << d1["findings"];
  EXPECT_FALSE(has(d1, "pod-sees-unallocated-gpu")) << "void: the devices came as CDI edits";
  EXPECT_EQ(d1["container_gpus"], json::array({kGpu1})) << "CDI injected its allocation";
  EXPECT_EQ(d1["cuda_ordinal"], 0) << "its container has one GPU: cuda:0, not the host's cuda:1";
  EXPECT_EQ(row(ps, e.pid(), 1)["cuda_ordinal"], 1) << "NVIDIA_VISIBLE_DEVICES=all: every GPU, the host's numbers";
  const json& e1 = row(ps, e.pid(), 1);
  EXPECT_EQ(e1["pod_allocated"], json::array({kGpu0}));
  EXPECT_TRUE(has(e1, "pod-gpu-outside-allocation")) << e1["findings"];
  ASSERT_TRUE(has(e1, "pod-sees-unallocated-gpu")) << e1["findings"];
  json shared = nullptr;
  for (const json& gdoc : ps["findings"])  // the document's findings: each about a GPU
    if (gdoc["id"] == "pod-gpu-shared") {
      EXPECT_TRUE(shared.is_null()) << "once per GPU: " << ps["findings"];
      shared = gdoc;
    }
  ASSERT_FALSE(shared.is_null()) << ps["findings"];
  EXPECT_EQ(shared["nvml_index"], 1) << "GPU 0's two pods are time-slicing replicas: explained";
  EXPECT_EQ(shared["severity"], "warning");
  EXPECT_NE(shared["message"].get<std::string>().find("only ml/dra-train was allocated it"), std::string::npos)
      << shared["message"];
  for (const Sleeper* s : {&f, &g}) {
    EXPECT_FALSE(has(row(ps, s->pid(), 0), "pod-gpu-outside-allocation"));
    EXPECT_FALSE(has(row(ps, s->pid(), 0), "pod-sees-unallocated-gpu"));
  }

  // `gpumap pods`: the claim's device as the allocation, the GPU finding once, the CDI problem said.
  CliRun pods = gpumap({"pods", "--json", "--simulate", host}, env);
  ASSERT_EQ(pods.code, 0) << pods.err;
  json pj = json::parse(pods.out);
  EXPECT_EQ(pj["pods"][0]["name"], "dra-train");
  EXPECT_EQ(pj["pods"][0]["allocated"][0]["uuid"], kGpu1);
  EXPECT_EQ(pj["pods"][0]["allocated"][0]["claimed"], true);
  EXPECT_EQ(pj["pods"][0]["containers"][0]["cdi_devices"], json::array({"k8s.gpu.nvidia.com/device=gpu-a"}));
  EXPECT_EQ(pj["pods"][2]["allocated"][0]["shared"], true);
  ASSERT_EQ(pj["findings"].size(), 1u) << pj["findings"];
  EXPECT_EQ(pj["findings"][0]["id"], "pod-gpu-shared");
  EXPECT_EQ(pj["cdi"]["dirs"], json::array({etc, run}));
  EXPECT_EQ(pj["cdi"]["devices"], 2);
  ASSERT_EQ(pj["cdi"]["problems"].size(), 1u) << pj["cdi"];
  EXPECT_EQ(pj["cdi"]["problems"][0]["file"], run + "/broken.yaml");
  // The document against docs/cli.md's contract: every object of a pod met here (pod_unnamed and
  // pod_unverified in the tests around).
  Checker checker(read_contract());
  EXPECT_EQ(checker.check(pj, "pods", "pods"), "");
  for (const auto& [name, _] : checker.contract())
    if (name.rfind("pod_", 0) == 0 && name != "pod_unnamed" && name != "pod_unverified") {
      EXPECT_TRUE(checker.checked().count(name)) << "`pods` did not exercise " << name;
    }
  CliRun pt = gpumap({"pods", "--wide", "--simulate", host}, env);
  EXPECT_NE(pt.out.find("[warning] pod-gpu-shared"), std::string::npos) << pt.out;
  EXPECT_NE(pt.out.find("[warning] pod-sees-unallocated-gpu"), std::string::npos) << pt.out;
  EXPECT_NE(pt.out.find("(claimed)"), std::string::npos) << pt.out;
  EXPECT_NE(pt.out.find("cdi: " + run + "/broken.yaml: not valid YAML"), std::string::npos) << pt.out;

  // The exporter: each finding a series (gpumap_finding), with the pod labels.
  CliRun m = gpumap({"metrics", "--simulate", host}, env);
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_NE(m.out.find("id=\"pod-gpu-shared\""), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("id=\"pod-sees-unallocated-gpu\""), std::string::npos) << m.out;

  // A monitor asks once while its pods stay the same (session/kubelet_cache.h): `ps --watch` for
  // several frames through a copy of gpumap whose gpumap-kubelet counts its runs.
  {
    std::string dir = temp_dir("pods-watch");
    std::filesystem::copy_file(GPUMAP_BINARY, dir + "/gpumap");
    std::ofstream(dir + "/gpumap-kubelet") << "#!/bin/sh\necho run >>'" << dir << "/runs'\nexec '" << GPUMAP_KUBELET_BINARY
                                           << "' \"$@\"\n";  // quoted: a checkout's path may hold a space
    chmod((dir + "/gpumap-kubelet").c_str(), 0755);
    std::vector<std::string> watch_env = env;
    watch_env.push_back(std::string("GPUMAP_SIM_LIBDIR=") + GPUMAP_BUILD_DIR + "/sim");
    CliRun w = run_program({"/usr/bin/timeout", "6", dir + "/gpumap", "ps", "--json", "--watch", "0.2", "--simulate", host}, watch_env);
    size_t frames = 0;
    std::istringstream lines(w.out);
    for (std::string line; std::getline(lines, line);)
      if (line.find("\"dra-train\"") != std::string::npos) ++frames;
    std::ifstream in(dir + "/runs");
    size_t runs = 0;
    for (std::string line; std::getline(in, line);) ++runs;
    EXPECT_GE(frames, 3u) << w.out << w.err;
    EXPECT_EQ(runs, 1u) << frames << " frames, every pod named from one answer";
  }

  // Without the spec files the claim's name places nothing: its GPU is unknown, said, not guessed.
  std::vector<std::string> no_specs = {"GPUMAP_KUBELET_SOCKET=" + kubelet.socket(), "GPUMAP_CDI_DIRS="};
  json bare = json::parse(gpumap({"pods", "--json", "--simulate", host}, no_specs).out);
  EXPECT_TRUE(bare["pods"][0]["allocated"].empty()) << bare["pods"][0];
  EXPECT_EQ(bare["pods"][0]["unknown_ids"], json::array({"k8s.gpu.nvidia.com/device=gpu-a"}));
  EXPECT_EQ(bare["cdi"]["dirs"], json::array());
}

// Processes outside any pod never make gpumap ask a kubelet (nothing to say on a plain host).
// Issue 56 item 5: in a cgroup namespace of its own (how the DaemonSet's pod runs on cgroup v2)
// gpumap read relative paths ("0::/../../kubepods-...") whose folders it could not find, and only
// the name rule was left: a kubelet-named folder a user owned was taken as the pod.  Run here as
// the DaemonSet runs: gpumap in a kubelet-named cgroup of its own, `unshare -C` making that its
// namespace's root, the host's tree at /sys/fs/cgroup and the host's PID namespace.  The namespace
// root is found in the tree and every owner read: the user's folder is not the pod, root's is.
TEST(Pods, InItsOwnCgroupNamespaceGpumapStillChecksWhoMadeThePodsFolders) {
  if (geteuid() != 0) GTEST_SKIP() << "moving processes between cgroups and unshare -C need root (CI runs as root)";
  std::string v2 = cgroup_mount("cgroup2");
  ASSERT_FALSE(v2.empty()) << "no cgroup2 hierarchy mounted";
  ASSERT_EQ(run_program({"/usr/bin/unshare", "-C", "/bin/true"}).code, 0) << "unshare -C does not work here";
  Sleeper real({"HOSTNAME=train-0", std::string("NVIDIA_VISIBLE_DEVICES=") + kGpu0});
  Sleeper chowned({"HOSTNAME=train-0", std::string("NVIDIA_VISIBLE_DEVICES=") + kGpu0});
  const std::string kCtrE(64, 'e'), kCtrG(64, 'f');
  const std::string kUidG = "12345678-1234-4234-8234-123456789abc";
  const std::string self = systemd_slice("burstable", kUidG) + "/cri-containerd-" + kCtrG + ".scope";
  TestCgroup gself(v2, self);
  TestCgroup greal(v2, systemd_slice("burstable", kUidA) + "/cri-containerd-" + kCtrA + ".scope");
  std::string uid_ = kUidA;
  for (char& c : uid_)
    if (c == '-') c = '_';
  const std::string sub = "kubepods.slice/kubepods-pod" + uid_ + ".slice";
  TestCgroup gown(v2, sub + "/cri-containerd-" + kCtrE + ".scope");
  greal.add(real.pid());
  gown.add(chowned.pid());
  std::string own_pod = v2 + "/gpumap-test-" + std::to_string(getpid()) + "/" + sub;
  ASSERT_EQ(chown(own_pod.c_str(), 1000, 1000), 0) << own_pod << ": " << strerror(errno);
  ASSERT_EQ(chown((own_pod + "/cri-containerd-" + kCtrE + ".scope").c_str(), 1000, 1000), 0);

  PodResources node;
  node.pods = {{"train-0", "ml", {{"trainer", {{"nvidia.com/gpu", {kGpu0}}}, {}}}}};
  FakeKubelet kubelet(node);
  std::string host = host_with({real.pid()}, {chowned.pid()});
  std::string leaf = v2 + "/gpumap-test-" + std::to_string(getpid()) + "/" + self;
  CliRun r = run_program({"/bin/sh", "-c", "echo $$ > \"$0/cgroup.procs\" && exec /usr/bin/unshare -C \"$1\" ps --json --simulate \"$2\"",
                          leaf, GPUMAP_BINARY, host},
                         {"GPUMAP_KUBELET_SOCKET=" + kubelet.socket()});
  ASSERT_EQ(r.code, 0) << r.err;
  json ps = json::parse(r.out);
  const json& p = row(ps, chowned.pid(), 1);
  EXPECT_TRUE(p["pod"].is_null()) << p;
  ASSERT_TRUE(p["pod_unverified"].is_string()) << p;
  EXPECT_NE(p["pod_unverified"].get<std::string>().find("is owned by uid 1000, not root"), std::string::npos) << p["pod_unverified"];
  EXPECT_EQ(row(ps, real.pid(), 0)["pod"], "train-0") << "root's folders, read through the namespace's root: the pod";
  EXPECT_TRUE(row(ps, real.pid(), 0)["pod_unverified"].is_null()) << row(ps, real.pid(), 0);
}

TEST(Pods, NoPodNoKubeletAsked) {
  Sleeper a({"HOME=/"});
  CliRun r = gpumap({"ps", "--json", "--simulate", host_with({a.pid()}, {})}, {"GPUMAP_KUBELET_SOCKET=/nonexistent/kubelet.sock"});
  ASSERT_EQ(r.code, 0) << r.err;
  json ps = json::parse(r.out);
  EXPECT_TRUE(ps["kubelet"].is_null()) << ps["kubelet"];
  EXPECT_TRUE(row(ps, a.pid(), 0)["pod_uid"].is_null());
}


// Issue 46, item 7: a user with a delegated cgroup tree (systemd's user@.service, where rootless
// Podman makes its containers) names a folder as the kubelet would, with the pod's HOSTNAME and
// NVIDIA_VISIBLE_DEVICES: it was shown as that pod, and made pod-gpu-outside-allocation fire against
// it.  Neither it nor a kubelet-named folder that root did not make (owned by a user) is taken as
// the pod: `ps`, `pods` and `metrics` say so and attribute nothing.
TEST(Pods, CgroupsOutsideTheKubeletsRootOwnedTreeAreNotThePod) {
  if (geteuid() != 0) GTEST_SKIP() << "moving processes between cgroups needs root (CI runs as root)";
  std::string v2 = cgroup_mount("cgroup2");
  ASSERT_FALSE(v2.empty()) << "no cgroup2 hierarchy mounted";
  Sleeper real({"HOSTNAME=train-0", std::string("NVIDIA_VISIBLE_DEVICES=") + kGpu0});
  Sleeper user({"HOSTNAME=train-0", std::string("NVIDIA_VISIBLE_DEVICES=") + kGpu0});
  Sleeper chowned({"HOSTNAME=train-0", std::string("NVIDIA_VISIBLE_DEVICES=") + kGpu0});
  const std::string kCtrD(64, 'd'), kCtrE(64, 'e');
  TestCgroup greal(v2, systemd_slice("burstable", kUidA) + "/cri-containerd-" + kCtrA + ".scope");
  TestCgroup guser(v2, "user.slice/user-1000.slice/user@1000.service/" + systemd_slice("burstable", kUidA) +
                           "/cri-containerd-" + kCtrD + ".scope");
  std::string uid_ = kUidA;
  for (char& c : uid_)
    if (c == '-') c = '_';
  const std::string sub = "kubepods.slice/kubepods-pod" + uid_ + ".slice";  // a Guaranteed pod's folder
  TestCgroup gown(v2, sub + "/cri-containerd-" + kCtrE + ".scope");
  greal.add(real.pid());
  guser.add(user.pid());
  gown.add(chowned.pid());
  // The folders a user was given (systemd's Delegate=, a chown): the pod's and the container's.
  std::string own_pod = v2 + "/gpumap-test-" + std::to_string(getpid()) + "/" + sub;
  ASSERT_EQ(chown(own_pod.c_str(), 1000, 1000), 0) << own_pod << ": " << strerror(errno);
  ASSERT_EQ(chown((own_pod + "/cri-containerd-" + kCtrE + ".scope").c_str(), 1000, 1000), 0);

  PodResources node;
  node.pods = {{"train-0", "ml", {{"trainer", {{"nvidia.com/gpu", {kGpu0}}}, {}}}}};
  FakeKubelet kubelet(node);
  std::string host = host_with({real.pid()}, {user.pid(), chowned.pid()});  // GPU 1: outside the pod's allocation
  std::vector<std::string> env = {"GPUMAP_KUBELET_SOCKET=" + kubelet.socket()};
  CliRun r = gpumap({"ps", "--json", "--simulate", host}, env);
  ASSERT_EQ(r.code, 0) << r.err;
  json ps = json::parse(r.out);
  EXPECT_EQ(row(ps, real.pid(), 0)["pod"], "train-0") << "the kubelet's own folders: the pod";
  EXPECT_TRUE(row(ps, real.pid(), 0)["pod_unverified"].is_null());
  for (int pid : {user.pid(), chowned.pid()}) {
    const json& p = row(ps, pid, 1);
    EXPECT_TRUE(p["pod_uid"].is_null()) << p;
    EXPECT_TRUE(p["pod"].is_null()) << p;
    EXPECT_FALSE(has(p, "pod-gpu-outside-allocation")) << "nothing fires against ml/train-0: " << p["findings"];
    ASSERT_TRUE(p["pod_unverified"].is_string()) << p;
  }
  EXPECT_NE(row(ps, user.pid(), 1)["pod_unverified"].get<std::string>().find("under user@1000.service"), std::string::npos)
      << row(ps, user.pid(), 1)["pod_unverified"];
  EXPECT_NE(row(ps, chowned.pid(), 1)["pod_unverified"].get<std::string>().find("is owned by uid 1000, not root"),
            std::string::npos)
      << row(ps, chowned.pid(), 1)["pod_unverified"];

  CliRun pods = gpumap({"pods", "--json", "--simulate", host}, env);
  ASSERT_EQ(pods.code, 0) << pods.err;
  json pj = json::parse(pods.out);
  ASSERT_EQ(pj["pods"].size(), 1u) << pj["pods"];
  ASSERT_EQ(pj["pods"][0]["processes"].size(), 1u) << "only the process in the kubelet's folders: " << pj["pods"][0];
  EXPECT_EQ(pj["pods"][0]["processes"][0]["pid"], real.pid());
  ASSERT_EQ(pj["unverified_pods"].size(), 2u) << pj["unverified_pods"];
  EXPECT_EQ(pj["unverified_pods"][0]["pid"], user.pid());
  EXPECT_TRUE(pj["unnamed_pods"].empty()) << pj["unnamed_pods"];
  Checker checker(read_contract());
  EXPECT_EQ(checker.check(pj, "pods", "pods"), "");
  EXPECT_TRUE(checker.checked().count("pod_unverified"));
  CliRun pt = gpumap({"pods", "--simulate", host}, env);
  EXPECT_NE(pt.out.find("pid " + std::to_string(user.pid()) + ": not taken as a pod"), std::string::npos) << pt.out;

  CliRun m = gpumap({"metrics", "--simulate", host}, env);
  ASSERT_EQ(m.code, 0) << m.err;
  std::istringstream lines(m.out);
  int seen = 0;
  for (std::string line; std::getline(lines, line);)
    for (int pid : {user.pid(), chowned.pid()})
      if (line.find("pid=\"" + std::to_string(pid) + "\"") != std::string::npos) {
        ++seen;
        EXPECT_EQ(line.find("pod=\"train-0\""), std::string::npos) << line;
      }
  EXPECT_GE(seen, 2) << m.out;
}
}  // namespace
}  // namespace gpumap::testing
