#include "output/metrics_text.h"

#include <cmath>

#include <gtest/gtest.h>

#include "os/http_server.h"
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
