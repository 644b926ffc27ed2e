// A driver before R570 gives a process exactly one MIG device (issue 52 item 5; docs/driver-rules.md,
// "MIG"): the documented vectors (tests/vectors/documented/mig-r535.jsonl) through the resolver
// (map) and through the fake driver (map --check's probe child), and mig-one-device's fix pasted.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fake_session.h"
#include "session/explain.h"
#include "session/map.h"
#include "session/which.h"
#include "model/error.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const char* kMig0 = "MIG-d280783e-1fb2-1e62-1a58-9de8d06cf5dd";
const char* kMig1 = "MIG-7a360cfe-db46-0c91-2ca2-81816070806d";

TEST(MigOneDevice, FindingAndItsFixPasted) {
  FakeSession f("mig-r535", {std::string("CUDA_VISIBLE_DEVICES=") + kMig0 + "," + kMig1});
  Session& s = f.session();
  Explanation e = explain(s, s.env(), false);
  const Finding* one = nullptr;
  for (const Finding& x : e.findings)
    if (x.id == "mig-one-device") one = &x;
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->severity, Severity::kWarning);
  EXPECT_NE(one->message.find("535.104.05"), std::string::npos) << one->message;
  EXPECT_NE(one->note.find(std::string("CUDA_VISIBLE_DEVICES=") + kMig1), std::string::npos) << one->note;
  std::string fix = one->fix.substr(0, one->fix.find("  #"));
  ASSERT_EQ(fix, std::string("export CUDA_VISIBLE_DEVICES=") + kMig0);
  Session pasted = f.other({fix.substr(7)});
  Explanation after = explain(pasted, pasted.env(), false);
  for (const Finding& x : after.findings) EXPECT_EQ(x.severity, Severity::kInfo) << x.id << ": " << x.message;
  EXPECT_EQ(after.mapping.view.uuids, std::vector<std::string>{kMig0});
}

TEST(MigOneDevice, WhichRefusesALineOfSeveralMigDevices) {
  FakeSession f("mig-r535");
  try {
    which_gpus(f.session(), f.session().env(), {"0"});  // GPU 0: both MIG devices
    ADD_FAILURE() << "which gave a line of two MIG devices on driver 535";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("exactly one MIG device"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find(std::string("gpumap which ") + kMig0), std::string::npos) << e.hint();
  }
  WhichAnswer one = which_gpus(f.session(), f.session().env(), {kMig1});
  EXPECT_EQ(one.targets, std::vector<std::string>{kMig1});
}

}  // namespace
}  // namespace gpumap
