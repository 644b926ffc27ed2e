#include "prom/query_result.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

// Answers of Prometheus 2.42 (Debian 12's package) as it wrote them, captured with curl.
const char* kUp =
    R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","instance":"127.0.0.1:19391","job":"self"},"value":[1796553056.968,"1"]}]}})";
const char* kScalar = R"({"status":"success","data":{"resultType":"scalar","result":[1796553056.985,"2"]}})";
const char* kBadData =
    R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:4: parse error: unexpected end of input inside braces"})";
const char* kMatrix =
    R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","instance":"127.0.0.1:19391","job":"self"},"values":[[1796553056.516,"1"]]}]}})";
const char* kEmpty = R"({"status":"success","data":{"resultType":"vector","result":[]}})";
const char* kTwoFamilies =
    R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"scrape_samples_scraped","instance":"127.0.0.1:19391","job":"self"},"value":[1796553057.220,"317"]},{"metric":{"__name__":"up","instance":"127.0.0.1:19391","job":"self"},"value":[1796553057.220,"1"]}]}})";

TEST(PromQuery, ReadsAnInstantVector) {
  PromResult r = parse_prom_query(kUp);
  EXPECT_EQ(r.result_type, "vector");
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].labels.at("instance"), "127.0.0.1:19391");
  EXPECT_EQ(r.samples[0].labels.at("job"), "self");
  EXPECT_EQ(r.samples[0].labels.at("__name__"), "up");
  EXPECT_EQ(r.samples[0].value, 1);
  EXPECT_DOUBLE_EQ(r.samples[0].timestamp, 1796553056.968);
  PromResult two = parse_prom_query(kTwoFamilies);
  ASSERT_EQ(two.samples.size(), 2u);
  EXPECT_EQ(two.samples[0].value, 317);
  EXPECT_TRUE(parse_prom_query(kEmpty).samples.empty());
}

TEST(PromQuery, ReadsAScalar) {
  PromResult r = parse_prom_query(kScalar);
  EXPECT_EQ(r.result_type, "scalar");
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].value, 2);
  EXPECT_TRUE(r.samples[0].labels.empty());
}

TEST(PromQuery, SaysPrometheussErrorWithItsType) {
  try {
    parse_prom_query(kBadData);
    FAIL() << "no error";
  } catch (const PromError& e) {
    EXPECT_EQ(e.error_type(), "bad_data");
    EXPECT_NE(std::string(e.what()).find("parse error: unexpected end of input inside braces"), std::string::npos);
  }
}

TEST(PromQuery, ReadsSpecialValuesAndWarnings) {
  PromResult r = parse_prom_query(
      R"({"status":"success","warnings":["PromQL info: x"],"data":{"resultType":"vector","result":[{"metric":{},"value":[1,"NaN"]},{"metric":{},"value":[1,"+Inf"]},{"metric":{},"value":[1,"-Inf"]},{"metric":{},"value":[1,"1e-05"]}]}})");
  ASSERT_EQ(r.samples.size(), 4u);
  EXPECT_TRUE(std::isnan(r.samples[0].value));
  EXPECT_TRUE(std::isinf(r.samples[1].value) && r.samples[1].value > 0);
  EXPECT_TRUE(std::isinf(r.samples[2].value) && r.samples[2].value < 0);
  EXPECT_DOUBLE_EQ(r.samples[3].value, 1e-05);
  ASSERT_EQ(r.warnings.size(), 1u);
}

TEST(PromQuery, APartialAnswerIsMarked) {
  // Thanos's partial response: success, the result of the stores that answered, a warning.
  PromResult t = parse_prom_query(
      R"({"status":"success","data":{"resultType":"vector","result":[]},"warnings":["receive series from Addr: 10.0.0.7:10901: rpc error: code = Unavailable"]})");
  EXPECT_TRUE(t.partial);
  // VictoriaMetrics' cluster: isPartial at the root (false: whole).
  PromResult v = parse_prom_query(R"({"status":"success","isPartial":true,"data":{"resultType":"vector","result":[]}})");
  EXPECT_TRUE(v.partial);
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("isPartial"), std::string::npos);
  EXPECT_FALSE(parse_prom_query(R"({"status":"success","isPartial":false,"data":{"resultType":"vector","result":[]}})").partial);
  // A label named isPartial is a label, not the answer's flag.
  EXPECT_FALSE(parse_prom_query(
                   R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"isPartial":"true"},"value":[1,"1"]}]}})")
                   .partial);
  EXPECT_FALSE(parse_prom_query(R"({"status":"success","data":{"resultType":"vector","result":[]}})").partial);
}

