#include "findings/xid_table.h"

#include <set>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(XidTable, OrderedOnceEachWithMeaningAndAction) {
  std::set<uint32_t> seen;
  uint32_t last = 0;
  for (const XidRule& r : xid_rules()) {
    EXPECT_GT(r.xid, last) << "ordered by Xid (xid_rule looks up by bisection)";
    last = r.xid;
    EXPECT_TRUE(seen.insert(r.xid).second);
    EXPECT_NE(std::string(r.meaning), "") << r.xid;
    EXPECT_NE(std::string(r.action), "") << r.xid;
    EXPECT_EQ(xid_rule(r.xid).meaning, r.meaning);
  }
  EXPECT_GE(xid_rules().size(), 20u);
}

// The job or the card: an application fault leaves the GPU working (warning), the catalogue's
// hardware and bus faults need a reset, a reboot or service (error).
TEST(XidTable, PointsAtTheApplicationOrTheCard) {
  EXPECT_EQ(xid_rule(31).cause, XidCause::kApplication);
  EXPECT_EQ(xid_rule(31).severity, Severity::kWarning);
  EXPECT_EQ(xid_rule(13).cause, XidCause::kApplication);
  EXPECT_EQ(xid_rule(43).cause, XidCause::kApplication);
  EXPECT_EQ(xid_rule(48).cause, XidCause::kHardware);
  EXPECT_EQ(xid_rule(48).severity, Severity::kError);
  EXPECT_EQ(xid_rule(95).severity, Severity::kError);
  EXPECT_EQ(xid_rule(79).cause, XidCause::kInterconnect);
  EXPECT_EQ(xid_rule(79).severity, Severity::kError);
  EXPECT_EQ(xid_rule(119).cause, XidCause::kDriver);
  EXPECT_STREQ(xid_cause_name(xid_rule(79).cause), "interconnect");
}

TEST(XidTable, AnUnknownXidPointsToTheCatalogue) {
  XidRule r = xid_rule(4242);
  EXPECT_EQ(r.xid, 4242u);
  EXPECT_STREQ(r.mnemonic, "");
  EXPECT_NE(std::string(r.action).find("docs.nvidia.com/deploy/xid-errors"), std::string::npos);
}

}  // namespace
}  // namespace gpumap
