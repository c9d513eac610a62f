#include "am/sim/navi31.h"

#include <linux/pci_regs.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "am/discovery.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/nbif_srcid_constants.h"
#include "am/regs/nbio.h"
#include "am/regs/power_on_values.h"
#include "am/regs/register_space.h"
#include "am/sim/discovery_table.h"
#include "am/sim/navi31_ip_offsets.h"
#include "base/status_macros.h"
#include "firmware/virtual_firmware.h"
#include "pci/virtual_registry.h"

namespace am::sim {
namespace {

constexpr uint16_t kVendorAmd = 0x1002;
constexpr uint32_t kClassVgaController = 0x030000;  // PCI class 03 (display), subclass 00 (VGA), interface 00
constexpr uint8_t kRevisionXtx = 0xc8;              // the RX 7900 XTX's revision; the 7900 XT reads 0xcc
constexpr int kMsiVectors = 1;                      // the driver uses one vector: the IH ring's

// MSI capability body (after id/next), layout from linux/pci_regs.h: 64-bit message address, no masking.
constexpr std::array<uint8_t, 12> kMsiCapability = {PCI_MSI_FLAGS_64BIT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
// PCI Express capability body: version 2, endpoint (PCI_EXP_FLAGS_VERS | PCI_EXP_TYPE_ENDPOINT << 4).
constexpr std::array<uint8_t, 58> kPcieCapability = {2 | (PCI_EXP_TYPE_ENDPOINT << 4), 0};

struct BlockName {
  const char* block;
  regs::Ip ip;
};
constexpr BlockName kKnownBlocks[] = {
    {"GC", regs::Ip::kGc},     {"MMHUB", regs::Ip::kMmhub},   {"MP0", regs::Ip::kMp0}, {"MP1", regs::Ip::kMp1},
    {"NBIO", regs::Ip::kNbio}, {"OSSSYS", regs::Ip::kOsssys}, {"HDP", regs::Ip::kHdp}};

}  // namespace

regs::IpBases Navi31Bases() {
  regs::IpBases bases;
  for (const IpOffsets& offsets : kNavi31IpOffsets) {
    for (const BlockName& known : kKnownBlocks) {
      if (std::strcmp(offsets.block, known.block) != 0) continue;
      for (int segment = 0; segment < static_cast<int>(offsets.segments.size()); ++segment) {
        // NBIO's segment 0 really is at dword 0; elsewhere a zero means "no such segment".
        if (offsets.segments[segment] == 0 && !(known.ip == regs::Ip::kNbio && segment == 0)) continue;
        (void)bases.SetBase(known.ip, offsets.instance, segment, offsets.segments[segment]);
      }
    }
  }
  return bases;
}

Navi31Config Navi31Config::FromEnvironment() {
  Navi31Config config;
  if (const char* small = std::getenv("BAREGPU_SIM_SMALL_BAR"); small != nullptr && std::strcmp(small, "1") == 0) {
    config.bar0_size = base::MiB(256);
  }
  return config;
}

// BAR5: the register aperture. Byte offset / 4 is the dword address; 64-bit accesses are two dwords.
class Navi31::RegisterBar : public pci::MmioHandler {
 public:
  RegisterBar(RegisterFile& registers, NbioModel& nbio) : registers_(registers), nbio_(nbio) {}
  uint32_t Read32(uint64_t offset) override { return registers_.ReadDword(offset / 4); }
  void Write32(uint64_t offset, uint32_t value) override {
    if (nbio_.OnRegisterBarWrite(offset)) return;  // the remapped HDP flush page is not a register
    registers_.WriteDword(offset / 4, value);
  }

 private:
  RegisterFile& registers_;
  NbioModel& nbio_;
};

// BAR2: doorbells. Nothing lands while the driver has not enabled the doorbell aperture; what lands goes to the
// router, which wakes the engine whose queue owns the slot.
class Navi31::DoorbellBar : public pci::MmioHandler {
 public:
  DoorbellBar(NbioModel& nbio, DoorbellRouter& router) : nbio_(nbio), router_(router) {}
  uint32_t Read32(uint64_t offset) override { return router_.Read(offset / 4); }
  void Write32(uint64_t offset, uint32_t value) override {
    if (!nbio_.doorbell_aperture_enabled()) {
      router_.CountDropped();
      return;
    }
    router_.Write(offset / 4, value);
  }
  // A 64-bit doorbell (WDOORBELL64) lands whole: the engine wakes once and reads both dwords.
  void Write64(uint64_t offset, uint64_t value) override {
    if (!nbio_.doorbell_aperture_enabled()) {
      router_.CountDropped();
      return;
    }
    router_.Write64(offset / 4, value);
  }

