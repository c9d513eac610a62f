// Where GSP-RM and what boots it go in video memory: the WPR2 layout the driver computes before FWSEC-FRTS and the
// booter run, and which GspFwWprMeta carries to the booter. The arithmetic is Linux 6.12 nouveau's for GA102 and
// AD102: nvkm/subdev/gsp/tu102.c (tu102_gsp_oneinit, tu102_gsp_vga_workspace_addr: the FB size and the VGA
// workspace; both chips' .oneinit), nvkm/subdev/gsp/r535.c (r535_gsp_oneinit: "Calculate FB layout";
// r535_gsp_wpr_meta_init: gspFwWprEnd) and the chips' wpr_heap parameters (ga102.c, ad102.c
// ga102/ad102_gsp_r535_113_01). The picture of the layout is NVIDIA's, in the comment of
// nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_wpr_meta.h (open-gpu-kernel-modules 535.113.01):
//
//   fbSize ............................ end of FB
//   VGA workspace ..................... vgaWorkspaceOffset
//   (alignment gap)
//   gspFwWprEnd ....................... 128 KiB aligned
//   FRTS (FWSEC-FRTS writes it) ....... frtsOffset
//   boot binary (GSP-RM's bootloader)  bootBinOffset
//   GSP-RM ELF (.fwimage) ............. gspFwOffset
//   GSP-RM (WPR) heap ................. gspFwHeapOffset
//   GspFwWprMeta (the booter puts it) . gspFwWprStart
//   non-WPR heap ...................... nonWprHeapOffset = gspFwRsvdStart
//
// Everything here is arithmetic over numbers the caller read (no device access).
#ifndef BAREGPU_NV_GSP_FB_LAYOUT_H_
#define BAREGPU_NV_GSP_FB_LAYOUT_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nv::gsp {

// nvidia/inc/kernel/gpu/gsp/gsp_fw_heap.h (535.113.01): the inputs of the WPR heap's size.
inline constexpr uint64_t kGspFwHeapParamOsSizeLibos3 = uint64_t{20} << 20;    // GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS3
inline constexpr uint64_t kGspFwHeapParamBaseRmSizeTu10x = uint64_t{8} << 20;  // ..._BASE_RM_SIZE_TU10X (to Ada)
inline constexpr uint64_t kGspFwHeapParamSizePerGbFb = uint64_t{96} << 10;     // GSP_FW_HEAP_PARAM_SIZE_PER_GB_FB
// GSP_FW_HEAP_PARAM_CLIENT_ALLOC_SIZE: 48 KiB for each of 2048 channels.
inline constexpr uint64_t kGspFwHeapParamClientAllocSize = (uint64_t{48} << 10) * 2048;
// GSP_FW_HEAP_SIZE_OVERRIDE_LIBOS3_BAREMETAL_MIN_MB, in bytes.
inline constexpr uint64_t kGspFwHeapSizeLibos3BaremetalMin = uint64_t{84} << 20;

// A chip's WPR heap parameters (nouveau's nvkm_gsp_func.wpr_heap).
struct WprHeapParams {
  uint64_t os_carveout_size = 0;
  uint64_t base_size = 0;
  uint64_t min_size = 0;
};

// ga102.c ga102_gsp_r535_113_01 and ad102.c ad102_gsp_r535_113_01: 20 MiB, 8 MiB, 84 MiB, which are gsp_fw_heap.h's
// LibOS3 OS size, Turing-to-Ada base RM size and LibOS3 bare-metal minimum.
inline constexpr WprHeapParams kGa102WprHeap{kGspFwHeapParamOsSizeLibos3, kGspFwHeapParamBaseRmSizeTu10x,
                                             kGspFwHeapSizeLibos3BaremetalMin};
inline constexpr WprHeapParams kAd102WprHeap = kGa102WprHeap;

// nouveau's fixed sizes and alignments of the layout (r535_gsp_oneinit; no NVIDIA header states them, except that
// gsp_fw_wpr_meta.h's picture calls gspFwWprEnd 128K aligned).
inline constexpr uint64_t kFrtsSize = 0x100000;                // gsp->fb.wpr2.frts.size
inline constexpr uint64_t kWprEndAlignment = 0x20000;          // frts.addr and gspFwWprEnd: ALIGN_DOWN(.., 0x20000)
inline constexpr uint64_t kBootBinAlignment = 0x1000;          // wpr2.boot.addr
inline constexpr uint64_t kGspFwAlignment = 0x10000;           // wpr2.elf.addr
inline constexpr uint64_t kHeapAlignment = 0x100000;           // wpr2.heap.addr and .size, wpr2.addr
inline constexpr uint64_t kHeapSizeRounding = 1 << 20;         // ALIGN(..., 1 << 20) of the heap's per-GB/client parts
inline constexpr uint64_t kNonWprHeapSize = 0x100000;          // gsp->fb.heap.size
inline constexpr uint64_t kFbSizeGranule = uint64_t{1} << 30;  // fb_size_gb = DIV_ROUND_UP(fb size, 1 << 30)

// tu102_gsp_vga_workspace_addr: without a valid workspace register the VGA workspace is the last MiB of FB; with
// one below that, the last 128 KiB.
inline constexpr uint64_t kVgaWorkspaceDefaultSize = 0x100000;
inline constexpr uint64_t kVgaWorkspaceFallbackSize = 0x20000;

