#include "output/metrics_text.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "http/server.h"
#include "output/query_csv.h"
#include "model/error.h"

namespace gpumap {
namespace {

TEST(MetricsText, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escape_label_value("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(escape_help("x\\y\nz\"q"), "x\\\\y\\nz\"q");  // HELP keeps quotes
}

// A driver's error text reaches `# gpumap: ...` and HELP: never a raw 0xFF, never an escape code.
TEST(MetricsText, HelpAndCommentsAreValidUtf8) {
  EXPECT_EQ(escape_help("bad \xff byte\x1b[2J\nnext"), "bad ? byte?[2J\\nnext");
  EXPECT_EQ(escape_help("caf\xc3\xa9"), "caf\xc3\xa9");
}

// One process's 120 kB SLURM_JOB_ID must not make every scrape large: label values are cut.
TEST(MetricsText, LongLabelValuesAreCut) {
  Exposition e;
  e.family("g", "gauge", "h");
  e.sample({{"slurm_job_id", std::string(120000, '7')}, {"short", "42"}}, 1);
  std::string t = e.text();
  EXPECT_LT(t.size(), 400u) << t.size();
  EXPECT_NE(t.find("slurm_job_id=\"" + std::string(kMaxLabelValueBytes, '7') + "\u2026\""), std::string::npos) << t;
  EXPECT_NE(t.find("short=\"42\""), std::string::npos);
}

TEST(MetricsText, FamilyWithoutSamplesIsLeftOutAndUnknownValuesAreNoSample) {
  Exposition e;
  e.family("a_total", "counter", "none");
  e.family("b", "gauge", "two\nlines");
  e.sample({{"x", "1"}, {"empty", ""}}, 2.5);
  e.sample({{"x", "2"}}, std::nan(""));
  e.sample({{"x", "3"}}, INFINITY);
  e.sample({}, 1099511627776.0);
  EXPECT_EQ(e.text(), "# HELP b two\\nlines\n# TYPE b gauge\nb{x=\"1\"} 2.5\nb 1099511627776\n");
}

/// A frame where every value is known: each family of metric_families() has a series in it.
/// GPU A (MIG, leased by pid 101) runs 101 (every label known) and 102 (graphics and compute);
/// GPU B runs 103 (a rank on the wrong GPU: an error finding) and 104 (an info finding).
struct FullFrame {
  Snapshot snapshot;
  PsResult ps;
  std::map<std::string, std::optional<LeaseState>> leases;
  std::vector<Finding> host_findings;

  static constexpr const char* kA = "GPU-aaaaaaaa-0000-4000-8000-000000000000";
  static constexpr const char* kB = "GPU-bbbbbbbb-0000-4000-8000-000000000000";

