#include "am/sim/navi31.h"

#include <linux/pci_regs.h>

#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <optional>
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
// An add-in board's own subsystem id, as a real 7900 XTX carries it: PowerColor (Tul Corporation) 148c, RX 7900 XTX
// Red Devil 2422 (ilya-zlobintsev/LACT#533: "GPU 1002:744C-148C:2422").
constexpr uint16_t kSubsystemVendorPowerColor = 0x148c;
constexpr uint16_t kSubsystemRx7900XtxRedDevil = 0x2422;

// Resizable BAR (PCI_EXT_CAP_ID_REBAR, layout PCI_REBAR_* in linux/pci_regs.h) as lspci shows it on a real
// 7900 XTX (geerlingguy/raspberry-pi-pcie-devices#503): BAR 0 supports 256MB..32GB, BAR 2 2MB..256MB. A size is
// encoded as log2(bytes) - 20: CAP bit (4 + n) offers 2^n MiB, CTRL[13:8] holds the current n.
constexpr uint32_t RebarSizeCode(uint64_t bytes) { return static_cast<uint32_t>(std::countr_zero(bytes)) - 20; }
constexpr uint32_t RebarSizes(uint64_t smallest, uint64_t largest) {
  uint32_t bits = 0;
  for (uint64_t size = smallest; size <= largest; size *= 2) bits |= uint32_t{1} << (4 + RebarSizeCode(size));
  return bits;
}
constexpr int kResizableBars = 2;
constexpr uint8_t kRebarVersion = 1;  // the capability's only version

std::array<uint8_t, 16> RebarCapability(uint64_t bar0_size, uint64_t bar2_size) {
  const uint32_t words[4] = {
      RebarSizes(base::MiB(256), base::GiB(32)),
      0 | (kResizableBars << PCI_REBAR_CTRL_NBAR_SHIFT) | (RebarSizeCode(bar0_size) << PCI_REBAR_CTRL_BAR_SHIFT),
      RebarSizes(base::MiB(2), base::MiB(256)), 2 | (RebarSizeCode(bar2_size) << PCI_REBAR_CTRL_BAR_SHIFT)};
  std::array<uint8_t, 16> body;
  std::memcpy(body.data(), words, sizeof(words));
  return body;
}

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
      for (int segment = 0; segment < offsets.count; ++segment) {
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
// The SMU's answer to a Mode1Reset message is the last thing the chip does before it resets: the access after it
// (the driver's read of the answer, in Linux and tinygrad) still sees the old chip, and then it resets.
class Navi31::RegisterBar : public pci::MmioHandler {
 public:
  explicit RegisterBar(Navi31& device) : device_(device) {}
  uint32_t Read32(uint64_t offset) override {
    const bool reset_after = device_.smu_.TakeAnsweredMode1Reset();
    const uint32_t value = device_.registers_.ReadDword(offset / 4);
    if (reset_after) ResetChip();
    return value;
  }
  void Write32(uint64_t offset, uint32_t value) override {
    const bool reset_after = device_.smu_.TakeAnsweredMode1Reset();
    // The remapped HDP flush page is not a register.
    if (!device_.nbio_.OnRegisterBarWrite(offset)) device_.registers_.WriteDword(offset / 4, value);
    if (reset_after) ResetChip();
  }

 private:
  void ResetChip() {
    // amdgpu_device_mode1_reset clears bus mastering before it asks for the reset, so that no DMA is in flight
    // when the chip goes down; the part does not refuse, but a driver that skips it is told.
    absl::StatusOr<uint16_t> command = device_.ReadConfig16(PCI_COMMAND);
    if (command.ok() && (*command & PCI_COMMAND_MASTER) != 0) {
      device_.errors_.Report("smu",
                             "mode1 reset with bus mastering enabled (PCI_COMMAND.MASTER): DMA may be in flight as "
                             "the chip goes down; clear it first, as amdgpu_device_mode1_reset does");
    }
    device_.Mode1Reset();
  }

  Navi31& device_;
};

// BAR2: doorbells. Nothing lands while the driver has not enabled the doorbell aperture; what lands goes through
// NBIO's S2A routing to the engines behind the port whose entry covers it, or is lost when none does.
class Navi31::DoorbellBar : public pci::MmioHandler {
 public:
  DoorbellBar(NbioModel& nbio, DoorbellRouter& router, DeviceErrorLog& errors)
      : nbio_(nbio), router_(router), errors_(errors) {}
  uint32_t Read32(uint64_t offset) override { return router_.Read(offset / 4); }
  void Write32(uint64_t offset, uint32_t value) override {
    if (const DoorbellPort port = Route(offset, value); port != DoorbellPort::kNone)
      router_.Write(offset / 4, value, port);
  }
  // A 64-bit doorbell (WDOORBELL64) lands whole: the engine wakes once and reads both dwords.
  void Write64(uint64_t offset, uint64_t value) override {
    if (const DoorbellPort port = Route(offset, value); port != DoorbellPort::kNone) {
      router_.Write64(offset / 4, value, port);
    }
  }

 private:
  DoorbellPort Route(uint64_t offset, uint64_t value) {
    if (!nbio_.doorbell_aperture_enabled()) {
      router_.CountDropped();
      return DoorbellPort::kNone;
    }
    const DoorbellPort port = nbio_.RouteDoorbell(offset / 4);
    if (port == DoorbellPort::kNone) {
      router_.CountDropped();
      errors_.Report("nbio", absl::StrFormat("doorbell write %#x at BAR2 offset %#x (dword %#x) lost: no enabled S2A "
                                             "doorbell entry covers it (%s)",
                                             value, offset, offset / 4, nbio_.DescribeDoorbellRouting()));
    }
    return port;
  }

  NbioModel& nbio_;
  DoorbellRouter& router_;
  DeviceErrorLog& errors_;
};

std::vector<pci::sim::StateRegion> Navi31::StateRegions(const Navi31Config& config) {
  return {// VRAM's checksum covers what the firmware writes there at power-on: the discovery binary in its top 64 KiB.
          {"vram", config.vram_size, config.vram_size - kDiscoveryOffsetFromTop, kDiscoveryOffsetFromTop},
          {"regs", kRegisterSpaceDwords * sizeof(uint32_t)},
          {"model", sizeof(ModelState)},
          {"pci", kPersistentConfigBytes}};
}

absl::StatusOr<std::unique_ptr<Navi31>> Navi31::Open(const std::string& name, const Navi31Config& config) {
  if (!base::IsPowerOfTwo(config.bar0_size) || config.vram_size == 0 || config.vram_size % base::MiB(1) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: BAR0 of %#x bytes and VRAM of %#x bytes: BAR0 must be a power of two, VRAM whole MiB",
                        name, config.bar0_size, config.vram_size));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::sim::PersistentState> state,
                           pci::sim::PersistentState::Open(name, StateRegions(config)));
  return std::unique_ptr<Navi31>(new Navi31(name, config, std::move(state)));
}

