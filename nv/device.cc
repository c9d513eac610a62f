#include "nv/device.h"

#include <linux/pci_regs.h>

#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "firmware/nv/gsp_elf.h"
#include "firmware/nv/requirements.h"
#include "firmware/nv/riscv_desc.h"
#include "firmware/store.h"
#include "nv/falcon.h"
#include "nv/regs/ad102.h"
#include "pci/open.h"

namespace nv {
namespace {

namespace r = regs::ad102;

// PCI vendor id of NVIDIA (PCI ID database; firmware/nv/virtual_vbios.h's kNvidiaVendorId is the virtual board's).
constexpr uint16_t kNvidiaVendorId = 0x10de;
// NV_PMC_BOOT_42.ARCHITECTURE of Ada (AD10x), as nouveau's nvkm_device_ctor and tinygrad's NVDev read it (0x19: "AD1"),
// and AD102's implementation.
constexpr uint32_t kArchitectureAd100 = 0x19;
constexpr uint32_t kImplementationAd102 = r::NV_PMC_BOOT_42::IMPLEMENTATION_2;
// A BAR0 read that failed on the priv ring reads 0xbadXXXXX (RM's test, 535.113.01 flcnretval.h
// FLCN_BAR0_PRIV_PRI_ERROR_MASK 0xfff00000 / FLCN_BAR0_PRIV_PRI_ERROR_CODE 0xbad00000): the unit is absent or off.
constexpr uint32_t kPriErrorMask = 0xfff00000;
constexpr uint32_t kPriErrorCode = 0xbad00000;
// Where the FWSEC image goes before the GSP falcon's DMA reads it: the first bytes of FB, below everything the WPR2
// layout places at the top (tinygrad's NV_FLCN.prep_ucode puts it in FB the same way, from its boot allocator).
constexpr uint64_t kFwsecImageFbOffset = 0;
constexpr absl::Duration kGfwPoll = absl::Milliseconds(1);

bool IsPriError(uint32_t value) { return (value & kPriErrorMask) == kPriErrorCode; }

}  // namespace

bool Device::IsNvidia(pci::Device& pci) {
  absl::StatusOr<uint16_t> vendor = pci.ReadConfig16(PCI_VENDOR_ID);
  return vendor.ok() && *vendor == kNvidiaVendorId;
}

absl::StatusOr<std::unique_ptr<Device>> Device::Open(absl::string_view name, DeviceOptions options) {
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> pci, pci::Open(name));
  return Open(std::move(pci), options);
}

absl::StatusOr<std::unique_ptr<Device>> Device::Open(std::unique_ptr<pci::Device> pci, DeviceOptions options) {
  if (!IsNvidia(*pci)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is not an NVIDIA GPU (PCI vendor id is not 0x%04x)", pci->name(), kNvidiaVendorId));
  }
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio bar0, pci->MapMmio(0));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> bar1, pci->MapMemory(1));
  // Memory decode for the BARs, bus mastering for the falcons' DMA (tinygrad's NVDev._early_ip_init sets
  // PCI_COMMAND_MASTER; a function reset clears both).
  BAREGPU_ASSIGN_OR_RETURN(const uint16_t command, pci->ReadConfig16(PCI_COMMAND));
  BAREGPU_RETURN_IF_ERROR(pci->WriteConfig16(PCI_COMMAND, command | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER));
  return std::unique_ptr<Device>(new Device(std::move(pci), bar0, bar1, options));
}

Device::Device(std::unique_ptr<pci::Device> pci, pci::Mmio bar0, std::span<uint8_t> bar1, DeviceOptions options)
    : pci_(std::move(pci)), bar0_(bar0), bar1_(bar1), options_(options) {}

template <typename Step>
absl::Status Device::Run(absl::string_view name, Step step) {
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> detail = step();
  BootStep record{std::string(name), detail.ok() ? *detail : "", absl::Now() - start, detail.status()};
  steps_.push_back(std::move(record));
  if (!detail.ok()) return absl::Status(detail.status().code(), absl::StrCat(name, ": ", detail.status().message()));
  return absl::OkStatus();
}

absl::Status Device::Boot() {
  steps_.clear();
  BAREGPU_RETURN_IF_ERROR(Run("identify", [this] { return Identify(); }));
  BAREGPU_RETURN_IF_ERROR(Run("gfw-boot", [this] { return WaitForGfwBoot(); }));
  BAREGPU_RETURN_IF_ERROR(Run("wpr2", [this] { return ResetIfWpr2IsUp(); }));
  BAREGPU_RETURN_IF_ERROR(Run("fb", [this] { return ReadFb(); }));
  BAREGPU_RETURN_IF_ERROR(Run("firmware", [this] { return SizeFirmware(); }));
  BAREGPU_RETURN_IF_ERROR(Run("layout", [this] { return LayOutWpr2(); }));
  BAREGPU_RETURN_IF_ERROR(Run("fwsec-frts", [this] { return RunFwsecFrts(); }));
  return absl::UnimplementedError(
      "WPR2 is up around FRTS; the next steps of a GSP-RM boot (booter load on SEC2, GSP-RM's INIT_DONE, static "
      "info, RM objects) are not driven yet (issue 22)");
}

