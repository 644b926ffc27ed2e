// The pure environment parsers, entry by entry.
#include <gtest/gtest.h>

#include "env/cuda_device_order.h"
#include "env/cuda_visible_devices.h"
#include "env/launcher.h"
#include "env/nvidia_visible_devices.h"

namespace gpumap {
namespace {

TEST(CvdParser, SplitsOnCommasOnlyAndKeepsEmptyEntries) {
  auto e = parse_cuda_visible_devices("0,,1;2");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].kind, CvdEntryKind::kInteger);
  EXPECT_EQ(e[1].kind, CvdEntryKind::kInvalid);
  EXPECT_EQ(e[1].reason, "empty entry");
  EXPECT_EQ(e[2].index, 1u);
  EXPECT_NE(e[2].reason.find("`;2` after the number is ignored"), std::string::npos);
}

TEST(CvdParser, IntegersReadLikeStrtoulCutTo32Bits) {
  EXPECT_EQ(parse_cuda_visible_devices(" 1")[0].index, 1u);
  EXPECT_EQ(parse_cuda_visible_devices("+1")[0].index, 1u);
  EXPECT_EQ(parse_cuda_visible_devices("-0")[0].index, 0u);
  EXPECT_EQ(parse_cuda_visible_devices("-1")[0].index, 0xffffffffu);
  EXPECT_EQ(parse_cuda_visible_devices("4294967297")[0].index, 1u);
  EXPECT_EQ(parse_cuda_visible_devices("18446744073709551617")[0].index, 0xffffffffu);
  EXPECT_EQ(parse_cuda_visible_devices("0x1")[0].index, 0u);
  EXPECT_EQ(parse_cuda_visible_devices("00000000:00:07.0")[0].index, 0u);
  EXPECT_EQ(parse_cuda_visible_devices("+-1")[0].kind, CvdEntryKind::kInvalid);
  EXPECT_EQ(parse_cuda_visible_devices("all")[0].kind, CvdEntryKind::kInvalid);
}

TEST(CvdParser, UuidPrefixes) {
  auto e = parse_cuda_visible_devices("GPU-1722A9AE-1e34");
  EXPECT_EQ(e[0].kind, CvdEntryKind::kUuid);
  EXPECT_EQ(e[0].uuid_hex, "1722a9ae1e34");
  EXPECT_EQ(parse_cuda_visible_devices("gpu-1722")[0].kind, CvdEntryKind::kInvalid);   // word is case-sensitive
  EXPECT_EQ(parse_cuda_visible_devices(" GPU-1722")[0].kind, CvdEntryKind::kInvalid);  // no leading space
  EXPECT_EQ(parse_cuda_visible_devices("GPU-")[0].kind, CvdEntryKind::kInvalid);
  EXPECT_EQ(parse_cuda_visible_devices("GPU-1722x")[0].kind, CvdEntryKind::kInvalid);
  auto full = parse_cuda_visible_devices("GPU-1722a9ae-1e34-595f-b548-742051b181a7xyz");
  EXPECT_EQ(full[0].kind, CvdEntryKind::kUuid);
  EXPECT_EQ(full[0].uuid_hex.size(), 32u);
  EXPECT_NE(full[0].reason.find("ignored"), std::string::npos);
  EXPECT_EQ(parse_cuda_visible_devices("MIG-GPU-1722/0/0")[0].kind, CvdEntryKind::kInvalid);
}

TEST(CdoParser, OnlyExactValues) {
  EXPECT_EQ(parse_cuda_device_order(std::nullopt).order, DeviceOrder::kFastestFirst);
  EXPECT_FALSE(parse_cuda_device_order(std::nullopt).set);
  EXPECT_EQ(parse_cuda_device_order(std::string("PCI_BUS_ID")).order, DeviceOrder::kPciBusId);
  for (const char* bad : {"", "pci_bus_id", " PCI_BUS_ID", "PCI_BUS_ID\n", "garbage"})
    EXPECT_EQ(parse_cuda_device_order(std::string(bad)).order, DeviceOrder::kInvalid) << bad;
  EXPECT_NE(parse_cuda_device_order(std::string("pci_bus_id")).reason.find("upper-case"), std::string::npos);
}

TEST(NvdParser, ModesAndEntries) {
  EXPECT_EQ(parse_nvidia_visible_devices(std::nullopt).mode, NvdMode::kUnset);
  EXPECT_EQ(parse_nvidia_visible_devices(std::string("")).mode, NvdMode::kVoid);
  EXPECT_EQ(parse_nvidia_visible_devices(std::string("void")).mode, NvdMode::kVoid);
  EXPECT_EQ(parse_nvidia_visible_devices(std::string("none")).mode, NvdMode::kNone);
  EXPECT_EQ(parse_nvidia_visible_devices(std::string("all")).mode, NvdMode::kAll);
  auto l = parse_nvidia_visible_devices(std::string("2, GPU-abc,MIG-def,0000:3b:00.0,1:0,x y"));
  ASSERT_EQ(l.mode, NvdMode::kList);
  ASSERT_EQ(l.entries.size(), 6u);
  EXPECT_EQ(l.entries[0].kind, NvdEntryKind::kIndex);
  EXPECT_EQ(l.entries[1].kind, NvdEntryKind::kUuid);
  EXPECT_EQ(l.entries[2].kind, NvdEntryKind::kMigUuid);
  EXPECT_EQ(l.entries[3].kind, NvdEntryKind::kPciAddress);
  EXPECT_EQ(l.entries[4].kind, NvdEntryKind::kMigIndex);
  EXPECT_EQ(l.entries[5].kind, NvdEntryKind::kInvalid);
}

