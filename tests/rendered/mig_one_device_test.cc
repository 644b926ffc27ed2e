// The renderings (output/) of `mig_one_device` answers, in process: the tests of
// src/session/mig_one_device_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// A driver before R570 gives a process exactly one MIG device (issue 52 item 5; docs/driver-rules.md,
// "MIG"): the documented vectors (tests/vectors/documented/mig-r535.jsonl) through the resolver
// (map) and through the fake driver (map --check's probe child), and mig-one-device's fix pasted.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fake_session.h"
#include "output/map_view.h"
#include "session/explain.h"
#include "session/map.h"
#include "session/which.h"
#include "model/error.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const char* kMig0 = "MIG-d280783e-1fb2-1e62-1a58-9de8d06cf5dd";
const char* kMig1 = "MIG-7a360cfe-db46-0c91-2ca2-81816070806d";

std::vector<std::string> env_of(const nlohmann::json& v) {
  std::vector<std::string> env;
  if (!v["CUDA_VISIBLE_DEVICES"].is_null())
    env.push_back("CUDA_VISIBLE_DEVICES=" + v["CUDA_VISIBLE_DEVICES"].get<std::string>());
  if (!v["CUDA_DEVICE_ORDER"].is_null())
    env.push_back("CUDA_DEVICE_ORDER=" + v["CUDA_DEVICE_ORDER"].get<std::string>());
  return env;
}

TEST(MigOneDevice, DocumentedVectorsThroughTheResolverAndTheFakeDriver) {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/tests/vectors/documented/mig-r535.jsonl");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    nlohmann::json v = nlohmann::json::parse(line);
    FakeSession f("mig-r535", env_of(v));
    Session& s = f.session();
    std::vector<std::string> want = v["uuids"];
    EXPECT_EQ(s.mapping(s.env(), false).view.uuids, want) << line;
    MapAnswer a = answer_map(s, s.env(), {.check = true});
    Json j = map_json(s.snapshot(), a);
    EXPECT_TRUE(j["check"]["agree"].get<bool>()) << line << "\n" << j.dump();
    ++n;
  }
  EXPECT_EQ(n, 7);
  // The same lists on an R570+ host give every device they name.
  FakeSession r580("mig", {std::string("CUDA_VISIBLE_DEVICES=") + kMig0 + "," + kMig1});
  EXPECT_EQ(r580.session().mapping(r580.session().env(), false).view.uuids, (std::vector<std::string>{kMig0, kMig1}));
}

}  // namespace
}  // namespace gpumap
