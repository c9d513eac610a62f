#include "nv/gsp/fb_layout.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "nv/gsp/layouts.h"

namespace nv::gsp {
namespace {

constexpr uint64_t AlignDown(uint64_t value, uint64_t alignment) { return value / alignment * alignment; }
constexpr uint64_t AlignUp(uint64_t value, uint64_t alignment) { return AlignDown(value + alignment - 1, alignment); }

// `top - size`, refused where nouveau's unsigned arithmetic would wrap below address 0.
absl::StatusOr<uint64_t> Below(uint64_t top, uint64_t size, const char* piece, uint64_t fb_size) {
  if (size > top) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GSP-RM FB layout: %s (0x%x bytes) does not fit below 0x%x; FB size 0x%x (NV_USABLE_FB_SIZE_IN_MB) is too "
        "small for the WPR2 layout (check the FB size the driver read)",
        piece, size, top, fb_size));
  }
  return top - size;
}

}  // namespace

absl::StatusOr<VgaWorkspace> VgaWorkspaceFromRegister(uint64_t fb_size, std::optional<uint32_t> vga_workspace_base) {
  if (fb_size < kVgaWorkspaceDefaultSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "VGA workspace: FB size 0x%x is smaller than the 1 MiB workspace tu102_gsp_vga_workspace_addr reserves at "
        "its end (check NV_USABLE_FB_SIZE_IN_MB)",
        fb_size));
  }
  const uint64_t base = fb_size - kVgaWorkspaceDefaultSize;
  uint64_t offset = base;
  if (vga_workspace_base.has_value() && (*vga_workspace_base & kVgaWorkspaceBaseStatusValid) != 0) {
    const uint64_t addr = uint64_t{*vga_workspace_base & kVgaWorkspaceBaseAddrMask} << kVgaWorkspaceBaseAddrShift;
    if (addr < base) {
      offset = fb_size - kVgaWorkspaceFallbackSize;
    } else if (addr > fb_size) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "VGA workspace: NV_PDISP_VGA_WORKSPACE_BASE (0x%x) = 0x%08x puts the workspace at 0x%x, past the end of "
          "FB (0x%x); the register or the FB size is wrong",
          kNvPdispVgaWorkspaceBase, *vga_workspace_base, addr, fb_size));
    } else {
      offset = addr;
    }
  }
  return VgaWorkspace{offset, fb_size - offset};
}

uint64_t WprHeapSize(uint64_t fb_size, const WprHeapParams& heap) {
  // DIV_ROUND_UP without the overflow of fb_size + granule - 1.
  const uint64_t fb_size_gb = fb_size / kFbSizeGranule + (fb_size % kFbSizeGranule != 0 ? 1 : 0);
  const uint64_t size = heap.os_carveout_size + heap.base_size +
                        AlignUp(kGspFwHeapParamSizePerGbFb * fb_size_gb, kHeapSizeRounding) +
                        AlignUp(kGspFwHeapParamClientAllocSize, kHeapSizeRounding);
  return std::max(size, heap.min_size);
}

absl::StatusOr<FbLayout> ComputeFbLayout(const FbLayoutInputs& in) {
  if (in.boot_bin_size == 0 || in.gsp_fw_size == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GSP-RM FB layout: boot binary size %d and GSP-RM image size %d must both be non-zero (the bootloader's "
        "nvfw_bin_hdr.data_size, the GSP-RM ELF's .fwimage size)",
        in.boot_bin_size, in.gsp_fw_size));
  }
  if (in.vga_workspace.offset > in.fb_size || in.vga_workspace.size != in.fb_size - in.vga_workspace.offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GSP-RM FB layout: the VGA workspace 0x%x + 0x%x does not end at the end of FB (0x%x); take it from "
        "VgaWorkspaceFromRegister with the same FB size",
        in.vga_workspace.offset, in.vga_workspace.size, in.fb_size));
  }
  FbLayout l;
  l.fbSize = in.fb_size;
  l.vgaWorkspaceOffset = in.vga_workspace.offset;
  l.vgaWorkspaceSize = in.vga_workspace.size;
  // fb.bios.addr is the VGA workspace (tu102_gsp_oneinit); FRTS ends at its 128 KiB-aligned start.
  l.gspFwWprEnd = AlignDown(l.vgaWorkspaceOffset, kWprEndAlignment);
  l.frtsSize = kFrtsSize;
  BAREGPU_ASSIGN_OR_RETURN(l.frtsOffset, Below(l.gspFwWprEnd, l.frtsSize, "FRTS", l.fbSize));
  l.bootBinSize = in.boot_bin_size;
  BAREGPU_ASSIGN_OR_RETURN(const uint64_t boot, Below(l.frtsOffset, l.bootBinSize, "the boot binary", l.fbSize));
  l.bootBinOffset = AlignDown(boot, kBootBinAlignment);
  l.gspFwSize = in.gsp_fw_size;
  BAREGPU_ASSIGN_OR_RETURN(const uint64_t elf, Below(l.bootBinOffset, l.gspFwSize, "the GSP-RM ELF", l.fbSize));
  l.gspFwOffset = AlignDown(elf, kGspFwAlignment);
  // The heap gets what lies between its 1 MiB-aligned start and the ELF, rounded down to whole MiB.
  const uint64_t heap_size = WprHeapSize(l.fbSize, in.heap);
  BAREGPU_ASSIGN_OR_RETURN(const uint64_t heap, Below(l.gspFwOffset, heap_size, "the GSP-RM heap", l.fbSize));
  l.gspFwHeapOffset = AlignDown(heap, kHeapAlignment);
  l.gspFwHeapSize = AlignDown(l.gspFwOffset - l.gspFwHeapOffset, kHeapAlignment);
  BAREGPU_ASSIGN_OR_RETURN(const uint64_t wpr,
                           Below(l.gspFwHeapOffset, sizeof(GspFwWprMeta), "GspFwWprMeta", l.fbSize));
  l.gspFwWprStart = AlignDown(wpr, kHeapAlignment);
  l.wpr2Size = l.frtsOffset + l.frtsSize - l.gspFwWprStart;
  l.nonWprHeapSize = kNonWprHeapSize;
  BAREGPU_ASSIGN_OR_RETURN(l.nonWprHeapOffset, Below(l.gspFwWprStart, l.nonWprHeapSize, "the non-WPR heap", l.fbSize));
  l.gspFwRsvdStart = l.nonWprHeapOffset;
  BAREGPU_RETURN_IF_ERROR(CheckFbLayout(l));
  return l;
}