TEST(LauncherParser, InnermostLauncherRankFirst) {
  auto env = Environment::from_strings({"SLURM_LOCALID=0", "LOCAL_RANK=3", "OMPI_COMM_WORLD_LOCAL_RANK=2"});
  LauncherEnv le = parse_launcher_env(env);
  ASSERT_NE(le.rank(), nullptr);
  EXPECT_EQ(le.rank()->variable, "LOCAL_RANK");
  EXPECT_EQ(*le.rank()->value, 3u);
  EXPECT_EQ(le.local_ranks.back().variable, "SLURM_LOCALID");
  EXPECT_EQ(parse_launcher_env(Environment::from_strings({"PATH=/bin"})).rank(), nullptr);
  LauncherEnv bad = parse_launcher_env(Environment::from_strings({"LOCAL_RANK=-1"}));
  EXPECT_EQ(bad.rank(), nullptr);
  EXPECT_FALSE(bad.local_ranks[0].error.empty());
}

TEST(LauncherParser, GpumapBindsMarkersCountOnlyWhileTheyMatch) {
  auto le = [](std::vector<std::string> v) { return parse_launcher_env(Environment::from_strings(v)); };
  EXPECT_TRUE(le({"CUDA_VISIBLE_DEVICES=1", "GPUMAP_BOUND=1"}).bound);
  EXPECT_EQ(le({"CUDA_VISIBLE_DEVICES=1", "GPUMAP_BOUND=1"}).bound_own, std::nullopt);  // plain bind: all its own
  LauncherEnv keep = le({"CUDA_VISIBLE_DEVICES=1,2,0", "GPUMAP_BOUND=1,2,0", "GPUMAP_BOUND_OWN=1"});
  EXPECT_TRUE(keep.bound);
  EXPECT_EQ(keep.bound_own, std::optional<uint32_t>(1));
  EXPECT_FALSE(le({"CUDA_VISIBLE_DEVICES=2", "GPUMAP_BOUND=1"}).bound);  // changed since bind set it
  EXPECT_FALSE(le({"GPUMAP_BOUND=1"}).bound);
  LauncherEnv stale = le({"CUDA_VISIBLE_DEVICES=0", "GPUMAP_BOUND=1", "GPUMAP_BOUND_OWN=1"});
  EXPECT_EQ(stale.bound_own, std::nullopt);
  EXPECT_EQ(le({"CUDA_VISIBLE_DEVICES=1", "GPUMAP_BOUND=1", "GPUMAP_BOUND_OWN=x"}).bound_own, std::nullopt);
  EXPECT_EQ(le({"CUDA_VISIBLE_DEVICES=1", "GPUMAP_BOUND=1", "GPUMAP_BOUND_OWN=0"}).bound_own, std::nullopt);
}

TEST(LauncherParser, SlurmIdListsAndRanges) {
  EXPECT_EQ(parse_int_list("2,3").values, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(parse_int_list("0-2,5").values, (std::vector<uint32_t>{0, 1, 2, 5}));
  EXPECT_FALSE(parse_int_list("2,x").error.empty());
  EXPECT_FALSE(parse_int_list("3-1").error.empty());
}

}  // namespace
}  // namespace gpumap

namespace gpumap {
namespace {

// The facts the rules read from the entry instead of lexing its text again.
TEST(CvdParser, KeepsSignWidthTrailingTextAndForm) {
  CvdEntry e = parse_cuda_visible_devices(" +01;2")[0];
  EXPECT_TRUE(e.sign);
  EXPECT_EQ(e.digits, "01");
  EXPECT_EQ(e.trailing, ";2");
  EXPECT_FALSE(e.wider_than_32_bits);
  EXPECT_TRUE(parse_cuda_visible_devices("4294967296")[0].wider_than_32_bits);
  EXPECT_TRUE(parse_cuda_visible_devices("-4294967297")[0].wider_than_32_bits);
  EXPECT_FALSE(parse_cuda_visible_devices("4294967295")[0].wider_than_32_bits);
  EXPECT_EQ(parse_cuda_visible_devices("28554ffd-acce-bd7e-cb9f-313a72e272e2")[0].form, CvdEntryForm::kBareUuid);
  CvdEntry pci = parse_cuda_visible_devices("00000000:5D:00.0")[0];
  EXPECT_EQ(pci.form, CvdEntryForm::kPciAddress);
  ASSERT_TRUE(pci.pci.has_value());
  EXPECT_EQ(pci.pci->bus, 0x5du);
  EXPECT_EQ(parse_cuda_visible_devices("MIG-GPU-28554ffd/1/0")[0].form, CvdEntryForm::kLegacyMig);
  EXPECT_EQ(parse_cuda_visible_devices("NoDevFiles")[0].form, CvdEntryForm::kContainerKeyword);
  EXPECT_EQ(parse_cuda_visible_devices("Gpu-2855")[0].form, CvdEntryForm::kMiscasedWord);
  EXPECT_EQ(parse_cuda_visible_devices(" GPU-2855")[0].form, CvdEntryForm::kSpaceBeforeUuid);
  EXPECT_EQ(parse_cuda_visible_devices(" \t")[0].form, CvdEntryForm::kBlank);
  EXPECT_EQ(parse_cuda_visible_devices("GPU-2855")[0].form, CvdEntryForm::kPlain);
  EXPECT_FALSE(parse_cuda_visible_devices("GPU-2855")[0].mig_word);
  EXPECT_TRUE(parse_cuda_visible_devices("MIG-2855")[0].mig_word);
}

}  // namespace
}  // namespace gpumap
