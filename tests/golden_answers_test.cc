// Golden answers as data (tests/golden/*.json; tests/golden/README.md says how to add one): a
// host, an environment, the GPU processes of its /proc, one operation with its arguments, and
// the subset of the operation's JSON that must hold (or the refusal it must give).  Each case
// runs in process on a FakeSession, through the same operation and JSON writer the front ends
// call, so a case costs milliseconds and names the file and the JSON path that differ.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"
#include "output/explain_view.h"
#include "output/launch_view.h"
#include "output/map_view.h"
#include "output/pick_view.h"
#include "output/ps_view.h"
#include "output/self_view.h"
#include "output/verify_view.h"
#include "output/which_view.h"
#include "session/explain.h"
#include "session/launch.h"
#include "session/lease_gpus.h"
#include "session/map.h"
#include "session/ps.h"
#include "session/self.h"
#include "session/verify.h"
#include "session/which.h"

namespace gpumap {
namespace {

namespace fs = std::filesystem;
using testing::FakeProcess;
using testing::FakeSession;

/// "" when every member of `want` is in `got` with the same value (objects: the keys given;
/// arrays: the same length, element by element; anything else: equal); else where it differs.
std::string subset_mismatch(const Json& want, const Json& got, const std::string& path) {
  if (want.is_object()) {
    if (!got.is_object()) return path + ": want an object, got " + got.dump();
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) return path + "." + it.key() + ": missing";
      if (std::string m = subset_mismatch(it.value(), got[it.key()], path + "." + it.key()); !m.empty()) return m;
    }
    return "";
  }
  if (want.is_array()) {
    if (!got.is_array() || got.size() != want.size())
      return path + ": want " + std::to_string(want.size()) + " elements, got " + got.dump();
    for (size_t i = 0; i < want.size(); ++i)
      if (std::string m = subset_mismatch(want[i], got[i], path + "[" + std::to_string(i) + "]"); !m.empty()) return m;
    return "";
  }
  return want == got ? "" : path + ": want " + want.dump() + ", got " + got.dump();
}

/// The operation's JSON, as its front end writes it.
Json run_case(FakeSession& f, const Json& c) {
  Session& s = f.session();
  const std::string op = c.at("operation").get<std::string>();
  const Json args = c.value("args", Json::object());
  auto strings = [&](const char* key) { return args.value(key, std::vector<std::string>{}); };
  if (op == "map") {
    MapAnswer a = answer_map(s, s.env(), {.asked = strings("asked")});
    return map_json(s.snapshot(), a);
  }
  if (op == "devices") {
    DevicesAnswer a = devices_here(s);
    return a.refusal ? refusal_json(*a.refusal) : devices_answer_json(a);
  }
  if (op == "verify") {
    VerifyAnswer a = verify_here(s, strings("specs"), args.value("prefix", false));
    return a.refusal ? verify_refusal_json(a) : verify_answer_json(a);
  }
  if (op == "locate") return locate_answer_json(locate_here(s, strings("specs")));
  if (op == "pick") {
    PickRequest r;
    r.count = args.value("gpus", 1);
    r.include = strings("include");
    r.exclude = strings("exclude");
    r.allow_busy = args.value("allow_busy", false);
    r.names = {.gpus = "--gpus", .wait = "--wait SECONDS", .allow_busy = "--allow-busy", .allow_unknown = "--allow-unknown",
               .include = "--include", .exclude = "--exclude", .limits = "--include/--exclude/--min-free-mib"};
    CvdForm form = parse_cvd_form(args.value("form", std::string("index"))).value();
    return pick_json(pick_now(s, r, form));
  }
  if (op == "ps") return Json::parse(ps_frame_json(s.snapshot(), read_ps_frame(s), false));
  // The CLI's operations whose answers the library does not give.
  if (op == "verify_expect") return verify_json(verify_gpus(s, s.env(), strings("specs"), args.value("prefix", false), false));
  if (op == "which") return which_json(which_gpus(s, s.env(), strings("specs")));
  if (op == "explain") return explain_json(explain(s, s.env(), false));
  if (op == "bind") {
    size_t per_rank = args.value("gpus_per_rank", 1u);
    return bind_json(start_bind(s, per_rank, args.value("keep_visible", false), {.bind_cpus = false, .mark_bound = true},
                                strings("command")));
  }
  ADD_FAILURE() << "unknown operation " << op;
  return nullptr;
}