absl::StatusOr<std::string> Device::Identify() {
  const auto boot_0 = r::NV_PMC_BOOT_0::FromRaw(bar0_.Read32(r::NV_PMC_BOOT_0::kOffset));
  const auto boot_42 = r::NV_PMC_BOOT_42::FromRaw(bar0_.Read32(r::NV_PMC_BOOT_42::kOffset));
  if (boot_42.architecture() != kArchitectureAd100 || boot_42.implementation() != kImplementationAd102) {
    return absl::UnimplementedError(absl::StrFormat(
        "NV_PMC_BOOT_42 = 0x%08x (architecture 0x%x, implementation 0x%x) is not AD102 (architecture 0x%x, "
        "implementation 0x%x), the one chip this driver boots so far",
        boot_42.raw(), boot_42.architecture(), boot_42.implementation(), kArchitectureAd100, kImplementationAd102));
  }
  chip_ = "AD102";
  return absl::StrFormat("AD102 revision %x%x (NV_PMC_BOOT_0 0x%08x, NV_PMC_BOOT_42 0x%08x)", boot_0.major_revision(),
                         boot_0.minor_revision(), boot_0.raw(), boot_42.raw());
}

absl::StatusOr<std::string> Device::WaitForGfwBoot() {
  // tu102_devinit_wait: the VBIOS's devinit is done when the GROUP_05 priv level mask lets level 0 read and its
  // progress byte says COMPLETED. The driver must not touch the chip before (nouveau, tinygrad's wait_for_reset).
  const absl::Time deadline = absl::Now() + options_.gfw_boot_timeout;
  while (true) {
    const auto mask = r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::FromRaw(
        bar0_.Read32(r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::kOffset));
    const auto progress = r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::FromRaw(
        bar0_.Read32(r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::kOffset));
    if (mask.read_protection_level0() == 1 &&
        progress.progress() == r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::PROGRESS_COMPLETED) {
      return std::string("VBIOS devinit completed");
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "the VBIOS's devinit did not complete in %s: %s = 0x%08x (READ_PROTECTION_LEVEL0 must be 1), %s = 0x%08x "
          "(PROGRESS must be 0x%x); the GPU may need a power cycle",
          absl::FormatDuration(options_.gfw_boot_timeout),
          r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::kName, mask.raw(),
          r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::kName, progress.raw(),
          r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::PROGRESS_COMPLETED));
    }
    std::this_thread::sleep_for(absl::ToChronoMicroseconds(kGfwPoll));
  }
}

absl::StatusOr<std::string> Device::ResetIfWpr2IsUp() {
  const auto hi = r::NV_PFB_PRI_MMU_WPR2_ADDR_HI::FromRaw(bar0_.Read32(r::NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset));
  if (hi.val() == 0) return std::string("WPR2 is down");
  // WPR2 up at open: GSP-RM was left running by a process that did not unload it (a clean close runs the unload).
  // Its message queues lived in that process's memory, so this process cannot ask it to unload: reset the chip, as
  // tinygrad's NVDev does ("WPR2 is up. Issuing a full reset."), then wait for devinit again.
  BAREGPU_RETURN_IF_ERROR(pci_->ResetFunction());
  BAREGPU_ASSIGN_OR_RETURN(const uint16_t command, pci_->ReadConfig16(PCI_COMMAND));
  BAREGPU_RETURN_IF_ERROR(pci_->WriteConfig16(PCI_COMMAND, command | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER));
  BAREGPU_RETURN_IF_ERROR(WaitForGfwBoot().status());
  const auto after = r::NV_PFB_PRI_MMU_WPR2_ADDR_HI::FromRaw(bar0_.Read32(r::NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset));
  if (after.val() != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("WPR2 is still up after a function reset (%s = 0x%08x); the GPU needs a power cycle",
                        after.kName, after.raw()));
  }
  return absl::StrFormat("WPR2 was up (%s = 0x%08x: GSP-RM left running); function reset, devinit completed again",
                         hi.kName, hi.raw());
}

absl::StatusOr<std::string> Device::ReadFb() {
  const uint32_t usable_mb = bar0_.Read32(r::NV_USABLE_FB_SIZE_IN_MB::kOffset);
  if (usable_mb == 0 || IsPriError(usable_mb)) {
    return absl::FailedPreconditionError(absl::StrFormat("%s reads 0x%08x: no FB size (the VBIOS's devinit sets it)",
                                                         r::NV_USABLE_FB_SIZE_IN_MB::kName, usable_mb));
  }
  fb_size_ = gsp::FbSizeFromUsableFbSizeInMb(usable_mb);
  // nouveau reads the VGA workspace register when the chip has a display engine; a priv error means it has none.
  const uint32_t vga = bar0_.Read32(gsp::kNvPdispVgaWorkspaceBase);
  const std::optional<uint32_t> vga_register = IsPriError(vga) ? std::nullopt : std::optional<uint32_t>(vga);
  BAREGPU_ASSIGN_OR_RETURN(vga_workspace_, gsp::VgaWorkspaceFromRegister(fb_size_, vga_register));
  return absl::StrFormat("%d MiB of FB; VGA workspace at 0x%x (%s)", usable_mb, vga_workspace_.offset,
                         vga_register ? absl::StrFormat("NV_PDISP_VGA_WORKSPACE_BASE 0x%08x", vga)
                                      : std::string("no display engine answers: the last MiB"));
}

