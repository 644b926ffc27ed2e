#include "resolve/pod_join.h"

#include <gtest/gtest.h>

#include "resolve/process_view_testing.h"

namespace gpumap {
namespace {

using testing_ps::kU0;
using testing_ps::kU1;
using testing_ps::two_gpus;

const std::string kMig = "MIG-0bd9d8b3-8c4b-5c5d-9a2e-1f0e2d3c4b5a";

Snapshot with_mig() {
  Snapshot s = two_gpus({{}, {}});
  s.gpus[1].mig_devices.push_back({kMig, "NVIDIA H200 MIG 1g.18gb", 1, 0, 18000, 0});
  return s;
}

ProcessRow in_pod(uint32_t pid, const std::string& uid, std::optional<std::string> hostname,
                  std::optional<std::string> nvd, const std::string& gpu = kU0) {
  ProcessRow r;
  r.pid = pid;
  r.uuid = gpu;
  r.hostname = std::move(hostname);
  r.nvidia_visible_devices = std::move(nvd);
  r.pod = PodRef{};
  r.pod->uid = uid;
  r.pod->qos = "burstable";
  r.pod->container_id = std::string(64, 'a');
  r.pod->runtime = "containerd";
  return r;
}

TEST(AllocatedGpus, EveryFormTheDevicePluginWrites) {
  Snapshot s = with_mig();
  AllocatedGpus a = allocated_gpus({{"nvidia.com/gpu", {kU0, "1"}},
                                    {"nvidia.com/mig-1g.18gb", {kMig}},
                                    {"nvidia.com/gpu.shared", {std::string(kU0) + "::3"}},
                                    {"example.com/fpga", {"0"}},  // not the NVIDIA plugin's: not a GPU
                                    {"nvidia.com/gpu", {"1:0", "7", "GPU-00000000-0000-0000-0000-000000000000"}}},
                                   s);
  EXPECT_EQ(a.uuids, (std::vector<std::string>{kU0, kU1, kMig}));
  EXPECT_EQ(a.shared, (std::vector<std::string>{kU0}));
  EXPECT_EQ(a.unknown, (std::vector<std::string>{"7", "GPU-00000000-0000-0000-0000-000000000000"}));
}

PodResources node() {
  PodResources k;
  k.pods = {{"train-0", "ml", {{"trainer", {{"nvidia.com/gpu", {kU0}}}, {}}, {"sidecar", {}, {}}}},
            {"train-0", "other", {{"trainer", {{"nvidia.com/gpu", {kU1}}}, {}}}},
            {"infer", "serving", {{"vllm", {{"nvidia.com/gpu", {"1"}}}, {}}}}};
  return k;
}

TEST(NamePods, TheHostnameNamesThePodAndTheDevicesItsContainer) {
  Snapshot s = two_gpus({{}, {}});
  std::vector<ProcessRow> rows = {in_pod(1, "uid-b", "infer", "1", kU1),
                                  in_pod(2, "uid-b", "infer", std::nullopt),  // its pod's other process
                                  in_pod(3, "uid-x", "nobody", std::nullopt)};
  name_pods(rows, node(), s);
  EXPECT_EQ(rows[0].pod->name, "infer");
  EXPECT_EQ(rows[0].pod->ns, "serving");
  EXPECT_EQ(rows[0].pod->container, "vllm");
  EXPECT_EQ(rows[0].pod->allocated, (std::vector<std::string>{kU1}));
  EXPECT_TRUE(rows[0].pod->allocation_known);
  EXPECT_EQ(rows[1].pod->name, "infer") << "the UID's other processes get its name";
  EXPECT_EQ(rows[1].pod->container, "vllm") << "a pod of one container";
  EXPECT_EQ(rows[2].pod->name, "") << "no pod matches: not guessed";
  EXPECT_FALSE(rows[2].pod->allocation_known);
}

TEST(NamePods, OneNameInTwoNamespacesIsToldApartByTheDevices) {
  Snapshot s = two_gpus({{}, {}});
  std::vector<ProcessRow> rows = {in_pod(1, "uid-a", "train-0", kU1, kU1)};
  name_pods(rows, node(), s);
  EXPECT_EQ(rows[0].pod->ns, "other");
  EXPECT_EQ(rows[0].pod->container, "trainer");
  // Without devices to go by, the name alone is ambiguous: left unnamed.
  std::vector<ProcessRow> bare = {in_pod(1, "uid-a", "train-0", std::nullopt)};
  name_pods(bare, node(), s);
  EXPECT_EQ(bare[0].pod->name, "");
}

TEST(NamePods, DevicesAloneNameAPodWhoseHostnameIsNotItsName) {
  Snapshot s = two_gpus({{}, {}});
  std::vector<ProcessRow> rows = {in_pod(1, "uid-b", "node-7", "1", kU1)};  // hostNetwork: the node's name
  name_pods(rows, node(), s);
  EXPECT_EQ(rows[0].pod->name, "infer");
}

TEST(NamePods, AContainerNotKnownGetsItsWholePodsAllocation) {
  Snapshot s = two_gpus({{}, {}});
  PodResources k;
  k.pods = {{"two", "ml", {{"a", {{"nvidia.com/gpu", {kU0}}}, {}}, {"b", {{"nvidia.com/gpu", {kU1}}}, {}}}}};
  std::vector<ProcessRow> rows = {in_pod(1, "uid", "two", "all")};  // NVIDIA_VISIBLE_DEVICES=all names no container
  name_pods(rows, k, s);
  EXPECT_EQ(rows[0].pod->name, "two");
  EXPECT_EQ(rows[0].pod->container, "");
  EXPECT_EQ(rows[0].pod->allocated, (std::vector<std::string>{kU0, kU1}));
}


// CDI: GPU 0 is minor 1 and GPU 1 minor 0 (minor numbers need not follow nvidia-smi's order), so a
// device placed by its /dev/nvidiaN node shows which of the two was read.
Snapshot with_minors() {
  Snapshot s = with_mig();
  s.gpus[0].minor_number = 1;
  s.gpus[1].minor_number = 0;
  return s;
}

CdiSpecs node_specs() {
  CdiSpecs c;
  c.dirs = {"/etc/cdi", "/var/run/cdi"};
  c.devices = {{"nvidia.com/gpu=0", {"/dev/nvidia1", "/dev/nvidiactl"}, "/etc/cdi/nvidia.yaml"},
               {"nvidia.com/gpu=1:0", {"/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap12"}, "/etc/cdi/nvidia.yaml"},
               {"nvidia.com/gpu=all", {"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl"}, "/etc/cdi/nvidia.yaml"},
               {"k8s.gpu.nvidia.com/device=gpu-1", {"/dev/nvidia0"}, "/var/run/cdi/claim.yaml"},
               {"k8s.gpu.nvidia.com/device=mig-x", {"/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap20"}, "/var/run/cdi/claim.yaml"},
               {"example.com/fpga=0", {"/dev/fpga0"}, "/etc/cdi/fpga.json"}};
  return c;
}

TEST(CdiDeviceGpus, ByTheSpecsDeviceNodesThenByNvidiasOwnNames) {
  Snapshot s = with_minors();
  CdiSpecs c = node_specs();
  using V = std::vector<std::string>;
  EXPECT_EQ(cdi_device_gpus("nvidia.com/gpu=0", c, s), V{kU0}) << "/dev/nvidia1 is GPU 0 here";
  EXPECT_EQ(cdi_device_gpus("k8s.gpu.nvidia.com/device=gpu-1", c, s), V{kU1}) << "a DRA name, placed by its node";
  EXPECT_EQ(cdi_device_gpus("nvidia.com/gpu=1:0", c, s), V{kMig}) << "a MIG device named N:M";
  EXPECT_EQ(cdi_device_gpus("k8s.gpu.nvidia.com/device=mig-x", c, s), V{kU1})
      << "a MIG device whose name says nothing: its GPU";
  EXPECT_EQ(cdi_device_gpus("nvidia.com/gpu=all", c, s), (V{kU1, kU0}));
  EXPECT_EQ(cdi_device_gpus("example.com/fpga=0", c, s), V{}) << "no GPU node";
  // Names no spec defines: the NVIDIA kinds' own.
  EXPECT_EQ(cdi_device_gpus(std::string("nvidia.com/gpu=") + kU1, c, s), V{kU1});
  EXPECT_EQ(cdi_device_gpus("nvidia.com/mig=" + kMig, c, s), V{kMig});
  EXPECT_EQ(cdi_device_gpus("nvidia.com/gpu=1", c, s), V{kU1}) << "nvidia-ctk's index names are nvidia-smi's";
  EXPECT_EQ(cdi_device_gpus("nvidia.com/gpu=all", CdiSpecs{}, s), (V{kU0, kU1}));
  EXPECT_EQ(cdi_device_gpus("k8s.gpu.nvidia.com/device=gpu-9", c, s), V{});
  EXPECT_EQ(cdi_device_gpus("nvidia.com/gpu=7", c, s), V{});
  EXPECT_EQ(cdi_device_gpus("no-equals-sign", c, s), V{});
}

TEST(CdiDeviceGpus, ADraClaimIsTheContainersAllocation) {
  Snapshot s = with_minors();
  PodContainer c{"main", {{"nvidia.com/gpu", {kU0}}}, {"k8s.gpu.nvidia.com/device=gpu-1", "k8s.gpu.nvidia.com/device=gone"}};
  AllocatedGpus a = container_allocation(c, node_specs(), s);
  EXPECT_EQ(a.uuids, (std::vector<std::string>{kU0, kU1}));
  EXPECT_EQ(a.claimed, (std::vector<std::string>{kU1}));
  EXPECT_EQ(a.unknown, (std::vector<std::string>{"k8s.gpu.nvidia.com/device=gone"}));
}

TEST(NvdGpus, WhatTheRuntimeInjectsForEachForm) {
  Snapshot s = with_minors();
  CdiSpecs c = node_specs();
  using V = std::optional<std::vector<std::string>>;
  EXPECT_EQ(nvd_gpus(std::nullopt, c, s), V{});
  EXPECT_EQ(nvd_gpus("void", c, s), V{}) << "CDI mode: the devices came as CDI edits";
  EXPECT_EQ(nvd_gpus("none", c, s), V{});
  EXPECT_EQ(nvd_gpus("", c, s), V{});
  EXPECT_EQ(nvd_gpus("all", c, s), (V{{kU0, kU1}}));
  EXPECT_EQ(nvd_gpus(std::string("1, ") + kU0, c, s), (V{{kU1, kU0}}));
  EXPECT_EQ(nvd_gpus(std::string(kU1) + "::2", c, s), (V{{kU1}})) << "a replica is its GPU";
  EXPECT_EQ(nvd_gpus("1:0", c, s), (V{{kMig}}));
  EXPECT_EQ(nvd_gpus("nvidia.com/gpu=0", c, s), (V{{kU0}})) << "a CDI name in the variable (the toolkit's cdi mode)";
  EXPECT_EQ(nvd_gpus("0,7", c, s), V{}) << "an entry that names nothing here: no judgement";
}

TEST(NamePods, AVoidContainerGetsItsClaimsAndNoVisibleSet) {
  Snapshot s = with_minors();
  PodResources k;
  k.cdi = node_specs();
  k.pods = {{"dra", "ml", {{"main", {}, {"k8s.gpu.nvidia.com/device=gpu-1"}}}}};
  std::vector<ProcessRow> rows = {in_pod(1, "uid-d", "dra", "void", kU1), in_pod(2, "uid-e", "dra", "all", kU1)};
  rows[1].pod->uid = "uid-d";
  name_pods(rows, k, s);
  EXPECT_EQ(rows[0].pod->name, "dra");
  EXPECT_EQ(rows[0].pod->allocated, (std::vector<std::string>{kU1}));
  EXPECT_EQ(rows[0].pod->claimed, (std::vector<std::string>{kU1}));
  EXPECT_FALSE(rows[0].pod->visible.has_value());
  EXPECT_EQ(rows[1].pod->visible, (std::optional<std::vector<std::string>>{{kU0, kU1}}));
}

}  // namespace
}  // namespace gpumap
