// Black-box tests of `gpumap list` and `gpumap map` against simulated hosts: what needs the process
// (the order cache across runs, --env, stdin, exit codes, a crashing probe, the driver libraries).
// What `map` answers is src/session/map_test.cc's and map_batch_test.cc's, in process.
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
  CliRun r = gpumap_here(args, env);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

// Issue 43: an unusable GPUMAP_CACHE_DIR was ignored in silence, every run paying cuInit again.
// Said once per run on stderr with the reason and the fix, not by a command that needs no cache,
// and by doctor as a finding (then not again on stderr).
TEST(CliMap, AnUnusableCacheFolderIsSaidOnce) {
  std::string file = temp_dir("cachefile") + "/file";
  std::ofstream(file) << "x";
  std::string notice = "gpumap: the cache folder " + file + " is a regular file, not a folder";
  CliRun map = gpumap_here({"map", "--simulate", "seed-mixed"}, {"GPUMAP_CACHE_DIR=" + file});
  EXPECT_EQ(map.code, 0) << map.err;
  size_t at = map.err.find(notice);
  ASSERT_NE(at, std::string::npos) << map.err;
  EXPECT_EQ(map.err.find(notice, at + 1), std::string::npos) << "said twice\n" << map.err;
  EXPECT_NE(map.err.find("Fix: export GPUMAP_CACHE_DIR="), std::string::npos) << map.err;
  CliRun list = gpumap_here({"list", "--simulate", "seed-mixed"}, {"GPUMAP_CACHE_DIR=" + file});
  EXPECT_EQ(list.err, "");  // list never uses the cache
  CliRun doctor = gpumap_here({"doctor", "--json", "--simulate", "seed-mixed"}, {"GPUMAP_CACHE_DIR=" + file});
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

  CliRun r = gpumap_here({"map", "--check", "--simulate", "seed-mixed"}, env);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("out of date"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Check against the driver: AGREE"), std::string::npos) << r.out;
  CliRun j = gpumap_here({"map", "--check", "--json", "--simulate", "seed-mixed"}, env);
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
  CliRun r = gpumap_here({"map", "--check", "--json", "--simulate", "h200x2", "--env", v});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json c = json::parse(r.out)["check"];
  EXPECT_EQ(c["agree"], true);
  EXPECT_EQ(c["predicted"]["error"], "DRIVER_CRASH");
  EXPECT_EQ(c["driver"]["error"], "DRIVER_CRASH");
  CliRun t = gpumap_here({"map", "--simulate", "h200x2", "--env", v});
  EXPECT_NE(t.out.find("CUDA would CRASH as it starts"), std::string::npos) << t.out;
  CliRun d = gpumap_here({"doctor", "--simulate", "h200x2"}, {v});
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

// map --batch through the process: FILE `-` is this process's stdin, one line of output per case.
// What each line says, the refusals and the answers' JSON are AnswerMapBatch's (in process,
// src/session/map_batch_test.cc); the map_batch document's keys are CliJsonContract's.
TEST(CliMap, BatchReadsStdinAndWritesALinePerCase) {
  std::string file = write_temp_file("batch.jsonl",
                                     "{\"CUDA_VISIBLE_DEVICES\": \"1,0\", \"CUDA_DEVICE_ORDER\": null}\n"
                                     "{\"CUDA_VISIBLE_DEVICES\": \"0,0\"}\n"
                                     "\n"
                                     "{\"CUDA_DEVICE_ORDER\": \"pci_bus_id\"}\n");
  CliRun text = run_program({"/bin/sh", "-c", "exec \"$0\" map --simulate h200x2 --batch - < \"$1\"", GPUMAP_BINARY, file});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out.substr(0, text.out.find('\n')),
            "line 1: cuda:0 = nvidia-smi 1 GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a, cuda:1 = nvidia-smi 0 "
            "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab");
  EXPECT_NE(text.out.find("line 2: CUDA would fail (CUDA_ERROR_INVALID_DEVICE)\nline 4:"), std::string::npos) << text.out;
}

TEST(CliMap, BatchRefusesABadFileBeforeAnswering) {
  std::string file = write_temp_file("bad.jsonl", "{\"CUDA_VISIBLE_DEVICES\": \"1\"}\n{\"CUDA_VISIBLE_DEVICE\": \"1\"}\n");
  CliRun r = gpumap_here({"map", "--json", "--simulate", "h200x2", "--batch", file});
  EXPECT_EQ(r.code, 2);
  // Nothing half-done: line 1 is not answered either; stdout holds only the error (issue 22.8).
  nlohmann::json err = nlohmann::json::parse(r.out);
  EXPECT_EQ(err.size(), 1u) << r.out;
  EXPECT_EQ(err["error"]["code"], 2) << r.out;
  EXPECT_NE(r.err.find(file + " line 2: unknown key `CUDA_VISIBLE_DEVICE`"), std::string::npos) << r.err;
}

// Issue 56 item 10: the whole file was read into memory first (/dev/zero: 7 GB in 10 s).  Lines
// are read up to a limit: an endless one is refused at once naming its line and the limit, with
// nothing answered.  (The old code would eat this machine's memory: run it against the fix only.)
TEST(CliMap, BatchRefusesAnEndlessLineNamingItAndTheLimit) {
  CliRun r = gpumap_here({"map", "--simulate", "h200x2", "--batch", "/dev/zero"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("/dev/zero line 1: longer than 1048576 bytes"), std::string::npos) << r.err;
}

TEST(CliMap, NoArgumentsMeansMap) {
  CliRun r = gpumap_here({}, {"GPUMAP_SIMULATE=seed-mixed"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("SIMULATED"), std::string::npos);
  EXPECT_NE(r.out.find("cuda:0"), std::string::npos);
}

TEST(CliList, ReportsEveryGpuInNvmlOrder) {
  for (const char* host : {"seed-mixed", "h200x2", "dgx8", "mig"}) {
    CliRun r = gpumap_here({"list", "--json", "--simulate", host});
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
  CliRun r = gpumap_here({"list", "--json", "--simulate", f});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["gpus"][0]["name"], "A");
  EXPECT_EQ(j["gpus"][1]["name"], "B");
}

TEST(CliErrors, NoDriverFailsCleanlyWithAHint) {
  CliRun r = gpumap({"list"});  // the built binary: no simulated library loaded before it
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("libnvidia-ml.so.1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--simulate seed-mixed"), std::string::npos) << r.err;
}

TEST(CliErrors, BadHostFileNamesTheFileAndField) {
  std::string f = write_temp_file("bad.json", R"({"gpus": [{"name": "X", "uuid": "nope", "pci_bus_id": "0000:01:00.0"}]})");
  CliRun r = gpumap_here({"list", "--simulate", f});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.json"), std::string::npos);
  EXPECT_NE(r.err.find("gpus[0].uuid"), std::string::npos) << r.err;
  r = gpumap_here({"list", "--simulate", "no-such-host"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("seed-mixed"), std::string::npos) << r.err;
}

TEST(CliErrors, UnknownOptionAndCommandAreUsageErrors) {
  CliRun r = gpumap_here({"map", "--bogus"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos);
  r = gpumap_here({"frobnicate"});
  EXPECT_EQ(r.code, 2);
  r = gpumap_here({"map", "--env", "NOEQUALS", "--simulate", "h200x2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("NAME=VALUE"), std::string::npos);
}

TEST(CliErrors, InjectedNvmlErrorsNameTheSymbolAndCode) {
  std::string f = write_temp_file("err.json", R"({"errors": {"nvmlInit": "NVML_ERROR_DRIVER_NOT_LOADED"}, "gpus": []})");
  CliRun r = gpumap_here({"list", "--simulate", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("nvmlInit_v2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NVML_ERROR_DRIVER_NOT_LOADED (9)"), std::string::npos) << r.err;
}

TEST(CliList, FailedFieldIsNullAndNotedNeverDropsTheGpu) {
  std::string f = write_temp_file("field.json", R"({"gpus": [
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0", "memory_total_mib": 10,
     "errors": {"nvmlDeviceGetMemoryInfo": "NVML_ERROR_UNKNOWN", "nvmlDeviceGetUtilizationRates": "NVML_ERROR_NOT_SUPPORTED"}}]})");
  CliRun r = gpumap_here({"list", "--json", "--simulate", f});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["memory_total_mib"], nullptr);
  EXPECT_EQ(j["gpus"][0]["utilization_gpu"], nullptr);
  ASSERT_EQ(j["gpus"][0]["notes"].size(), 1u);  // NOT_SUPPORTED is a plain N/A, not a note
  EXPECT_NE(j["gpus"][0]["notes"][0].get<std::string>().find("NVML_ERROR_UNKNOWN"), std::string::npos);
}

// The table shows no sensor, so it reads none (on an H100 they cost 4 ms of a 31 ms `list`, what
// made it slower than nvidia-smi --query-gpu); --json, which has them, and a CSV asking for one do.
TEST(CliList, TheTableReadsNoSensorsTheJsonDoes) {
  const std::string sensors = "gpumap trace: sensors";
  CliRun table = gpumap_here({"list", "--simulate", "h200x2"}, {"GPUMAP_TRACE=1"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.err.find("nvmlDeviceGetUtilizationRates"), std::string::npos) << table.err;  // traced at all
  EXPECT_EQ(table.err.find(sensors), std::string::npos) << table.err;
  CliRun js = gpumap_here({"list", "--json", "--simulate", "h200x2"}, {"GPUMAP_TRACE=1"});
  ASSERT_EQ(js.code, 0) << js.err;
  EXPECT_NE(js.err.find(sensors), std::string::npos) << js.err;
  EXPECT_FALSE(json::parse(js.out)["gpus"][0]["temperature_c"].is_null()) << js.out;
  CliRun csv = gpumap_here({"list", "--query-gpu=index,temperature.gpu", "--simulate", "h200x2"}, {"GPUMAP_TRACE=1"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.err.find(sensors), std::string::npos) << csv.err;
}

TEST(CliList, LegacyDriverSymbolsStillWork) {
  CliRun r = gpumap({"list", "--json", "--simulate", "h200x2"}, {"GPUMAP_SIM_LIBDIR=" GPUMAP_BUILD_DIR "/sim-legacy"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["gpus"].size(), 2u);
  auto bound = json::parse(r.out)["nvml_symbols"];  // the unversioned fallbacks bound
  EXPECT_NE(std::find(bound.begin(), bound.end(), "nvmlInit"), bound.end()) << bound.dump();
  EXPECT_NE(std::find(bound.begin(), bound.end(), "nvmlDeviceGetComputeRunningProcesses"), bound.end()) << bound.dump();
  CliRun full = gpumap_here({"list", "--json", "--simulate", "h200x2"});
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
