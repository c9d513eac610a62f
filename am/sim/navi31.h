// The virtual Navi31 (Radeon RX 7900 XTX) as seen over PCI: identity, BAR0 VRAM, BAR2 doorbells, BAR5 registers,
// with VRAM and registers in persistent state so that a second process finds the device as the first left it.
// Opened by name through pci::Open("sim:navi31[:INSTANCE]"). IP models attach to its register file.
#ifndef BAREGPU_AM_SIM_NAVI31_H_
#define BAREGPU_AM_SIM_NAVI31_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "am/regs/ip_bases.h"
#include "am/sim/device_errors.h"
#include "am/sim/doorbell_router.h"
#include "am/sim/gfx_model.h"
#include "am/sim/gmc_model.h"
#include "am/sim/gpu_clock.h"
#include "am/sim/ih_model.h"
#include "am/sim/isa/rdna3_executor.h"
#include "am/sim/loaded_firmware.h"
#include "am/sim/model_context.h"
#include "am/sim/model_state.h"
#include "am/sim/nbio_model.h"
#include "am/sim/psp_model.h"
#include "am/sim/register_file.h"
#include "am/sim/sdma_model.h"
#include "am/sim/smu_model.h"
#include "am/sim/sq_model.h"
#include "am/sim/wave_slots.h"
#include "base/bits.h"
#include "pci/sim/persistent_state.h"
#include "pci/sim/virtual_device.h"

namespace am::sim {

struct Navi31Config {
  uint64_t vram_size = base::GiB(24);  // RX 7900 XTX
  // BAR0 decodes a power of two: 32 GiB with resizable BAR at its largest (all of VRAM visible), or 256 MiB, the
  // size without it, where the rest of VRAM is reached through MM_INDEX/MM_DATA.
  uint64_t bar0_size = base::GiB(32);

  // The default, or small BAR when BAREGPU_SIM_SMALL_BAR=1.
  static Navi31Config FromEnvironment();
};

// The RAS/ECC interrupts the model can be told to raise (each as Linux registers it for Navi31).
enum class RasEvent {
  kCpEccError,       // GRBM_CP client, GFX_11_0_0__SRCID__CP_ECC_ERROR (gfx_v11_0)
  kAthubErrorEvent,  // BIF client, NBIF_7_4__SRCID__ERREVENT_ATHUB_INTERRUPT (nbio_v4_3 RAS error event)
};

class Navi31 final : public pci::sim::VirtualDevice {
 public:
  static constexpr uint16_t kDeviceId = 0x744c;  // Navi 31 [Radeon RX 7900 XT/7900 XTX] (PCI ID database)
  static constexpr uint64_t kDoorbellBarSize = base::MiB(2);
  static constexpr uint64_t kRegisterBarSize = base::MiB(1);
  // Register storage: dword addresses up to 2^27 cover every register of the segments the discovery table lists
  // (the highest: NBIO's sixth segment at 0x04040000 plus nbio_4_3_0_offset.h's largest BASE_IDX 5 offset,
  // 0x28a022d). Sparse: untouched pages cost nothing.
  static constexpr uint64_t kRegisterSpaceDwords = uint64_t{1} << 27;

  static absl::StatusOr<std::unique_ptr<Navi31>> Open(const std::string& name, const Navi31Config& config);
  // The persistent regions of a device with `config`, in the order of the region indexes below (for tests that
  // play a process killed inside the device).
  static std::vector<pci::sim::StateRegion> StateRegions(const Navi31Config& config);
  static constexpr size_t kVramRegion = 0;
  static constexpr size_t kRegisterRegion = 1;
  static constexpr size_t kModelStateRegion = 2;
  static constexpr size_t kPciStateRegion = 3;
  ~Navi31() override;

