#include "nv/sim/ad102.h"

#include <linux/pci_regs.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "firmware/nv/virtual_vbios.h"
#include "firmware/store.h"
#include "nv/regs/ad102.h"
#include "nv/regs/known_registers.h"
#include "nv/sim/booter_model.h"
#include "nv/sim/fwsec_model.h"
#include "nv/sim/gsp_rm_model.h"
#include "pci/virtual_registry.h"

namespace nv::sim {
namespace {

namespace r = ::nv::regs::ad102;

// The RTX 4090 as lspci shows it (geerlingguy/raspberry-pi-pcie-devices#504: "NVIDIA Corporation Device 2684 (rev
// a1)", "Subsystem: Gigabyte Technology Co., Ltd Device 40bf"; 0x1458 is Gigabyte's vendor id in the PCI ID
// database). The identity itself is firmware/nv/virtual_vbios.h's, which the virtual VBIOS's PCIR carries too.
constexpr uint8_t kRevisionA1 = 0xa1;
constexpr uint16_t kSubsystemVendorGigabyte = 0x1458;
constexpr uint16_t kSubsystemRtx4090Gigabyte = 0x40bf;
constexpr int kMsiVectors = 1;  // "MSI: Enable- Count=1/1 Maskable- 64bit+" (same lspci)

// Capabilities where that lspci has them: [60] Power Management version 3, [68] MSI, [78] Express (v2) Legacy
// Endpoint. NVIDIA keeps 0x40..0x5f for its own registers (nouveau's nvkm_pci_rom_shadow flips bit 0 of 0x50).
constexpr uint8_t kFirstCapability = 0x60;
// PM body (after id/next; layout PCI_PM_* in linux/pci_regs.h): PMC version 3 with "PME(D0+,D1-,D2-,D3hot+,D3cold-)",
// PMCSR "NoSoftRst+".
constexpr uint16_t kPmCapabilities = 3 | PCI_PM_CAP_PME_D0 | PCI_PM_CAP_PME_D3hot;
constexpr std::array<uint8_t, PCI_PM_SIZEOF - 2> kPmCapability = {
    kPmCapabilities & 0xff, kPmCapabilities >> 8, PCI_PM_CTRL_NO_SOFT_RESET, 0, 0, 0};
// MSI body: 64-bit message address, no masking ("Maskable- 64bit+").
constexpr std::array<uint8_t, 12> kMsiCapability = {PCI_MSI_FLAGS_64BIT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
// PCI Express capability body: version 2, legacy endpoint; DevCap with FLR ("FLReset+").
constexpr uint16_t kPcieFlags = 2 | (PCI_EXP_TYPE_LEG_END << 4);
constexpr uint32_t kPcieDevCap = PCI_EXP_DEVCAP_FLR;
constexpr std::array<uint8_t, 58> kPcieCapability = {kPcieFlags & 0xff,          kPcieFlags >> 8,
                                                     kPcieDevCap & 0xff,         (kPcieDevCap >> 8) & 0xff,
                                                     (kPcieDevCap >> 16) & 0xff, kPcieDevCap >> 24};

using ::nv::regs::known::FindKnownRegister;
constexpr const nv::regs::known::KnownRegister& kFwsecFuseBank =
    *FindKnownRegister("FUSE_UCODE_VERSION_ENGINE_ID_BIT10");
constexpr const nv::regs::known::KnownRegister& kBooterFuseBank =
    *FindKnownRegister("FUSE_UCODE_VERSION_ENGINE_ID_BIT0");
static_assert(FindKnownRegister("PROM_DATA")->offset == Ad102::kPromBase);
static_assert(FindKnownRegister("PROM_DATA")->count * FindKnownRegister("PROM_DATA")->stride == Ad102::kPromSize);

constexpr uint32_t kArchitectureAd100 = ::nv::regs::known::kBootArchitectureAd100;

// The booter (booter_load/booter_unload-535.113.01.bin for ad102) carries meta data {fuse_ver 1, engine_id 0x1,
// ucode_id 3} (read out of Debian's files; nouveau's ga102_gsp_booter_ctor takes them from
// nvfw_hs_header_v2.meta_data_offset), so ga100_flcn_fw_signature reads 0x824140 + (3 - 1) * 4.
constexpr uint32_t kBooterUcodeId = 3;
// Its value: nv/sim/booter_model.h kAd102BooterFuseValue (the booter model checks the signature it selects).
constexpr uint32_t kBooterFuseValue = kAd102BooterFuseValue;

constexpr uint32_t kAllBits = 0xffffffff;

// BAR0 reads of the PROM past the ROM image: the flash part is larger than the image. Chosen, no source: an erased
// NOR flash reads all ones.
constexpr uint8_t kErasedFlash = 0xff;

}  // namespace

Ad102Config Ad102Config::FromEnvironment() {
  Ad102Config config;
  if (const char* small = std::getenv("BAREGPU_SIM_SMALL_BAR"); small != nullptr && std::strcmp(small, "1") == 0) {
    config.bar1_size = base::MiB(256);
  }
  return config;
}

// BAR0: the 16 MiB register window, at priv level 0.
class Ad102::Bar0 : public pci::MmioHandler {
 public:
  explicit Bar0(Ad102& device) : device_(device) {}
  uint32_t Read32(uint64_t offset) override { return device_.Read(static_cast<uint32_t>(offset), PrivSource::kHost); }
  void Write32(uint64_t offset, uint32_t value) override {
    device_.Write(static_cast<uint32_t>(offset), value, PrivSource::kHost);
  }

 private:
  Ad102& device_;
};

// BAR3: on the part, a window that the BAR2 MMU (nouveau's "bar2", NV_PBUS_BAR2_BLOCK) translates into VRAM. The MMU
// is not modelled: nothing is mapped there, reads return what a read nothing answers returns on PCI, writes are
// dropped, and both are counted.
class Ad102::Bar3 : public pci::MmioHandler {
 public:
  explicit Bar3(Ad102& device) : device_(device) {}
  uint32_t Read32(uint64_t offset) override {
    device_.unclaimed_.fetch_add(1, std::memory_order_acq_rel);
    device_.Report(absl::StrFormat("BAR3 read at %#x: nothing is mapped in BAR3 (its MMU is not modelled)", offset));
    return pci::Mmio::kUnclaimedRead;
  }
  void Write32(uint64_t offset, uint32_t value) override {
    device_.unclaimed_.fetch_add(1, std::memory_order_acq_rel);
    device_.Report(absl::StrFormat("BAR3 write %#x at %#x dropped: nothing is mapped in BAR3 (its MMU is not modelled)",
                                   value, offset));
  }

 private:
  Ad102& device_;
};

class Ad102::PrivPort : public PrivBus {
 public:
  explicit PrivPort(Ad102& device) : device_(device) {}
  uint32_t Read32(uint32_t address) override { return device_.Read(address, PrivSource::kFalcon); }
  void Write32(uint32_t address, uint32_t value) override { device_.Write(address, value, PrivSource::kFalcon); }

 private:
  Ad102& device_;
};

class Ad102::Memory : public DeviceMemory {
 public:
  explicit Memory(Ad102& device) : device_(device) {}
  bool ReadFb(uint64_t address, std::span<uint8_t> out) override {
    std::span<uint8_t> vram = device_.vram();
    if (!InFb(address, out.size())) return false;
    std::memcpy(out.data(), vram.data() + address, out.size());
    return true;
  }
  bool WriteFb(uint64_t address, std::span<const uint8_t> data) override {
    std::span<uint8_t> vram = device_.vram();
    if (!InFb(address, data.size())) return false;
    std::memcpy(vram.data() + address, data.data(), data.size());
    return true;
  }
  bool ReadSystem(uint64_t bus_address, std::span<uint8_t> out) override {
    return device_.dma().Read(bus_address, out.data(), out.size());
  }
  bool WriteSystem(uint64_t bus_address, std::span<const uint8_t> data) override {
    return device_.dma().Write(bus_address, data.data(), data.size());
  }

 private:
  bool InFb(uint64_t address, uint64_t size) const {
    const uint64_t fb = device_.vram().size();
    return address <= fb && size <= fb - address;
  }

  Ad102& device_;
};

std::vector<pci::sim::StateRegion> Ad102::StateRegions(const Ad102Config& config) {
  // Nothing the chip writes into VRAM at power-on, so no VRAM bytes are checksummed (hashing gigabytes at every
  // close would cost seconds); registers, model state and configuration space are, whole.
  return {{"vram", config.vram_size, 0, 0},
          {"regs", kBar0Size},
          {"model", kModelStateBytes},
          {"pci", kPersistentConfigBytes}};
}

namespace {

// The booters on SEC2 need the real 535.113.01 files (nv/sim/booter_firmware.h: found, hashed and parsed once per
// process), so they are made on the first heavy-secure start that asks, not when the device opens: a device without
// the files opens and runs FWSEC; a booter it cannot recognise is refused by the BROM, and the falcon's log says why.
class LazyBooter : public HsUcodeModel {
 public:
  LazyBooter(bool load, uint64_t fb_size) : load_(load), fb_size_(fb_size) {}
  absl::string_view name() const override { return load_ ? "booter_load" : "booter_unload"; }
  absl::Status Recognise(const HsUcodeContext& context) const override {
    BAREGPU_ASSIGN_OR_RETURN(HsUcodeModel * model, Get());
    return model->Recognise(context);
  }
  HsUcodeOutcome Run(HsUcodeContext& context) override {
    absl::StatusOr<HsUcodeModel*> model = Get();
    if (!model.ok()) return {.mailbox0 = kFlcnErrHsChkInvalidInput, .log = std::string(model.status().message())};
    return (*model)->Run(context);
  }

 private:
  absl::StatusOr<HsUcodeModel*> Get() const {
    base::MutexLock lock(&mu_);
    if (model_ == nullptr && made_.ok()) {
      const std::vector<std::string> roots = firmware::DefaultSearchRoots();
      absl::StatusOr<std::unique_ptr<HsUcodeModel>> made =
          load_ ? absl::StatusOr<std::unique_ptr<HsUcodeModel>>(BooterLoadModel::Create("ad102", fb_size_, roots))
                : absl::StatusOr<std::unique_ptr<HsUcodeModel>>(BooterUnloadModel::Create("ad102", roots));
      if (made.ok()) {
        model_ = std::move(*made);
      } else {
        made_ = made.status();
      }
    }
    if (!made_.ok()) return made_;
    return model_.get();
  }

  const bool load_;
  const uint64_t fb_size_;
  mutable base::Mutex mu_;
  mutable std::unique_ptr<HsUcodeModel> model_ ABSL_GUARDED_BY(mu_);
  mutable absl::Status made_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<Ad102>> Ad102::Open(const std::string& name, const Ad102Config& config) {
  if (!base::IsPowerOfTwo(config.bar1_size) || config.vram_size == 0 || config.vram_size % base::MiB(1) != 0 ||
      config.vram_size / base::MiB(1) > UINT32_MAX) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: BAR1 of %#x bytes and VRAM of %#x bytes: BAR1 must be a power of two, VRAM whole MiB (at most 2^32 MiB: "
        "NV_USABLE_FB_SIZE_IN_MB is 32 bits)",
        name, config.bar1_size, config.vram_size));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::string vbios, firmware::nv::BuildVirtualVbios("ad102"));
  if (vbios.size() > kPromSize) {
    return absl::InternalError(absl::StrFormat("%s: the virtual VBIOS (%d bytes) does not fit the %#x-byte PROM window",
                                               name, vbios.size(), kPromSize));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::sim::PersistentState> state,
                           pci::sim::PersistentState::Open(name, StateRegions(config)));
  return std::unique_ptr<Ad102>(new Ad102(name, config, std::move(state), std::move(vbios)));
}

Ad102::Ad102(const std::string& name, const Ad102Config& config, std::unique_ptr<pci::sim::PersistentState> state,
             std::string vbios)
    : VirtualDevice(name,
                    pci::sim::Identity{firmware::nv::kNvidiaVendorId, firmware::nv::kVirtualAd102DeviceId,
                                       firmware::nv::kDisplayVgaClassCode, kRevisionA1, kSubsystemVendorGigabyte,
                                       kSubsystemRtx4090Gigabyte},
                    kMsiVectors),
      config_(config),
      state_(std::move(state)),
      registers_(std::span<uint32_t>(reinterpret_cast<uint32_t*>(state_->region(kRegisterRegion).data()),
                                     state_->region(kRegisterRegion).size() / sizeof(uint32_t))),
      vbios_(std::move(vbios)),
      bar0_(std::make_unique<Bar0>(*this)),
      bar3_(std::make_unique<Bar3>(*this)),
      priv_bus_(std::make_unique<PrivPort>(*this)),
      memory_(std::make_unique<Memory>(*this)),
      gsp_(std::make_unique<FalconModel>(Ad102GspFalcon(), *priv_bus_, *memory_)),
      sec2_(std::make_unique<FalconModel>(Ad102Sec2Falcon(), *priv_bus_, *memory_)) {
  ClaimRegisters();
  // The falcons' windows lie in BAR0 clear of the PROM window and the configuration mirror, so these cannot fail.
  for (FalconModel* falcon : {gsp_.get(), sec2_.get()}) {
    absl::Status attached = Attach(falcon->identity().bases.falcon, kFalconWindowSize, falcon);
    if (!attached.ok()) Report(absl::StrCat("falcon ", falcon->identity().name, ": ", attached.message()));
  }
  gsp_->AddHsUcodeModel(std::make_unique<FwsecModel>(config.vram_size));
  gsp_->SetRiscvStartHandler([this] { return StartGspRm(); });
  sec2_->AddHsUcodeModel(std::make_unique<LazyBooter>(/*load=*/true, config.vram_size));
  sec2_->AddHsUcodeModel(std::make_unique<LazyBooter>(/*load=*/false, config.vram_size));
  AddRegisterBar(0, kBar0Size, /*is_64bit=*/false, bar0_.get());
  const uint64_t visible = std::min(config.bar1_size, config.vram_size);
  AddMemoryBar(1, vram().subspan(0, visible), config.bar1_size, /*is_64bit=*/true, /*prefetchable=*/true);
  AddRegisterBar(3, kBar3Size, /*is_64bit=*/true, bar3_.get(), /*prefetchable=*/true);
  SetFirstCapabilityOffset(kFirstCapability);
  AddCapability(PCI_CAP_ID_PM, kPmCapability);
  AddCapability(PCI_CAP_ID_MSI, kMsiCapability);
  AddCapability(PCI_CAP_ID_EXP, kPcieCapability);
  AddExpansionRom(vbios_, kExpansionRomSize);
  // Configuration space persists with VRAM and registers: a second process finds bus mastering as the first left it.
  PersistConfig(state_->region(kPciStateRegion));
  if (!state_->discarded().empty()) Report(absl::StrCat("state: ", state_->discarded()));
  if (state_->cold()) {
    PowerOn();
    state_->EndPowerTransition();
  } else if (state_->interrupted_transition()) {
    // The holder died inside a power-on or a function reset: the chip completes its reset without its driver.
    Report(
        absl::StrFormat("state: %s: its holder died during a power-on or reset; the reset is completed now "
                        "(registers and model state back to power-on, VRAM kept)",
                        name));
    ResetCommandRegister();
    (void)state_->Clear(kRegisterRegion);
    (void)state_->Clear(kModelStateRegion);
    PowerOn();
    state_->EndPowerTransition();
  }
}

Ad102::~Ad102() = default;

PrivBus& Ad102::priv_bus() { return *priv_bus_; }
DeviceMemory& Ad102::memory() { return *memory_; }

void Ad102::ClaimRegisters() {
  // Identity: AD102 is architecture 0x19, implementation 2: nouveau's nvkm_device_ctor takes chipset = BOOT_0 bits
  // 28:20 (0x192: nv192_chipset "AD102"; 0x190..0x19f card_type AD100); tinygrad's NVDev._early_ip_init names the
  // chip from BOOT_42's architecture ({0x19: "AD1"}) and implementation ("AD1" + "02"). The revision is A1, the
  // board's PCI revision (nouveau's chiprev is BOOT_0 bits 7:0: major_revision 0xa, minor_revision 1).
  const uint32_t boot_0 = r::NV_PMC_BOOT_0{}
                              .architecture(kArchitectureAd100)
                              .implementation(r::NV_PMC_BOOT_0::IMPLEMENTATION_2)
                              .major_revision(r::NV_PMC_BOOT_0::MAJOR_REVISION_A)
                              .minor_revision(r::NV_PMC_BOOT_0::MINOR_REVISION_1)
                              .raw();
  const uint32_t boot_42 = r::NV_PMC_BOOT_42{}
                               .architecture(kArchitectureAd100)
                               .implementation(r::NV_PMC_BOOT_42::IMPLEMENTATION_2)
                               .major_revision(r::NV_PMC_BOOT_42::MAJOR_REVISION_A)
                               .minor_revision(r::NV_PMC_BOOT_42::MINOR_REVISION_1)
                               .raw();
  registers_.Claim(r::NV_PMC_BOOT_0::address(), {r::NV_PMC_BOOT_0::kName, boot_0, 0, 0});
  registers_.Claim(r::NV_PMC_BOOT_42::address(), {r::NV_PMC_BOOT_42::kName, boot_42, 0, 0});

  // VRAM in MiB, as the VBIOS's devinit leaves it: ga102_fb_vidmem_size (nouveau), tinygrad's _early_mmu_init
  // (NV_PGC6_AON_SECURE_SCRATCH_GROUP_42 << 20). A secure scratch: the host only reads it.
  const auto vram_mib = static_cast<uint32_t>(config_.vram_size / base::MiB(1));
  registers_.Claim(
      r::NV_USABLE_FB_SIZE_IN_MB::address(),
      {r::NV_USABLE_FB_SIZE_IN_MB::kName, r::NV_USABLE_FB_SIZE_IN_MB{}.value(vram_mib).raw(), 0, kAllBits});

  // GFW boot done, as the VBIOS's devinit leaves the GC6 island: nouveau's tu102_devinit_wait (0x118128 bit 0, then
  // 0x118234 bits 7:0 == 0xff) and tinygrad's NV_FLCN.wait_for_reset (the same two, by name) poll these at open. Only
  // READ_PROTECTION_LEVEL0 has a source; the mask's other levels are left clear.
  registers_.Claim(r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::address(),
                   {r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::kName,
                    r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK{}
                        .read_protection_level0(
                            r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::READ_PROTECTION_LEVEL0_ENABLE)
                        .raw(),
                    0, kAllBits});
  registers_.Claim(r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::address(),
                   {r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::kName,
                    r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT{}
                        .progress(r::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::PROGRESS_COMPLETED)
                        .raw(),
                    0, kAllBits});
  // SEC2 sets BOOT_STAGE_3_HANDOFF in GSP-RM's resume sequence (nouveau r535_gsp_run_sequencer "seq core resume",
  // tinygrad's run_cpu_seq op 0x8 wait for it); INIT (0) at power-on.
  registers_.Claim(r::NV_PGC6_BSI_SECURE_SCRATCH_14::address(),
                   {r::NV_PGC6_BSI_SECURE_SCRATCH_14::kName,
                    r::NV_PGC6_BSI_SECURE_SCRATCH_14{}
                        .boot_stage_3_handoff(r::NV_PGC6_BSI_SECURE_SCRATCH_14::BOOT_STAGE_3_HANDOFF_VALUE_INIT)
                        .raw(),
                    0, kAllBits});
  // The FRTS input (the WPR size FWSEC-FRTS is asked for, in 4 KiB units): neither nouveau nor tinygrad touches it;
  // claimed so that a FWSEC model can read it. Zero at power-on: the header gives it no init value. Who writes it on
  // the part is not known here, so both sides may.
  registers_.Claim(r::NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0::address(),
                   {r::NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0::kName, 0, kAllBits, kAllBits});

  // WPR2's bounds: zero (down) at power-on; FWSEC-FRTS sets them over the priv bus (nouveau nvkm_gsp_fwsec_frts reads
  // them after, tinygrad's init_hw asserts ADDR_HI != 0), and a driver only reads them (r535_gsp_booter_unload,
  // tinygrad's _early_ip_init). On the part a priv level mask guards them; which one is in no header here, so the model
  // takes the drivers' behaviour as the rule: host writes are refused.
  registers_.Claim(r::NV_PFB_PRI_MMU_WPR2_ADDR_LO::address(), {r::NV_PFB_PRI_MMU_WPR2_ADDR_LO::kName, 0, 0, kAllBits});
  registers_.Claim(r::NV_PFB_PRI_MMU_WPR2_ADDR_HI::address(), {r::NV_PFB_PRI_MMU_WPR2_ADDR_HI::kName, 0, 0, kAllBits});

  // Software scratch (dev_bus.h): plain storage for both sides, at the header's init value.
  for (uint32_t i = 0; i < r::NV_PBUS_SW_SCRATCH::kCount; ++i) {
    registers_.Claim(r::NV_PBUS_SW_SCRATCH::address(i),
                     {r::NV_PBUS_SW_SCRATCH::kName, r::NV_PBUS_SW_SCRATCH::kResetValue, kAllBits, kAllBits});
  }

  // The fuses the signature selections read (read-only to everyone): FWSEC's (ucode id kVirtualFwsecUcodeId, engine
  // bit 10: ga102_gsp_fwsec_signature) and the booter's (engine bit 0, ucode id 3: ga100_flcn_fw_signature).
  registers_.Claim(kFwsecFuseBank.offset + (firmware::nv::kVirtualFwsecUcodeId - 1) * kFwsecFuseBank.stride,
                   {kFwsecFuseBank.name, firmware::nv::kVirtualAd102FwsecFuseRegister, 0, 0});
  registers_.Claim(kBooterFuseBank.offset + (kBooterUcodeId - 1) * kBooterFuseBank.stride,
                   {kBooterFuseBank.name, kBooterFuseValue, 0, 0});
}

void Ad102::PowerOn() { registers_.PowerOn(); }

// The model's assumptions: a function reset takes the whole chip back to power-on (the PCIe capability offers FLR,
// as the RTX 4090's does, and the GPU's FLR resets the GPU): every claimed register at its power-on value (WPR2 down),
// the models' state cleared, every attached unit told (Bar0Block::Reset), and GFW boot done again, as the VBIOS's
// devinit leaves it after the reset (the same values as at power-on; the model runs no devinit). VRAM is kept: DRAM
// contents across a reset are not specified. VirtualDevice::ResetFunction has cleared the configuration registers.
void Ad102::OnFunctionReset() {
  // Marked in the persistent header, so that a process killed in the middle leaves a device whose next open completes
  // the reset.
  state_->BeginPowerTransition();
  std::vector<Block> blocks;
  {
    base::ReaderMutexLock lock(&blocks_mu_);
    blocks = blocks_;
  }
  for (const Block& b : blocks) b.block->Reset();
  {
    base::MutexLock lock(&gsp_rm_mu_);
    gsp_rm_.reset();  // the GSP's core is reset with the chip
  }
  (void)state_->Clear(kRegisterRegion);
  (void)state_->Clear(kModelStateRegion);
  PowerOn();
  state_->EndPowerTransition();
}

bool Ad102::StartGspRm() {
  // The LibOS arguments' address the driver left in the GSP falcon's mailboxes before the booter ran (nouveau
  // r535_gsp_init / tinygrad NV_FLCN.init_hw: MAILBOX0 low, MAILBOX1 high).
  const uint64_t args = uint64_t{priv_bus().Read32(r::kGsp.AddressOf<r::NV_PFALCON_FALCON_MAILBOX1>())} << 32 |
                        priv_bus().Read32(r::kGsp.AddressOf<r::NV_PFALCON_FALCON_MAILBOX0>());
  base::MutexLock lock(&gsp_rm_mu_);
  // A fresh GSP-RM per start: it keeps nothing across a reset of its core.
  gsp_rm_ = std::make_unique<GspRmModel>(memory(), priv_bus(), GspRmConfig{.fb_size = config_.vram_size});
  if (gsp_rm_injection_) {
    gsp_rm_injection_(*gsp_rm_);
    gsp_rm_injection_ = nullptr;
  }
  gsp_rm_->Boot(args);
  const bool running = gsp_rm_->state() != GspRmModel::State::kFailed;
  if (!running) {
    for (const absl::Status& error : gsp_rm_->errors()) Report(absl::StrCat("GSP-RM: ", error.message()));
  }
  return running;
}

void Ad102::RingGspRm() {
  base::MutexLock lock(&gsp_rm_mu_);
  if (gsp_rm_ == nullptr) return;  // no GSP-RM runs: the write only lands in the register
  const size_t errors_before = gsp_rm_->errors().size();
  gsp_rm_->OnDoorbell();
  const std::vector<absl::Status> errors = gsp_rm_->errors();
  for (size_t i = errors_before; i < errors.size(); ++i) Report(absl::StrCat("GSP-RM: ", errors[i].message()));
  if (gsp_rm_->state() == GspRmModel::State::kUnloaded) {
    // GSP-RM says it has stopped: bit 31 of the GSP falcon's MAILBOX0, what nouveau's r535_gsp_fini waits for after
    // UNLOADING_GUEST_DRIVER (it then resets the GSP).
    constexpr uint32_t kStoppedBit = 1u << 31;
    const uint32_t mailbox0 = r::kGsp.AddressOf<r::NV_PFALCON_FALCON_MAILBOX0>();
    priv_bus().Write32(mailbox0, priv_bus().Read32(mailbox0) | kStoppedBit);
  }
}

void Ad102::InjectIntoNextGspRm(std::function<void(GspRmModel&)> inject) {
  base::MutexLock lock(&gsp_rm_mu_);
  gsp_rm_injection_ = std::move(inject);
}

GspRmModel* Ad102::gsp_rm() {
  base::MutexLock lock(&gsp_rm_mu_);
  return gsp_rm_.get();
}

absl::Status Ad102::Attach(uint32_t base, uint32_t size, Bar0Block* block) {
  auto overlaps = [base, size](uint64_t other_base, uint64_t other_size) {
    return base < other_base + other_size && other_base < uint64_t{base} + size;
  };
  if (block == nullptr || size == 0 || base % 4 != 0 || size % 4 != 0 || uint64_t{base} + size > kBar0Size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cannot attach a %s block at BAR0 [%#x, %#x): a block needs a non-empty range of whole dwords inside the "
        "%#x-byte BAR0",
        name(), block == nullptr ? "null" : "register", base, uint64_t{base} + size, kBar0Size));
  }
  if (overlaps(kPromBase, kPromSize) || overlaps(kConfigMirrorBase, kConfigMirrorSize)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: BAR0 [%#x, %#x) overlaps the PROM window [%#x, %#x) or the PCI configuration mirror [%#x, %#x), which the "
        "chip model serves itself",
        name(), base, uint64_t{base} + size, kPromBase, kPromBase + kPromSize, kConfigMirrorBase,
        kConfigMirrorBase + kConfigMirrorSize));
  }
  base::MutexLock lock(&blocks_mu_);
  for (const Block& b : blocks_) {
    if (overlaps(b.base, b.size)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: BAR0 [%#x, %#x) overlaps the block attached at [%#x, %#x); attach each unit's range once", name(), base,
          uint64_t{base} + size, b.base, uint64_t{b.base} + b.size));
    }
  }
  blocks_.push_back({base, size, block});
  return absl::OkStatus();
}

Bar0Block* Ad102::FindBlock(uint32_t address, uint32_t* base) {
  base::ReaderMutexLock lock(&blocks_mu_);
  for (const Block& b : blocks_) {
    if (address >= b.base && address - b.base < b.size) {
      *base = b.base;
      return b.block;
    }
  }
  return nullptr;
}

uint32_t Ad102::Read(uint32_t address, PrivSource source) {
  address &= ~uint32_t{3};
  // The block is called without the lock held: its accesses may come back through the priv bus.
  uint32_t base = 0;
  if (Bar0Block* block = FindBlock(address, &base)) return block->Read32(address - base);
  if (address >= kPromBase && address - kPromBase < kPromSize) {
    const uint32_t offset = address - kPromBase;
    std::array<uint8_t, 4> bytes;
    for (uint32_t i = 0; i < 4; ++i) {
      bytes[i] = offset + i < vbios_.size() ? static_cast<uint8_t>(vbios_[offset + i]) : kErasedFlash;
    }
    uint32_t value;
    std::memcpy(&value, bytes.data(), 4);
    return value;
  }
  if (address >= kConfigMirrorBase && address - kConfigMirrorBase < kConfigMirrorSize) {
    absl::StatusOr<uint32_t> value = ReadConfig32(address - kConfigMirrorBase);
    return value.ok() ? *value : kUnclaimedPrivRead;
  }
  if (std::optional<uint32_t> value = registers_.Read(address)) return *value;
  unclaimed_.fetch_add(1, std::memory_order_acq_rel);
  Report(absl::StrFormat("%s read of unclaimed BAR0 register %#x: reads %#x (PRI error)",
                         source == PrivSource::kHost ? "host" : "falcon", address, kUnclaimedPrivRead));
  return kUnclaimedPrivRead;
}

void Ad102::Write(uint32_t address, uint32_t value, PrivSource source) {
  address &= ~uint32_t{3};
  const char* who = source == PrivSource::kHost ? "host" : "falcon";
  uint32_t base = 0;
  if (Bar0Block* block = FindBlock(address, &base)) {
    block->Write32(address - base, value);
    // The GSP's queue head is GSP-RM's doorbell (nouveau r535_gsp_cmdq_push): running GSP-RM looks at its queue.
    if (address == GspRmModel::kDoorbellRegister) RingGspRm();
    return;
  }
  if (address >= kPromBase && address - kPromBase < kPromSize) {
    refused_.fetch_add(1, std::memory_order_acq_rel);
    return Report(absl::StrFormat("%s write %#x to the PROM window at %#x dropped: the VBIOS flash is read-only", who,
                                  value, address));
  }
  if (address >= kConfigMirrorBase && address - kConfigMirrorBase < kConfigMirrorSize) {
    // As a configuration write of the function (nouveau's nvkm_pci_rom_shadow writes config 0x50 here).
    std::array<uint8_t, 4> bytes;
    std::memcpy(bytes.data(), &value, 4);
    (void)WriteConfig(address - kConfigMirrorBase, bytes);
    return;
  }
  switch (registers_.Write(address, value, source)) {
    case RegisterFile::WriteResult::kStored:
      return;
    case RegisterFile::WriteResult::kProtected:
      refused_.fetch_add(1, std::memory_order_acq_rel);
      return Report(
          absl::StrFormat("%s write %#x to %s (%#x): bits the %s may not change kept their value (priv level "
                          "protection)",
                          who, value, registers_.Find(address)->name, address, who));
    case RegisterFile::WriteResult::kUnclaimed:
      unclaimed_.fetch_add(1, std::memory_order_acq_rel);
      return Report(absl::StrFormat("%s write %#x to unclaimed BAR0 register %#x dropped", who, value, address));
  }
}

