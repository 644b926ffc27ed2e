// How a device_map value or a max_memory key is read (env/device_value.h): the one reading that
// the C API, the Python package and the diagnosis's findings share.
#include "env/device_value.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(DeviceValue, OrdinalsAndPlaces) {
  EXPECT_EQ(device_value_of_number(3).cuda_ordinal, 3u);
  EXPECT_EQ(device_value_of_text("cuda:12").cuda_ordinal, 12u);
  EXPECT_EQ(device_value_of_text("cuda").cuda_ordinal, 0u);
  for (const char* place : {"cpu", "disk", "meta", "mps"}) {
    DeviceValue v = device_value_of_text(place);
    EXPECT_FALSE(v.cuda_ordinal) << place;
    EXPECT_EQ(v.place, place);
    EXPECT_TRUE(v.expected.empty()) << place;
  }
}

TEST(DeviceValue, AnythingElseIsRefusedWithWhatItMustBe) {
  EXPECT_EQ(device_value_of_number(-1).expected, "a cuda ordinal (0 or more)");
  // "3" as text is not torch's: an int is; '²' and '١' are not ASCII digits; ten digits overflow.
  for (const char* bad : {"3", "cuda:", "cuda:-1", "cuda:1x", "cuda:\xc2\xb2", "cuda:1234567890", "gpu:0", "CPU", ""}) {
    DeviceValue v = device_value_of_text(bad);
    EXPECT_FALSE(v.cuda_ordinal) << bad;
    EXPECT_EQ(v.expected, kDeviceWords) << bad;
  }
}

TEST(DeviceValue, CudaKeysAreRefusedAsAccelerateDoes) {
  auto r = cuda_key_refusal("cuda:1", "'cuda:1'");
  ASSERT_TRUE(r);
  EXPECT_NE(r->message.find("Device cuda:1 is not recognized"), std::string::npos) << r->message;
  EXPECT_NE(r->hint.find("{1: ...}"), std::string::npos) << r->hint;
  ASSERT_TRUE(cuda_key_refusal("cuda", "'cuda'"));
  EXPECT_NE(cuda_key_refusal("cuda", "'cuda'")->hint.find("{0: ...}"), std::string::npos);
  EXPECT_FALSE(cuda_key_refusal("cpu", "'cpu'"));
  EXPECT_FALSE(cuda_key_refusal("GPU-8f3a", "'GPU-8f3a'"));
}

}  // namespace
}  // namespace gpumap
