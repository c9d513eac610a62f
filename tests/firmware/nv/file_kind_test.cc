// Which NVIDIA file a path names (nouveau's file names) and what a chip requires of its GSP-RM files.
#include "firmware/nv/file_kind.h"

#include "absl/strings/match.h"
#include "firmware/nv/requirements.h"
#include "gtest/gtest.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace firmware::nv {
namespace {

using testing::Bytes;

TEST(NvFileKindTest, GspRmNamesAnywhere) {
  EXPECT_EQ(NvKindFromPath("/tmp/booter_load-535.113.01.bin"), NvFileKind::kBooterLoad);
  EXPECT_EQ(NvKindFromPath("booter_unload-535.113.01.bin"), NvFileKind::kBooterUnload);
  EXPECT_EQ(NvKindFromPath("x/bootloader-535.113.01.bin"), NvFileKind::kBootloader);
  EXPECT_EQ(NvKindFromPath("/lib/firmware/nvidia/ad102/gsp/gsp-535.113.01.bin"), NvFileKind::kGspRm);
  // Compressed copies, as /lib/firmware may hold them.
  EXPECT_EQ(NvKindFromPath("/lib/firmware/nvidia/ad102/gsp/gsp-535.113.01.bin.zst"), NvFileKind::kGspRm);
  EXPECT_EQ(NvKindFromPath("/lib/firmware/nvidia/tu102/gr/fecs_inst.bin.xz"), NvFileKind::kFalconUcode);
  EXPECT_EQ(VersionFromPath("/x/booter_load-535.113.01.bin.xz"), "535.113.01");
  // Without a version they are not GSP-RM's names.
  EXPECT_EQ(NvKindFromPath("gsp-.bin"), std::nullopt);
  // amdgpu names are not NVIDIA's.
  EXPECT_EQ(NvKindFromPath("/lib/firmware/amdgpu/psp_13_0_0_sos.bin"), std::nullopt);
  EXPECT_EQ(NvKindFromPath("gc_11_0_0_mec.bin"), std::nullopt);
}

TEST(NvFileKindTest, OtherNamesOnlyUnderNvidia) {
  EXPECT_EQ(NvKindFromPath("/fw/nvidia/tu102/gr/fecs_inst.bin"), NvFileKind::kFalconUcode);
  EXPECT_EQ(NvKindFromPath("/fw/nvidia/gp102/sec2/image-1.bin"), NvFileKind::kFalconUcode);
  EXPECT_EQ(NvKindFromPath("/fw/nvidia/gp102/sec2/sig-1.bin"), NvFileKind::kSignature);
  EXPECT_EQ(NvKindFromPath("/fw/nvidia/ga102/gr/NET_img.bin"), NvFileKind::kNetlist);
  EXPECT_EQ(NvKindFromPath("/fw/nvidia/tu102/gr/sw_veid_bundle_init.bin"), NvFileKind::kRegisterList);
  EXPECT_EQ(NvKindFromPath("/fw/nvidia/gm20b/pmu/desc.bin"), NvFileKind::kDescriptor);
  EXPECT_EQ(NvKindFromPath("/fw/nvidia/tu10x/typec/ccg_boot.cyacd"), NvFileKind::kUsbcFirmware);
  EXPECT_EQ(NvKindFromPath("/fw/other/tu102/gr/fecs_inst.bin"), std::nullopt);
  EXPECT_EQ(NvKindFromPath("/fw/nvidia/tu102/gr/unknown.bin"), std::nullopt);
}

// acr/ucode_load.bin is raw falcon code for GM20x and an nvfw_bin_hdr container for GP102 and later.
TEST(NvFileKindTest, MagicMakesAContainer) {
  const std::string path = "/fw/nvidia/gp102/acr/ucode_load.bin";
  const Bytes container = Bytes(0x30).U32(0, 0x10de).U32(4, 1).U32(12, 0x18).U32(16, 0x20).U32(20, 0x10);
  EXPECT_EQ(DetectNvFile(path, container.str()), NvFileKind::kBinContainer);
  EXPECT_EQ(DetectNvFile(path, Bytes(0x30).U32(0, 0x3b1d14f0).str()), NvFileKind::kFalconUcode);
}

TEST(NvFileKindTest, ChipAndVersionFromThePath) {
  EXPECT_EQ(ChipFromPath("/lib/firmware/nvidia/ad102/gsp/gsp-535.113.01.bin"), "ad102");
  EXPECT_EQ(ChipFromPath("booter_load-535.113.01.bin"), "");
  EXPECT_EQ(VersionFromPath("/x/booter_unload-535.113.01.bin"), "535.113.01");
  EXPECT_EQ(VersionFromPath("/x/nvidia/tu102/gr/fecs_inst.bin"), "");
}

TEST(NvFileKindTest, ClassifiedFilesMustNotBeEmpty) {
  absl::StatusOr<NvFileInfo> info = DescribeNvFile("/fw/nvidia/tu102/gr/fecs_inst.bin", "", NvFileKind::kFalconUcode);
  ASSERT_FALSE(info.ok());
  EXPECT_TRUE(absl::StrContains(info.status().message(), "is empty")) << info.status();
  info = DescribeNvFile("/fw/nvidia/tu102/gr/fecs_inst.bin", "x", NvFileKind::kFalconUcode);
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->parsed);
  EXPECT_EQ(info->chip, "tu102");
}