  FullFrame() {
    snapshot.driver_version = "580.1";
    snapshot.cuda_driver_version = 13000;
    snapshot.source = "NVML";
    for (uint32_t i = 0; i < 2; ++i) {
      Gpu g;
      g.nvml_index = i;
      g.uuid = i == 0 ? kA : kB;
      g.pci_bus_id = i == 0 ? "00000000:18:00.0" : "00000000:2A:00.0";
      g.name = "NVIDIA H200";
      g.minor_number = i;
      g.memory_total_mib = 143771;
      g.memory_used_mib = 2048;
      g.utilization_gpu = 40;
      g.utilization_memory = 7;
      g.mig_enabled = i == 0;
      g.temperature_c = 41;
      g.power_draw_w = 123.5;
      g.power_limit_w = 700;
      g.enforced_power_limit_w = 650;
      g.clock_sm_mhz = 1980;
      g.clock_memory_mhz = 2619;
      g.fan_speed_percent = 30;
      g.performance_state = 0;
      g.ecc_corrected_volatile = 2;
      g.ecc_uncorrected_volatile = 0;
      g.processes = std::vector<GpuProcess>(2);
      if (i == 0) g.mig_devices.push_back({"MIG-cccccccc-0000-4000-8000-000000000000", "NVIDIA H200 MIG 1g.18gb", 1, 0, 16384, 512});
      snapshot.gpus.push_back(g);
    }
    LeaseState held;
    held.held = true;
    held.holder = LeaseRecord{};
    held.holder->pid = 101;
    held.holder->user = "alice";
    leases[kA] = held;
    leases[kB] = LeaseState{};
    host_findings.push_back({"order-differs", Severity::kWarning, "m", "f"});
    ps.rows.push_back(process(101, kA, 0, "compute", 4096));
    ProcessRow& all = ps.rows.back();
    all.local_pid = 101;
    all.cuda_ordinal = 0;
    all.user = "alice";
    all.command = "python3 train.py --config big.yaml";
    all.slurm_job_id = "4242";
    all.global_rank = "3";
    all.rank = 3;
    all.sm_utilization = 55;
    all.memory_utilization = 12;
    all.pod = PodRef{};
    all.pod->name = "trainer-0";
    all.pod->ns = "ml";
    all.pod->container = "main";
    all.job = "torchrun 8d2f-run";
    ps.rows.push_back(process(102, kA, 0, "graphics", 64));
    ps.rows.push_back(process(102, kA, 0, "compute", 64));
    ps.rows.push_back(process(103, kB, 1, "compute", 1024));
    ps.rows.back().findings.push_back({"rank-on-wrong-gpu", Severity::kError, "m", "f"});
    ps.rows.push_back(process(104, kB, 1, "compute", 16));
    ps.gpu_findings.push_back({1, kB, {104}, {"gpu-shared", Severity::kInfo, "m", ""}});
    ps.rows.back().gpu_findings.push_back(0);
  }
  static ProcessRow process(uint32_t pid, const char* uuid, uint32_t nvml_index, const char* type, uint64_t mib) {
    ProcessRow r;
    r.pid = pid;
    r.uuid = uuid;
    r.nvml_index = nvml_index;
    r.type = type;
    r.used_memory_mib = mib;
    r.command = "sleep 300";
    return r;
  }
  MetricsInput input() const { return {snapshot, ps, leases, host_findings, "node7"}; }
  std::string text() const {
    Exposition e;
    add_frame_metrics(e, input());
    ExporterHealth h;
    h.up = true;
    h.cuda_up = true;
    h.read_seconds = 0.25;
    h.last_success_unix = 1.7e9;
    h.scrapes = 3;
    h.capped_processes = 0;
    h.dropped_processes_total = 0;
    h.version = "0.1.0";
    add_health_metrics(e, h);
    return e.text();
  }
};

std::vector<std::string> type_lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string l; std::getline(s, l);)
    if (l.rfind("# TYPE ", 0) == 0) out.push_back(l.substr(7, l.find(' ', 7) - 7));
  return out;
}

// The tables are the exposition: every family they list is written, once, in their order, and
// nothing else is (a family added to a table without a sample in FullFrame fails here).
TEST(MetricsFamilies, TheTablesAreWhatIsWrittenInTheirOrder) {
  std::vector<std::string> listed;
  for (const MetricFamilyDoc& f : metric_families()) listed.push_back(f.name);
  EXPECT_EQ(type_lines(FullFrame().text()), listed) << FullFrame().text();
}

// Each family is in docs/metrics.md's table, and only counters end in _total.
TEST(MetricsFamilies, EveryFamilyIsDocumented) {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/docs/metrics.md");
  std::stringstream doc;
  doc << in.rdbuf();
  std::set<std::string> names;
  for (const MetricFamilyDoc& f : metric_families()) {
    std::string name = f.name, type = f.type;
    EXPECT_TRUE(names.insert(name).second) << name << " is listed twice";
    EXPECT_NE(doc.str().find("`" + name + "`"), std::string::npos) << name << " is not in docs/metrics.md";
    EXPECT_TRUE(type == "gauge" || type == "counter") << name;
    bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
    EXPECT_EQ(type == "counter", total) << name;
    EXPECT_NE(std::string(f.help), "") << name;
  }
}