// NV_PDISP_VGA_WORKSPACE_BASE (BAR0 0x625f04; open-gpu-doc manuals/ampere/ga102/dev_display_withoffset.ref.txt:
// STATUS 3:3 with VALID = 1, ADDR 31:8). nouveau reads it only when the chip has a display engine.
inline constexpr uint32_t kNvPdispVgaWorkspaceBase = 0x625f04;
inline constexpr uint32_t kVgaWorkspaceBaseStatusValid = 1u << 3;  // STATUS (3:3) == VALID
inline constexpr uint32_t kVgaWorkspaceBaseAddrMask = 0xffffff00;  // ADDR (31:8)
// tu102_gsp_vga_workspace_addr: `(addr & 0xffffff00) << 8`, i.e. ADDR counts 64 KiB units.
inline constexpr int kVgaWorkspaceBaseAddrShift = 8;

// NV_USABLE_FB_SIZE_IN_MB (BAR0 0x1183a4, nv/regs ad102.h): the FB size in MiB (ga102_fb_vidmem_size: value << 20).
inline constexpr int kUsableFbSizeShift = 20;

inline constexpr uint64_t FbSizeFromUsableFbSizeInMb(uint32_t usable_fb_size_in_mb) {
  return uint64_t{usable_fb_size_in_mb} << kUsableFbSizeShift;
}

struct VgaWorkspace {
  uint64_t offset = 0;  // from the start of FB
  uint64_t size = 0;    // to the end of FB
};

// tu102_gsp_vga_workspace_addr and tu102_gsp_oneinit: `vga_workspace_base` is NV_PDISP_VGA_WORKSPACE_BASE as read,
// or nullopt on a chip without a display engine (nouveau then reads nothing). The workspace runs to the end of FB.
// InvalidArgument when fb_size is smaller than the default 1 MiB workspace or the register's address lies past FB.
absl::StatusOr<VgaWorkspace> VgaWorkspaceFromRegister(uint64_t fb_size, std::optional<uint32_t> vga_workspace_base);

// GSP-RM's heap in WPR2 (r535_gsp_oneinit): os carveout + base + per-GB part + client part, at least min_size.
// nouveau multiplies the per-GB part in 32 bits (u32 fb_size_gb times an int), which wraps past 43690 GiB of FB;
// this computes it in 64 bits, so the two agree for every FB below that.
uint64_t WprHeapSize(uint64_t fb_size, const WprHeapParams& heap);

struct FbLayoutInputs {
  uint64_t fb_size = 0;        // bytes: FbSizeFromUsableFbSizeInMb(NV_USABLE_FB_SIZE_IN_MB)
  VgaWorkspace vga_workspace;  // VgaWorkspaceFromRegister
  uint64_t boot_bin_size = 0;  // the bootloader's payload (nvfw_bin_hdr.data_size): gsp->boot.fw.size
  uint64_t gsp_fw_size = 0;    // the GSP-RM ELF's .fwimage section size: gsp->fw.len
  WprHeapParams heap = kAd102WprHeap;
};

// Every offset and size GspFwWprMeta's FB members take (r535_gsp_wpr_meta_init), named after them, plus WPR2's size.
struct FbLayout {
  uint64_t fbSize = 0;
  uint64_t vgaWorkspaceOffset = 0;
  uint64_t vgaWorkspaceSize = 0;
  uint64_t gspFwWprEnd = 0;  // ALIGN_DOWN(vgaWorkspaceOffset, 128 KiB)
  uint64_t frtsOffset = 0;
  uint64_t frtsSize = 0;
  uint64_t bootBinOffset = 0;
  uint64_t bootBinSize = 0;  // GspFwWprMeta.sizeOfBootloader
  uint64_t gspFwOffset = 0;
  uint64_t gspFwSize = 0;  // GspFwWprMeta.sizeOfRadix3Elf
  uint64_t gspFwHeapOffset = 0;
  uint64_t gspFwHeapSize = 0;
  uint64_t gspFwWprStart = 0;
  uint64_t wpr2Size = 0;  // gspFwWprStart to the end of FRTS (nouveau's gsp->fb.wpr2.size; not in GspFwWprMeta)
  uint64_t nonWprHeapOffset = 0;
  uint64_t nonWprHeapSize = 0;
  uint64_t gspFwRsvdStart = 0;  // = nonWprHeapOffset
};

// r535_gsp_oneinit's layout, top down from the VGA workspace. Where nouveau would wrap around below address 0 (an FB
// too small for the pieces), InvalidArgument names the piece and the sizes; the result passes CheckFbLayout.
absl::StatusOr<FbLayout> ComputeFbLayout(const FbLayoutInputs& in);

// A layout is consistent when every piece lies inside FB, in the order of the picture above without overlap
// (GspFwWprMeta fits between gspFwWprStart and the heap), and each start has the alignment nouveau gives it.
// FailedPrecondition names the first violation.
absl::Status CheckFbLayout(const FbLayout& layout);

}  // namespace nv::gsp

#endif  // BAREGPU_NV_GSP_FB_LAYOUT_H_
