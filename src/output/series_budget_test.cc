// The series budget's flags, parsed (the exposition they give: metrics_text_test.cc).
#include "output/series_budget.h"

#include <gtest/gtest.h>

#include "model/error.h"

namespace gpumap {
namespace {

/// The usage error `flags` give: its message and hint, "" when they parse.
std::string refusal(const SeriesFlags& flags) {
  try {
    parse_series_budget(flags);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage) << e.what();
    return std::string(e.what()) + " | " + e.hint();
  }
  return "";
}

TEST(SeriesBudget, NoFlagsIsTheWholeFrame) {
  SeriesBudget b = parse_series_budget({});
  EXPECT_EQ(b.process_series, ProcessSeries::kAll);
  EXPECT_TRUE(b.dropped_labels.empty());
  EXPECT_EQ(b.command_bytes, 80u);
  EXPECT_FALSE(b.max_processes);
  EXPECT_EQ(b.min_severity, Severity::kInfo);
}

TEST(SeriesBudget, EachFlagsValue) {
  SeriesFlags f;
  f.process_series = "info";
  f.drop_labels = {"user,slurm_job_id", "pod", "user"};
  f.max_processes = "200";
  f.finding_severity = "warning";
  f.command_length = "24";
  SeriesBudget b = parse_series_budget(f);
  EXPECT_EQ(b.process_series, ProcessSeries::kInfo);
  EXPECT_EQ(b.dropped_labels, (std::vector<std::string>{"user", "slurm_job_id", "pod"}));
  EXPECT_EQ(b.command_bytes, 24u);
  EXPECT_EQ(b.max_processes, 200u);
  EXPECT_EQ(b.min_severity, Severity::kWarning);
  EXPECT_EQ(parse_series_budget({.process_series = "none"}).process_series, ProcessSeries::kNone);
  EXPECT_EQ(parse_series_budget({.max_processes = "0"}).max_processes, 0u);
  EXPECT_EQ(parse_series_budget({.finding_severity = "error"}).min_severity, Severity::kError);
}

// The command label off, either way: one setting (no label, no bytes).
TEST(SeriesBudget, CommandOffByLengthZeroOrByDroppingIt) {
  SeriesBudget zero = parse_series_budget({.command_length = "0"});
  SeriesBudget dropped = parse_series_budget({.drop_labels = {"command"}});
  for (const SeriesBudget& b : {zero, dropped}) {
    EXPECT_EQ(b.command_bytes, 0u);
    EXPECT_EQ(b.dropped_labels, std::vector<std::string>{"command"});
  }
  EXPECT_NE(refusal({.drop_labels = {"command"}, .command_length = "20"}).find("--command-length is given"), std::string::npos);
}

TEST(SeriesBudget, BadValuesNameTheFlagAndWhatItTakes) {
  EXPECT_NE(refusal({.process_series = "some"}).find("--process-series takes all, info or none, not `some`"), std::string::npos);
  EXPECT_NE(refusal({.finding_severity = "warn"}).find("--finding-severity takes info, warning or error"), std::string::npos);
  for (const char* bad : {"-1", "", "12x", "1e3", "1000001", " 5", "99999999999999999999"})
    EXPECT_NE(refusal({.max_processes = bad}).find("--max-processes takes a whole number from 0 to 1000000"), std::string::npos)
        << bad;
  EXPECT_NE(refusal({.command_length = "129"}).find("--command-length takes a whole number from 0 to 128, not `129`"),
            std::string::npos);
  std::string key = refusal({.drop_labels = {"user,pid"}});
  EXPECT_NE(key.find("--drop-process-label pid: pid is a join key"), std::string::npos) << key;
  EXPECT_NE(key.find("cuda_ordinal"), std::string::npos) << key;  // the hint lists what may be dropped
  for (const char* join : {"type", "uuid"}) EXPECT_NE(refusal({.drop_labels = {join}}).find("join key"), std::string::npos);
  std::string unknown = refusal({.drop_labels = {"hostname"}});
  EXPECT_NE(unknown.find("`hostname` is not a label of gpumap_process_info"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("nvml_index, cuda_ordinal, state, user, command, slurm_job_id, rank, local_rank, lease, pod, "
                         "namespace, container"),
            std::string::npos)
      << unknown;
  EXPECT_NE(refusal({.drop_labels = {"user,"}}).find("needs label names"), std::string::npos);
  EXPECT_NE(refusal({.drop_labels = {"\x1b[2J"}}).find("`?[2J`"), std::string::npos);  // printed printable
}

}  // namespace
}  // namespace gpumap
