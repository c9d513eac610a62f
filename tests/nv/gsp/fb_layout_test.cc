// The WPR2 layout against values worked out by hand from nouveau's formulas (Linux 6.12 r535.c r535_gsp_oneinit,
// tu102.c tu102_gsp_vga_workspace_addr, gsp_fw_heap.h): the arithmetic is in the comments, never in the code under
// test.
#include "nv/gsp/fb_layout.h"

#include "gtest/gtest.h"
#include "nv/gsp/layouts.h"

namespace nv::gsp {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;
// The real 535.113.01 files (readelf -S gsp-535.113.01.bin: .fwimage size 0x2448000; xxd of
// ad102/gsp/bootloader-535.113.01.bin: nvfw_bin_hdr.data_size 0x8000).
constexpr uint64_t kRealGspFwSize = 0x2448000;
constexpr uint64_t kRealAd102BootBinSize = 0x8000;

TEST(FbLayoutTest, UsableFbSizeRegisterIsMiB) {
  // 24576 MiB << 20 = 24 GiB (ga102_fb_vidmem_size).
  EXPECT_EQ(FbSizeFromUsableFbSizeInMb(24576), 0x600000000u);
}

TEST(FbLayoutTest, VgaWorkspaceWithoutDisplayIsTheLastMiB) {
  // No display engine: nouveau reads nothing; base = 0x600000000 - 0x100000.
  absl::StatusOr<VgaWorkspace> vga = VgaWorkspaceFromRegister(24 * kGiB, std::nullopt);
  ASSERT_TRUE(vga.ok()) << vga.status();
  EXPECT_EQ(vga->offset, 0x5fff00000u);
  EXPECT_EQ(vga->size, 0x100000u);
  // STATUS (bit 3) clear: the same default, whatever ADDR holds.
  vga = VgaWorkspaceFromRegister(24 * kGiB, 0x05ffff01);
  ASSERT_TRUE(vga.ok()) << vga.status();
  EXPECT_EQ(vga->offset, 0x5fff00000u);
}

TEST(FbLayoutTest, VgaWorkspaceFromAValidRegister) {
  // 10 GiB = 0x280000000; register 0x027ff108: STATUS valid (bit 3), ADDR (0x027ff100) << 8 = 0x27ff10000, at or
  // above base 0x27ff00000, so the workspace starts there: 0x280000000 - 0x27ff10000 = 0xf0000 bytes.
  absl::StatusOr<VgaWorkspace> vga = VgaWorkspaceFromRegister(10 * kGiB, 0x027ff108);
  ASSERT_TRUE(vga.ok()) << vga.status();
  EXPECT_EQ(vga->offset, 0x27ff10000u);
  EXPECT_EQ(vga->size, 0xf0000u);
  // ADDR below base (0x00001000 << 8 = 0x100000): the last 128 KiB, 0x600000000 - 0x20000 = 0x5fffe0000.
  vga = VgaWorkspaceFromRegister(24 * kGiB, 0x00001008);
  ASSERT_TRUE(vga.ok()) << vga.status();
  EXPECT_EQ(vga->offset, 0x5fffe0000u);
  EXPECT_EQ(vga->size, 0x20000u);
}

TEST(FbLayoutTest, VgaWorkspaceErrors) {
  // Less FB than the 1 MiB default workspace.
  absl::StatusOr<VgaWorkspace> vga = VgaWorkspaceFromRegister(0x80000, std::nullopt);
  ASSERT_FALSE(vga.ok());
  EXPECT_EQ(vga.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(vga.status().message().find("NV_USABLE_FB_SIZE_IN_MB"), absl::string_view::npos) << vga.status();
  // ADDR past FB: 0xffffff00 << 8 = 0xffffff0000 > 24 GiB.
  vga = VgaWorkspaceFromRegister(24 * kGiB, 0xffffff08);
  ASSERT_FALSE(vga.ok());
  EXPECT_NE(vga.status().message().find("NV_PDISP_VGA_WORKSPACE_BASE"), absl::string_view::npos) << vga.status();
}

TEST(FbLayoutTest, HeapSizeFromGspFwHeapH) {
  // 24 GiB: 20 MiB + 8 MiB + ALIGN(96 KiB * 24 = 2304 KiB, 1 MiB) = 3 MiB + ALIGN(48 KiB * 2048 = 96 MiB, 1 MiB)
  // = 127 MiB = 0x7f00000, above the 84 MiB minimum.
  EXPECT_EQ(WprHeapSize(24 * kGiB, kAd102WprHeap), 127 * kMiB);
  // 10 GiB: 96 KiB * 10 = 960 KiB -> 1 MiB: 20 + 8 + 1 + 96 = 125 MiB.
  EXPECT_EQ(WprHeapSize(10 * kGiB, kGa102WprHeap), 125 * kMiB);
  // 24 GiB + 1 byte counts as 25 GB: 96 KiB * 25 = 2400 KiB -> 3 MiB still: 127 MiB.
  EXPECT_EQ(WprHeapSize(24 * kGiB + 1, kAd102WprHeap), 127 * kMiB);
  // 33 GiB: 96 KiB * 33 = 3168 KiB -> 4 MiB: 128 MiB.
  EXPECT_EQ(WprHeapSize(33 * kGiB, kAd102WprHeap), 128 * kMiB);
  // Past nouveau's 32-bit wrap (43690 GiB), on purpose: the sizes stay exact.
  // The largest FB NV_USABLE_FB_SIZE_IN_MB can state (0xffffffff MiB, just under 4 PiB = 4194304 GiB, so 4194304 GB
  // rounded up): 96 KiB * 4194304 = 384 GiB of per-GB heap, plus 20 + 8 + 96 MiB.
  EXPECT_EQ(WprHeapSize(FbSizeFromUsableFbSizeInMb(0xffffffff), kAd102WprHeap), 384 * kGiB + 124 * kMiB);
  // No overflow near 2^64: (2^64 - 1) / 2^30 rounded up = 2^34 GB; 96 KiB * 2^34 = 96 * 2^44 = 3 * 2^49.
  EXPECT_EQ(WprHeapSize(~uint64_t{0}, kAd102WprHeap), (uint64_t{3} << 49) + 124 * kMiB);
  // A minimum above the sum wins (no nouveau chip has one: the client part alone is 96 MiB).
  EXPECT_EQ(WprHeapSize(24 * kGiB, WprHeapParams{0, 0, 256 * kMiB}), 256 * kMiB);
  // The chips' parameters are gsp_fw_heap.h's (ad102.c: 20 << 20, 8 << 20, 84 << 20).
  EXPECT_EQ(kAd102WprHeap.os_carveout_size, 20 * kMiB);
  EXPECT_EQ(kAd102WprHeap.base_size, 8 * kMiB);
  EXPECT_EQ(kAd102WprHeap.min_size, 84 * kMiB);
}

// The virtual AD102: 24 GiB, no VGA workspace register, the real bootloader and GSP-RM image.
TEST(FbLayoutTest, Ad102With24GiB) {
  FbLayoutInputs in;
  in.fb_size = 24 * kGiB;  // 0x600000000
  in.vga_workspace = {0x5fff00000, 0x100000};
  in.boot_bin_size = kRealAd102BootBinSize;
  in.gsp_fw_size = kRealGspFwSize;
  in.heap = kAd102WprHeap;
  absl::StatusOr<FbLayout> l = ComputeFbLayout(in);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->fbSize, 0x600000000u);
  EXPECT_EQ(l->vgaWorkspaceOffset, 0x5fff00000u);
  EXPECT_EQ(l->vgaWorkspaceSize, 0x100000u);
  // gspFwWprEnd = ALIGN_DOWN(0x5fff00000, 0x20000) = 0x5fff00000 (0xf00000 = 120 * 0x20000).
  EXPECT_EQ(l->gspFwWprEnd, 0x5fff00000u);
  // frts = 0x5fff00000 - 0x100000.
  EXPECT_EQ(l->frtsOffset, 0x5ffe00000u);
  EXPECT_EQ(l->frtsSize, 0x100000u);
  // boot = ALIGN_DOWN(0x5ffe00000 - 0x8000 = 0x5ffdf8000, 0x1000).
  EXPECT_EQ(l->bootBinOffset, 0x5ffdf8000u);
  EXPECT_EQ(l->bootBinSize, 0x8000u);
  // elf = ALIGN_DOWN(0x5ffdf8000 - 0x2448000 = 0x5fd9b0000, 0x10000).
  EXPECT_EQ(l->gspFwOffset, 0x5fd9b0000u);
  EXPECT_EQ(l->gspFwSize, 0x2448000u);
  // heap = ALIGN_DOWN(0x5fd9b0000 - 0x7f00000 = 0x5f5ab0000, 0x100000) = 0x5f5a00000;
  // size = ALIGN_DOWN(0x5fd9b0000 - 0x5f5a00000 = 0x7fb0000, 0x100000) = 0x7f00000.
  EXPECT_EQ(l->gspFwHeapOffset, 0x5f5a00000u);
  EXPECT_EQ(l->gspFwHeapSize, 0x7f00000u);
  // wpr2 = ALIGN_DOWN(0x5f5a00000 - 256 = 0x5f59fff00, 0x100000) = 0x5f5900000;
  // size = 0x5ffe00000 + 0x100000 - 0x5f5900000 = 0xa600000.
  EXPECT_EQ(l->gspFwWprStart, 0x5f5900000u);
  EXPECT_EQ(l->wpr2Size, 0xa600000u);
  // non-WPR heap: 0x5f5900000 - 0x100000.
  EXPECT_EQ(l->nonWprHeapOffset, 0x5f5800000u);
  EXPECT_EQ(l->nonWprHeapSize, 0x100000u);
  EXPECT_EQ(l->gspFwRsvdStart, 0x5f5800000u);
  EXPECT_TRUE(CheckFbLayout(*l).ok());
}

// A 10 GiB GA102 whose VGA workspace register is valid and not 128 KiB aligned, with a boot binary that is not a
// whole number of pages: every ALIGN_DOWN moves something.
TEST(FbLayoutTest, Ga102With10GiBAndAValidVgaWorkspace) {
  FbLayoutInputs in;
  in.fb_size = 10 * kGiB;                     // 0x280000000
  in.vga_workspace = {0x27ff10000, 0xf0000};  // VgaWorkspaceFromRegister(10 GiB, 0x027ff108)
  in.boot_bin_size = 0x6e38;
  in.gsp_fw_size = kRealGspFwSize;
  in.heap = kGa102WprHeap;
  absl::StatusOr<FbLayout> l = ComputeFbLayout(in);
  ASSERT_TRUE(l.ok()) << l.status();
  // gspFwWprEnd = ALIGN_DOWN(0x27ff10000, 0x20000) = 0x27ff00000: a 64 KiB gap below the workspace.
  EXPECT_EQ(l->gspFwWprEnd, 0x27ff00000u);
  EXPECT_EQ(l->frtsOffset, 0x27fe00000u);
  // boot = ALIGN_DOWN(0x27fe00000 - 0x6e38 = 0x27fdf91c8, 0x1000) = 0x27fdf9000.
  EXPECT_EQ(l->bootBinOffset, 0x27fdf9000u);
  // elf = ALIGN_DOWN(0x27fdf9000 - 0x2448000 = 0x27d9b1000, 0x10000) = 0x27d9b0000.
  EXPECT_EQ(l->gspFwOffset, 0x27d9b0000u);
  // heap 125 MiB = 0x7d00000: ALIGN_DOWN(0x27d9b0000 - 0x7d00000 = 0x275cb0000, 1 MiB) = 0x275c00000;
  // size ALIGN_DOWN(0x27d9b0000 - 0x275c00000 = 0x7db0000, 1 MiB) = 0x7d00000.
  EXPECT_EQ(l->gspFwHeapOffset, 0x275c00000u);
  EXPECT_EQ(l->gspFwHeapSize, 0x7d00000u);
  // wpr2 = ALIGN_DOWN(0x275c00000 - 256, 1 MiB) = 0x275b00000; size 0x27fe00000 + 0x100000 - 0x275b00000.
  EXPECT_EQ(l->gspFwWprStart, 0x275b00000u);
  EXPECT_EQ(l->wpr2Size, 0xa400000u);
  EXPECT_EQ(l->nonWprHeapOffset, 0x275a00000u);
  EXPECT_EQ(l->gspFwRsvdStart, 0x275a00000u);
  EXPECT_EQ(l->vgaWorkspaceOffset, 0x27ff10000u);
  EXPECT_EQ(l->vgaWorkspaceSize, 0xf0000u);
}

TEST(FbLayoutTest, FbTooSmallNamesThePieceThatDoesNotFit) {
  // 128 MiB: wprEnd 0x7f00000, FRTS 0x7e00000, boot 0x7df8000, ELF ALIGN_DOWN(0x7df8000 - 0x2448000) = 0x59b0000,
  // and the 125 MiB heap (0x7d00000) does not fit below 0x59b0000.
  FbLayoutInputs in;
  in.fb_size = 128 * kMiB;
  in.vga_workspace = {128 * kMiB - 0x100000, 0x100000};
  in.boot_bin_size = kRealAd102BootBinSize;
  in.gsp_fw_size = kRealGspFwSize;
  absl::StatusOr<FbLayout> l = ComputeFbLayout(in);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(l.status().message().find("GSP-RM heap"), absl::string_view::npos) << l.status();
  EXPECT_NE(l.status().message().find("too small"), absl::string_view::npos) << l.status();

  // 16 MiB: the 36 MiB ELF itself does not fit.
  in.fb_size = 16 * kMiB;
  in.vga_workspace = {16 * kMiB - 0x100000, 0x100000};
  l = ComputeFbLayout(in);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("GSP-RM ELF"), absl::string_view::npos) << l.status();
}

