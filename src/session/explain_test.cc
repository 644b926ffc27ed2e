#include "session/explain.h"

#include <gtest/gtest.h>

#include "resolve/cuda_rules.h"

namespace gpumap {
namespace {

const char* kU0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";
const char* kU1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

Snapshot two_gpus() {
  Snapshot s;
  for (uint32_t i = 0; i < 2; ++i) {
    Gpu g;
    g.nvml_index = i;
    g.uuid = i ? kU1 : kU0;
    s.gpus.push_back(g);
  }
  return s;
}

Mapping mapping_of(const Environment& env) {
  Mapping m;
  m.view = predict_cuda_view({kU0, kU1}, env.get("CUDA_DEVICE_ORDER"), env.get("CUDA_VISIBLE_DEVICES"));
  return m;
}

TEST(Explain, EachEntryInWords) {
  Snapshot s = two_gpus();
  Environment env = Environment::from_strings({"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1,x,0"});
  Mapping m = mapping_of(env);
  EXPECT_EQ(explain_entry(s, m.view, 0), "entry 1 `1` is read as index 1: it becomes cuda:0 = nvidia-smi GPU 1");
  EXPECT_EQ(explain_entry(s, m.view, 2), "entry 3 `0` is never read: the list already ended");
  std::vector<std::string> lines = explain_lines(s, env, m, false);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA counts GPUs in PCI bus order (nvidia-smi's order)");
  EXPECT_EQ(lines[1], "CUDA_VISIBLE_DEVICES=`1,x,0`: split on commas into 3 entries");
  EXPECT_EQ(lines[2], "  " + explain_entry(s, m.view, 0));
  EXPECT_EQ(lines[3].rfind("  entry 2 `x` is unreadable", 0), 0u) << lines[3];
}

TEST(Explain, AnInvalidOrderReadsNoEntry) {
  Snapshot s = two_gpus();
  Environment env = Environment::from_strings({"CUDA_DEVICE_ORDER=pci", "CUDA_VISIBLE_DEVICES=0"});
  std::vector<std::string> lines = explain_lines(s, env, mapping_of(env), false);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("CUDA_DEVICE_ORDER=`pci` is invalid", 0), 0u) << lines[0];
}

}  // namespace
}  // namespace gpumap
