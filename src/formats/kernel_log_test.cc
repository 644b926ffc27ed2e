#include "formats/kernel_log.h"

#include <string>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

// Measured on the lent H100 (driver 580.159.04, 2026-12-07): a kernel that stored to address 0
// (docs/driver-rules.md, "GPU faults in the kernel log").  The record as /dev/kmsg serves it.
const char* kH100Xid31 =
    "4,1123,95012345678,-;NVRM: Xid (PCI:0000:00:06): 31, pid=4179, name=python3, channel 0x0000000a, intr 00000000. "
    "MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_8 faulted @ 0x0_00000000. Fault is of type FAULT_PDE "
    "ACCESS_TYPE_VIRT_WRITE";

TEST(KernelLog, TheMeasuredH100XidNamesItsPidNameAndGpu) {
  KernelLog log = parse_kernel_log(kH100Xid31);
  ASSERT_EQ(log.xids.size(), 1u);
  const KernelXid& x = log.xids[0];
  EXPECT_EQ(x.xid, 31u);
  EXPECT_EQ(x.pci, "0000:00:06");
  ASSERT_TRUE(x.address);
  EXPECT_EQ(x.address->bus, 0u);
  EXPECT_EQ(x.address->device, 6u);
  EXPECT_EQ(x.pid, 4179u);
  EXPECT_EQ(x.process_name, "python3");
  EXPECT_EQ(x.seq, 1123u);
  EXPECT_EQ(x.usec, 95012345678u);
  EXPECT_EQ(x.detail.rfind("channel 0x0000000a", 0), 0u) << x.detail;
  EXPECT_EQ(x.message.rfind("NVRM: Xid (PCI:0000:00:06): 31, pid=4179", 0), 0u);
}

TEST(KernelLog, PublicFormsWithoutAPid) {
  // pid='<unknown>' (Xid 79 on recent drivers), no pid at all (older 31s), no "PCI:" (older drivers).
  KernelLog log = parse_kernel_log(
      "[ 1843.308145] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
      "May 13 17:19:01 hyperion kernel: NVRM: Xid (PCI:0000:08:00): 31, Ch 0000003b, intr 10000000. MMU Fault: x\n"
      "Nov 22 18:29:55 hostname kernel: [  966.503025] NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask 00000120\n"
      "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.\n");
  ASSERT_EQ(log.xids.size(), 4u);
  EXPECT_EQ(log.xids[0].xid, 79u);
  EXPECT_FALSE(log.xids[0].pid);
  EXPECT_FALSE(log.xids[0].process_name);
  EXPECT_EQ(log.xids[0].usec, 1843308145u);
  EXPECT_EQ(log.xids[0].detail, "GPU has fallen off the bus.");
  EXPECT_EQ(log.xids[1].xid, 31u);
  EXPECT_FALSE(log.xids[1].pid);
  EXPECT_FALSE(log.xids[1].usec);
  EXPECT_EQ(log.xids[2].pci, "0000:01:00");
  EXPECT_EQ(log.xids[2].usec, 966503025u);
  ASSERT_TRUE(log.xids[2].address);
  EXPECT_EQ(log.xids[2].address->bus, 1u);
  EXPECT_EQ(log.xids[3].pid, 1896u);
  EXPECT_FALSE(log.xids[3].process_name) << "a line with a pid and no name";
  EXPECT_EQ(log.xids[3].detail.rfind("Row Remapper", 0), 0u);
}

TEST(KernelLog, GpuAtPciLinesNameTheUuidAndContinuationLinesAreSkipped) {
  KernelLog log = parse_kernel_log(
      "6,1120,95012340000,-;NVRM: GPU at PCI:0000:00:06: GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae\n"
      " SUBSYSTEM=pci\n"
      " DEVICE=+pci:0000:00:06.0\n"
      "6,1121,95012340001,-;NVRM: GPU Board Serial Number: 1650000000000\n" +
      std::string(kH100Xid31) + "\n");
  EXPECT_EQ(log.lines, 3u) << "continuation lines are not records";
  ASSERT_EQ(log.gpus.size(), 1u);
  EXPECT_EQ(log.gpus[0].uuid, "GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae");
  ASSERT_EQ(log.xids.size(), 1u);
  EXPECT_EQ(kernel_uuid_of(log, log.xids[0]), "GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae");
}

TEST(KernelLog, NotXidsAndBrokenLinesGiveNothingAndNeverThrow) {
  for (const char* bad : {"", "\n\n", "NVRM: Xid", "NVRM: Xid (", "NVRM: Xid (PCI:0000:00:06)", "NVRM: Xid (PCI:x): ",
                          "NVRM: Xid (PCI:0000:00:06): abc", "NVRM: Xid (PCI:0000:00:06): 99999999999999999999",
                          "1,2;NVRM: Xid (", "[ 12.3", "[99999999999999999999.1] x", "kernel: [", "\x01\xff;;,,"}) {
    KernelLog log = parse_kernel_log(bad);
    EXPECT_TRUE(log.xids.empty()) << bad;
  }
  KernelXid x = *parse_xid_message("NVRM: Xid (PCI:zz): 13, pid=abc, name=, Graphics Exception");
  EXPECT_EQ(x.xid, 13u);
  EXPECT_FALSE(x.address);
  EXPECT_FALSE(x.pid);
  EXPECT_FALSE(x.process_name);
}

TEST(KernelLog, KeepsTheNewestXidsWhenTheDriverLoops) {
  std::string text;
  for (size_t i = 0; i < kMaxKernelXids + 100; ++i)
    text += "NVRM: Xid (PCI:0000:00:06): 69, pid=" + std::to_string(i + 1) + ", name=x, Class Error\n";
  KernelLog log = parse_kernel_log(text);
  ASSERT_EQ(log.xids.size(), kMaxKernelXids);
  EXPECT_EQ(log.xids.back().pid, kMaxKernelXids + 100);
  EXPECT_EQ(log.xids.front().pid, 101u);
}

}  // namespace
}  // namespace gpumap