TEST(PromQuery, RefusesWhatIsNotAnInstantQueryAnswer) {
  auto type_of = [](const std::string& body) {
    try {
      parse_prom_query(body);
    } catch (const PromError& e) {
      return e.error_type() + ": " + e.what();
    }
    return std::string("parsed");
  };
  EXPECT_NE(type_of(kMatrix).find("bad_answer: "), std::string::npos);
  EXPECT_NE(type_of(kMatrix).find("matrix"), std::string::npos);
  EXPECT_NE(type_of("404 page not found\n").find("not JSON"), std::string::npos);  // a proxy's or another server's page
  EXPECT_NE(type_of("{}").find("no `status`"), std::string::npos);
  EXPECT_NE(type_of(R"({"status":"success"})").find("no `data`"), std::string::npos);
  EXPECT_NE(type_of(R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"1"]}]}})")
                .find("label `a` is not a string"),
            std::string::npos);
  EXPECT_NE(type_of(R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x1"]}]}})").find("`x1`"),
            std::string::npos);
  EXPECT_NE(type_of(R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1]}]}})").find("[timestamp"),
            std::string::npos);
  EXPECT_EQ(type_of(R"({"status":"error"})"), "unknown: (no message)");
}

/// Bytes served `step` at a time, as a connection brings them.
class Trickle : public BodySource {
 public:
  Trickle(std::string text, size_t step) : text_(std::move(text)), step_(step) {}
  size_t read(char* out, size_t n) override {
    size_t k = std::min({n, step_, text_.size() - at_});
    std::copy(text_.data() + at_, text_.data() + at_ + k, out);
    at_ += k;
    return k;
  }
  size_t at_ = 0;

 private:
  std::string text_;
  size_t step_;
};

std::string error_type_of(BodySource& body, PromBudget& budget) {
  try {
    parse_prom_query(body, budget);
  } catch (const PromError& e) {
    return e.error_type() + ": " + e.what();
  }
  return "parsed";
}

// The answer is read as it arrives: in pieces of any size it is the same answer.
TEST(PromQuery, ReadsAnAnswerInPiecesOfAnySize) {
  for (size_t step : {1, 7, 4096}) {
    Trickle body(kTwoFamilies, step);
    PromBudget budget;
    PromResult r = parse_prom_query(body, budget);
    ASSERT_EQ(r.samples.size(), 2u) << step;
    EXPECT_EQ(r.samples[1].labels.at("__name__"), "up");
    EXPECT_GT(budget.bytes(), 0u);
  }
}

// Issue 56 item 1: a hostile answer cost 10-77x its size (20 MB of `[`: 1.5 GB; `[],[],...`:
// 2.7 GB), a JSON tree built before it was looked at.  Now it is refused as it arrives: nesting past
// kMaxDepth at once, a result that is not a vector's at its first element (not read to its end).
TEST(PromQuery, AHostileAnswerIsRefusedAsItArrives) {
  {
    Trickle body(std::string(20 << 20, '['), 65536);
    PromBudget budget;
    EXPECT_EQ(error_type_of(body, budget).rfind("too_large: ", 0), 0u) << error_type_of(body, budget);
    EXPECT_LT(body.at_, size_t{1} << 20) << "read " << body.at_ << " bytes of 20 MiB to refuse it";
  }
  {
    std::string list = R"({"status":"success","data":{"resultType":"vector","result":[)";
    while (list.size() < (20 << 20)) list += "[],";
    Trickle body(list, 65536);
    PromBudget budget;
    EXPECT_NE(error_type_of(body, budget).find("a vector element is not an object"), std::string::npos);
    EXPECT_LT(body.at_, size_t{1} << 20) << "read " << body.at_ << " bytes of 20 MiB to refuse it";
  }
  {  // one string or number past kMaxToken: refused before the JSON reader holds it
    Trickle body(R"({"status":"success","warnings":[")" + std::string(PromBudget::kMaxToken + 10, 'a'), 65536);
    PromBudget budget;
    EXPECT_NE(error_type_of(body, budget).find("too_large: "), std::string::npos);
    Trickle number(R"({"status":)" + std::string(PromBudget::kMaxToken + 10, '1'), 65536);
    EXPECT_NE(error_type_of(number, budget).find("too_large: "), std::string::npos);
  }
}

// The budget is shared by the answers of one read: what one answer holds counts for the next,
// samples and bytes both, whatever thread parses them.
TEST(PromQuery, TheAnswersOfOneReadShareABudget) {
  PromBudget budget(size_t{1} << 20, 3);
  const std::string two_families = kTwoFamilies, up_text = kUp;
  StringSource two(two_families);
  EXPECT_EQ(parse_prom_query(two, budget).samples.size(), 2u);
  StringSource again(two_families);
  EXPECT_NE(error_type_of(again, budget).find("too_large: "), std::string::npos);  // 4 samples of 3
  PromBudget small(2 * PromBudget::kLabelCost, 1000);  // two labels' worth
  StringSource up(up_text);                            // one sample of three labels
  EXPECT_NE(error_type_of(up, small).find("too_large: "), std::string::npos);
}

}  // namespace
}  // namespace gpumap
