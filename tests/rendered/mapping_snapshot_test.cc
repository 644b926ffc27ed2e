// The renderings (output/) of `mapping_snapshot` answers, in process: the tests of
// src/session/mapping_snapshot_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// snapshot save / diff in process (session/mapping_snapshot.h on FakeSession hosts): the answers
// and their text (output/snapshot_view.h), which `gpumap snapshot` and `verify --snapshot` print.
#include "session/mapping_snapshot.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"
#include "output/snapshot_view.h"

namespace gpumap {
namespace {

using testing::FakeSession;

SnapshotSaved save_here(FakeSession& f, const std::string& path) {
  SnapshotSaved a;
  a.path = path;
  a.diff_command = "gpumap snapshot diff " + path;
  a.snapshot = save_mapping_snapshot(f.session(), path, false);
  return a;
}

TEST(MappingSnapshot, TheSameHostIsTheSameNumbering) {
  FakeSession f("h200x2");
  std::string path = f.dir() + "/snapshot.json";
  SnapshotSaved saved = save_here(f, path);
  EXPECT_EQ(saved.snapshot.gpus.size(), 2u);
  EXPECT_NE(snapshot_saved_text(saved).find("Saved the numbering of 2 GPUs"), std::string::npos)
      << snapshot_saved_text(saved);
  EXPECT_NE(snapshot_saved_text(saved).find("Check it later with: gpumap snapshot diff " + path), std::string::npos);
  EXPECT_EQ(snapshot_saved_json(saved)["saved"], path);

  SnapshotCheck c = check_mapping_snapshot(f.session(), path, "gpumap snapshot save " + path);
  EXPECT_EQ(c.code, kExitOk);
  EXPECT_EQ(c.path, path);
  EXPECT_TRUE(c.diff.changes.empty());
  std::string text = snapshot_check_text(c);
  EXPECT_NE(text.find("SAME: the GPU numbering matches the snapshot."), std::string::npos) << text;
  EXPECT_EQ(text.find("record it"), std::string::npos) << text;
}

TEST(MappingSnapshot, AReplacedBoardIsAChangeWithWhatItBreaksAndHowToRecordIt) {
  FakeSession before("h200x2");
  std::string path = before.dir() + "/snapshot.json";
  save_here(before, path);
  FakeSession after("h200x2");  // the same host with GPU 1's board replaced
  after.host()["gpus"][1]["uuid"] = "GPU-0badc0de-0000-4000-8000-000000000001";
  SnapshotCheck c = check_mapping_snapshot(after.session(), path, "gpumap snapshot save " + path);
  EXPECT_EQ(c.code, kExitMismatch);
  ASSERT_FALSE(c.diff.changes.empty());
  std::string text = snapshot_check_text(c);
  EXPECT_NE(text.find("CHANGED: "), std::string::npos) << text;
  EXPECT_NE(text.find("breaks: "), std::string::npos) << text;
  EXPECT_NE(text.find("When the new numbering is intended, record it: gpumap snapshot save " + path), std::string::npos)
      << text;
}

}  // namespace
}  // namespace gpumap