TEST(FbLayoutTest, BadInputs) {
  FbLayoutInputs in;
  in.fb_size = 24 * kGiB;
  in.vga_workspace = {0x5fff00000, 0x100000};
  in.boot_bin_size = 0;
  in.gsp_fw_size = kRealGspFwSize;
  EXPECT_EQ(ComputeFbLayout(in).status().code(), absl::StatusCode::kInvalidArgument);
  in.boot_bin_size = kRealAd102BootBinSize;
  in.vga_workspace = {0x5fff00000, 0x10000};  // does not reach the end of FB
  absl::StatusOr<FbLayout> l = ComputeFbLayout(in);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("VGA workspace"), absl::string_view::npos) << l.status();
}

TEST(FbLayoutTest, CheckFindsOverlapAndMisalignment) {
  FbLayoutInputs in;
  in.fb_size = 24 * kGiB;
  in.vga_workspace = {0x5fff00000, 0x100000};
  in.boot_bin_size = kRealAd102BootBinSize;
  in.gsp_fw_size = kRealGspFwSize;
  absl::StatusOr<FbLayout> good = ComputeFbLayout(in);
  ASSERT_TRUE(good.ok()) << good.status();

  FbLayout overlap = *good;
  overlap.gspFwOffset += 0x10000;  // the ELF now runs 0x10000 into the boot binary (0x5fd9b0000 + 0x2448000 was
                                   // 0x5ffdf8000, exactly bootBinOffset)
  absl::Status st = CheckFbLayout(overlap);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("boot binary"), absl::string_view::npos) << st;
  EXPECT_NE(st.message().find("overlaps"), absl::string_view::npos) << st;

  FbLayout misaligned = *good;
  misaligned.gspFwHeapOffset += 0x1000;
  st = CheckFbLayout(misaligned);
  EXPECT_NE(st.message().find("not aligned"), absl::string_view::npos) << st;

  FbLayout past_end = *good;
  past_end.vgaWorkspaceSize += 1;
  EXPECT_FALSE(CheckFbLayout(past_end).ok());
}

}  // namespace
}  // namespace nv::gsp
