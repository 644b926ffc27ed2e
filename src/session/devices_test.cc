// The devices an environment gets and where named GPUs are in it (session/devices.h), in process
// on FakeSession hosts: what devices() and locate() build their answers from.
#include "session/devices.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const char* kH0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";  // h200x2's GPU 0
const char* kH1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";  // and GPU 1

Environment env_of(const std::vector<std::string>& vars) { return Environment::from_strings(vars); }

TEST(EnvironmentHidesEveryGpu, OnlyAListThatStartsHiddenAndHoldsNothingElse) {
  EXPECT_TRUE(environment_hides_every_gpu(env_of({"CUDA_VISIBLE_DEVICES=-1"})));
  EXPECT_TRUE(environment_hides_every_gpu(env_of({"CUDA_VISIBLE_DEVICES="})));
  EXPECT_FALSE(environment_hides_every_gpu(env_of({})));  // unset: every GPU
  EXPECT_FALSE(environment_hides_every_gpu(env_of({"CUDA_VISIBLE_DEVICES=0"})));
  EXPECT_FALSE(environment_hides_every_gpu(env_of({"CUDA_VISIBLE_DEVICES=-1,0"})));  // an error, not on purpose
}

TEST(VisibleDevices, TheMappingsGpusInCudaOrderWithTheirIdentity) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1,0"});
  Session& s = f.session();
  std::vector<VisibleDevice> d = visible_devices(s.snapshot(), s.mapping(s.env(), false));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].cuda_ordinal, 0u);
  EXPECT_EQ(d[0].uuid, kH1);
  EXPECT_EQ(d[0].nvml_index, 1u);
  ASSERT_TRUE(d[0].pci_bus_id);
  EXPECT_EQ(d[1].uuid, kH0);
  EXPECT_EQ(d[1].nvml_index, 0u);
  // CUDA would fail (a GPU twice): no device, not a guess.
  Environment dup = s.env();
  dup.set("CUDA_VISIBLE_DEVICES", "0,0");
  EXPECT_TRUE(visible_devices(s.snapshot(), s.mapping(dup, false)).empty());
}

TEST(LocateGpus, EachSpecWithItsOrdinalHereOrNoneWhenHidden) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  Session& s = f.session();
  Mapping m = s.mapping(s.env(), false);
  std::vector<LocatedGpu> g = locate_gpus(s.snapshot(), m, {"0", kH1});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].spec, "0");
  EXPECT_EQ(g[0].uuid, kH0);
  EXPECT_EQ(g[0].nvml_index, 0u);
  EXPECT_FALSE(g[0].cuda_ordinal);  // hidden here
  EXPECT_EQ(g[1].uuid, kH1);
  EXPECT_EQ(g[1].cuda_ordinal, std::optional<size_t>(0));
  try {
    locate_gpus(s.snapshot(), m, {"7"});
    ADD_FAILURE() << "GPU 7 does not exist on h200x2";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
}

}  // namespace
}  // namespace gpumap