absl::Status CheckFbLayout(const FbLayout& l) {
  struct Piece {
    const char* name;
    uint64_t offset;
    uint64_t size;
    uint64_t alignment;
  };
  // Bottom up, as in gsp_fw_wpr_meta.h's picture; each piece must end at or below the next one's start.
  const Piece pieces[] = {
      {"non-WPR heap (nonWprHeapOffset)", l.nonWprHeapOffset, l.nonWprHeapSize, 1},
      {"GspFwWprMeta (gspFwWprStart)", l.gspFwWprStart, sizeof(GspFwWprMeta), kHeapAlignment},
      {"GSP-RM heap (gspFwHeapOffset)", l.gspFwHeapOffset, l.gspFwHeapSize, kHeapAlignment},
      {"GSP-RM ELF (gspFwOffset)", l.gspFwOffset, l.gspFwSize, kGspFwAlignment},
      {"boot binary (bootBinOffset)", l.bootBinOffset, l.bootBinSize, kBootBinAlignment},
      {"FRTS (frtsOffset)", l.frtsOffset, l.frtsSize, kWprEndAlignment},
      {"VGA workspace (vgaWorkspaceOffset)", l.vgaWorkspaceOffset, l.vgaWorkspaceSize, 1},
  };
  uint64_t floor = 0;
  const char* below = "the start of FB";
  for (const Piece& p : pieces) {
    if (p.offset % p.alignment != 0) {
      return absl::FailedPreconditionError(
          absl::StrFormat("GSP-RM FB layout: %s at 0x%x is not aligned to 0x%x", p.name, p.offset, p.alignment));
    }
    if (p.offset < floor) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "GSP-RM FB layout: %s at 0x%x overlaps %s, which ends at 0x%x", p.name, p.offset, below, floor));
    }
    if (p.offset > l.fbSize || p.size > l.fbSize - p.offset) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "GSP-RM FB layout: %s 0x%x + 0x%x runs past the end of FB (0x%x)", p.name, p.offset, p.size, l.fbSize));
    }
    floor = p.offset + p.size;
    below = p.name;
  }
  // The pieces nouveau places edge to edge.
  if (l.nonWprHeapOffset + l.nonWprHeapSize != l.gspFwWprStart || l.gspFwRsvdStart != l.nonWprHeapOffset) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "GSP-RM FB layout: the non-WPR heap 0x%x + 0x%x (gspFwRsvdStart 0x%x) does not end at gspFwWprStart 0x%x",
        l.nonWprHeapOffset, l.nonWprHeapSize, l.gspFwRsvdStart, l.gspFwWprStart));
  }
  if (l.frtsOffset + l.frtsSize != l.gspFwWprEnd || l.gspFwWprEnd % kWprEndAlignment != 0 ||
      l.gspFwWprEnd > l.vgaWorkspaceOffset) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "GSP-RM FB layout: FRTS 0x%x + 0x%x does not end at gspFwWprEnd 0x%x, the 128 KiB-aligned start of the VGA "
        "workspace 0x%x",
        l.frtsOffset, l.frtsSize, l.gspFwWprEnd, l.vgaWorkspaceOffset));
  }
  if (l.gspFwWprStart + l.wpr2Size != l.gspFwWprEnd) {
    return absl::FailedPreconditionError(
        absl::StrFormat("GSP-RM FB layout: WPR2 0x%x + 0x%x does not end at gspFwWprEnd 0x%x", l.gspFwWprStart,
                        l.wpr2Size, l.gspFwWprEnd));
  }
  if (l.vgaWorkspaceOffset + l.vgaWorkspaceSize != l.fbSize) {
    return absl::FailedPreconditionError(
        absl::StrFormat("GSP-RM FB layout: the VGA workspace 0x%x + 0x%x does not end at the end of FB 0x%x",
                        l.vgaWorkspaceOffset, l.vgaWorkspaceSize, l.fbSize));
  }
  return absl::OkStatus();
}

}  // namespace nv::gsp