 private:
  NbioModel& nbio_;
  DoorbellRouter& router_;
};

absl::StatusOr<std::unique_ptr<Navi31>> Navi31::Open(const std::string& name, const Navi31Config& config) {
  if (!base::IsPowerOfTwo(config.bar0_size) || config.vram_size == 0 || config.vram_size % base::MiB(1) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: BAR0 of %#x bytes and VRAM of %#x bytes: BAR0 must be a power of two, VRAM whole MiB",
                        name, config.bar0_size, config.vram_size));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<PersistentState> state,
                           PersistentState::Open(name, {{"vram", config.vram_size},
                                                        {"regs", kRegisterSpaceDwords * sizeof(uint32_t)},
                                                        {"model", sizeof(ModelState)}}));
  return std::unique_ptr<Navi31>(new Navi31(name, config, std::move(state)));
}

Navi31::Navi31(const std::string& name, const Navi31Config& config, std::unique_ptr<PersistentState> state)
    : VirtualDevice(name,
                    pci::sim::Identity{kVendorAmd, kDeviceId, kClassVgaController, kRevisionXtx, kVendorAmd, kDeviceId},
                    kMsiVectors),
      config_(config),
      state_(std::move(state)),
      registers_(std::span<uint32_t>(reinterpret_cast<uint32_t*>(state_->region(1).data()),
                                     state_->region(1).size() / sizeof(uint32_t))),
      model_state_(*reinterpret_cast<ModelState*>(state_->region(2).data())),
      bases_(Navi31Bases()),
      doorbells_(kDoorbellBarSize / 4),
      firmware_(model_state_),
      gmc_(registers_, bases_, vram(), dma(), ih_, errors_),
      ih_(registers_, bases_, gmc_, doorbells_, clock_, errors_, [this] { RaiseInterrupt(0); }),
      context_{registers_, bases_, gmc_, ih_, doorbells_, clock_, firmware_, errors_, model_state_},
      smu_(registers_, bases_, &model_state_, &gmc_),
      nbio_(registers_, bases_),
      register_bar_(std::make_unique<RegisterBar>(registers_, nbio_)),
      doorbell_bar_(std::make_unique<DoorbellBar>(nbio_, doorbells_)) {
  const uint64_t visible = std::min(config.bar0_size, config.vram_size);
  AddMemoryBar(0, vram().subspan(0, visible), config.bar0_size, /*is_64bit=*/true, /*prefetchable=*/true);
  AddRegisterBar(2, kDoorbellBarSize, /*is_64bit=*/true, doorbell_bar_.get());
  AddRegisterBar(5, kRegisterBarSize, /*is_64bit=*/false, register_bar_.get());
  AddCapability(PCI_CAP_ID_EXP, kPcieCapability);
  AddCapability(PCI_CAP_ID_MSI, kMsiCapability);
  AttachIndirectAccess();
  smu_.set_mode1_reset_handler([this] { Mode1Reset(); });
  if (state_->cold()) PowerOnDefaults();
  // After the power-on values: engines that a previous process left running start again from their state.
  psp_ = std::make_unique<PspModel>(context_, smu_);
  executor_ = std::make_unique<isa::Rdna3Executor>(context_);
  gfx_ = std::make_unique<GfxModel>(context_, executor_.get());
  sdma_ = std::make_unique<SdmaModel>(context_);
}

void Navi31::InjectRasInterrupt(RasEvent event) {
  InterruptEntry entry;
  switch (event) {
    case RasEvent::kCpEccError:
      entry.client_id = regs::ih::SOC21_IH_CLIENTID_GRBM_CP;
      entry.source_id = regs::ih::GFX_11_0_0__SRCID__CP_ECC_ERROR;
      break;
    case RasEvent::kAthubErrorEvent:
      entry.client_id = regs::ih::SOC21_IH_CLIENTID_BIF;
      entry.source_id = regs::ih::NBIF_7_4__SRCID__ERREVENT_ATHUB_INTERRUPT;
      break;
  }
  errors_.Report("ras", event == RasEvent::kCpEccError ? "injected CP ECC error" : "injected ATHUB error event");
  ih_.Post(entry);
}

void Navi31::Mode1Reset() {
  // Engines stop with the chip and come back as power-on engines; their state is cleared under them only once
  // they are quiet.
  sdma_.reset();  // the SDMA model has no Reset(): it is rebuilt (its hooks are replaced in place)
  gfx_->Reset();
  psp_->Reset();
  (void)state_->Clear(1);
  (void)state_->Clear(2);  // every model's internal state, the loaded firmware with it
  gmc_.Reset();
  smu_.Reset();
  PowerOnDefaults();
  gfx_->PowerOn();  // its banked registers (HQDs, SH_MEM_*, the MEC program counters) back to their reset values
  sdma_ = std::make_unique<SdmaModel>(context_);
}

// MM_INDEX/MM_DATA: a window onto VRAM (index bit 31 set) or the register space (clear) through BAR5, the only way
// to reach VRAM beyond a small BAR0.
void Navi31::AttachIndirectAccess() {
  auto target = [this]() -> uint64_t {
    const uint32_t index = registers_.Peek(kMmIndexDword);
    if ((index & kMmIndexAperture) == 0) return index;
    return (uint64_t{registers_.Peek(kMmIndexHiDword)} << 31) | (index & ~kMmIndexAperture);
  };
  registers_.OnRead(kMmDataDword, "nbio", [this, target](uint32_t) -> uint32_t {
    const uint64_t address = target();
    if ((registers_.Peek(kMmIndexDword) & kMmIndexAperture) == 0) return registers_.ReadDword(address / 4);
    if (address > vram().size() - 4) return pci::Mmio::kUnclaimedRead;
    uint32_t value;
    std::memcpy(&value, vram().data() + (address & ~uint64_t{3}), 4);
    return value;
  });
  registers_.OnWrite(kMmDataDword, "nbio", [this, target](uint32_t value) {
    const uint64_t address = target();
    if ((registers_.Peek(kMmIndexDword) & kMmIndexAperture) == 0) {
      registers_.WriteDword(address / 4, value);
    } else if (address <= vram().size() - 4) {
      std::memcpy(vram().data() + (address & ~uint64_t{3}), &value, 4);
    }
  });
  // The RSMU index/data pair (nbio_v4_3_get_pcie_index_offset / _data_offset): the driver's path to registers
  // beyond BAR5 (amdgpu_device_indirect_rreg/wreg), a byte address in the index.
  const uint64_t rsmu_index = RegisterAddress<regs::nbio::BIF_BX_PF0_RSMU_INDEX>(bases_);
  const uint64_t rsmu_data = RegisterAddress<regs::nbio::BIF_BX_PF0_RSMU_DATA>(bases_);
  registers_.OnRead(rsmu_data, "nbio", [this, rsmu_index](uint32_t) -> uint32_t {
    const uint64_t address = registers_.Peek(rsmu_index) / 4;
    return address < registers_.size_dwords() ? registers_.ReadDword(address) : pci::Mmio::kUnclaimedRead;
  });
  registers_.OnWrite(rsmu_data, "nbio", [this, rsmu_index](uint32_t value) {
    const uint64_t address = registers_.Peek(rsmu_index) / 4;
    if (address < registers_.size_dwords()) registers_.WriteDword(address, value);
  });
}

Navi31::~Navi31() {
  sdma_.reset();  // engine threads stop before anything they use goes away
  gfx_.reset();
  psp_.reset();
}

// What the hardware holds after power-on, before any driver ran.
void Navi31::PowerOnDefaults() {
  // Every register's reset value from the kernel's *_default.h (am/regs/power_on_values.h): halted engines start
  // halted (CP_MEC_RS64_CNTL.MEC_HALT, SDMAn_F32_CNTL.HALT) and a driver's read-modify-writes compute what they
  // compute on the part. Stored without running hooks, as the hardware holds them before anything is written;
  // the models that bank registers (the GFX model's HQDs) seed their banks themselves.
  for (const regs::PowerOnValue& reset : regs::PowerOnValues()) {
    const absl::StatusOr<uint64_t> address = bases_.Resolve(reset.ip, 0, reset.segment, reset.offset);
    if (address.ok() && *address < registers_.size_dwords()) registers_.Poke(*address, reset.value);
  }
  auto nbio = regs::IpRegisters<regs::Ip::kNbio, RegisterFile>::Create(registers_, bases_);
  if (nbio.ok()) {
    // RCC_CONFIG_MEMSIZE reports VRAM in MiB (Linux nbio_v4_3_get_memsize).
    nbio->Write(regs::nbio::RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE{}.set_raw(
        static_cast<uint32_t>(config_.vram_size / base::MiB(1))));
  }
  gmc_.PowerOnDefaults();
  // The IP discovery binary, which the GPU's firmware places at the top of VRAM at power-on.
  const std::vector<uint8_t> discovery = BuildNavi31Discovery();
  std::memcpy(vram().data() + config_.vram_size - kDiscoveryOffsetFromTop, discovery.data(), discovery.size());
}

BAREGPU_REGISTER_VIRTUAL_DEVICE(
    kNavi31Registered,
    pci::VirtualDeviceKind{
        "navi31", "virtual AMD Radeon RX 7900 XTX (Navi31, GC 11.0.0)", kVendorAmd, Navi31::kDeviceId,
        [](const std::string& name, const std::string&) -> absl::StatusOr<std::unique_ptr<pci::Device>> {
          BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<Navi31> device, Navi31::Open(name, Navi31Config::FromEnvironment()));
          return std::unique_ptr<pci::Device>(std::move(device));
        },
        // Its PSP accepts only the virtual firmware (and real files fail its checks, as virtual ones would fail
        // a real PSP).
        [] { return std::vector<std::string>{firmware::VirtualFirmwareDir()}; }});

}  // namespace am::sim
