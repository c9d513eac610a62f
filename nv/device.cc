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
#include "firmware/nv/hs_header.h"
#include "firmware/nv/requirements.h"
#include "firmware/nv/riscv_desc.h"
#include "firmware/nv/vbios.h"
#include "firmware/store.h"
#include "nv/falcon.h"
#include "nv/gsp/booter_image.h"
#include "nv/regs/ad102.h"
#include "nv/regs/flcn_status.h"
#include "nv/regs/known_registers.h"
#include "nv/rm/client.h"
#include "nv/rm/gsp_transport.h"
#include "nv/rm/params.h"
#include "pci/address.h"
#include "pci/open.h"

namespace nv {
namespace {

namespace r = regs::ad102;

// PCI vendor id of NVIDIA (PCI ID database; firmware/nv/virtual_vbios.h's kNvidiaVendorId is the virtual board's).
constexpr uint16_t kNvidiaVendorId = 0x10de;
// NV_PMC_BOOT_42.ARCHITECTURE of Ada (nv/regs/known_registers.h) and AD102's implementation.
constexpr uint32_t kArchitectureAd100 = regs::known::kBootArchitectureAd100;
constexpr uint32_t kImplementationAd102 = r::NV_PMC_BOOT_42::IMPLEMENTATION_2;
// Where the FWSEC image goes before the GSP falcon's DMA reads it: the first bytes of FB, below everything the WPR2
// layout places at the top (tinygrad's NV_FLCN.prep_ucode puts it in FB the same way, from its boot allocator).
constexpr uint64_t kFwsecImageFbOffset = 0;
constexpr absl::Duration kGfwPoll = absl::Milliseconds(1);
// r535_gsp_fini waits up to 2 s for GSP-RM to say it stopped: bit 31 of the GSP falcon's MAILBOX0.
constexpr absl::Duration kUnloadedWait = absl::Seconds(2);
constexpr uint32_t kGspUnloadedBit = 1u << 31;
// r535_gsp_fini hands booter_unload 0xff in both mailboxes (not a suspend: no GspFwSRMeta).
constexpr uint32_t kBooterUnloadMailbox = 0xff;
// The GPFIFO entries of the channel the boot allocates to check the RM path: tinygrad's NVDevice gives its compute
// channel 0x10000 (support of a later HCQ queue; the model requires only a non-zero count).
constexpr uint32_t kGpfifoEntries = 0x10000;
// The bus address of BAR `index` (PCI_BASE_ADDRESS_n; a 64-bit BAR's high half in the next register): what
// GspSystemInfo tells GSP-RM (tinygrad: the sysfs resource addresses).
absl::StatusOr<uint64_t> BarAddress(pci::Device& pci, int index) {
  BAREGPU_ASSIGN_OR_RETURN(const uint32_t low, pci.ReadConfig32(PCI_BASE_ADDRESS_0 + 4 * index));
  uint64_t address = low & PCI_BASE_ADDRESS_MEM_MASK;
  if ((low & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64) {
    BAREGPU_ASSIGN_OR_RETURN(const uint32_t high, pci.ReadConfig32(PCI_BASE_ADDRESS_0 + 4 * (index + 1)));
    address |= uint64_t{high} << 32;
  }
  return address;
}

// The GSP core's sequencer commands (nouveau r535_gsp_msg_run_cpu_sequencer) over BAR0 and the GSP falcon.
class Sequencer : public gsp::SequencerTarget {
 public:
  Sequencer(pci::Mmio bar0, Falcon& gsp) : bar0_(bar0), gsp_(gsp) {}
  uint32_t Read32(uint32_t address) override { return bar0_.Read32(address); }
  void Write32(uint32_t address, uint32_t value) override { bar0_.Write32(address, value); }
  absl::Status CoreReset() override {
    BAREGPU_RETURN_IF_ERROR(gsp_.Reset());
    gsp_.DisableContextRequirement();
    return absl::OkStatus();
  }
  absl::Status CoreStart() override {
    gsp_.Start();
    return absl::OkStatus();
  }
  absl::Status CoreWaitForHalt() override { return gsp_.WaitForHalt("the CPU sequencer's CORE_WAIT_FOR_HALT"); }
  absl::Status CoreResume() override {
    return absl::UnimplementedError("CORE_RESUME resumes GSP-RM after a suspend, which this driver does not do");
  }

 private:
  pci::Mmio bar0_;
  Falcon& gsp_;
};

using regs::flcn::IsPriError;

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

// BAR0 with every access handed to the register tracer (the driver's accesses only: the virtual GPU's own are not
// the driver's).
class Device::TracingBar0 : public pci::MmioHandler {
 public:
  TracingBar0(pci::Mmio bar0, std::function<void(bool, uint32_t, uint32_t)> tracer)
      : bar0_(bar0), tracer_(std::move(tracer)) {}
  uint32_t Read32(uint64_t offset) override {
    const uint32_t value = bar0_.Read32(offset);
    tracer_(false, static_cast<uint32_t>(offset), value);
    return value;
  }
  void Write32(uint64_t offset, uint32_t value) override {
    tracer_(true, static_cast<uint32_t>(offset), value);
    bar0_.Write32(offset, value);
  }

 private:
  pci::Mmio bar0_;
  std::function<void(bool, uint32_t, uint32_t)> tracer_;
};

Device::Device(std::unique_ptr<pci::Device> pci, pci::Mmio bar0, std::span<uint8_t> bar1, DeviceOptions options)
    : pci_(std::move(pci)), bar0_(bar0), bar1_(bar1), options_(options) {
  if (options_.register_tracer) {
    tracing_bar0_ = std::make_unique<TracingBar0>(bar0, options_.register_tracer);
    bar0_ = pci::Mmio::Trapped(tracing_bar0_.get(), bar0.size());
  }
}

template <typename Step>
absl::Status Device::Run(absl::string_view name, Step step) {
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> detail = step();
  BootStep record{std::string(name), detail.ok() ? *detail : "", absl::Now() - start, detail.status(), start};
  steps_.push_back(std::move(record));
  if (!detail.ok()) return absl::Status(detail.status().code(), absl::StrCat(name, ": ", detail.status().message()));
  return absl::OkStatus();
}

absl::Status Device::Boot() {
  steps_.clear();
  BAREGPU_RETURN_IF_ERROR(Run("identify", [this] { return Identify(); }));
  BAREGPU_RETURN_IF_ERROR(Run("gfw-boot", [this] { return WaitForGfwBoot(); }));
  // The firmware first: a chip left with WPR2 up is unloaded with booter_unload.
  BAREGPU_RETURN_IF_ERROR(Run("firmware", [this] { return LoadFirmware(); }));
  BAREGPU_RETURN_IF_ERROR(Run("wpr2", [this] { return ResetIfWpr2IsUp(); }));
  BAREGPU_RETURN_IF_ERROR(Run("fb", [this] { return ReadFb(); }));
  BAREGPU_RETURN_IF_ERROR(Run("layout", [this] { return LayOutWpr2(); }));
  BAREGPU_RETURN_IF_ERROR(Run("fwsec-frts", [this] { return RunFwsecFrts(); }));
  BAREGPU_RETURN_IF_ERROR(Run("gsp-memory", [this] { return PrepareGspRm(); }));
  BAREGPU_RETURN_IF_ERROR(Run("booter-load", [this] { return RunBooterLoad(); }));
  BAREGPU_RETURN_IF_ERROR(Run("init-done", [this] { return WaitForInitDone(); }));
  BAREGPU_RETURN_IF_ERROR(Run("static-info", [this] { return ReadStaticInfo(); }));
  return Run("rm-objects", [this] { return ExerciseRmObjects(); });
}

Device::~Device() {
  if (gsp_running_) (void)Shutdown();
}

absl::Status Device::Shutdown() {
  if (!gsp_running_) return absl::OkStatus();
  gsp_running_ = false;
  // r535_gsp_fini: unload GSP-RM, then FWSEC-SB and booter_unload even when the unload failed (WARN_ON, going on).
  absl::Status status = Run("unload", [this] { return UnloadGspRm(); });
  status.Update(Run("fwsec-sb", [this] { return RunFwsecSb(); }));
  status.Update(Run("booter-unload", [this] { return RunBooterUnload(); }));
  return status;
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
  // Its message queues lived in that process's memory, so this process cannot send it UNLOADING_GUEST_DRIVER; it
  // does the rest of nouveau's r535_gsp_fini: the GSP's reset stops GSP-RM, FWSEC-SB, booter_unload takes WPR2 down.
  // Only when that fails is the chip reset, as tinygrad's NVDev always does ("WPR2 is up. Issuing a full reset.").
  absl::Status unloaded = [&]() -> absl::Status {
    Falcon gsp(bar0_, kAd102GspFalcon, options_.falcon_halt_timeout);
    BAREGPU_RETURN_IF_ERROR(gsp.Reset());
    BAREGPU_RETURN_IF_ERROR(RunFwsecSb().status());
    return RunBooterUnload().status();
  }();
  if (unloaded.ok()) {
    return absl::StrFormat(
        "WPR2 was up (%s = 0x%08x: GSP-RM left running by a process that did not unload it); the GSP reset, "
        "FWSEC-SB and booter_unload took it down",
        hi.kName, hi.raw());
  }
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
  return absl::StrFormat(
      "WPR2 was up (%s = 0x%08x: GSP-RM left running); unloading it failed (%s), so a function reset, devinit "
      "completed again",
      hi.kName, hi.raw(), unloaded.message());
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

absl::StatusOr<std::string> Device::LoadFirmware() {
  BAREGPU_ASSIGN_OR_RETURN(const firmware::nv::ChipProfile chip, firmware::nv::FindChipProfile("ad102"));
  const std::vector<std::string> roots = firmware::DeviceSearchRoots(pci_->firmware_roots());
  for (const firmware::nv::RequiredFile& file : firmware::nv::RequiredFiles(chip)) {
    File* into = nullptr;
    switch (file.kind) {
      case firmware::nv::NvFileKind::kBootloader:
        into = &bootloader_file_;
        break;
      case firmware::nv::NvFileKind::kGspRm:
        into = &gsp_file_;
        break;
      case firmware::nv::NvFileKind::kBooterLoad:
        into = &booter_load_file_;
        break;
      case firmware::nv::NvFileKind::kBooterUnload:
        into = &booter_unload_file_;
        break;
      default:
        continue;
    }
    const firmware::Location location = firmware::nv::Locate(roots, file.relative_path);
    if (!location.path) {
      return absl::NotFoundError(absl::StrFormat(
          "%s not found (tried %s); GSP-RM %s comes in Debian's firmware-nvidia-graphics: tools/fetch_firmware.sh "
          "fetches it, BAREGPU_FIRMWARE_PATH names the directory that holds nvidia/",
          file.relative_path, absl::StrJoin(location.tried, ", "), firmware::nv::kGspRmVersion));
    }
    into->path = *location.path;
    BAREGPU_ASSIGN_OR_RETURN(into->data, firmware::ReadFirmwareFile(into->path));
  }
  BAREGPU_ASSIGN_OR_RETURN(bootloader_, firmware::nv::ParseBootloader(bootloader_file_.path, bootloader_file_.data));
  boot_bin_size_ = bootloader_.bin.header.data_size;
  BAREGPU_ASSIGN_OR_RETURN(gsp_image_, firmware::nv::ParseGspImage(gsp_file_.path, gsp_file_.data));
  const firmware::nv::ElfSection* fwimage = gsp_image_.Find(".fwimage");
  if (fwimage == nullptr) return absl::DataLossError(absl::StrCat(gsp_file_.path, ": no .fwimage section"));
  gsp_fw_size_ = fwimage->size;
  return absl::StrFormat("GSP-RM %s: bootloader 0x%x bytes, .fwimage 0x%x bytes (%s)", gsp_image_.fw_version,
                         boot_bin_size_, gsp_fw_size_, gsp_file_.path);
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

FwsecPlacement Device::FbPlacement() {
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
  return placement;
}

absl::StatusOr<std::string> Device::RunFwsecFrts() {
  Falcon gsp(bar0_, kAd102GspFalcon, options_.falcon_halt_timeout);
  BAREGPU_ASSIGN_OR_RETURN(
      wpr2_, FwsecFrts(bar0_, gsp, {.offset = layout_.frtsOffset, .size = layout_.frtsSize}, FbPlacement()));
  return absl::StrFormat("FWSEC-FRTS from the VBIOS: WPR2 up (NV_PFB_PRI_MMU_WPR2_ADDR_LO 0x%08x, _HI 0x%08x)",
                         wpr2_.lo, wpr2_.hi);
}

absl::StatusOr<std::string> Device::PrepareGspRm() {
  BAREGPU_ASSIGN_OR_RETURN(const firmware::nv::ChipProfile chip, firmware::nv::FindChipProfile("ad102"));
  BAREGPU_ASSIGN_OR_RETURN(gsp_rm_, GspRm::Prepare(*pci_, bar0_, layout_,
                                                   {.bootloader = &bootloader_,
                                                    .bootloader_file = bootloader_file_.data,
                                                    .image = &gsp_image_,
                                                    .image_file = gsp_file_.data,
                                                    .signature_section = chip.signature_section}));
  if (options_.rpc_tracer) gsp_rm_->queue().set_tracer(options_.rpc_tracer);
  gsp::SystemInfoInputs system;
  BAREGPU_ASSIGN_OR_RETURN(system.bar0_address, BarAddress(*pci_, 0));
  BAREGPU_ASSIGN_OR_RETURN(system.bar1_address, BarAddress(*pci_, 1));
  BAREGPU_ASSIGN_OR_RETURN(system.bar3_address, BarAddress(*pci_, 3));
  if (absl::StatusOr<pci::Address> address = pci::Address::Parse(pci_->name()); address.ok()) {
    system.bus = address->bus;
    system.device = address->device;
    system.function = address->function;
  }
  BAREGPU_RETURN_IF_ERROR(gsp_rm_->QueueInitRpcs(system));
  return absl::StrFormat("LibOS arguments at 0x%x, WPR metadata at 0x%x; SET_SYSTEM_INFO and SET_REGISTRY queued",
                         gsp_rm_->libos_args_address(), gsp_rm_->wpr_meta_address());
}

absl::StatusOr<FalconMailboxes> Device::RunBooter(absl::string_view file, absl::string_view data,
                                                  const FalconMailboxes& mailboxes) {
  BAREGPU_ASSIGN_OR_RETURN(const firmware::nv::Booter booter, firmware::nv::ParseBooter(file, data));
  BAREGPU_ASSIGN_OR_RETURN(const uint32_t fuse_register, gsp::BooterFuseRegister(booter.engine_id, booter.ucode_id));
  BAREGPU_ASSIGN_OR_RETURN(const gsp::BooterImage image, gsp::PrepareBooter(booter, data, bar0_.Read32(fuse_register)));
  // The image in system memory, as nouveau's nvkm_falcon_fw keeps it (DMA-coherent, read by SEC2's DMA).
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::DmaBuffer> buffer, pci_->AllocDma(image.image.size()));
  if (!buffer->contiguous()) {
    return absl::ResourceExhaustedError("the booter's image is not contiguous in bus address space");
  }
  std::memcpy(buffer->cpu(), image.image.data(), image.image.size());
  Falcon sec2(bar0_, kAd102Sec2Falcon, options_.falcon_halt_timeout);
  BAREGPU_RETURN_IF_ERROR(sec2.Reset());
  return sec2.ExecuteHs({.image_address = buffer->device_address(),
                         .target = DmaTarget::kCoherentSysmem,
                         .imem_image_offset = image.imem.image_offset,
                         .imem_base = image.imem.mem_offset,
                         .imem_size = image.imem.size,
                         .dmem_image_offset = image.dmem.image_offset,
                         .dmem_base = image.dmem.mem_offset,
                         .dmem_size = image.dmem.size,
                         .boot_vector = image.boot_vector,
                         .pkc_offset = image.brom_pkc_data_offset,
                         .engine_id_mask = image.brom_engine_id_mask,
                         .ucode_id = image.brom_ucode_id,
                         .mailboxes = mailboxes},
                        file);
}

absl::StatusOr<std::string> Device::RunBooterLoad() {
  // The GSP's core goes to RISC-V and learns where the LibOS arguments are (r535_gsp_oneinit after FWSEC-FRTS:
  // reset, MAILBOX0/1 = libos.addr; tinygrad's NV_FLCN.init_hw the same).
  Falcon gsp(bar0_, kAd102GspFalcon, options_.falcon_halt_timeout);
  BAREGPU_RETURN_IF_ERROR(gsp.Reset());
  gsp.SelectRiscv();
  gsp.WriteMailboxes({static_cast<uint32_t>(gsp_rm_->libos_args_address()),
                      static_cast<uint32_t>(gsp_rm_->libos_args_address() >> 32)});
  // booter_load on SEC2 with the WPR metadata's address (r535_gsp_init -> r535_gsp_booter_load).
  const uint64_t meta = gsp_rm_->wpr_meta_address();
  BAREGPU_ASSIGN_OR_RETURN(const FalconMailboxes left,
                           RunBooter(booter_load_file_.path, booter_load_file_.data,
                                     {static_cast<uint32_t>(meta), static_cast<uint32_t>(meta >> 32)}));
  if (left.mailbox0 != 0) {
    return absl::InternalError(absl::StrFormat(
        "booter_load on SEC2 failed: MAILBOX0 = 0x%08x, %s, MAILBOX1 = 0x%08x (the booter refused the WPR metadata "
        "or the images it points at, or the BROM the booter itself)",
        left.mailbox0, regs::flcn::FlcnStatusName(left.mailbox0), left.mailbox1));
  }
  bar0_.Write32(kAd102GspFalcon.bases.AddressOf<regs::ad102::NV_PFALCON_FALCON_OS>(), bootloader_.desc.app_version);
  if (!gsp.RiscvActive()) {
    return absl::InternalError(
        "booter_load returned 0 but the GSP's RISC-V core is not active (NV_PRISCV_RISCV_CPUCTL)");
  }
  gsp_running_ = true;
  return absl::StrFormat("booter_load on SEC2 (%s): WPR2 0x%08x-0x%08x, GSP-RM's RISC-V core active",
                         booter_load_file_.path, bar0_.Read32(regs::ad102::NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset),
                         bar0_.Read32(regs::ad102::NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset));
}

absl::StatusOr<std::string> Device::WaitForInitDone() {
  Falcon gsp(bar0_, kAd102GspFalcon, options_.falcon_halt_timeout);
  Sequencer sequencer(bar0_, gsp);
  BAREGPU_ASSIGN_OR_RETURN(const int commands, gsp_rm_->WaitForInitDone(sequencer, options_.rpc_timeout));
  return absl::StrFormat("INIT_DONE after %d CPU sequencer commands", commands);
}

absl::StatusOr<std::string> Device::ReadStaticInfo() {
  BAREGPU_ASSIGN_OR_RETURN(static_info_, gsp_rm_->GetStaticInfo(options_.rpc_timeout));
  return absl::StrFormat("%s: %d GPCs (mask 0x%x), %d TPCs", gpu_name(), gpc_count(), static_info_.gpcInfo.gpcMask,
                         tpc_count());
}

std::string Device::gpu_name() const {
  const auto* name = reinterpret_cast<const char*>(static_info_.gpuNameString);
  return std::string(name, strnlen(name, sizeof(static_info_.gpuNameString)));
}

int Device::gpc_count() const { return __builtin_popcount(static_info_.gpcInfo.gpcMask); }

int Device::tpc_count() const {
  // nouveau counts the TPCs of the GPCs in gpcMask (r535_gr_oneinit).
  int tpcs = 0;
  for (size_t gpc = 0; gpc < std::size(static_info_.tpcInfo); ++gpc) {
    if ((static_info_.gpcInfo.gpcMask >> gpc & 1) != 0) tpcs += __builtin_popcount(static_info_.tpcInfo[gpc].tpcMask);
  }
  return tpcs;
}

absl::StatusOr<std::string> Device::UnloadGspRm() {
  BAREGPU_RETURN_IF_ERROR(gsp_rm_->Unload(options_.rpc_timeout));
  // r535_gsp_fini: wait (at most 2 s, then go on) for GSP-RM's "stopped" bit, then reset the GSP.
  const uint32_t mailbox0 = kAd102GspFalcon.bases.AddressOf<regs::ad102::NV_PFALCON_FALCON_MAILBOX0>();
  const absl::Time deadline = absl::Now() + kUnloadedWait;
  bool stopped = false;
  while (!(stopped = (bar0_.Read32(mailbox0) & kGspUnloadedBit) != 0) && absl::Now() < deadline) {
    std::this_thread::sleep_for(absl::ToChronoMicroseconds(kGfwPoll));
  }
  Falcon gsp(bar0_, kAd102GspFalcon, options_.falcon_halt_timeout);
  BAREGPU_RETURN_IF_ERROR(gsp.Reset());
  return std::string(stopped ? "UNLOADING_GUEST_DRIVER acknowledged; GSP-RM stopped; the GSP reset"
                             : "UNLOADING_GUEST_DRIVER acknowledged; GSP-RM did not set MAILBOX0 bit 31 in 2 s; the "
                               "GSP reset");
}

absl::StatusOr<std::string> Device::RunFwsecSb() {
  Falcon gsp(bar0_, kAd102GspFalcon, options_.falcon_halt_timeout);
  BAREGPU_RETURN_IF_ERROR(FwsecSb(bar0_, gsp, FbPlacement()));
  return std::string("FWSEC-SB from the VBIOS");
}

absl::StatusOr<std::string> Device::RunBooterUnload() {
  BAREGPU_ASSIGN_OR_RETURN(const FalconMailboxes left, RunBooter(booter_unload_file_.path, booter_unload_file_.data,
                                                                 {kBooterUnloadMailbox, kBooterUnloadMailbox}));
  if (left.mailbox0 != 0) {
    return absl::InternalError(absl::StrFormat("booter_unload on SEC2 failed: MAILBOX0 = 0x%08x, %s, MAILBOX1 = 0x%08x",
                                               left.mailbox0, regs::flcn::FlcnStatusName(left.mailbox0),
                                               left.mailbox1));
  }
  const auto hi = regs::ad102::NV_PFB_PRI_MMU_WPR2_ADDR_HI::FromRaw(
      bar0_.Read32(regs::ad102::NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset));
  if (hi.val() != 0) {
    return absl::InternalError(
        absl::StrFormat("booter_unload returned 0 but WPR2 is still up (%s = 0x%08x)", hi.kName, hi.raw()));
  }
  return std::string("booter_unload on SEC2: WPR2 down");
}

absl::StatusOr<std::string> Device::ExerciseRmObjects() {
  // What the HCQ backend will hold: tinygrad's NVDevice allocates this tree (its kernel-driver path and its NV_GSP
  // alike), nouveau the same classes (r535 device, mmu, fifo, gr, ce). Allocated and freed in reverse here; the
  // channel's GPFIFO ring, USERD and instance memory are the MMU's and the HCQ backend's to fill (later issues).
  rm::GspTransport transport(gsp_rm_->queue(), options_.rpc_timeout);
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<rm::Client> client, rm::Client::Create(transport));
  BAREGPU_ASSIGN_OR_RETURN(rm::Object device, client->AllocDevice());
  BAREGPU_ASSIGN_OR_RETURN(rm::Object subdevice, client->AllocSubdevice(device));
  rm::NV_VASPACE_ALLOCATION_PARAMETERS va_params{};
  va_params.index = rm::NV_VASPACE_ALLOCATION_INDEX_GPU_NEW;
  BAREGPU_ASSIGN_OR_RETURN(rm::Object va_space, client->AllocVaSpace(device, va_params));
  rm::NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS group_params{};
  group_params.hVASpace = va_space.handle();
  group_params.engineType = rm::NV2080_ENGINE_TYPE_GRAPHICS;
  BAREGPU_ASSIGN_OR_RETURN(rm::Object group, client->AllocChannelGroup(device, group_params));
  rm::NV_CTXSHARE_ALLOCATION_PARAMETERS share_params{};
  share_params.hVASpace = va_space.handle();
  share_params.flags = rm::NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC;
  BAREGPU_ASSIGN_OR_RETURN(rm::Object share, client->AllocContextShare(group, share_params));
  rm::NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS channel_params{};
  channel_params.hContextShare = share.handle();
  channel_params.hVASpace = va_space.handle();
  channel_params.gpFifoEntries = kGpfifoEntries;
  channel_params.engineType = rm::NV2080_ENGINE_TYPE_GRAPHICS;
  BAREGPU_ASSIGN_OR_RETURN(rm::Object channel, client->AllocGpfifoChannel(group, channel_params));
  BAREGPU_ASSIGN_OR_RETURN(rm::Object compute, client->AllocCompute(channel));
  BAREGPU_ASSIGN_OR_RETURN(rm::Object copy, client->AllocCopy(channel));
  BAREGPU_ASSIGN_OR_RETURN(rm::Object usermode, client->AllocUsermode(subdevice));
  const size_t allocated = client->object_count();
  for (rm::Object* object : {&usermode, &copy, &compute, &channel, &share, &group, &va_space, &subdevice, &device}) {
    BAREGPU_RETURN_IF_ERROR(object->Free());
  }
  return absl::StrFormat(
      "client 0x%08x: device, subdevice, VA space, channel group, context share, GPFIFO channel, compute, copy and "
      "usermode (%d objects) allocated and freed",
      client->handle(), allocated);
}

}  // namespace nv
