#include "output/serve_view.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(ServeView, TheUrlOnStdoutAndAWarningForAnAddressBeyondLoopback) {
  ServeStartText local = serve_start_text({"http://127.0.0.1:9467/metrics", "127.0.0.1", true});
  EXPECT_EQ(local.out, "gpumap serve: listening on http://127.0.0.1:9467/metrics\n");
  EXPECT_EQ(local.err, "");
  ServeStartText open = serve_start_text({"https://[::]:9467/metrics", "[::]", false});
  EXPECT_EQ(open.out, "gpumap serve: listening on https://[::]:9467/metrics\n");
  EXPECT_EQ(open.err,
            "gpumap serve: [::] is not a loopback address: whoever reaches this port sees the GPU processes' users "
            "and command lines\n");
}

}  // namespace
}  // namespace gpumap