absl::StatusOr<std::string> Device::SizeFirmware() {
  BAREGPU_ASSIGN_OR_RETURN(const firmware::nv::ChipProfile chip, firmware::nv::FindChipProfile("ad102"));
  const std::vector<std::string> roots = firmware::DeviceSearchRoots(pci_->firmware_roots());
  std::string found;
  for (const firmware::nv::RequiredFile& file : firmware::nv::RequiredFiles(chip)) {
    if (file.kind != firmware::nv::NvFileKind::kBootloader && file.kind != firmware::nv::NvFileKind::kGspRm) continue;
    const firmware::Location location = firmware::nv::Locate(roots, file.relative_path);
    if (!location.path) {
      return absl::NotFoundError(absl::StrFormat(
          "%s not found (tried %s); GSP-RM %s comes in Debian's firmware-nvidia-graphics: tools/fetch_firmware.sh "
          "fetches it, BAREGPU_FIRMWARE_PATH names the directory that holds nvidia/",
          file.relative_path, absl::StrJoin(location.tried, ", "), firmware::nv::kGspRmVersion));
    }
    const std::string& path = *location.path;
    BAREGPU_ASSIGN_OR_RETURN(const std::string data, firmware::ReadFirmwareFile(path));
    if (file.kind == firmware::nv::NvFileKind::kBootloader) {
      BAREGPU_ASSIGN_OR_RETURN(const firmware::nv::Bootloader bootloader, firmware::nv::ParseBootloader(path, data));
      boot_bin_size_ = bootloader.bin.header.data_size;
    } else {
      BAREGPU_ASSIGN_OR_RETURN(const firmware::nv::GspImage image, firmware::nv::ParseGspImage(path, data));
      const firmware::nv::ElfSection* fwimage = image.Find(".fwimage");
      if (fwimage == nullptr) return absl::DataLossError(absl::StrCat(path, ": no .fwimage section"));
      gsp_fw_size_ = fwimage->size;
    }
    absl::StrAppend(&found, found.empty() ? "" : ", ", path);
  }
  return absl::StrFormat("bootloader 0x%x bytes, GSP-RM .fwimage 0x%x bytes (%s)", boot_bin_size_, gsp_fw_size_, found);
}

absl::StatusOr<std::string> Device::LayOutWpr2() {
  BAREGPU_ASSIGN_OR_RETURN(layout_, gsp::ComputeFbLayout({.fb_size = fb_size_,
                                                          .vga_workspace = vga_workspace_,
                                                          .boot_bin_size = boot_bin_size_,
                                                          .gsp_fw_size = gsp_fw_size_,
                                                          .heap = gsp::kAd102WprHeap}));
  return absl::StrFormat("WPR2 0x%x-0x%x (FRTS at 0x%x, GSP-RM heap 0x%x bytes at 0x%x)", layout_.gspFwWprStart,
                         layout_.gspFwWprEnd, layout_.frtsOffset, layout_.gspFwHeapSize, layout_.gspFwHeapOffset);
}

absl::StatusOr<std::string> Device::RunFwsecFrts() {
  Falcon gsp(bar0_, kAd102GspFalcon);
  FwsecPlacement placement;
  placement.address = kFwsecImageFbOffset;
  placement.target = DmaTarget::kLocalFb;
  placement.write = [this](uint64_t address, absl::string_view bytes) -> absl::Status {
    if (address > bar1_.size() || bytes.size() > bar1_.size() - address) {
      return absl::OutOfRangeError(absl::StrFormat(
          "the FWSEC image (0x%x bytes at FB 0x%x) is beyond BAR1 (0x%x bytes)", bytes.size(), address, bar1_.size()));
    }
    std::memcpy(bar1_.data() + address, bytes.data(), bytes.size());
    return absl::OkStatus();
  };
  BAREGPU_ASSIGN_OR_RETURN(wpr2_,
                           FwsecFrts(bar0_, gsp, {.offset = layout_.frtsOffset, .size = layout_.frtsSize}, placement));
  return absl::StrFormat("FWSEC-FRTS from the VBIOS: WPR2 up (NV_PFB_PRI_MMU_WPR2_ADDR_LO 0x%08x, _HI 0x%08x)",
                         wpr2_.lo, wpr2_.hi);
}

}  // namespace nv
