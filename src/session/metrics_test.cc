// read_metrics_frame in process: what `metrics` and `serve` expose, on FakeSession hosts.
#include "session/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "fake_session.h"

namespace gpumap {
namespace {

using testing::FakeSession;

TEST(ReadMetricsFrame, ADriverThatFailsThrowsForTheExporterToMarkStale) {
  FakeSession f("h200x2");
  f.host()["errors"] = {{"nvmlInit", "NVML_ERROR_UNKNOWN"}};
  Session& s = f.session();
  EXPECT_THROW(read_metrics_frame(s.driver(), s.seams()), Error);
}

}  // namespace
}  // namespace gpumap
