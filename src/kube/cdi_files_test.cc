#include "kube/cdi_files.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>

namespace gpumap {
namespace {

// Real spec files in a test folder, as the toolkit and the DRA driver write them.
class CdiFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "cdi-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    etc_ = root_ + "/etc-cdi";
    run_ = root_ + "/run-cdi";
    ASSERT_EQ(mkdir(etc_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(run_.c_str(), 0755), 0);
  }
  void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
  std::string root_, etc_, run_;
};

const char* kYaml = R"(---
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia3
- name: all
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia3
    - path: /dev/nvidia4
containerEdits:
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  deviceNodes:
  - path: /dev/nvidiactl
)";

TEST_F(CdiFiles, YamlAndJsonFilesOfBothFoldersTheLaterWinning) {
  write(etc_ + "/nvidia.yaml", kYaml);
  write(run_ + "/k8s.gpu.nvidia.com-claim_1234.json",
        R"({"cdiVersion": "0.6.0", "kind": "k8s.gpu.nvidia.com/claim",
            "devices": [{"name": "1234-gpu-0", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia4"}]}}]})");
  write(run_ + "/override.yaml", "kind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia7\n");
  write(etc_ + "/README", "not a spec: neither .json nor .yaml");
  CdiSpecs c = read_cdi_specs({etc_, run_});
  EXPECT_TRUE(c.problems.empty()) << c.problems[0].file << ": " << c.problems[0].message;
  ASSERT_EQ(c.devices.size(), 3u);
  EXPECT_EQ(c.devices[0].name, "nvidia.com/gpu=0");
  EXPECT_EQ(c.devices[0].device_nodes, (std::vector<std::string>{"/dev/nvidia7"})) << "/var/run/cdi's wins";
  EXPECT_EQ(c.devices[0].file, run_ + "/override.yaml");
  EXPECT_EQ(c.devices[1].name, "nvidia.com/gpu=all");
  EXPECT_EQ(c.devices[1].device_nodes, (std::vector<std::string>{"/dev/nvidia3", "/dev/nvidia4", "/dev/nvidiactl"}));
  EXPECT_EQ(c.devices[2].name, "k8s.gpu.nvidia.com/claim=1234-gpu-0");
  EXPECT_EQ(c.dirs, (std::vector<std::string>{etc_, run_}));
}

TEST_F(CdiFiles, WhatCannotBeUsedIsSaidAndNeverBlocks) {
  ASSERT_EQ(mkfifo((etc_ + "/fifo.yaml").c_str(), 0644), 0);  // opened for reading, it would block
  write(etc_ + "/broken.yaml", "kind: [unclosed\n");
  write(etc_ + "/broken.json", "{\"kind\": ");
  write(etc_ + "/not-cdi.json", "{\"kind\": \"nvidia.com/gpu\"}");
  // A billion laughs: aliases that expand to far more nodes than any spec has.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c)
    bomb += std::string(1, c) + ": &" + c + " [*" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
            char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + "]\n";
  write(etc_ + "/bomb.yaml", bomb + "kind: nvidia.com/gpu\ndevices: []\n");
  {
    std::ofstream big(etc_ + "/big.json");
    big << std::string((1u << 20) + 1, ' ');
  }
  ASSERT_EQ(mkdir((etc_ + "/folder.json").c_str(), 0755), 0);
  CdiBudget untimed;  // (the reasons, not the clock: the bomb's expansion is slow under a sanitizer)
  untimed.run_seconds = 600;
  CdiSpecs c = read_cdi_specs({etc_, root_ + "/does-not-exist"}, untimed);
  EXPECT_TRUE(c.devices.empty());
  std::map<std::string, std::string> why;
  for (const CdiSpecs::Problem& p : c.problems) why[p.file.substr(p.file.rfind('/') + 1)] = p.message;
  EXPECT_EQ(why.size(), 7u) << "a missing folder is not a problem (a node without CDI)";
  EXPECT_EQ(why["fifo.yaml"], "not a regular file");
  EXPECT_EQ(why["folder.json"], "not a regular file");
  EXPECT_NE(why["broken.yaml"].find("not valid YAML"), std::string::npos) << why["broken.yaml"];
  EXPECT_EQ(why["broken.json"], "not valid JSON");
  EXPECT_NE(why["not-cdi.json"].find("no \"devices\" list"), std::string::npos) << why["not-cdi.json"];
  EXPECT_NE(why["bomb.yaml"].find("nested or aliased"), std::string::npos) << why["bomb.yaml"];
  EXPECT_NE(why["big.json"].find("larger than 1 MiB"), std::string::npos) << why["big.json"];
}


// A spec with one device, "nvidia.com/gpu=<name>" on /dev/nvidia0.
std::string small_spec(const std::string& name) {
  return "kind: nvidia.com/gpu\ndevices:\n- name: \"" + name + "\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n";
}

// Issue 46, item 8: a 4 MiB YAML list of a million items (3 s and 570 MB before the node budget
// looked; two of them lost every pod's attribution on the node to gpumap's wait) is refused by its
// size before a byte is read; lists just under the size cap are refused from a count that builds
// nothing (a block list by its nodes, a flow list by its structure before yaml-cpp sees it); none
// of them costs the other files anything, wherever it sorts.
TEST_F(CdiFiles, AMillionItemListIsRefusedBeforeItsTreeIsBuiltAndCostsTheOthersNothing) {
  auto list_of = [](size_t bytes, const std::string& head, const std::string& item, const std::string& tail) {
    std::string t = head;
    while (t.size() + item.size() + tail.size() <= bytes) t += item;
    return t + tail;
  };
  std::string million = list_of(4u << 20, "kind: nvidia.com/gpu\ndevices:\n", "- a\n", "");
  ASSERT_GT(million.size() / 4, 1000000u);
  write(etc_ + "/a-huge.yaml", million);
  write(etc_ + "/b-block.yaml", list_of((1u << 20) - 1, "kind: nvidia.com/gpu\ndevices:\n", "- aaaaaaa\n", ""));
  write(etc_ + "/c-flow.yaml", list_of((1u << 20) - 1, "kind: nvidia.com/gpu\ndevices: [", "a,", "a]\n"));
  write(etc_ + "/d-block.json", list_of((1u << 20) - 1, "{\"kind\": \"nvidia.com/gpu\", \"devices\": [", "1,", "1]}"));
  write(etc_ + "/z-gpu.yaml", small_spec("0"));
  write(run_ + "/z-gpu.yaml", small_spec("1"));
  // With the run's time budget out of the way (a loaded machine under a sanitizer is slow), each
  // file is stopped by its own cap; the small specs are read first either way.
  CdiBudget untimed;
  untimed.run_seconds = 600;
  untimed.run_nodes = 1000000;
  CdiSpecs c = read_cdi_specs({etc_, run_}, untimed);
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.devices[0].name, "nvidia.com/gpu=0");
  EXPECT_EQ(c.devices[1].name, "nvidia.com/gpu=1");
  std::map<std::string, std::string> why;
  for (const CdiSpecs::Problem& p : c.problems) why[p.file.substr(p.file.rfind('/') + 1)] = p.message;
  ASSERT_EQ(why.size(), 4u);
  EXPECT_EQ(why["a-huge.yaml"], "larger than 1 MiB (" + std::to_string(million.size()) + " bytes): not read");
  EXPECT_EQ(why["b-block.yaml"], "more than 100000 YAML or JSON nodes: not parsed");
  EXPECT_EQ(why["c-flow.yaml"], "more than 300000 YAML structure characters (, [ { - : ? and line ends): not parsed");
  EXPECT_EQ(why["d-block.json"], "more than 100000 YAML or JSON nodes: not parsed");
  // The default budget (1 s for every file): whichever stops them, the two real specs are read.
  c = read_cdi_specs({etc_, run_});
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.problems.size(), 4u);
}

