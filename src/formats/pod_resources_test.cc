#include "formats/pod_resources.h"

#include <gtest/gtest.h>

#include "model/error.h"

namespace gpumap {
namespace {

TEST(PodResourcesJson, AnswerAndErrorRoundTripAndBadDocumentsAreNamed) {
  PodResources r;
  r.socket = "/s";
  r.pods = {{"p", "ns", {{"c", {{"nvidia.com/gpu", {"GPU-1", "GPU-2::3"}}}, {"nvidia.com/gpu=0"}}}}};
  PodResourcesRead back = parse_pod_resources(dump(pod_resources_json(r)));
  ASSERT_TRUE(back.answer);
  EXPECT_EQ(dump(pod_resources_json(*back.answer)), dump(pod_resources_json(r)));
  EXPECT_FALSE(back.answer->allocatable);  // null: not known
  PodResourcesRead err = parse_pod_resources(dump(pod_resources_error_json("/s", {"absent", "no socket"})));
  ASSERT_TRUE(err.error);
  EXPECT_EQ(err.error->code, "absent");
  for (const char* bad : {"", "[]", "{\"pods\": []}", "{\"socket\": \"/s\", \"pods\": [{\"name\": 1}]}",
                          "{\"socket\": \"/s\", \"pods\": [{\"name\": \"p\", \"namespace\": \"n\", \"containers\": "
                          "[{\"name\": \"c\", \"devices\": [{\"resource\": \"r\", \"ids\": [1]}]}]}]}"}) {
    try {
      parse_pod_resources(bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpumap
