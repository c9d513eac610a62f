// The virtual AD102 (GeForce RTX 4090) as seen over PCI: identity, BAR0 registers (16 MiB), BAR1 the VRAM aperture,
// BAR3 (32 MiB), with VRAM, registers, model state and configuration space in persistent state, so that a second
// process finds the device as the first left it. Opened by name through pci::Open("sim:ad102[:INSTANCE]").
//
// BAR0 routes each access, by absolute offset: to a unit's Bar0Block where one is attached (the falcon models at the
// GSP's and SEC2's bases), else to the PROM window (the virtual VBIOS), the PCI configuration mirror, or one of the
// registers the chip model claims (nv/sim/register_file.h); anything else is unclaimed priv space and reads as a PRI
// error value. A falcon's ucode reaches the same registers through priv_bus(), its DMA engine memory().
#ifndef BAREGPU_NV_SIM_AD102_H_
#define BAREGPU_NV_SIM_AD102_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "base/bits.h"
#include "base/mutex.h"
#include "nv/regs/flcn_status.h"
#include "nv/sim/bar0_block.h"
#include "nv/sim/falcon_model.h"
#include "nv/sim/gsp_rm_model.h"
#include "nv/sim/register_file.h"
#include "pci/sim/persistent_state.h"
#include "pci/sim/virtual_device.h"

namespace nv::sim {

struct Ad102Config {
  uint64_t vram_size = base::GiB(24);  // RTX 4090
  // BAR1 decodes a power of two: 32 GiB with resizable BAR (all of VRAM visible), or 256 MiB without it (the size
  // lspci shows on an RTX 4090 that did not resize it: geerlingguy/raspberry-pi-pcie-devices#504).
  uint64_t bar1_size = base::GiB(32);

  // The default, or the small BAR1 when BAREGPU_SIM_SMALL_BAR=1 (as sim:navi31 reads it).
  static Ad102Config FromEnvironment();
};

class Ad102 final : public pci::sim::VirtualDevice {
 public:
  // BAR0 and BAR3 as lspci shows them on an RTX 4090 (geerlingguy/raspberry-pi-pcie-devices#504: "Region 0: Memory
  // ... (32-bit, non-prefetchable) [size=16M]", "Region 3: Memory ... (64-bit, prefetchable) [size=32M]").
  static constexpr uint64_t kBar0Size = base::MiB(16);
  static constexpr uint64_t kBar3Size = base::MiB(32);
  // The expansion ROM BAR as the same lspci shows it ("Expansion ROM at ... [disabled] [size=512K]"), serving the
  // virtual VBIOS as the board's option ROM (pci::Device::ReadExpansionRom).
  static constexpr uint32_t kExpansionRomSize = 512 * 1024;
  // The PROM window (nv/regs/known_registers.h PROM_DATA: nouveau's nvbios_prom_read reads 1 MiB of 32-bit words
  // at 0x300000; tinygrad's NV_FLCN.prep_ucode reads the same 1 MiB). nouveau's nvbios_prom_init clears bit 0 of
  // config 0x50 (nvkm_pci_rom_shadow, "Disable the PCI ROM shadow so that we can read PROM") first and sets it again
  // after; tinygrad reads without it. What the part returns with the shadow on is not known here, so the window
  // serves the ROM either way and the bit is plain configuration storage.
  static constexpr uint32_t kPromBase = 0x300000;
  static constexpr uint32_t kPromSize = 0x100000;
  // The PCI configuration space mirror: nouveau's nv40_pci_rd32/wr32 (gp100_pci, AD102's) reach config offset N at
  // 0x088000 + N; tinygrad's rpc_set_gsp_system_info tells GSP-RM pciConfigMirrorBase 0x88000, size 0x1000 on
  // pre-Hopper chips.
  static constexpr uint32_t kConfigMirrorBase = 0x88000;
  static constexpr uint32_t kConfigMirrorSize = 0x1000;
  // What an unclaimed priv address reads: 0xbadf0200, NV_XAL_EP_SCPM_PRI_DUMMY_DATA_PATTERN_INIT (the only PRI error
  // read value in the vendored headers, gh100's pri_nv_xal_ep.h). RM's check for a failed BAR0 priv read is
  // value & FLCN_BAR0_PRIV_PRI_ERROR_MASK (0xfff00000) == FLCN_BAR0_PRIV_PRI_ERROR_CODE (0xbad00000) (535.113.01
  // flcnretval.h), which it matches. AD102's own value is in no header available here.
  static constexpr uint32_t kUnclaimedPrivRead = 0xbadf0200;
  static_assert(regs::flcn::IsPriError(kUnclaimedPrivRead));

  static absl::StatusOr<std::unique_ptr<Ad102>> Open(const std::string& name, const Ad102Config& config);
  // The persistent regions of a device with `config`, in the order of the region indexes below.
  static std::vector<pci::sim::StateRegion> StateRegions(const Ad102Config& config);
  static constexpr size_t kVramRegion = 0;
  static constexpr size_t kRegisterRegion = 1;
  static constexpr size_t kModelStateRegion = 2;
  static constexpr size_t kPciStateRegion = 3;
  // The models' own persistent state (the falcon and ucode models keep theirs here): one page, zero at power-on.
  static constexpr uint64_t kModelStateBytes = pci::kPageSize;
  ~Ad102() override;