Navi31::Navi31(const std::string& name, const Navi31Config& config, std::unique_ptr<pci::sim::PersistentState> state)
    : VirtualDevice(name,
                    pci::sim::Identity{kVendorAmd, kDeviceId, kClassVgaController, kRevisionXtx,
                                       kSubsystemVendorPowerColor, kSubsystemRx7900XtxRedDevil},
                    kMsiVectors),
      config_(config),
      state_(std::move(state)),
      registers_(std::span<uint32_t>(reinterpret_cast<uint32_t*>(state_->region(kRegisterRegion).data()),
                                     state_->region(kRegisterRegion).size() / sizeof(uint32_t))),
      model_state_(*reinterpret_cast<ModelState*>(state_->region(kModelStateRegion).data())),
      bases_(Navi31Bases()),
      clock_(StateBlock<uint64_t>(model_state_.clock)),
      doorbells_(kDoorbellBarSize / 4),
      gc_doorbells_(doorbells_, DoorbellPort::kGc),
      sdma_doorbells_(doorbells_, DoorbellPort::kSdma),
      firmware_(model_state_),
      gmc_(registers_, bases_, vram(), dma(), ih_, errors_),
      ih_(registers_, bases_, gmc_, doorbells_, clock_, errors_, [this] { RaiseInterrupt(0); }),
      context_{registers_, bases_, gmc_, ih_, gc_doorbells_, clock_, firmware_, errors_, model_state_, &dma()},
      sdma_context_{registers_, bases_, gmc_, ih_, sdma_doorbells_, clock_, firmware_, errors_, model_state_, &dma()},
      smu_(registers_, bases_, &model_state_, &gmc_),
      nbio_(registers_, bases_),
      register_bar_(std::make_unique<RegisterBar>(*this)),
      doorbell_bar_(std::make_unique<DoorbellBar>(nbio_, doorbells_, errors_)) {
  const uint64_t visible = std::min(config.bar0_size, config.vram_size);
  AddMemoryBar(0, vram().subspan(0, visible), config.bar0_size, /*is_64bit=*/true, /*prefetchable=*/true);
  // BAR2 is a 64-bit prefetchable memory BAR on Radeon boards (lspci of a Navi 21, clbr/radeontop#139: "Region 2:
  // Memory ... (64-bit, prefetchable) [size=2M]"), resizable on Navi31 (above).
  AddRegisterBar(2, kDoorbellBarSize, /*is_64bit=*/true, doorbell_bar_.get(), /*prefetchable=*/true);
  AddRegisterBar(5, kRegisterBarSize, /*is_64bit=*/false, register_bar_.get());
  AddCapability(PCI_CAP_ID_EXP, kPcieCapability);
  AddCapability(PCI_CAP_ID_MSI, kMsiCapability);
  AddExtendedCapability(PCI_EXT_CAP_ID_REBAR, kRebarVersion, RebarCapability(config.bar0_size, kDoorbellBarSize));
  // Configuration space persists with VRAM and registers: a second process finds bus mastering as the first left it.
  PersistConfig(state_->region(kPciStateRegion));
  AttachIndirectAccess();
  // GC is powered by the RLC autoload; its hub takes no writes before (docs/fidelity.md, B2).
  gmc_.GateGcHubWrites([this] { return firmware_.rlc_autoloaded(); });
  if (!state_->discarded().empty()) errors_.Report("state", state_->discarded());
  if (state_->cold()) {
    PowerOnDefaults();
    state_->EndPowerTransition();
  } else if (state_->interrupted_transition()) {
    // The process that held the device died inside a power-on or a mode1 reset (issue 23, defect 5: the register
    // file cleared, the power-on values not yet back, RCC_CONFIG_MEMSIZE 0). The chip completes a reset without its
    // driver: so does the model, before any engine starts.
    errors_.Report("state", absl::StrFormat("%s: its holder died during a power-on or mode1 reset; the reset is "
                                            "completed now (registers and model state back to power-on, VRAM kept)",
                                            name));
    ResetCommandRegister();
    (void)state_->Clear(kRegisterRegion);
    (void)state_->Clear(kModelStateRegion);
    gmc_.Reset();
    smu_.Reset();
    PowerOnDefaults();
    state_->EndPowerTransition();
  }
  // After the power-on values: engines that a previous process left running start again from their state.
  psp_ = std::make_unique<PspModel>(context_, smu_);
  sq_ = std::make_unique<SqModel>(context_, wave_slots_);
  executor_ = std::make_unique<isa::Rdna3Executor>(context_, /*workers=*/0, &wave_slots_);
  gfx_ = std::make_unique<GfxModel>(context_, executor_.get());
  sdma_ = std::make_unique<SdmaModel>(sdma_context_);
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
  // The chip's reset takes its PCI function with it: no bus mastering until the driver restores the command register
  // (amdgpu_device_mode1_reset saves the PCI state before and loads it after the reset).
  // Marked in the persistent header, so that a process killed before the power-on values are back leaves a device
  // whose next open completes the reset (see the constructor).
  state_->BeginPowerTransition();
  ResetCommandRegister();
  // Engines stop with the chip and come back as power-on engines; their state is cleared under them only once
  // they are quiet.
  sdma_.reset();  // the SDMA model has no Reset(): it is rebuilt (its hooks are replaced in place)
  gfx_->Reset();
  psp_->Reset();
  (void)state_->Clear(kRegisterRegion);
  (void)state_->Clear(kModelStateRegion);  // every model's internal state, the loaded firmware with it
  gmc_.Reset();
  smu_.Reset();
  PowerOnDefaults();
  gfx_->PowerOn();  // its banked registers (HQDs, SH_MEM_*, the MEC program counters) back to their reset values
  sdma_ = std::make_unique<SdmaModel>(sdma_context_);
  state_->EndPowerTransition();
}

void Navi31::OnFunctionReset() { Mode1Reset(); }

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

absl::StatusOr<pci::Device::SharedMemory> Navi31::ShareMemory(int bar) {
  if (bar != 0) return VirtualDevice::ShareMemory(bar);
  // BAR0 maps the start of VRAM (AddMemoryBar above), which is the start of the VRAM state file.
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> visible, MapMemory(0));
  return SharedMemory{state_->region_fd(kVramRegion), 0, visible.size()};
}

std::vector<std::string> Navi31::TakeDiagnostics() {
  std::vector<std::string> out;
  for (const DeviceError& e : errors_.Since(diagnostics_cursor_)) out.push_back(absl::StrCat(e.model, ": ", e.message));
  return out;
}

}  // namespace am::sim