  const Navi31Config& config() const { return config_; }
  RegisterFile& registers() { return registers_; }
  // The bases this device reports in its discovery table (from sienna_cichlid_ip_offset.h).
  const regs::IpBases& bases() const { return bases_; }
  // True when this open powered the device on (no state was left by an earlier process).
  bool cold() const { return state_->cold(); }
  std::span<uint8_t> vram() const { return state_->region(kVramRegion); }
  SmuModel& smu() { return smu_; }
  NbioModel& nbio() { return nbio_; }
  GmcModel& gmc() { return gmc_; }
  GfxModel& gfx() { return *gfx_; }
  PspModel& psp() { return *psp_; }
  SdmaModel& sdma() { return *sdma_; }
  IhModel& ih() { return ih_; }
  DoorbellRouter& doorbells() { return doorbells_; }
  LoadedFirmware& firmware() { return firmware_; }
  DeviceErrorLog& errors() { return errors_; }
  std::vector<std::string> TakeDiagnostics() override;
  // BAR0 is the VRAM state file's CPU-visible part (a debugger maps it for a live view).
  absl::StatusOr<SharedMemory> ShareMemory(int bar) override;
  const GpuClock& clock() const { return clock_; }
  // Fault injection: an uncorrectable-error interrupt, as the RAS hardware would post it.
  void InjectRasInterrupt(RasEvent event);
  // Doorbell writes that were lost: the driver had not enabled the doorbell aperture, or a drop was injected.
  uint64_t dropped_doorbells() const { return doorbells_.dropped(); }

 private:
  class RegisterBar;
  class DoorbellBar;

  Navi31(const std::string& name, const Navi31Config& config, std::unique_ptr<pci::sim::PersistentState> state);
  void PowerOnDefaults();
  void AttachIndirectAccess();
  // What SMU's Mode1Reset does to the chip: every register back to its power-on value, the discovery binary
  // rewritten; VRAM contents otherwise kept.
  void Mode1Reset();
  // A PCI function reset (VFIO_DEVICE_RESET, the sysfs reset file: pci_reset_function) resets the whole chip. The
  // model's PCIe capability offers no FLR, so Linux would take a slot or bus reset (pci_reset_bus_function); either
  // takes the ASIC down as a mode1 reset does: firmware stopped, the PSP bootloader waiting for its first component,
  // the SMU silent. VRAM is kept, as in the mode1 reset (DRAM contents across a reset are not specified).
  void OnFunctionReset() override;

  Navi31Config config_;
  std::unique_ptr<pci::sim::PersistentState> state_;
  RegisterFile registers_;
  ModelState& model_state_;
  regs::IpBases bases_;
  GpuClock clock_;
  DoorbellRouter doorbells_;
  // The engines behind NBIO's S2A ports: the MEC behind GC's entries, the SDMA engines behind entry 2.
  DoorbellRouter gc_doorbells_;
  DoorbellRouter sdma_doorbells_;
  LoadedFirmware firmware_;
  DeviceErrorLog errors_;
  size_t diagnostics_cursor_ = 0;  // TakeDiagnostics' place in errors_ (one caller: the device's user)
  GmcModel gmc_;
  IhModel ih_;
  ModelContext context_;
  ModelContext sdma_context_;  // context_ with the SDMA port's doorbells
  SmuModel smu_;
  NbioModel nbio_;
  // The SQ's wave slots and its indirect registers over them (outlive the executor, whose threads publish there).
  WaveSlots wave_slots_;
  std::unique_ptr<SqModel> sq_;
  // Engines last: they run threads that use everything above, and stop first.
  std::unique_ptr<isa::Rdna3Executor> executor_;  // the shader engine DISPATCH_DIRECT runs (outlives gfx_)
  std::unique_ptr<PspModel> psp_;
  std::unique_ptr<GfxModel> gfx_;
  std::unique_ptr<SdmaModel> sdma_;
  std::unique_ptr<RegisterBar> register_bar_;
  std::unique_ptr<DoorbellBar> doorbell_bar_;
};

// The sienna_cichlid bases as an IpBases, for the blocks whose registers baregpu knows.
regs::IpBases Navi31Bases();

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_NAVI31_H_