// What the series say for a known frame (the labels and values of each kind of family).
TEST(MetricsFamilies, SeriesOfAFullFrame) {
  std::string t = FullFrame().text();
  for (const char* want : {
           "gpumap_driver_info{driver_version=\"580.1\",cuda_driver_version=\"13000\",source=\"NVML\",simulated=\"false\"} 1\n",
           "gpumap_gpu_info{uuid=\"GPU-aaaaaaaa-0000-4000-8000-000000000000\",nvml_index=\"0\",minor_number=\"0\","
           "pci_bus_id=\"00000000:18:00.0\",name=\"NVIDIA H200\",mig=\"enabled\"} 1\n",
           "gpumap_gpu_utilization_ratio{uuid=\"GPU-aaaaaaaa-0000-4000-8000-000000000000\"} 0.4\n",
           "gpumap_gpu_fan_speed_ratio{uuid=\"GPU-aaaaaaaa-0000-4000-8000-000000000000\"} 0.3\n",
           "gpumap_gpu_sm_clock_hertz{uuid=\"GPU-aaaaaaaa-0000-4000-8000-000000000000\"} 1980000000\n",
           "gpumap_gpu_leased{uuid=\"GPU-bbbbbbbb-0000-4000-8000-000000000000\"} 0\n",
           "gpumap_gpu_lease_info{uuid=\"GPU-aaaaaaaa-0000-4000-8000-000000000000\",pid=\"101\",user=\"alice\"} 1\n",
           "gpumap_mig_device_memory_used_bytes{uuid=\"MIG-cccccccc-0000-4000-8000-000000000000\"} 536870912\n",
           "gpumap_process_info{pid=\"101\",type=\"compute\",uuid=\"GPU-aaaaaaaa-0000-4000-8000-000000000000\",nvml_index=\"0\","
           "cuda_ordinal=\"0\",state=\"running\",user=\"alice\",command=\"python3 train.py --config big.yaml\","
           "slurm_job_id=\"4242\",rank=\"3\",local_rank=\"3\",lease=\"this-process\",pod=\"trainer-0\",namespace=\"ml\","
           "container=\"main\",launcher_job=\"torchrun 8d2f-run\"} 1\n",
           "gpumap_host_info{hostname=\"node7\"} 1\n",
           "gpumap_process_sm_utilization_ratio{pid=\"101\",type=\"compute\",uuid=\"GPU-aaaaaaaa-0000-4000-8000-000000000000\"} 0.55\n",
           "gpumap_finding{id=\"order-differs\",severity=\"warning\"} 1\n",
           "gpumap_finding{id=\"gpu-shared\",severity=\"info\",pid=\"104\",uuid=\"GPU-bbbbbbbb-0000-4000-8000-000000000000\"} 1\n",
           "gpumap_exporter_scrapes_total 3\n", "gpumap_build_info{version=\"0.1.0\"} 1\n"})
    EXPECT_NE(t.find(want), std::string::npos) << want << "\nnot in\n" << t;
  EXPECT_EQ(t.find("gpumap_gpu_lease_info{uuid=\"GPU-bbbb"), std::string::npos) << "a free GPU has no lease_info";
}

std::string frame_text(const FullFrame& f, const SeriesBudget& budget, FrameSeries* said = nullptr) {
  Exposition e;
  FrameSeries s = add_frame_metrics(e, f.input(), budget);
  if (said) *said = s;
  return e.text();
}

TEST(SeriesBudget, ProcessSeriesInfoKeepsTheInfoSeriesAndTheFindings) {
  std::string t = frame_text(FullFrame(), {.process_series = ProcessSeries::kInfo});
  EXPECT_NE(t.find("gpumap_process_info{pid=\"101\""), std::string::npos) << t;
  EXPECT_NE(t.find("gpumap_finding{id=\"rank-on-wrong-gpu\",severity=\"error\",pid=\"103\""), std::string::npos) << t;
  for (const char* gone : {"gpumap_process_used_memory_bytes", "gpumap_process_sm_utilization_ratio", "gpumap_process_memory_utilization_ratio"})
    EXPECT_EQ(t.find(gone), std::string::npos) << gone;
}

