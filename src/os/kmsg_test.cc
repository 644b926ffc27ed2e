#include "os/kmsg.h"

#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(Kmsg, KeepsTheNvrmRecordsOfAFileOfKmsgLines) {
  char dir[] = "/tmp/gpumap-kmsg-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/kmsg";
  {
    std::ofstream f(path);
    f << "6,1,100,-;Linux version 6.1\n"
      << " SUBSYSTEM=pci\n"
      << "4,2,200,-;NVRM: Xid (PCI:0000:00:06): 31, pid=4179, name=python3, channel 0x0000000a\n"
      << "6,3,300,-;eth0: link up";  // no final newline
  }
  KmsgRead k = read_kmsg(path);
  EXPECT_TRUE(k.readable) << k.problem;
  EXPECT_EQ(k.records, 4u);
  EXPECT_EQ(k.text, "4,2,200,-;NVRM: Xid (PCI:0000:00:06): 31, pid=4179, name=python3, channel 0x0000000a\n");
  unlink(path.c_str());
  rmdir(dir);
}

TEST(Kmsg, ALogThatCannotBeOpenedSaysWhyAndHoldsNothing) {
  KmsgRead k = read_kmsg("/nonexistent/kmsg");
  EXPECT_FALSE(k.readable);
  EXPECT_EQ(k.error, ENOENT);
  EXPECT_NE(k.problem.find("/nonexistent/kmsg"), std::string::npos) << k.problem;
  EXPECT_TRUE(k.text.empty());
}

}  // namespace
}  // namespace gpumap
