// render_pick: `gpumap pick`'s whole output in each form, from the answer pick_now gives on a
// simulated host (tests/fake_session.h), and the index form's refusal where no index is right.
#include "output/pick_view.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"
#include "session/lease_gpus.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const std::string kH0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab", kH1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";
const std::string kMig1 = "MIG-7a360cfe-db46-0c91-2ca2-81816070806d";

PickRequest request(int count) {
  PickRequest r;
  r.count = count;
  r.names = {.gpus = "--gpus", .wait = "--wait SECONDS (gpumap run)", .allow_busy = "--allow-busy",
             .allow_unknown = "--allow-unknown", .include = "--include", .exclude = "--exclude",
             .limits = "--include/--exclude/--min-free-mib"};
  return r;
}

TEST(RenderPick, EachFormatPrintsOnlyItsForm) {
  FakeSession f("h200x2");
  PickAnswer a = pick_now(f.session(), request(2), CvdForm::kIndex);
  ASSERT_EQ(a.uuids, (std::vector<std::string>{kH0, kH1}));
  EXPECT_EQ(render_pick(a, PickFormat::kEnv), "export CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport CUDA_VISIBLE_DEVICES=0,1\n");
  EXPECT_EQ(render_pick(a, PickFormat::kUuid), kH0 + "," + kH1 + "\n");
  EXPECT_EQ(render_pick(a, PickFormat::kIndex), "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0,1\n");
  EXPECT_EQ(render_pick(a, PickFormat::kJson), dump(pick_json(a)));
  EXPECT_EQ(render_pick(a, PickFormat::kText), pick_text(a));
}

TEST(RenderPick, TheIndexFormIsRefusedWhereNoIndexIsRight) {
  // A MIG device has no nvidia-smi index of its own: index is refused naming the other forms,
  // while uuid and JSON still print the choice.
  FakeSession f("mig");
  PickRequest r = request(1);
  r.include = {"MIG-7a360cfe"};
  PickAnswer a = pick_now(f.session(), r, CvdForm::kIndex);
  ASSERT_EQ(a.uuids, std::vector<std::string>{kMig1});
  EXPECT_EQ(render_pick(a, PickFormat::kUuid), kMig1 + "\n");
  try {
    render_pick(a, PickFormat::kIndex);
    ADD_FAILURE() << "no refusal for --format index on a MIG device";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("pick: no index form on this host ("), std::string::npos) << e.what();
    EXPECT_EQ(e.hint(), "use --format uuid or env");
  }
  EXPECT_NE(render_pick(a, PickFormat::kJson).find(kMig1), std::string::npos);
}

}  // namespace
}  // namespace gpumap