TEST(SeriesBudget, ProcessSeriesNoneLeavesNoSeriesPerProcess) {
  FrameSeries said;
  std::string t = frame_text(FullFrame(), {.process_series = ProcessSeries::kNone}, &said);
  EXPECT_EQ(t.find("gpumap_process_"), std::string::npos) << t;
  std::stringstream lines(t);
  for (std::string l; std::getline(lines, l);) {  // a pid only as a lease's holder (one series a leased GPU)
    if (l.find("pid=\"") != std::string::npos) {
      EXPECT_EQ(l.rfind("gpumap_gpu_lease_info{", 0), 0u) << l;
    }
  }
  EXPECT_NE(t.find("gpumap_finding{id=\"order-differs\",severity=\"warning\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("gpumap_gpu_processes{uuid=\"GPU-aaaaaaaa-0000-4000-8000-000000000000\"} 2\n"), std::string::npos) << t;
  EXPECT_EQ(said.processes, 4u);
  EXPECT_EQ(said.dropped_processes, 0u);  // not capped: left out by choice
}

TEST(SeriesBudget, DroppedLabelsAndTheCommandsLength) {
  SeriesBudget b;
  b.dropped_labels = {"user", "pod", "namespace", "container", "launcher_job"};
  b.command_bytes = 10;
  std::string t = frame_text(FullFrame(), b);
  EXPECT_NE(t.find("gpumap_process_info{pid=\"101\",type=\"compute\",uuid=\"GPU-aaaaaaaa-0000-4000-8000-000000000000\","
                   "nvml_index=\"0\",cuda_ordinal=\"0\",state=\"running\",command=\"python3 tr\u2026\",slurm_job_id=\"4242\","
                   "rank=\"3\",local_rank=\"3\",lease=\"this-process\"} 1\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("gpumap_process_used_memory_bytes{pid=\"101\",type=\"compute\",uuid=\"GPU-aaaaaaaa"), std::string::npos);
  b.command_bytes = 0;
  b.dropped_labels = {"command"};
  EXPECT_EQ(frame_text(FullFrame(), b).find("command="), std::string::npos);
}

// The cap keeps the processes with a warning or an error first, then the most GPU memory; what
// it leaves out is counted and has no series at all (its findings neither).
TEST(SeriesBudget, MaxProcessesKeepsTheAlertingAndTheLargest) {
  FullFrame f;  // 101: 4096 MiB; 102: 64 + 64; 103: 1024 and an error; 104: 16 and an info finding
  FrameSeries said;
  std::string t = frame_text(f, {.max_processes = 2}, &said);
  EXPECT_EQ(said.processes, 4u);
  EXPECT_EQ(said.dropped_processes, 2u);
  EXPECT_NE(t.find("gpumap_process_info{pid=\"101\""), std::string::npos) << t;
  EXPECT_NE(t.find("gpumap_process_info{pid=\"103\""), std::string::npos) << t;
  EXPECT_EQ(t.find("pid=\"102\""), std::string::npos) << t;
  EXPECT_EQ(t.find("pid=\"104\""), std::string::npos) << t;  // nor its gpu-shared finding
  EXPECT_EQ(kept_processes(f.ps, 1), std::vector<uint32_t>{103});
  EXPECT_EQ(kept_processes(f.ps, 3), (std::vector<uint32_t>{101, 102, 103}));
  EXPECT_EQ(kept_processes(f.ps, 9), (std::vector<uint32_t>{101, 102, 103, 104}));
  EXPECT_TRUE(kept_processes(f.ps, 0).empty());
  frame_text(f, {.max_processes = 4}, &said);
  EXPECT_EQ(said.dropped_processes, 0u);
  // The same processes listed in another order (NVML's order changes) keep the same set; equal
  // memory goes to the lower pid.
  std::reverse(f.ps.rows.begin(), f.ps.rows.end());
  EXPECT_EQ(kept_processes(f.ps, 2), (std::vector<uint32_t>{101, 103}));
  for (ProcessRow& r : f.ps.rows) r.used_memory_mib = 100;
  for (ProcessRow& r : f.ps.rows) r.findings.clear();
  EXPECT_EQ(kept_processes(f.ps, 2), (std::vector<uint32_t>{101, 102}));
}

TEST(SeriesBudget, FindingSeverityLeavesOutTheLessSevere) {
  std::string warning = frame_text(FullFrame(), {.min_severity = Severity::kWarning});
  EXPECT_EQ(warning.find("gpu-shared"), std::string::npos) << warning;
  EXPECT_NE(warning.find("order-differs"), std::string::npos);
  EXPECT_NE(warning.find("rank-on-wrong-gpu"), std::string::npos);
  std::string error = frame_text(FullFrame(), {.min_severity = Severity::kError});
  EXPECT_EQ(error.find("order-differs"), std::string::npos) << error;
  EXPECT_NE(error.find("rank-on-wrong-gpu"), std::string::npos);
}

// `gpumap metrics` with a cap says what it left out; without one the health series are as before.
TEST(SeriesBudget, MetricsTextCountsWhatTheCapLeftOut) {
  FullFrame f;
  ExporterHealth h;
  h.up = true;
  std::string capped = metrics_text(f.input(), h, {.max_processes = 1});
  EXPECT_NE(capped.find("\ngpumap_exporter_capped_processes 3\n"), std::string::npos) << capped;
  EXPECT_EQ(capped.find("gpumap_exporter_dropped_processes_total"), std::string::npos);  // serve's
  EXPECT_EQ(metrics_text(f.input(), h).find("capped"), std::string::npos);
}

TEST(MetricsText, ShortCommandIsPrintableAndCutAtACharacter) {
  EXPECT_EQ(short_command("python3 train.py"), "python3 train.py");
  EXPECT_EQ(short_command("a\x1b[2Jb\nc"), "a?[2Jb?c");
  std::string cut = short_command(std::string(79, 'x') + "\xc3\xa9zzz", 80);
  EXPECT_EQ(cut, std::string(79, 'x') + "\u2026");
}

TEST(HttpServer, ParsesRequestHeads) {
  ParsedHead ok = parse_request_head("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n");
  EXPECT_EQ(ok.refuse, 0);
  EXPECT_EQ(ok.method, "GET");
  EXPECT_EQ(ok.path, "/metrics");
  EXPECT_EQ(parse_request_head("HEAD / HTTP/1.0").refuse, 0);
  EXPECT_EQ(parse_request_head("POST /metrics HTTP/1.1").refuse, 405);
  EXPECT_EQ(parse_request_head("GET /metrics HTTP/2.0").refuse, 505);
  EXPECT_EQ(parse_request_head("GET metrics HTTP/1.1").refuse, 400);
  EXPECT_EQ(parse_request_head("GET /a b HTTP/1.1").refuse, 400);
  EXPECT_EQ(parse_request_head("\x16\x03\x01 garbage").refuse, 400);
  EXPECT_EQ(parse_request_head("").refuse, 400);
  EXPECT_EQ(parse_request_head("get /metrics HTTP/1.1").refuse, 400);
}

TEST(HttpServer, ParsesListenAddresses) {
  EXPECT_EQ(parse_listen_address("127.0.0.1:9467"), std::make_pair(std::string("127.0.0.1"), uint16_t(9467)));
  EXPECT_EQ(parse_listen_address("[::1]:0"), std::make_pair(std::string("::1"), uint16_t(0)));
  EXPECT_EQ(parse_listen_address("localhost:80").first, "localhost");
  for (const char* bad : {"9467", ":9467", "127.0.0.1:", "127.0.0.1:65536", "1.2.3:80", "[::1:80", "host.example:80", "1.2.3.4:9x"})
    EXPECT_THROW(parse_listen_address(bad), Error) << bad;
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.1.2.3"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("10.0.0.1"));
}

TEST(QueryCsv, ParsesFormatsAndFields) {
  CsvFormat f = parse_csv_format("csv,noheader,nounits");
  EXPECT_FALSE(f.header);
  EXPECT_FALSE(f.units);
  EXPECT_TRUE(parse_csv_format("csv").header);
  EXPECT_THROW(parse_csv_format("json"), Error);
  EXPECT_THROW(parse_csv_format("csv,noheaders"), Error);
  EXPECT_EQ(parse_query_fields(QueryKind::kGpu, "index, gpu_name,memory.used", "--query-gpu"),
            (std::vector<std::string>{"index", "name", "memory.used"}));
  EXPECT_THROW(parse_query_fields(QueryKind::kGpu, "index,bogus", "--query-gpu"), Error);
  EXPECT_THROW(parse_query_fields(QueryKind::kProcess, "pid,", "--query"), Error);
}


// ps --query CSV: a command or a CUDA_VISIBLE_DEVICES with commas, quotes or spaces stays one
// cell (RFC 4180: quoted, quotes doubled), so a CSV reader sees one cell per field on every line.
TEST(QueryCsv, ValuesWithCommasAndQuotesAreQuoted) {
  Snapshot s;
  Gpu g;
  g.uuid = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";
  g.pci_bus_id = "00000000:07:00.0";
  s.gpus.push_back(g);
  PsResult ps;
  ProcessRow r;
  r.pid = 42;
  r.uuid = g.uuid;
  r.command = "python3 -c \"print('a,b')\"";
  r.cuda_visible_devices = "1,0";
  r.environ_known = true;
  ps.rows.push_back(r);
  ProcessRow plain = r;
  plain.pid = 43;
  plain.command = "sleep 30";
  plain.cuda_visible_devices = "0";
  ps.rows.push_back(plain);
  std::string csv = render_process_csv(s, ps, {}, {"pid", "command", "cuda_visible_devices", "process_name"}, CsvFormat{});
  EXPECT_EQ(csv,
            "pid, command, cuda_visible_devices, process_name\n"
            "42, \"python3 -c \"\"print('a,b')\"\"\", \"1,0\", python3\n"
            "43, sleep 30, 0, sleep\n");
}

}  // namespace
}  // namespace gpumap
