// Black-box tests of gpumap metrics, the nvidia-smi-style queries, --watch and job-map.
// (gpumap serve with a real Prometheus and real GPU processes: tests/metrics/metrics_test.sh.)
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// h200x2 with `faults`.
std::string faulty_host(const json& faults) {
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  h["faults"] = faults;
  return write_temp_file("faulty-host.json", h.dump());
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string l; std::getline(s, l);) out.push_back(l);
  return out;
}

TEST(CliMetrics, GpuSeriesPassPromtool) {
  CliRun r = gpumap_here({"metrics", "--simulate", "mig"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("# TYPE gpumap_gpu_info gauge\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpumap_mig_device_info{uuid=\"MIG-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpumap_exporter_up 1\n"), std::string::npos);
  EXPECT_EQ(r.out.find("NaN"), std::string::npos);
  std::string file = write_temp_file("m.prom", r.out);
  CliRun check = run_program({"/bin/sh", "-c", "promtool check metrics < " + file});
  EXPECT_EQ(check.code, 0) << check.out << check.err;
}

TEST(CliMetrics, JsonIsRefusedWithTheCommandToUse) {
  CliRun r = gpumap_here({"metrics", "--json", "--simulate", "h200x2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("gpumap ps --json"), std::string::npos) << r.err;
}

TEST(CliMetrics, TextfileIsWrittenAtomicallyAndAFailedReadWritesHealthOnly) {
  std::string dir = temp_dir("textfile");
  std::string path = dir + "/gpumap.prom";
  CliRun ok = gpumap_here({"metrics", "--simulate", "h200x2", "--textfile", path});
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ok.out, "");
  std::string text = read_file(path);
  EXPECT_NE(text.find("gpumap_gpu_info{"), std::string::npos) << text;
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  CliRun bad = gpumap_here({"metrics", "--simulate", faulty_host({{{"call", "nvmlInit"}, {"error", "NVML_ERROR_DRIVER_NOT_LOADED"}}}),
                       "--textfile", path});
  EXPECT_EQ(bad.code, 3) << bad.err;
  text = read_file(path);
  EXPECT_NE(text.find("gpumap_exporter_up 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpumap_exporter_driver_errors_total 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpumap_gpu_info"), std::string::npos) << text;
  CliRun nodir = gpumap_here({"metrics", "--simulate", "h200x2", "--textfile", dir + "/no/such/x.prom"});
  EXPECT_EQ(nodir.code, 1);
  EXPECT_NE(nodir.err.find(dir + "/no/such/x.prom"), std::string::npos) << nodir.err;
}

// The series budget's flags reach both commands (what each setting writes: metrics_text_test.cc
// and series_budget_test.cc, in process); a bad value is exit 2 naming the flag, before any read.
TEST(CliMetrics, SeriesBudgetFlagsOnMetricsAndServe) {
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  h["gpus"][0]["processes"] = json::array({{{"pid", 1}, {"used_memory_mib", 300}}});  // pid 1: init, always there
  h["gpus"][1]["processes"] = json::array({{{"pid", 1}, {"used_memory_mib", 30}}});
  std::string host = write_temp_file("budget.json", h.dump());
  CliRun all = gpumap_here({"metrics", "--simulate", host});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_NE(all.out.find("gpumap_process_used_memory_bytes{pid=\"1\""), std::string::npos) << all.out;
  CliRun info = gpumap_here({"metrics", "--simulate", host, "--process-series=info", "--drop-process-label", "user,command",
                        "--max-processes", "0", "--finding-severity", "error"});
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_EQ(info.out.find("gpumap_process_"), std::string::npos) << info.out;  // the one process is capped
  EXPECT_NE(info.out.find("\ngpumap_exporter_capped_processes 1\n"), std::string::npos) << info.out;
  CliRun cut = gpumap_here({"metrics", "--simulate", host, "--process-series", "info", "--drop-process-label", "user",
                       "--command-length", "3"});
  ASSERT_EQ(cut.code, 0) << cut.err;
  EXPECT_EQ(cut.out.find("gpumap_process_used_memory_bytes"), std::string::npos) << cut.out;
  EXPECT_EQ(cut.out.find("user=\""), std::string::npos) << cut.out;
  EXPECT_NE(cut.out.find("gpumap_process_info{pid=\"1\""), std::string::npos) << cut.out;
  for (const char* command : {"metrics", "serve"}) {
    CliRun bad = gpumap({command, "--simulate", host, "--max-processes", "many"});
    EXPECT_EQ(bad.code, 2) << command << ": " << bad.out << bad.err;
    EXPECT_NE(bad.err.find("--max-processes takes a whole number from 0 to 1000000, not `many`"), std::string::npos) << bad.err;
    CliRun key = gpumap({command, "--simulate", host, "--drop-process-label", "uuid"});
    EXPECT_EQ(key.code, 2) << command;
    EXPECT_NE(key.err.find("uuid is a join key"), std::string::npos) << key.err;
    EXPECT_EQ(key.out, "") << "nothing half-done: serve did not start";
  }
}

TEST(CliQuery, ListQueryGpuIsNvidiaSmiCsv) {
  CliRun r = gpumap_here({"list", "--simulate", "seed-mixed", "--query-gpu=index,uuid,memory.used,cuda_ordinal,lease", "--format=csv"},
                    {"CUDA_VISIBLE_DEVICES=2,0", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "GPUMAP_LOCK_DIR=" + temp_dir("q-locks")});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> l = lines(r.out);
  ASSERT_EQ(l.size(), 5u) << r.out;
  EXPECT_EQ(l[0], "index, uuid, memory.used [MiB], cuda_ordinal, lease");
  EXPECT_EQ(l[1].rfind("0, GPU-28554ffd", 0), 0u) << l[1];
  EXPECT_NE(l[1].find(", 20480 MiB, 1, none"), std::string::npos) << l[1];  // GPU 0 is its cuda:1
  EXPECT_NE(l[2].find(", 0 MiB, [N/A], none"), std::string::npos) << l[2];  // GPU 1 is not visible
  EXPECT_NE(l[3].find(", 0 MiB, 0, none"), std::string::npos) << l[3];
  CliRun bare = gpumap_here({"list", "--simulate", "seed-mixed", "--query-gpu", "index,memory.total", "--format", "csv,noheader,nounits"});
  ASSERT_EQ(bare.code, 0) << bare.err;
  EXPECT_EQ(lines(bare.out)[0], "0, 81920");
  CliRun unknown = gpumap_here({"list", "--simulate", "h200x2", "--query-gpu=index,temperature.gpu.tlimit"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("`temperature.gpu.tlimit` is not a field"), std::string::npos) << unknown.err;
  EXPECT_EQ(gpumap_here({"list", "--simulate", "h200x2", "--format=csv"}).code, 2);
  EXPECT_EQ(gpumap_here({"list", "--simulate", "h200x2", "--query-gpu=index", "--format=xml"}).code, 2);
}

TEST(CliQuery, PsQueryGivesOneLinePerRow) {
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  h["gpus"][1]["processes"] = json::array({{{"pid", 1}, {"used_memory_mib", 300}}});  // pid 1: init, always there
  std::string host = write_temp_file("ps-q.json", h.dump());
  CliRun r = gpumap_here({"ps", "--simulate", host, "--query=pid,gpu_index,used_memory,gpu_bus_id,cuda_ordinal"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> l = lines(r.out);
  ASSERT_EQ(l.size(), 2u) << r.out;
  EXPECT_EQ(l[0], "pid, gpu_index, used_gpu_memory [MiB], gpu_bus_id, cuda_ordinal");
  EXPECT_EQ(l[1].rfind("1, 1, 300 MiB, 00000000:", 0), 0u) << l[1];
}

TEST(CliWatch, ListMapDoctorWatchPrintOneJsonDocumentPerLine) {
  for (const char* cmd : {"list", "map", "doctor"}) {
    CliRun r = run_program({"/usr/bin/timeout", "-s", "INT", "1.6", GPUMAP_BINARY, cmd, "--simulate", "h200x2", "--json", "--watch", "0.5"});
    std::vector<std::string> l = lines(r.out);
    EXPECT_GE(l.size(), 2u) << cmd << ": " << r.out << r.err;
    for (const std::string& doc : l) EXPECT_TRUE(json::accept(doc)) << cmd << ": " << doc;
  }
  EXPECT_EQ(gpumap_here({"doctor", "--simulate", "h200x2", "--watch", "0"}).code, 2);
}

// The files, the defaults from the environment, MIG devices, the epilog and what is refused:
// session/job_map_test.cc, in process.  Here: the command's wiring, its exit codes and output.
TEST(CliJobMap, PrologAndEpilogWriteDcgmExporterFiles) {
  std::string dir = temp_dir("jobmap") + "/map";
  // mig: GPU 0 has MIG devices; GPU 1 is whole.
  CliRun a = gpumap_here({"job-map", "--prolog", "--simulate", "mig", "--dir", dir, "--job", "17", "--gpus", "1"});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, "gpumap job-map: job 17 added to " + dir + "/1\n");
  EXPECT_EQ(read_file(dir + "/1"), "17\n");
  CliRun e = gpumap_here({"job-map", "--epilog", "--dir", dir, "--job", "17", "--json"});
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_EQ(json::parse(e.out)["files"], json::array({"1"})) << e.out;
  struct stat st;
  EXPECT_NE(stat((dir + "/1").c_str(), &st), 0) << "a file with no job left is removed";
  CliRun bad = gpumap_here({"job-map", "--prolog", "--simulate", "mig", "--dir", dir, "--job", "20", "--gpus", "7"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("minor number 7"), std::string::npos) << bad.err;
  EXPECT_EQ(gpumap_here({"job-map", "--simulate", "mig", "--dir", dir, "--job", "20"}).code, 2);
  EXPECT_EQ(gpumap_here({"job-map", "--prolog", "--simulate", "mig", "--job", "20", "--gpus", "1"}).code, 2);  // no folder
  // A file left alone: the prolog's job lacks a GPU's label, exit 1 with the warning on stderr.
  ASSERT_EQ(mkdir((dir + "/1").c_str(), 0755), 0);
  CliRun left = gpumap_here({"job-map", "--prolog", "--simulate", "mig", "--dir", dir, "--job", "21", "--gpus", "1"});
  EXPECT_EQ(left.code, 1);
  EXPECT_NE(left.err.find("gpumap job-map: warning: " + dir + "/1 is a folder, not a mapping file: left alone"),
            std::string::npos)
      << left.err;
}

}  // namespace
}  // namespace gpumap::testing
