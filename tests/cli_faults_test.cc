// Black-box tests of gpumap under hostile input and faults: bytes that are not UTF-8 or that
// would drive a terminal, from arguments, the environment, lease records and paths.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;


/// True when `text` parses as JSON (nlohmann rejects malformed UTF-8 while parsing).
bool parses(const std::string& text) { return json::accept(text); }

bool has_control(const std::string& s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\n') || c == 0x7F) return true;
  return false;
}

TEST(CliHostile, LeaseRecordWithLatin1AndEscapesBreaksNoListing) {
  std::string locks = temp_dir("locks");
  // A leased job whose argv holds Latin-1 and a clear-screen sequence; list while it runs.
  std::string held = locks + "/held";
  ProcResult p = run_capture(
      {"/bin/sh", "-c",
       "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- sh -c 'touch $L/held; sleep 30' "
       "\"caf$(printf '\\351')\" \"$(printf '\\033[2J\\033[H')\" &\n"
       "g=$!\n"
       "while [ ! -e $L/held ]; do sleep 0.02; done\n"
       "GPUMAP_LOCK_DIR=$L \"$G\" list --simulate h200x2 --json > $L/list.json; echo json=$?\n"
       "GPUMAP_LOCK_DIR=$L \"$G\" list --simulate h200x2 > $L/list.txt; echo table=$?\n"
       "GPUMAP_LOCK_DIR=$L \"$G\" pick --simulate h200x2 --include 0 2> $L/pick.err; echo pick=$?\n"
       "kill -TERM $g; wait\n"},
      {"PATH=/usr/bin:/bin", "G=" GPUMAP_BINARY, "L=" + locks, "HOME=" + temp_dir("home")}, 60000);
  auto slurp = [](const std::string& f) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  EXPECT_NE(p.out.find("json=0"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("table=0"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("pick=6"), std::string::npos) << p.out << p.err;
  std::string list_json = slurp(locks + "/list.json");
  ASSERT_TRUE(parses(list_json)) << list_json;
  std::string cmd = json::parse(list_json)["gpus"][0]["lease"]["command"];
  EXPECT_NE(cmd.find("caf\xEF\xBF\xBD"), std::string::npos) << cmd;  // Latin-1 e-acute -> U+FFFD
  EXPECT_NE(cmd.find("\x1B[2J"), std::string::npos) << "JSON keeps the bytes (escaped as \\u001b)";
  std::string table = slurp(locks + "/list.txt");
  EXPECT_FALSE(has_control(table)) << table;
  EXPECT_NE(table.find("caf?"), std::string::npos) << table;
  EXPECT_NE(table.find("?[2J?[H"), std::string::npos) << table;
  std::string pick_err = slurp(locks + "/pick.err");
  EXPECT_FALSE(has_control(pick_err)) << pick_err;
  EXPECT_NE(pick_err.find("leased by pid"), std::string::npos) << pick_err;
}

TEST(CliHostile, NonUtf8VariableAndHostPathGiveValidJson) {
  CliRun m = gpumap_here({"map", "--simulate", "h200x2", "--json"}, {"CUDA_VISIBLE_DEVICES=\xff"});
  EXPECT_EQ(m.code, 0) << m.err;
  EXPECT_TRUE(parses(m.out)) << m.out;
  CliRun e = gpumap_here({"explain", "--simulate", "h200x2", "--json"}, {"CUDA_VISIBLE_DEVICES=0,\x1b[2J\xe9"});
  EXPECT_TRUE(parses(e.out)) << e.out << e.err;
  CliRun t = gpumap_here({"explain", "--simulate", "h200x2"}, {"CUDA_VISIBLE_DEVICES=0,\x1b[2J"});
  EXPECT_FALSE(has_control(t.out)) << t.out;
  EXPECT_FALSE(has_control(t.err)) << t.err;

  std::string dir = temp_dir("latin1");
  std::string path = dir + "/h\xf4te-\x1b[31m.json";
  {
    std::ifstream in(host_path("h200x2"));
    std::ofstream out(path);
    out << in.rdbuf();
  }
  CliRun j = gpumap_here({"map", "--simulate", path, "--json"});
  EXPECT_EQ(j.code, 0) << j.err;
  EXPECT_TRUE(parses(j.out)) << j.out;
  CliRun l = gpumap_here({"list", "--simulate", path});
  EXPECT_EQ(l.code, 0) << l.err;
  EXPECT_FALSE(has_control(l.out)) << l.out;
  CliRun missing = gpumap_here({"map", "--simulate", dir + "/gone-\x1b[2J\xff.json"});
  EXPECT_EQ(missing.code, 2) << missing.err;
  EXPECT_FALSE(has_control(missing.err)) << missing.err;
}

TEST(CliRunEnv, TheChildGetsTheParentsEnvironmentPlusTheTwoVariablesInOrder) {
  std::string locks = temp_dir("locks");
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "ZZZ=1", "AAA=2", "NOEQUALS", "AAA=3",
                                  "CUDA_VISIBLE_DEVICES=0,1", "GPUMAP_LOCK_DIR=" + locks, "HOME=" + temp_dir("home"),
                                  "GPUMAP_SIMULATE=h200x2"};
  ProcResult r = run_capture({GPUMAP_BINARY, "run", "--", "/usr/bin/env"}, env, 60000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> want = env;
  want[5] = "CUDA_VISIBLE_DEVICES=0";  // in place (the PCI-order index of the GPU picked)
  want.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
  std::string expect;
  for (const std::string& e : want) expect += e + "\n";
  EXPECT_EQ(r.out, expect) << "no GPUMAP_FAKE_HOST, nothing sorted, dropped or merged";
}

/// A copy of bundled host `base` with `patch`'s keys set (e.g. "faults"), as a temp file.
std::string host_with(const std::string& base, const json& patch) {
  std::ifstream in(host_path(base));
  json h = json::parse(in);
  for (auto& [k, v] : patch.items()) h[k] = v;
  return write_temp_file(base + "-faults.json", h.dump());
}

TEST(CliDriverFaults, ALostGpuIsListedWithANoteAndMapNamesNoIndexMinusOne) {
  std::string host = host_with("h200x2", {{"faults", {{{"call", "nvmlDeviceGetUUID"}, {"gpu", 1},
                                                      {"error", "NVML_ERROR_GPU_IS_LOST"}}}}});
  CliRun l = gpumap_here({"list", "--simulate", host});
  EXPECT_EQ(l.code, 0) << l.err;
  EXPECT_NE(l.out.find("NVML_ERROR_GPU_IS_LOST"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("00000000:"), std::string::npos) << l.out;
  CliRun j = gpumap_here({"list", "--simulate", host, "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  json lj = json::parse(j.out);
  ASSERT_EQ(lj["gpus"].size(), 2u);
  EXPECT_EQ(lj["gpus"][1]["uuid"], "");
  EXPECT_FALSE(lj["gpus"][1]["pci_bus_id"].get<std::string>().empty()) << "what could be read is kept";
  for (const char* cmd : {"map", "explain", "doctor"}) {
    CliRun m = gpumap_here({cmd, "--simulate", host});
    EXPECT_NE(m.code, 1) << cmd << ": " << m.err;
    EXPECT_EQ(m.out.find("GPU -1"), std::string::npos) << cmd << ": " << m.out;
    EXPECT_EQ(m.err.find("internal error"), std::string::npos) << cmd << ": " << m.err;
  }
  std::string locks = temp_dir("locks");
  CliRun p = gpumap_here({"pick", "--simulate", host, "--format", "uuid"}, {"GPUMAP_LOCK_DIR=" + locks});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab\n") << "the lost GPU is never picked";
  // Whether CUDA still counts the lost GPU is unknown, so no PCI-order index is promised for the other.
  CliRun i = gpumap_here({"pick", "--simulate", host, "--format", "index"}, {"GPUMAP_LOCK_DIR=" + locks});
  EXPECT_EQ(i.code, 2) << i.err;
  EXPECT_NE(i.err.find("could not place every GPU"), std::string::npos) << i.err;
}

// GPU 0 runs a process, but NVML cannot list its compute processes (the graphics list answers):
// it was listed with 0 processes and picked as idle.
TEST(CliDriverFaults, AnUnreadableProcessListOrUtilisationIsNeverIdle) {
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  h["gpus"][0]["processes"] = {{{"pid", 1234}, {"used_memory_mib", 500}}};
  h["faults"] = {{{"call", "nvmlDeviceGetComputeRunningProcesses"}, {"gpu", 0}, {"error", "NVML_ERROR_UNKNOWN"}},
                 {{"call", "nvmlDeviceGetUtilizationRates"}, {"gpu", 0}, {"error", "NVML_ERROR_UNKNOWN"}}};
  std::string host = write_temp_file("unknown-procs.json", h.dump());
  std::string locks = temp_dir("locks");
  std::vector<std::string> env = {"GPUMAP_LOCK_DIR=" + locks};

  CliRun lj = gpumap_here({"list", "--simulate", host, "--json"}, env);
  ASSERT_EQ(lj.code, 0) << lj.err;
  json l = json::parse(lj.out);
  EXPECT_TRUE(l["gpus"][0]["process_count"].is_null()) << l["gpus"][0].dump();
  EXPECT_TRUE(l["gpus"][0]["utilization_gpu"].is_null()) << l["gpus"][0].dump();
  EXPECT_EQ(l["gpus"][1]["process_count"], 0);
  CliRun lt = gpumap_here({"list", "--simulate", host, "--wide"}, env);
  ASSERT_EQ(lt.code, 0) << lt.err;
  std::string row0 = lt.out.substr(lt.out.find("\n0 "), lt.out.find("\n1 ") - lt.out.find("\n0 "));
  EXPECT_NE(row0.find(" ? "), std::string::npos) << lt.out;

  CliRun ps = gpumap_here({"ps", "--simulate", host, "--json"}, env);
  ASSERT_EQ(ps.code, 0) << ps.err;
  EXPECT_EQ(json::parse(ps.out)["unlisted_gpus"], json::array({0})) << ps.out;

  CliRun p = gpumap_here({"pick", "--simulate", host, "--include", "0"}, env);
  EXPECT_EQ(p.code, 6) << p.out << p.err;
  EXPECT_NE(p.err.find("process list unreadable"), std::string::npos) << p.err;
  CliRun r = gpumap({"run", "--simulate", host, "--include", "0", "--", "true"}, env);
  EXPECT_EQ(r.code, 6) << r.out << r.err;
  EXPECT_NE(r.err.find("process list unreadable"), std::string::npos) << r.err;
  CliRun u = gpumap_here({"pick", "--simulate", host, "--include", "0", "--max-util", "10", "--allow-busy"}, env);
  EXPECT_EQ(u.code, 6) << u.out << u.err;
  EXPECT_NE(u.err.find("utilisation unreadable, want at most 10%"), std::string::npos) << u.err;
  EXPECT_EQ(u.err.find("process list unreadable"), std::string::npos) << "--allow-busy allows processes: " << u.err;
  // Explicitly allowed: picked.
  CliRun a = gpumap_here({"pick", "--simulate", host, "--include", "0", "--max-util", "10", "--allow-unknown", "--format",
                     "uuid"}, env);
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab\n");
  // Without --include the GPU known to be idle is chosen.
  CliRun any = gpumap_here({"pick", "--simulate", host, "--allow-unknown", "--format", "uuid"}, env);
  EXPECT_EQ(any.out, "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a\n") << any.err;
}

TEST(CliDriverFaults, MalformedDriverAnswersAreBounded) {
  // Strings without a terminator, absurd process and MIG counts: read what is sane, note the rest.
  std::string host = host_with("mig", {{"faults", {{{"call", "nvmlDeviceGetName"}, {"gpu", 1}, {"output", "unterminated"}},
                                                   {{"call", "nvmlDeviceGetComputeRunningProcesses"}, {"gpu", 1},
                                                    {"output", "huge_count"}},
                                                   {{"call", "nvmlDeviceGetMaxMigDeviceCount"}, {"output", "huge_count"}},
                                                   {{"call", "nvmlDeviceGetPciInfo"}, {"gpu", 1}, {"delay_ms", 50}}}}});
  CliRun j = gpumap_here({"list", "--simulate", host, "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  json lj = json::parse(j.out);
  EXPECT_EQ(lj["gpus"][1]["name"].get<std::string>().size(), 96u) << "read up to the buffer, not past it";
  std::string notes = lj["gpus"][1]["notes"].dump() + lj["gpus"][0]["notes"].dump();
  EXPECT_NE(notes.find("claimed 4294967280 processes"), std::string::npos) << notes;
  EXPECT_NE(notes.find("nvmlDeviceGetMaxMigDeviceCount claimed 4000000000"), std::string::npos) << notes;
  EXPECT_EQ(lj["gpus"][0]["mig_devices"].size(), 2u) << lj["gpus"][0].dump();

  std::string many = host_with("h200x2", {{"faults", {{{"call", "nvmlDeviceGetCount"}, {"output", "huge_count"}}}}});
  CliRun c = gpumap_here({"list", "--simulate", many});
  EXPECT_EQ(c.code, 1) << c.err;
  EXPECT_NE(c.err.find("claimed 4294967280 GPUs"), std::string::npos) << c.err;
}

TEST(CliDriverFaults, FailTheNthCallAndOneMigDevice) {
  // GPU 0 is lost part-way: its first three calls answer, every later one fails.
  std::string host = host_with("h200x2", {{"faults", {{{"call", "*"}, {"gpu", 0}, {"after", 3},
                                                      {"error", "NVML_ERROR_GPU_IS_LOST"}}}}});
  CliRun j = gpumap_here({"list", "--simulate", host, "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  json lj = json::parse(j.out);
  EXPECT_EQ(lj["gpus"][0]["uuid"], "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab") << "call 2 (UUID) answered";
  EXPECT_NE(lj["gpus"][0]["notes"].dump().find("GPU_IS_LOST"), std::string::npos) << lj["gpus"][0].dump();
  EXPECT_EQ(lj["gpus"][1]["notes"].size(), 0u) << "GPU 1 is untouched";

  std::string mig = host_with("mig", {{"faults", {{{"call", "nvmlDeviceGetUUID"}, {"gpu", 0}, {"mig", 1},
                                                   {"error", "NVML_ERROR_UNKNOWN"}}}}});
  CliRun m = gpumap_here({"list", "--simulate", mig, "--json"});
  ASSERT_EQ(m.code, 0) << m.err;
  json mj = json::parse(m.out);
  EXPECT_EQ(mj["gpus"][0]["mig_devices"].size(), 1u) << mj["gpus"][0].dump();
  EXPECT_NE(mj["gpus"][0]["notes"].dump().find("MIG device 1"), std::string::npos) << mj["gpus"][0].dump();
}

TEST(CliDriverFaults, AHungDriverIsBoundedWithAClearError) {
  std::string host = host_with("h200x2", {{"faults", {{{"call", "nvmlInit"}, {"hang", true}}}}});
  auto t = std::chrono::steady_clock::now();
  CliRun r = gpumap({"list", "--simulate", host}, {"GPUMAP_DRIVER_TIMEOUT=1"});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("did not answer within 1 s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPUMAP_DRIVER_TIMEOUT"), std::string::npos) << r.err;
  EXPECT_LT(s, 30.0);
  CliRun bad = gpumap({"list", "--simulate", "h200x2"}, {"GPUMAP_DRIVER_TIMEOUT=soon"});
  EXPECT_EQ(bad.code, 2) << bad.err;
}

// GPUMAP_DRIVER_TIMEOUT bounds the CUDA probe too: a hung cuInit took 60 s in every command
// that asks the driver (map --probe, a FASTEST_FIRST order on a mixed host, pick, run...).
TEST(CliDriverFaults, AHungCuInitIsBoundedByTheDriverTimeout) {
  for (const char* base : {"h200x2", "seed-mixed"}) {
    std::string host = host_with(base, {{"faults", {{{"call", "cuInit"}, {"hang", true}}}}});
    std::vector<std::vector<std::string>> runs = {{"map", "--probe", "--simulate", host}};
    if (std::string(base) == "seed-mixed")  // FASTEST_FIRST: the order is asked from the driver
      runs = {{"map", "--simulate", host}, {"pick", "--simulate", host}, {"snapshot", "save", "--simulate", host}};
    for (const auto& args : runs) {
      auto t = std::chrono::steady_clock::now();
      CliRun r = gpumap(args, {"GPUMAP_DRIVER_TIMEOUT=2", "GPUMAP_STATE_DIR=" + temp_dir("state"),
                               "GPUMAP_LOCK_DIR=" + temp_dir("locks")});
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
      EXPECT_LT(s, 30.0) << args[0] << " on " << base;
      // An error, or (snapshot save) a note that the order is not recorded.
      EXPECT_NE((r.err + r.out).find("did not answer within 2 s"), std::string::npos) << args[0] << " on " << base << ": " << r.err << r.out;
    }
  }
}

// `kill -TERM` of gpumap while its probe child hangs in cuInit: the child goes too.
TEST(CliDriverFaults, TheProbeChildDiesWithGpumap) {
  std::string host = host_with("h200x2", {{"faults", {{{"call", "cuInit"}, {"hang", true}}}}});
  ProcResult p = run_capture(
      {"/bin/sh", "-c",
       "\"$G\" map --probe --simulate \"$H\" & g=$!\n"
       "c=; for i in $(seq 200); do c=$(cat /proc/$g/task/$g/children 2>/dev/null); [ -n \"$c\" ] && break; sleep 0.05; done\n"
       "[ -n \"$c\" ] || { echo no-child; kill -9 $g; exit 1; }\n"
       "sleep 0.3; kill -TERM $g; wait $g\n"
       // Gone, or a zombie waiting for its new parent to reap it.
       "for i in $(seq 100); do st=$(cut -d' ' -f3 /proc/$c/stat 2>/dev/null); "
       "[ -z \"$st\" ] || [ \"$st\" = Z ] && { echo gone; exit 0; }; sleep 0.05; done\n"
       "echo alive; kill -9 $c; exit 1\n"},
      {"PATH=/usr/bin:/bin", "G=" GPUMAP_BINARY, "H=" + host, "HOME=" + temp_dir("home"), "GPUMAP_DRIVER_TIMEOUT=60"},
      60000);
  EXPECT_EQ(p.out, "gone\n") << p.out << p.err;
}

TEST(CliDriverFaults, MissingSymbolsBindAsAbsent) {
  std::string host = host_with("h200x2", {{"missing_symbols", {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetMemoryInfo_v2"}}});
  CliRun j = gpumap_here({"list", "--simulate", host, "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  std::string bound = json::parse(j.out)["nvml_symbols"].dump();
  EXPECT_EQ(bound.find("nvmlDeviceGetPciInfo_v3"), std::string::npos) << bound;
  EXPECT_NE(bound.find("nvmlDeviceGetPciInfo_v2"), std::string::npos) << bound;
  EXPECT_EQ(bound.find("nvmlDeviceGetMemoryInfo_v2"), std::string::npos) << bound;
  std::string required = host_with("h200x2", {{"missing_symbols", {"nvmlDeviceGetUUID"}}});
  CliRun r = gpumap_here({"list", "--simulate", required});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("required symbol missing"), std::string::npos) << r.err;
}

TEST(CliDriverFaults, TheCudaProbeAnswersOnItsOwnChannel) {
  // A libcuda that prints a probe-like answer with 1000 devices on stdout during cuInit.
  std::string host = host_with("h200x2", {{"faults", {{{"call", "cuInit"}, {"output", "stdout"}}}}});
  CliRun j = gpumap_here({"map", "--simulate", host, "--probe", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  json mj = json::parse(j.out);
  EXPECT_EQ(mj["cuda"]["source"], "driver");
  EXPECT_EQ(mj["cuda"]["devices"].size(), 2u) << mj["cuda"].dump();
}

TEST(CliHostFile, NumbersUuidsAndFileKindsAreValidated) {
  auto bad_gpu = [](const std::string& key, const json& value) {
    std::ifstream in(host_path("h200x2"));
    json h = json::parse(in);
    h["gpus"][0][key] = value;
    return write_temp_file("bad.json", h.dump());
  };
  struct Case {
    std::string key;
    json value;
    std::string says;
  } cases[] = {{"memory_total_mib", -1, "gpus[0].memory_total_mib is out of range"},
               {"memory_total_mib", 1.5, "gpus[0].memory_total_mib must be a whole number"},
               {"memory_total_mib", json::parse("1e30"), "must be a whole number"},
               {"memory_total_mib", json::parse("18446744073709551616"), "must be a whole number"},
               {"utilization_gpu", 101, "gpus[0].utilization_gpu is out of range"},
               {"minor_number", -3, "gpus[0].minor_number is out of range"},
               {"uuid", "GPU-1234", "is not \"GPU-\" and 32 hex digits"},
               {"uuid", "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceaX", "is not \"GPU-\" and 32 hex digits"}};
  for (const Case& c : cases) {
    CliRun r = gpumap_here({"map", "--simulate", bad_gpu(c.key, c.value)});
    EXPECT_EQ(r.code, 2) << c.key << "=" << c.value.dump() << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.key << "=" << c.value.dump() << ": " << r.err;
  }
  CliRun zero = gpumap_here({"map", "--simulate", "/dev/zero"});
  EXPECT_EQ(zero.code, 2) << zero.err;
  EXPECT_NE(zero.err.find("not a regular file"), std::string::npos) << zero.err;
  std::string fifo = temp_dir("fifo") + "/host.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  CliRun f = gpumap_here({"map", "--simulate", fifo});  // would block forever on open/read
  EXPECT_EQ(f.code, 2) << f.err;
  EXPECT_NE(f.err.find("not a regular file"), std::string::npos) << f.err;
  std::string big = write_temp_file("big.json", std::string(17u << 20, ' '));
  CliRun b = gpumap_here({"map", "--simulate", big});
  EXPECT_EQ(b.code, 2) << b.err;
  EXPECT_NE(b.err.find("larger than 16 MiB"), std::string::npos) << b.err;
}

}  // namespace
}  // namespace gpumap::testing