TEST(NvRequirementsTest, ResolvesChipsLikeAmdNames) {
  absl::StatusOr<ChipTarget> ad102 = ResolveChipName("ad102");
  ASSERT_TRUE(ad102.ok()) << ad102.status();
  EXPECT_FALSE(ad102->is_virtual);
  EXPECT_EQ(ad102->profile.signature_section, ".fwsignature_ad10x");
  absl::StatusOr<ChipTarget> sim = ResolveChipName("sim:ad102:test");
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_TRUE(sim->is_virtual);
  EXPECT_EQ(sim->profile.name, "ad102");
  EXPECT_EQ(ResolveChipName("navi31").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ResolveChipName("sim:navi31").status().code(), absl::StatusCode::kNotFound);
  // nouveau 6.12's sig_section per family (tu116.c, ga100.c, ga102.c).
  EXPECT_EQ(FindChipProfile("tu117")->signature_section, ".fwsignature_tu11x");
  EXPECT_EQ(FindChipProfile("ga100")->signature_section, ".fwsignature_ga100");
  EXPECT_EQ(FindChipProfile("ga107")->signature_section, ".fwsignature_ga10x");
}

TEST(NvRequirementsTest, FourFilesPerChip) {
  std::vector<RequiredFile> files = RequiredFiles(*FindChipProfile("ga102"));
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].relative_path, "nvidia/ga102/gsp/gsp-535.113.01.bin");
  EXPECT_EQ(files[1].relative_path, "nvidia/ga102/gsp/booter_load-535.113.01.bin");
  EXPECT_EQ(files[2].relative_path, "nvidia/ga102/gsp/booter_unload-535.113.01.bin");
  EXPECT_EQ(files[3].relative_path, "nvidia/ga102/gsp/bootloader-535.113.01.bin");
}

TEST(NvRequirementsTest, ImageWithoutTheChipsSignatureIsRefused) {
  const ChipProfile tu102 = *FindChipProfile("tu102");
  const RequiredFile gsp = RequiredFiles(tu102)[0];
  NvFileInfo info;
  info.file = "gsp-535.113.01.bin";
  info.kind = NvFileKind::kGspRm;
  info.fw_version = "535.113.01";
  info.regions = {{".fwimage", 0x40, 0x10}, {".fwsignature_ad10x", 0x50, 0x10}, {".fwsignature_ga10x", 0x60, 0x10}};
  absl::Status status = CheckForChip(tu102, gsp, info);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "no .fwsignature_tu10x section for tu102 (the image signs for "
                                "ad10x, ga10x)"))
      << status;
  info.regions.push_back({".fwsignature_tu10x", 0x70, 0x10});
  EXPECT_TRUE(CheckForChip(tu102, gsp, info).ok());
  info.fw_version = "570.144";
  EXPECT_TRUE(absl::StrContains(CheckForChip(tu102, gsp, info).message(), ".fwversion says '570.144'"));
}

}  // namespace
}  // namespace firmware::nv