// Nesting: yaml-cpp recurses per level (0.6, the portable build's, has no limit: 100 000 `[` overflow
// its stack, and gpumap-kubelet with it), so a file nested past 256 is refused from its text first.
TEST_F(CdiFiles, DeepNestingIsRefusedBeforeTheParserRecurses) {
  write(etc_ + "/flow.yaml", "kind: " + std::string(100000, '[') + std::string(100000, ']') + "\n");
  write(etc_ + "/block.yaml", "kind:\n" + [] {
    std::string t;
    for (int i = 0; i < 300; ++i) t += "- ";
    return t + "x\n";
  }());
  write(etc_ + "/deep.json", "{\"kind\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  write(etc_ + "/gpu.yaml", small_spec("0"));
  CdiSpecs c = read_cdi_specs({etc_});
  EXPECT_EQ(c.devices.size(), 1u);
  std::map<std::string, std::string> why;
  for (const CdiSpecs::Problem& p : c.problems) why[p.file.substr(p.file.rfind('/') + 1)] = p.message;
  ASSERT_EQ(why.size(), 3u);
  EXPECT_EQ(why["flow.yaml"].rfind("nested deeper than 256 (a bound of 100001", 0), 0u) << why["flow.yaml"];
  EXPECT_EQ(why["block.yaml"].rfind("nested deeper than 256 (a bound of 300 ", 0), 0u) << why["block.yaml"];
  EXPECT_EQ(why["deep.json"], "nested deeper than 256: not parsed");
}

// The run's budget: the files are read smallest first, so what it leaves out is the largest, and
// the problem says why; the count is what the files hold, not a guess.
TEST_F(CdiFiles, TheRunsBudgetLeavesOutTheLargestFilesSayingWhy) {
  for (int i = 0; i < 4; ++i) write(etc_ + "/gpu" + std::to_string(i) + ".yaml", small_spec(std::to_string(i)));
  std::string padded = small_spec("9") + "annotations:\n";
  for (int i = 0; i < 100; ++i) padded += "  k" + std::to_string(i) + ": v\n";
  write(etc_ + "/a-padded.yaml", padded);  // sorts first by name, last by size
  CdiBudget nodes;
  nodes.run_nodes = 4 * 15;  // each small spec is 15 nodes: the four fit, the padded one does not
  CdiSpecs c = read_cdi_specs({etc_}, nodes);
  EXPECT_EQ(c.devices.size(), 4u);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].file, etc_ + "/a-padded.yaml");
  EXPECT_NE(c.problems[0].message.find("smaller spec files before it used the 60 YAML or JSON nodes"), std::string::npos)
      << c.problems[0].message;
  CdiBudget bytes;
  bytes.run_bytes = 4 * small_spec("0").size();
  c = read_cdi_specs({etc_}, bytes);
  EXPECT_EQ(c.devices.size(), 4u);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].message.find("not read: the smaller spec files before it used the"), std::string::npos)
      << c.problems[0].message;
  CdiBudget file;
  file.file_nodes = 14;
  c = read_cdi_specs({etc_}, file);
  EXPECT_TRUE(c.devices.empty());
  EXPECT_EQ(c.problems.size(), 5u);
}

