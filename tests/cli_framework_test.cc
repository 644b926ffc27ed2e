// The framework layer through the binary (issue 35): map --json's `torch` object beside the
// driver's view, the framework findings with their fixes pasted back, and minor numbers that are
// not nvidia-smi indices said where the host is shown.  The model itself is checked against the
// measured vectors in src/resolve/framework_view_test.cc.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

const std::string kU0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";  // h200x2: nvidia-smi GPU 0
const std::string kU0Upper = "GPU-EF612C2C-FB96-14CB-EBBF-9B494CFFCEAB";

json doc(const std::vector<std::string>& args) {
  CliRun r = gpumap_here(args);
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

const json* finding(const json& j, const std::string& id) {
  for (const json& f : j["findings"])
    if (f["id"] == id) return &f;
  return nullptr;
}

TEST(CliFramework, MapSaysWhatTorchCountsBesideTheDriver) {
  json agree = doc({"map", "--json", "--simulate", "h200x2", "--env", "CUDA_VISIBLE_DEVICES=1,0"});
  EXPECT_EQ(agree["torch"]["device_count"], 2);
  EXPECT_EQ(agree["torch"]["agrees"], true);
  EXPECT_EQ(finding(agree, "torch-count-differs"), nullptr);

  json upper = doc({"map", "--json", "--simulate", "h200x2", "--env", "CUDA_VISIBLE_DEVICES=" + kU0Upper});
  EXPECT_EQ(upper["cuda"]["devices"].size(), 1u);  // the driver reads the hex: GPU 0
  EXPECT_EQ(upper["torch"]["device_count"], 0);     // torch compares the text
  EXPECT_EQ(upper["torch"]["driver_device_count"], 1);
  EXPECT_EQ(upper["torch"]["agrees"], false);
  EXPECT_EQ(upper["torch"]["is_available"], true);
  EXPECT_EQ(upper["torch"]["is_available_nvml_check"], false);
  const json* f = finding(upper, "torch-count-differs");
  ASSERT_NE(f, nullptr) << upper.dump();
  EXPECT_NE(f->at("fix").get<std::string>().find("export CUDA_VISIBLE_DEVICES=" + kU0), std::string::npos);

  json raises = doc({"map", "--json", "--simulate", "h200x2", "--env", "CUDA_VISIBLE_DEVICES=0,-"});
  EXPECT_TRUE(raises["torch"]["device_count"].is_null());
  EXPECT_EQ(raises["torch"]["raises"], "ValueError: invalid literal for int() with base 10: '-'");
  EXPECT_TRUE(raises["torch"]["is_available_nvml_check"].is_null());

  // --batch lines carry it too.
  std::string batch = write_temp_file("fw-batch.jsonl", "{\"CUDA_VISIBLE_DEVICES\": \"+\"}\n");
  CliRun b = gpumap_here({"map", "--batch", batch, "--json", "--simulate", "h200x2"});
  json line = json::parse(b.out, nullptr, false);
  ASSERT_FALSE(line.is_discarded()) << b.out << b.err;
  EXPECT_EQ(line["torch"]["raises"], "ValueError: invalid literal for int() with base 10: '+'");
}

// Each framework fix pasted: doctor then has nothing above info (the paste test walks them on every
// host too; this one reads the messages).
TEST(CliFramework, FixesPasteBack) {
  struct Case {
    std::string cvd, id;
  };
  for (const Case& c : {Case{kU0.substr(0, 12), "uuid-prefix-breaks-nvml-lookup"}, Case{kU0Upper, "torch-count-differs"},
                        Case{"0,9,0", "torch-count-differs"}}) {
    SCOPED_TRACE(c.cvd);
    json j = doc({"doctor", "--json", "--simulate", "h200x2", "--env", "CUDA_VISIBLE_DEVICES=" + c.cvd});
    const json* f = finding(j, c.id);
    ASSERT_NE(f, nullptr) << j.dump();
    std::string fix = f->at("fix");
    std::string value = fix.substr(fix.find('=') + 1);
    value = value.substr(0, value.find(' '));
    EXPECT_EQ(value.rfind(kU0, 0), 0u) << fix;  // the whole UUID, as NVML writes it
    json after = doc({"doctor", "--json", "--simulate", "h200x2", "--env", "CUDA_VISIBLE_DEVICES=" + value});
    for (const json& g : after["findings"]) EXPECT_EQ(g["severity"], "info") << g.dump();
  }
  // The NVML lookup finding names the entry as written and vLLM.
  json p = doc({"doctor", "--json", "--simulate", "h200x2", "--env", "CUDA_VISIBLE_DEVICES=" + kU0.substr(0, 12)});
  EXPECT_NE(finding(p, "uuid-prefix-breaks-nvml-lookup")->at("message").get<std::string>().find("vLLM"), std::string::npos);
}

TEST(CliFramework, RayEmptyListSaysHowToAskForGpus) {
  json j = doc({"doctor", "--json", "--simulate", "h200x2", "--env", "CUDA_VISIBLE_DEVICES=", "--env",
                "RAY_ADDRESS=127.0.0.1:6379"});
  const json* f = finding(j, "ray-gave-no-gpus");
  ASSERT_NE(f, nullptr) << j.dump();
  EXPECT_NE(f->at("note").get<std::string>().find("num_gpus=1"), std::string::npos);
  EXPECT_EQ(f->at("fix"), "");
  // Without Ray, an empty list is CPU-only on purpose: no Ray finding.
  json plain = doc({"doctor", "--json", "--simulate", "h200x2", "--env", "CUDA_VISIBLE_DEVICES="});
  EXPECT_EQ(finding(plain, "ray-gave-no-gpus"), nullptr);
}

TEST(CliFramework, MinorNumbersThatAreNotIndicesAreSaid) {
  std::ifstream in(host_path("h200x2"));
  json host = json::parse(in);
  host["gpus"][0]["minor_number"] = 1;
  host["gpus"][1]["minor_number"] = 0;
  std::string path = write_temp_file("minors.json", host.dump());
  CliRun list = gpumap_here({"list", "--simulate", path});
  EXPECT_NE(list.out.find("GPU 0 is /dev/nvidia1, GPU 1 is /dev/nvidia0"), std::string::npos) << list.out << list.err;
  CliRun map = gpumap_here({"map", "--simulate", path});
  EXPECT_NE(map.out.find("Minor numbers differ"), std::string::npos) << map.out;
  json d = doc({"doctor", "--json", "--simulate", path});
  const json* f = finding(d, "minor-differs-from-index");
  ASSERT_NE(f, nullptr) << d.dump();
  EXPECT_EQ(f->at("severity"), "info");
  // job-map, where Slurm's ids (minors) meet dcgm-exporter's gpu label (the index): the file is
  // the index's, and the translation is said.
  std::string dir = temp_dir("minors-map") + "/map";
  CliRun jm = gpumap_here({"job-map", "--prolog", "--simulate", path, "--dir", dir, "--job", "42", "--gpus", "1", "--json"});
  ASSERT_EQ(jm.code, 0) << jm.err;
  EXPECT_EQ(json::parse(jm.out)["files"], json::array({"0"})) << jm.out;
  EXPECT_NE(jm.err.find("note: Slurm's GPU id 1 is /dev/nvidia1, which is nvidia-smi GPU 0 on this host"), std::string::npos)
      << jm.err;
  EXPECT_EQ(json::parse(jm.out)["notes"].size(), 1u);
  CliRun by_minor = gpumap_here({"job-map", "--prolog", "--simulate", path, "--dir", dir, "--job", "43", "--gpus", "1",
                            "--name-by", "minor"});
  EXPECT_NE(by_minor.err.find("dcgm-exporter's gpu label for it is 0"), std::string::npos) << by_minor.err;
  CliRun empty = gpumap_here({"job-map", "--prolog", "--simulate", "h200x2", "--dir", dir, "--job", "45", "--gpus", " , "});
  EXPECT_EQ(empty.code, 2) << "an empty allocation is a mistake, not a job with no file\n" << empty.err;
  EXPECT_NE(empty.err.find("the allocation is empty"), std::string::npos) << empty.err;
  CliRun plain = gpumap_here({"job-map", "--prolog", "--simulate", "h200x2", "--dir", dir, "--job", "44", "--gpus", "1"});
  EXPECT_EQ(plain.err.find("note:"), std::string::npos) << "minors equal to indices: nothing to say\n" << plain.err;
  // The bundled host, minors equal to indices: nothing said.
  CliRun same = gpumap_here({"list", "--simulate", "h200x2"});
  EXPECT_EQ(same.out.find("Minor numbers differ"), std::string::npos);
  EXPECT_EQ(finding(doc({"doctor", "--json", "--simulate", "h200x2"}), "minor-differs-from-index"), nullptr);
}

}  // namespace
}  // namespace gpumap::testing
