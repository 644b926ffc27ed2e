// snapshot save / diff in process (session/mapping_snapshot.h on FakeSession hosts): the answers
// and their text (output/snapshot_view.h), which `gpumap snapshot` and `verify --snapshot` print.
#include "session/mapping_snapshot.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"

namespace gpumap {
namespace {

using testing::FakeSession;

TEST(MappingSnapshot, AMissingSnapshotNamesTheCommandThatSavesOne) {
  FakeSession f("h200x2");
  try {
    check_mapping_snapshot(f.session(), f.dir() + "/none.json", "gpumap snapshot save");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.hint()).find("gpumap snapshot save"), std::string::npos) << e.hint();
  }
}

}  // namespace
}  // namespace gpumap
