// Black-box tests of `gpumap list` and `gpumap map` against simulated hosts.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

json map_json(const std::vector<std::string>& extra, const std::vector<std::string>& env = {}) {
  std::vector<std::string> args = {"map", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  CliRun r = gpumap(args, env);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

TEST(CliMap, SeedMixedPutsTheNewerGpuFirst) {
  json j = map_json({"--simulate", "seed-mixed"});
  EXPECT_TRUE(j["simulated"].get<bool>());
  auto devs = j["cuda"]["devices"];
  ASSERT_EQ(devs.size(), 4u);
  EXPECT_EQ(devs[0]["nvml_index"], 1);
  EXPECT_EQ(devs[1]["nvml_index"], 0);
  EXPECT_EQ(devs[0]["uuid"], j["gpus"][1]["uuid"]);
  bool found = false;
  for (auto& f : j["findings"]) found |= f["id"] == "order-differs";
  EXPECT_TRUE(found) << j["findings"].dump();
  EXPECT_EQ(j["cuda"]["error"], nullptr);
}

TEST(CliMap, PciBusIdRealignsSeedMixed) {
  json j = map_json({"--simulate", "seed-mixed"}, {"CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  auto devs = j["cuda"]["devices"];
  ASSERT_EQ(devs.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(devs[i]["nvml_index"], i);
  for (auto& f : j["findings"]) EXPECT_NE(f["id"], "order-differs");
  EXPECT_EQ(j["cuda"]["source"], "predicted");
}

TEST(CliMap, MixedHostAsksTheDriverOnceThenUsesTheCache) {
  std::string cache = temp_dir("ordercache");
  json a = map_json({"--simulate", "seed-mixed"}, {"GPUMAP_CACHE_DIR=" + cache});
  EXPECT_EQ(a["cuda"]["source"], "driver");
  json b = map_json({"--simulate", "seed-mixed"}, {"GPUMAP_CACHE_DIR=" + cache});
  EXPECT_EQ(b["cuda"]["source"], "cache");
  EXPECT_EQ(a["cuda"]["devices"], b["cuda"]["devices"]);
}

// Issue 43: an unusable GPUMAP_CACHE_DIR was ignored in silence, every run paying cuInit again.
// Said once per run on stderr with the reason and the fix, not by a command that needs no cache,
// and by doctor as a finding (then not again on stderr).
TEST(CliMap, AnUnusableCacheFolderIsSaidOnce) {
  std::string file = temp_dir("cachefile") + "/file";
  std::ofstream(file) << "x";
  std::string notice = "gpumap: the cache folder " + file + " is a regular file, not a folder";
  CliRun map = gpumap({"map", "--simulate", "seed-mixed"}, {"GPUMAP_CACHE_DIR=" + file});
  EXPECT_EQ(map.code, 0) << map.err;
  size_t at = map.err.find(notice);
  ASSERT_NE(at, std::string::npos) << map.err;
  EXPECT_EQ(map.err.find(notice, at + 1), std::string::npos) << "said twice\n" << map.err;
  EXPECT_NE(map.err.find("Fix: export GPUMAP_CACHE_DIR="), std::string::npos) << map.err;
  CliRun list = gpumap({"list", "--simulate", "seed-mixed"}, {"GPUMAP_CACHE_DIR=" + file});
  EXPECT_EQ(list.err, "");  // list never uses the cache
  CliRun doctor = gpumap({"doctor", "--json", "--simulate", "seed-mixed"}, {"GPUMAP_CACHE_DIR=" + file});
  bool found = false;
  json d = json::parse(doctor.out);
  for (const json& f : d["findings"])
    if (f["id"] == "cache-unusable") {
      found = true;
      EXPECT_EQ(f["severity"], "warning");
      EXPECT_EQ(f["message"].get<std::string>().rfind("the cache folder " + file + " is a regular file", 0), 0u) << f;
    }
  EXPECT_TRUE(found) << doctor.out;
  EXPECT_EQ(doctor.err.find(notice), std::string::npos) << doctor.err;
}

TEST(CliMap, CorruptCacheIsIgnoredAndRebuilt) {
  std::string cache = temp_dir("badcache");
  std::string file = cache + "/cuda-order-v1.json";
  FILE* f = fopen(file.c_str(), "w");
  fputs("{not json", f);
  fclose(f);
  json a = map_json({"--simulate", "seed-mixed"}, {"GPUMAP_CACHE_DIR=" + cache});
  EXPECT_EQ(a["cuda"]["source"], "driver");
  EXPECT_EQ(a["cuda"]["devices"][0]["nvml_index"], 1);
  json b = map_json({"--simulate", "seed-mixed"}, {"GPUMAP_CACHE_DIR=" + cache});
  EXPECT_EQ(b["cuda"]["source"], "cache");
}

// A cached order that no longer matches the driver (the cache is keyed on boot, driver version and
// GPUs, so only something that reorders CUDA within one boot gets here; forced by editing it):
// `map --check` says so, takes the driver's order again, and the next prediction is right.
TEST(CliMap, CheckRefreshesACachedOrderThatDisagreesWithTheDriver) {
  std::string cache = temp_dir("stalecache");
  std::vector<std::string> env = {"GPUMAP_CACHE_DIR=" + cache};
  json fresh = map_json({"--simulate", "seed-mixed"}, env);
  ASSERT_EQ(fresh["cuda"]["source"], "driver");
  std::string file = cache + "/cuda-order-v1.json";
  std::ifstream in(file);
  json c = json::parse(in);
  in.close();
  ASSERT_EQ(c["entries"].size(), 1u);
  json& order = c["entries"][0]["order"];
  ASSERT_GE(order.size(), 2u);
  std::swap(order[0], order[1]);
  std::ofstream(file) << c.dump();
  json stale = map_json({"--simulate", "seed-mixed"}, env);
  ASSERT_EQ(stale["cuda"]["source"], "cache");
  ASSERT_NE(stale["cuda"]["devices"], fresh["cuda"]["devices"]) << "the edited cache is used";

  CliRun r = gpumap({"map", "--check", "--simulate", "seed-mixed"}, env);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("out of date"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Check against the driver: AGREE"), std::string::npos) << r.out;
  CliRun j = gpumap({"map", "--check", "--json", "--simulate", "seed-mixed"}, env);
  EXPECT_EQ(j.code, 0);  // the cache is right again: nothing to refresh
  EXPECT_EQ(json::parse(j.out)["check"]["refreshed_cache"], false);
  json after = map_json({"--simulate", "seed-mixed"}, env);
  EXPECT_EQ(after["cuda"]["source"], "cache");
  EXPECT_EQ(after["cuda"]["devices"], fresh["cuda"]["devices"]);
}

// A long first MIG- entry crashes cuInit (measured; docs/driver-rules.md).  The prediction says so,
// the probe child that dies of SIGSEGV in the fake driver is read as the driver's DRIVER_CRASH, and
// --check agrees; doctor's cuda-init-fails is an error (exit 7).
TEST(CliMap, ALongFirstMigEntryIsADriverCrashThatCheckConfirms) {
  std::string v = "CUDA_VISIBLE_DEVICES=MIG-" + std::string(1100, 'x');
  CliRun r = gpumap({"map", "--check", "--json", "--simulate", "h200x2", "--env", v});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json c = json::parse(r.out)["check"];
  EXPECT_EQ(c["agree"], true);
  EXPECT_EQ(c["predicted"]["error"], "DRIVER_CRASH");
  EXPECT_EQ(c["driver"]["error"], "DRIVER_CRASH");
  CliRun t = gpumap({"map", "--simulate", "h200x2", "--env", v});
  EXPECT_NE(t.out.find("CUDA would CRASH as it starts"), std::string::npos) << t.out;
  CliRun d = gpumap({"doctor", "--simulate", "h200x2"}, {v});
  EXPECT_EQ(d.code, 7) << d.out;
  EXPECT_NE(d.out.find("cuda-init-fails: cuInit would not return"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("fix: unset CUDA_VISIBLE_DEVICES"), std::string::npos) << d.out;
}

TEST(CliMap, EnvOptionPredictsAnotherEnvironment) {
  json j = map_json({"--simulate", "h200x2", "--env", "CUDA_VISIBLE_DEVICES=1,0"});
  ASSERT_EQ(j["cuda"]["devices"].size(), 2u);
  EXPECT_EQ(j["cuda"]["devices"][0]["nvml_index"], 1);
  EXPECT_EQ(j["environment"]["CUDA_VISIBLE_DEVICES"], "1,0");
}

TEST(CliMap, CudaFailureIsExplainedNotAnEmptyTable) {
  CliRun r = gpumap({"map", "--simulate", "h200x2"}, {"CUDA_VISIBLE_DEVICES=0,0"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("CUDA_ERROR_INVALID_DEVICE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("same GPU twice"), std::string::npos) << r.out;
  json j = map_json({"--simulate", "h200x2"}, {"CUDA_DEVICE_ORDER="});
  EXPECT_EQ(j["cuda"]["error"], "CUDA_ERROR_INVALID_DEVICE");
  EXPECT_TRUE(j["cuda"]["devices"].empty());
}

TEST(CliMap, CheckAgreesWithTheFakeDriverOnMeasuredVectors) {
  for (const char* cvd : {"1,0", "0,5,1", "GPU-1722", "1;0", "4294967297", "0,GPU-1722a9ae", "", "-1"}) {
    CliRun r = gpumap({"map", "--check", "--json", "--simulate", host_path("measured-h200x2")},
                   {std::string("CUDA_VISIBLE_DEVICES=") + cvd});
    EXPECT_EQ(r.code, 0) << cvd << "\n" << r.out << r.err;
    json j = json::parse(r.out);
    EXPECT_TRUE(j["check"]["agree"].get<bool>()) << cvd;
  }
}

// map --batch: one process, one answer per line, each the same as `map --json` in that environment.
TEST(CliMap, BatchAnswersEachLineLikeMapDoes) {
  std::string file = write_temp_file("batch.jsonl",
                                     "{\"CUDA_VISIBLE_DEVICES\": \"1,0\", \"CUDA_DEVICE_ORDER\": null}\n"
                                     "{\"CUDA_VISIBLE_DEVICES\": \"0,0\"}\n"
                                     "\n"
                                     "{\"CUDA_DEVICE_ORDER\": \"pci_bus_id\"}\n"
                                     "{\"CUDA_VISIBLE_DEVICES_hex\": \"3220a02c30\", \"CUDA_DEVICE_ORDER\": \"PCI_BUS_ID\"}\n"
                                     "{\"CUDA_VISIBLE_DEVICES\": null}\n"
                                     "{\"CUDA_VISIBLE_DEVICES\": \"GPU-1722a9ae-1e34-595f-b548-742051b181a7x,0\"}\n");
  // The environment's CUDA_VISIBLE_DEVICES=3 holds where a line leaves the variable out.
  std::vector<std::string> env = {"CUDA_VISIBLE_DEVICES=3"};
  CliRun r = gpumap({"map", "--json", "--simulate", "seed-mixed", "--batch", file}, env);
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  ASSERT_EQ(lines.size(), 6u) << r.out;
  // Mixed models: the driver is asked for its order once, then the cache answers.
  EXPECT_EQ(lines[0]["cuda"]["source"], "driver");
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i]["cuda"]["order"] == "FASTEST_FIRST") {
      EXPECT_EQ(lines[i]["cuda"]["source"], "cache") << i;
    }
  }
  struct Want {
    int line;
    std::vector<std::string> env;  // what `map --env` gets for the same question
  };
  std::vector<Want> want = {{1, {"CUDA_VISIBLE_DEVICES=1,0"}},
                            {2, {"CUDA_VISIBLE_DEVICES=0,0"}},
                            {4, {"CUDA_VISIBLE_DEVICES=3", "CUDA_DEVICE_ORDER=pci_bus_id"}},
                            {5, {"CUDA_VISIBLE_DEVICES=2 \xa0,0", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}},
                            {6, {}},
                            {7, {"CUDA_VISIBLE_DEVICES=GPU-1722a9ae-1e34-595f-b548-742051b181a7x,0"}}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(lines[i]["line"], want[i].line);
    EXPECT_EQ(lines[i]["simulated"], true);
    json single = map_json({"--simulate", "seed-mixed"}, want[i].env);
    // Where the base order came from differs: each single run asks the driver (a fresh cache),
    // the batch asks once and reads its cache after.
    for (json* j : {&lines[i]["cuda"], &single["cuda"]})
      for (const char* key : {"source", "order_note", "driver_ms"}) j->erase(key);
    EXPECT_EQ(lines[i]["cuda"], single["cuda"]) << "line " << want[i].line;
    EXPECT_EQ(lines[i]["environment"], single["environment"]) << "line " << want[i].line;
  }
  EXPECT_EQ(lines[0]["cuda"]["devices"].size(), 2u);
  EXPECT_EQ(lines[1]["cuda"]["error"], "CUDA_ERROR_INVALID_DEVICE");
  EXPECT_EQ(lines[2]["cuda"]["error"], "CUDA_ERROR_INVALID_DEVICE");
  EXPECT_EQ(lines[3]["cuda"]["devices"][0]["nvml_index"], 2);  // strtoul: "2 \xa0" is 2
  EXPECT_EQ(lines[4]["cuda"]["devices"].size(), 4u);

  // Without --json: one line each; from stdin with -.
  CliRun text = run_program({"/bin/sh", "-c", "exec \"$0\" map --simulate h200x2 --batch - < \"$1\"", GPUMAP_BINARY, file});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out.substr(0, text.out.find('\n')),
            "line 1: cuda:0 = nvidia-smi 1 GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a, cuda:1 = nvidia-smi 0 "
            "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab");
  EXPECT_NE(text.out.find("line 2: CUDA would fail (CUDA_ERROR_INVALID_DEVICE)\nline 4:"), std::string::npos) << text.out;
}

TEST(CliMap, BatchRefusesABadFileBeforeAnswering) {
  std::string file = write_temp_file("bad.jsonl", "{\"CUDA_VISIBLE_DEVICES\": \"1\"}\n{\"CUDA_VISIBLE_DEVICE\": \"1\"}\n");
  CliRun r = gpumap({"map", "--json", "--simulate", "h200x2", "--batch", file});
  EXPECT_EQ(r.code, 2);
  // Nothing half-done: line 1 is not answered either; stdout holds only the error (issue 22.8).
  nlohmann::json err = nlohmann::json::parse(r.out);
  EXPECT_EQ(err.size(), 1u) << r.out;
  EXPECT_EQ(err["error"]["code"], 2) << r.out;
  EXPECT_NE(r.err.find(file + " line 2: unknown key `CUDA_VISIBLE_DEVICE`"), std::string::npos) << r.err;
  CliRun missing = gpumap({"map", "--simulate", "h200x2", "--batch", file + ".none"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("cannot be opened"), std::string::npos) << missing.err;
  for (std::vector<std::string> extra : {std::vector<std::string>{"--check"}, {"--probe"}, {"--line"}, {"cuda:0"}}) {
    std::vector<std::string> args = {"map", "--simulate", "h200x2", "--batch", file};
    args.insert(args.end(), extra.begin(), extra.end());
    CliRun both = gpumap(args);
    EXPECT_EQ(both.code, 2) << extra[0];
    EXPECT_NE(both.err.find("--batch and"), std::string::npos) << both.err;
  }
}

TEST(CliMap, NoArgumentsMeansMap) {
  CliRun r = gpumap({}, {"GPUMAP_SIMULATE=seed-mixed"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("SIMULATED"), std::string::npos);
  EXPECT_NE(r.out.find("cuda:0"), std::string::npos);
}

TEST(CliList, ReportsEveryGpuInNvmlOrder) {
  for (const char* host : {"seed-mixed", "h200x2", "dgx8", "mig"}) {
    CliRun r = gpumap({"list", "--json", "--simulate", host});
    ASSERT_EQ(r.code, 0) << host << r.err;
    json j = json::parse(r.out);
    std::string prev;
    for (size_t i = 0; i < j["gpus"].size(); ++i) {
      EXPECT_EQ(j["gpus"][i]["nvml_index"], i);
      std::string pci = j["gpus"][i]["pci_bus_id"];
      EXPECT_LT(prev, pci) << host;
      prev = pci;
    }
  }
}

TEST(CliList, UnorderedHostFileIsListedInPciOrder) {
  std::string f = write_temp_file("rev.json", R"({"gpus": [
    {"name": "B", "uuid": "GPU-bbbbbbbb-0000-0000-0000-000000000000", "pci_bus_id": "0000:81:00.0", "memory_total_mib": 10},
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0", "memory_total_mib": 10}]})");
  CliRun r = gpumap({"list", "--json", "--simulate", f});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["gpus"][0]["name"], "A");
  EXPECT_EQ(j["gpus"][1]["name"], "B");
}

TEST(CliErrors, NoDriverFailsCleanlyWithAHint) {
  CliRun r = gpumap({"list"});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("libnvidia-ml.so.1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--simulate seed-mixed"), std::string::npos) << r.err;
}

TEST(CliErrors, BadHostFileNamesTheFileAndField) {
  std::string f = write_temp_file("bad.json", R"({"gpus": [{"name": "X", "uuid": "nope", "pci_bus_id": "0000:01:00.0"}]})");
  CliRun r = gpumap({"list", "--simulate", f});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.json"), std::string::npos);
  EXPECT_NE(r.err.find("gpus[0].uuid"), std::string::npos) << r.err;
  r = gpumap({"list", "--simulate", "no-such-host"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("seed-mixed"), std::string::npos) << r.err;
}

TEST(CliErrors, UnknownOptionAndCommandAreUsageErrors) {
  CliRun r = gpumap({"map", "--bogus"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos);
  r = gpumap({"frobnicate"});
  EXPECT_EQ(r.code, 2);
  r = gpumap({"map", "--env", "NOEQUALS", "--simulate", "h200x2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("NAME=VALUE"), std::string::npos);
}

TEST(CliErrors, InjectedNvmlErrorsNameTheSymbolAndCode) {
  std::string f = write_temp_file("err.json", R"({"errors": {"nvmlInit": "NVML_ERROR_DRIVER_NOT_LOADED"}, "gpus": []})");
  CliRun r = gpumap({"list", "--simulate", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("nvmlInit_v2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NVML_ERROR_DRIVER_NOT_LOADED (9)"), std::string::npos) << r.err;
}

TEST(CliList, FailedFieldIsNullAndNotedNeverDropsTheGpu) {
  std::string f = write_temp_file("field.json", R"({"gpus": [
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0", "memory_total_mib": 10,
     "errors": {"nvmlDeviceGetMemoryInfo": "NVML_ERROR_UNKNOWN", "nvmlDeviceGetUtilizationRates": "NVML_ERROR_NOT_SUPPORTED"}}]})");
  CliRun r = gpumap({"list", "--json", "--simulate", f});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["memory_total_mib"], nullptr);
  EXPECT_EQ(j["gpus"][0]["utilization_gpu"], nullptr);
  ASSERT_EQ(j["gpus"][0]["notes"].size(), 1u);  // NOT_SUPPORTED is a plain N/A, not a note
  EXPECT_NE(j["gpus"][0]["notes"][0].get<std::string>().find("NVML_ERROR_UNKNOWN"), std::string::npos);
}

TEST(CliList, LegacyDriverSymbolsStillWork) {
  CliRun r = gpumap({"list", "--json", "--simulate", "h200x2"}, {"GPUMAP_SIM_LIBDIR=" GPUMAP_BUILD_DIR "/sim-legacy"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["gpus"].size(), 2u);
  auto bound = json::parse(r.out)["nvml_symbols"];  // the unversioned fallbacks bound
  EXPECT_NE(std::find(bound.begin(), bound.end(), "nvmlInit"), bound.end()) << bound.dump();
  EXPECT_NE(std::find(bound.begin(), bound.end(), "nvmlDeviceGetComputeRunningProcesses"), bound.end()) << bound.dump();
  CliRun full = gpumap({"list", "--json", "--simulate", "h200x2"});
  auto newest = json::parse(full.out)["nvml_symbols"];
  EXPECT_NE(std::find(newest.begin(), newest.end(), "nvmlDeviceGetComputeRunningProcesses_v3"), newest.end());
  EXPECT_NE(std::find(newest.begin(), newest.end(), "nvmlDeviceGetPciInfo_v3"), newest.end());
  CliRun m = gpumap({"map", "--probe", "--json", "--simulate", "h200x2"}, {"GPUMAP_SIM_LIBDIR=" GPUMAP_BUILD_DIR "/sim-legacy"});
  ASSERT_EQ(m.code, 0) << m.err;
  auto devs = json::parse(m.out)["cuda"]["devices"];
  ASSERT_EQ(devs.size(), 2u);
  EXPECT_EQ(devs[0]["cuda_pci_bus_id"], "0000:00:06.0");  // CUDA's form, as the real driver writes it
  EXPECT_EQ(devs[0]["cuda_name"], "NVIDIA H200");
}

}  // namespace
}  // namespace gpumap::testing