  // Hands BAR0 bytes [base, base + size) to `block` (offsets relative to `base`). The block must outlive the device.
  // Fails (InvalidArgument) on a range that is not whole dwords inside BAR0, or that overlaps an attached block, the
  // PROM window or the configuration mirror.
  absl::Status Attach(uint32_t base, uint32_t size, Bar0Block* block);

  // Every BAR0 register by absolute offset, as a falcon's ucode reaches them (priv level above the host's).
  PrivBus& priv_bus();
  // FB (VRAM) and system memory (mapped DMA buffers only, only with bus mastering), as the chip's engines reach them.
  DeviceMemory& memory();

  // The GSP and SEC2 falcons, attached at their bases (kFalconWindowSize each). The GSP runs FWSEC (nv/sim/fwsec_model)
  // from the virtual VBIOS. Their state (IMEM, DMEM, CPUCTL) lives in this process: a second process finds them as
  // after a reset, halted code gone, while WPR2 and the registers persist.
  FalconModel& gsp() { return *gsp_; }
  FalconModel& sec2() { return *sec2_; }
  // GSP-RM (nv/sim/gsp_rm_model), once the GSP's RISC-V core was started (by the booter); null before, and after a
  // function reset. Every write of NV_PGSP_QUEUE_HEAD(0) rings it. Tests only: the pointer is valid until the next
  // start or reset.
  GspRmModel* gsp_rm();
  // Fault injection: `inject` is applied to the next GSP-RM the GSP's core starts, before it boots (its
  // CorruptNextChecksum, FailNextReply, LoseNextDoorbell), so a device-level test reaches what a driver would meet.
  void InjectIntoNextGspRm(std::function<void(GspRmModel&)> inject);

  const Ad102Config& config() const { return config_; }
  RegisterFile& registers() { return registers_; }
  std::span<uint8_t> vram() const { return state_->region(kVramRegion); }
  std::span<uint8_t> model_state() const { return state_->region(kModelStateRegion); }
  // True when this open powered the device on (no state was left by an earlier process).
  bool cold() const { return state_->cold(); }
  // Accesses nothing answered (unclaimed reads and writes), accesses refused (protected bits, PROM writes).
  uint64_t unclaimed_accesses() const { return unclaimed_.load(std::memory_order_acquire); }
  uint64_t refused_writes() const { return refused_.load(std::memory_order_acquire); }
  // BAR1 is the VRAM state file's CPU-visible part (a debugger maps it for a live view).
  absl::StatusOr<SharedMemory> ShareMemory(int bar) override;
  // What the model saw the driver do wrong since the last call (the first kMaxReports), and why a state was discarded.
  std::vector<std::string> TakeDiagnostics() override;
  static constexpr size_t kMaxReports = 64;

 private:
  class Bar0;
  class Bar3;
  class PrivPort;
  class Memory;
  struct Block {
    uint32_t base;
    uint32_t size;
    Bar0Block* block;
  };

  Ad102(const std::string& name, const Ad102Config& config, std::unique_ptr<pci::sim::PersistentState> state,
        std::string vbios);
  void ClaimRegisters();
  // What the board holds after power-on and the VBIOS's devinit: every claimed register at its power-on value.
  void PowerOn();
  // A PCI function reset (VFIO_DEVICE_RESET, the sysfs reset file) resets the whole chip; see ad102.cc.
  void OnFunctionReset() override;

  uint32_t Read(uint32_t address, PrivSource source);
  void Write(uint32_t address, uint32_t value, PrivSource source);
  Bar0Block* FindBlock(uint32_t address, uint32_t* base);
  void Report(std::string message);
  // The GSP's RISC-V core started: GSP-RM boots from the LibOS arguments the GSP's mailboxes point at.
  bool StartGspRm();
  void RingGspRm();

  Ad102Config config_;
  std::unique_ptr<pci::sim::PersistentState> state_;
  RegisterFile registers_;
  const std::string vbios_;  // the PROM's contents: firmware::nv::BuildVirtualVbios("ad102")

  base::Mutex blocks_mu_;
  std::vector<Block> blocks_ ABSL_GUARDED_BY(blocks_mu_);

  std::atomic<uint64_t> unclaimed_{0};
  std::atomic<uint64_t> refused_{0};
  base::Mutex reports_mu_;
  std::vector<std::string> reports_ ABSL_GUARDED_BY(reports_mu_);
  size_t dropped_reports_ ABSL_GUARDED_BY(reports_mu_) = 0;

  std::unique_ptr<Bar0> bar0_;
  std::unique_ptr<Bar3> bar3_;
  std::unique_ptr<PrivPort> priv_bus_;
  std::unique_ptr<Memory> memory_;
  std::unique_ptr<FalconModel> gsp_;
  std::unique_ptr<FalconModel> sec2_;
  base::Mutex gsp_rm_mu_;  // GspRmModel is driven by one caller at a time
  std::unique_ptr<GspRmModel> gsp_rm_ ABSL_GUARDED_BY(gsp_rm_mu_);
  std::function<void(GspRmModel&)> gsp_rm_injection_ ABSL_GUARDED_BY(gsp_rm_mu_);
};

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_AD102_H_
