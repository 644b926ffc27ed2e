#include "env/environment.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(Environment, EntriesKeepTheirOrderDuplicatesAndOddFormsUntilSet) {
  std::vector<std::string> in = {"ZZZ=1", "AAA=2", "NOEQUALS", "AAA=3", "=odd", "CUDA_VISIBLE_DEVICES=0", "M=x=y"};
  Environment e = Environment::from_strings(in);
  EXPECT_EQ(e.to_strings(), in) << "not sorted, not de-duplicated, nothing dropped";
  EXPECT_EQ(e.get("AAA"), "2") << "the first entry wins, like getenv";
  EXPECT_EQ(e.get("M"), "x=y");
  e.set("CUDA_VISIBLE_DEVICES", "GPU-a");  // replaced where it was
  e.set("CUDA_DEVICE_ORDER", "PCI_BUS_ID");  // appended
  EXPECT_EQ(e.to_strings(), (std::vector<std::string>{"ZZZ=1", "AAA=2", "NOEQUALS", "AAA=3", "=odd",
                                                      "CUDA_VISIBLE_DEVICES=GPU-a", "M=x=y", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}));
  e.set("AAA", "9");  // a set name keeps one entry: no later duplicate can carry the old value
  EXPECT_EQ(e.to_strings()[1], "AAA=9");
  EXPECT_EQ(std::count(e.to_strings().begin(), e.to_strings().end(), "AAA=3"), 0);
  e.unset("ZZZ");
  EXPECT_EQ(e.to_strings().front(), "AAA=9");
  EXPECT_FALSE(e.get("ZZZ"));
}

}  // namespace
}  // namespace gpumap