// Issue 56 item 6: a folder of more than 1 024 spec names was cut silently, in readdir order.  The
// first 1 024 by name are read and every other is a problem naming it.
TEST_F(CdiFiles, SpecFilesPastTheFolderLimitAreEachSaid) {
  char name[32];
  for (int i = 0; i < 1030; ++i) {
    std::snprintf(name, sizeof name, "/s%04d.json", i);
    write(etc_ + name, "{}");  // not a spec: a problem of its own when read
  }
  write(etc_ + "/zz.yaml", small_spec("0"));  // a real one, last by name
  CdiSpecs c = read_cdi_specs({etc_});
  EXPECT_TRUE(c.devices.empty());  // zz.yaml is past the limit: said, not read
  ASSERT_EQ(c.problems.size(), 1031u);
  std::map<std::string, std::string> by_file;
  for (const auto& p : c.problems) by_file[p.file] = p.message;
  ASSERT_TRUE(by_file.count(etc_ + "/zz.yaml"));
  EXPECT_NE(by_file[etc_ + "/zz.yaml"].find("more than 1024 spec files"), std::string::npos) << by_file[etc_ + "/zz.yaml"];
  EXPECT_NE(by_file[etc_ + "/s1029.json"].find("more than 1024 spec files"), std::string::npos);
  EXPECT_EQ(by_file[etc_ + "/s1023.json"].find("more than 1024"), std::string::npos) << "the 1 024th by name is read";
}

}  // namespace
}  // namespace gpumap