void check_case(const fs::path& file) {
  SCOPED_TRACE(file.filename().string());
  std::ifstream in(file);
  Json c = Json::parse(in);
  FakeSession f(c.at("host").get<std::string>(), c.value("env", std::vector<std::string>{}));
  if (c.value("in_container", false)) f.seams().in_container = true;
  for (const Json& p : c.value("processes", Json::array())) {
    FakeProcess fp{.pid = p.at("pid").get<uint32_t>()};
    if (p.contains("argv")) fp.argv = p["argv"].get<std::vector<std::string>>();
    if (p.contains("environ"))
      fp.environ = p["environ"].is_null() ? std::nullopt : std::optional(p["environ"].get<std::vector<std::string>>());
    fp.uid = p.value("uid", 0u);
    f.with_process(p.at("gpu").get<uint32_t>(), fp, p.value("mib", 256u));
  }
  ASSERT_TRUE(c.contains("expect") != c.contains("error")) << "a case has `expect` or `error`, one of them";
  try {
    Json got = run_case(f, c);
    if (c.contains("error")) {
      // A refusal that is an answer (devices, verify) is its JSON object; the rest throw.
      ASSERT_TRUE(got.contains("code")) << "want an error, got " << got.dump();
      EXPECT_EQ(got["code"], c["error"].at("code"));
      if (c["error"].contains("message")) {
        EXPECT_NE(got.value("message", "").find(c["error"]["message"].get<std::string>()), std::string::npos)
            << got.value("message", "");
      }
      if (c["error"].contains("expect")) {
        EXPECT_EQ(subset_mismatch(c["error"]["expect"], got, ""), "");
      }
      return;
    }
    EXPECT_EQ(subset_mismatch(c["expect"], got, ""), "") << got.dump(2);
  } catch (const Error& e) {
    ASSERT_TRUE(c.contains("error")) << "unexpected error: " << e.what() << " (" << e.hint() << ")";
    EXPECT_EQ(e.exit_code(), c["error"].at("code").get<int>()) << e.what();
    if (c["error"].contains("message")) {
      EXPECT_NE(std::string(e.what()).find(c["error"]["message"].get<std::string>()), std::string::npos) << e.what();
    }
    if (c["error"].contains("hint")) {
      EXPECT_NE(e.hint().find(c["error"]["hint"].get<std::string>()), std::string::npos) << e.hint();
    }
  }
}

TEST(GoldenAnswers, EveryCaseInTestsGolden) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(GPUMAP_SOURCE_DIR) / "tests" / "golden"))
    if (e.path().extension() == ".json") check_case(e.path()), ++n;
  EXPECT_GE(n, 10u) << "the golden cases were not found";
}

TEST(GoldenAnswers, TheMatcherNamesWhereAnAnswerDiffers) {
  Json got = Json::parse(R"({"a": {"b": [1, 2]}, "c": "x"})");
  EXPECT_EQ(subset_mismatch(Json::parse(R"({"a": {"b": [1, 2]}})"), got, ""), "");
  EXPECT_EQ(subset_mismatch(Json::parse(R"({"a": {"b": [1, 3]}})"), got, ""), ".a.b[1]: want 3, got 2");
  EXPECT_EQ(subset_mismatch(Json::parse(R"({"d": 1})"), got, ""), ".d: missing");
  EXPECT_EQ(subset_mismatch(Json::parse(R"({"a": {"b": [1]}})"), got, ""), ".a.b: want 1 elements, got [1,2]");
}

}  // namespace
}  // namespace gpumap