void Ad102::Report(std::string message) {
  base::MutexLock lock(&reports_mu_);
  if (reports_.size() >= kMaxReports) {
    ++dropped_reports_;
    return;
  }
  reports_.push_back(std::move(message));
}

std::vector<std::string> Ad102::TakeDiagnostics() {
  // What the falcons' ucode models said since the last take (why a BROM or a booter refused an image), then the
  // device's own reports.
  std::vector<std::string> falcons = gsp_->TakeLog();
  for (std::string& line : sec2_->TakeLog()) falcons.push_back(std::move(line));
  base::MutexLock lock(&reports_mu_);
  std::vector<std::string> out = std::move(falcons);
  for (std::string& report : reports_) out.push_back(std::move(report));
  reports_.clear();
  if (dropped_reports_ != 0) out.push_back(absl::StrFormat("%d more reports dropped", dropped_reports_));
  dropped_reports_ = 0;
  return out;
}

absl::StatusOr<pci::Device::SharedMemory> Ad102::ShareMemory(int bar) {
  if (bar != 1) return VirtualDevice::ShareMemory(bar);
  // BAR1 maps the start of VRAM (AddMemoryBar above), which is the start of the VRAM state file.
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> visible, MapMemory(1));
  return SharedMemory{state_->region_fd(kVramRegion), 0, visible.size()};
}

BAREGPU_REGISTER_VIRTUAL_DEVICE(
    kAd102Registered,
    pci::VirtualDeviceKind{
        "ad102", "virtual NVIDIA GeForce RTX 4090 (AD102)", firmware::nv::kNvidiaVendorId,
        firmware::nv::kVirtualAd102DeviceId,
        [](const std::string& name, const std::string&) -> absl::StatusOr<std::unique_ptr<pci::Device>> {
          BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<Ad102> device, Ad102::Open(name, Ad102Config::FromEnvironment()));
          return std::unique_ptr<pci::Device>(std::move(device));
        },
        // No virtual firmware of its own: the driver loads NVIDIA's real GSP files from the system's roots.
        nullptr});

}  // namespace nv::sim
