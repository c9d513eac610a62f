// A GPU brought up by baregpu over its BARs: discovery, the register space, the memory manager, and the IP blocks
// run in order (SOC, GMC, IH, then the firmware-dependent blocks), each step timed and recorded. It speaks only
// pci::Device, so the same code drives `sim:navi31` and a 7900 XTX bound to vfio-pci.
#ifndef BAREGPU_AM_DEVICE_H_
#define BAREGPU_AM_DEVICE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "am/discovery.h"
#include "am/ip_block.h"
#include "am/memory_manager.h"
#include "am/queue_reset.h"
#include "am/register_io.h"
#include "am/regs/register_space.h"
#include "base/mutex.h"
#include "firmware/requirements.h"
#include "firmware/store.h"
#include "pci/device.h"

namespace am {

// The register aperture's BAR (amdgpu_device_init maps rmmio from BAR 5 on every ASIC since Bonaire).
inline constexpr int kRegisterBar = 5;

class CompletionInterrupts;
class Gfx;
class Gmc;
class Ih;
class Psp;
class Sdma;
class Smu;
class Soc;

struct DeviceOptions {
  // Where firmware comes from. Unset: BAREGPU_FIRMWARE_PATH, then the roots the device's kind supplies
  // (pci::Device::firmware_roots, e.g. a virtual GPU's virtual firmware), then /lib/firmware/updates, /lib/firmware
  // (firmware::DeviceSearchRoots).
  std::optional<firmware::Store> firmware;
  // amdgpu's vm_fault_stop=2 ("always"): a VM fault is not redirected to the dummy page, so the engine that made
  // the access stops (*hub_v3_0_set_fault_enable_default(false), which also sets CRASH_ON_*_RETRY_FAULT). Unset, as
  // amdgpu's default: faults land in the dummy page and the engine runs on; the fault still reaches the IH.
  bool vm_fault_stop = false;
};

// How a boot went about it.
enum class BootKind {
  kFull,            // a device nobody had initialised (or power-cycled): every block
  kFullAfterReset,  // initialised by another driver, a reset was asked for, or firmware was left half started: a chip
                    // reset (mode1, or a PCI function reset without SMU firmware), then every block
  kPartial,         // baregpu left it booted: the firmware is running, only SOC, GMC, IH, GFX and SDMA again
};
absl::string_view BootKindName(BootKind kind);

struct BootOptions {
  bool full_reset = false;  // a full boot whatever state the device is in (with a mode1 reset if firmware runs)
};

struct BootStep {
  std::string block;
  std::string phase;  // "init_sw", "init_hw", "fini_hw"
  absl::Duration duration;
  absl::Status status;
  absl::Time start;  // when it began: tells which step a traced register access belongs to
};

// What BAREGPU_TRACE asks every device opened in this process to trace, to stderr, as tinygrad's AM_DEBUG does:
// a comma-separated list; "regs" is every register access, decoded, under a "== DEVICE: block phase" line per boot
// step; "packets" every packet given to a ring (the driver's and HCQ's), decoded, with its indirect buffers. Formatted
// as it happens, so traced step times include the printing (`baregpu boot --trace=regs` does not).
inline constexpr char kTraceEnvironmentVariable[] = "BAREGPU_TRACE";
struct TraceOptions {
  bool regs = false;
  bool packets = false;  // every packet written to a ring, decoded, with its indirect buffers (am/packet_trace.h)
};
// Parses the variable's value; an unknown entry is an InvalidArgument naming the variable and the accepted values.
absl::StatusOr<TraceOptions> ParseTraceOptions(absl::string_view value);

// The firmware files a device with these discovered IP versions needs (firmware::RequiredFiles over the GC, MP0,
// MP1 and SDMA versions): for a device baregpu drives and for tools that only read its discovery table.
absl::StatusOr<std::vector<firmware::RequiredFile>> RequiredFirmware(const Discovery& discovery);

class Device {
 public:
  // SCRATCH_REG7 after a full boot by baregpu: the next open may boot partially. (tinygrad's AM keeps a similar
  // flag in a scratch register; this value is baregpu's own: "BGPU" in ASCII, then a format version.)
  static constexpr uint32_t kBootedFlag = 0x42475001;

  // Reads discovery, checks that every IP version is one baregpu supports, maps the BARs and sets up memory
  // management. Touches no engine state.
  static absl::StatusOr<std::unique_ptr<Device>> Open(std::unique_ptr<pci::Device> pci, DeviceOptions options = {});
  // Opens the PCI device by name ("sim:navi31", "0000:03:00.0"; pci::Open), sets the DMA mask the GMC addresses
  // (44 bits, gmc_v11_0_sw_init), then Open above.
  static absl::StatusOr<std::unique_ptr<Device>> Open(absl::string_view name, DeviceOptions options = {});
  ~Device();

  // Finds out what state the device is in (scratch flag, sOS alive), resets it if another driver left it
  // initialised, then runs every block's init_sw and, for the blocks the boot kind needs, init_hw; stops at the
  // first failure (recorded in steps()). A partial boot that fails falls back to a reset and a full boot.
  absl::Status Boot(BootOptions options = {});
  BootKind boot_kind() const { return boot_kind_; }
  // fini_hw in reverse order.
  absl::Status Fini();
  // Stops the compute and copy engines (HQD dequeue, SDMA ring off) so they touch no memory any more; the next
  // Boot loads them again.
  absl::Status StopQueues();

  // Resets every queue that still holds unfinished work — after a wait timed out on a hang, or a fault stopped an
  // engine — and returns what each one lost; an idle queue is left alone. The device stays usable. An error
  // names the queue that could not be brought back (then only Boot({.full_reset = true}) helps).
  absl::StatusOr<std::vector<QueueReset>> RecoverQueues();

  // The firmware files the discovered IP versions need (firmware::RequiredFiles), for the blocks that load them.
  absl::StatusOr<std::vector<firmware::RequiredFile>> RequiredFirmware() const;

  pci::Device& pci() { return *pci_; }
  RegisterIo& io() { return *io_; }
  const DeviceDiscovery& discovery() const { return discovery_; }
  const regs::IpBases& bases() const { return bases_; }
  MemoryManager& memory() { return *memory_; }
  const std::vector<BootStep>& steps() const { return steps_; }

  template <regs::Ip kIp>
  regs::IpRegisters<kIp, RegisterIo> Regs() {
    return *regs::IpRegisters<kIp, RegisterIo>::Create(*io_, bases_);
  }

  // Where VRAM sits in the GPU's physical (MC) address space (the FB location the VBIOS programmed).
  uint64_t fb_start() const { return fb_start_; }
  uint64_t McAddress(uint64_t vram_offset) const { return fb_start_ + vram_offset; }
  // The physical address of VRAM at `vram_offset` (amdgpu_gmc_vram_mc2pa: the MC address less vram_start plus
  // vram_base_offset, which gmc_v11_0_vram_gtt_location reads from MMMC_VM_FB_OFFSET).
  uint64_t VramPhysicalAddress(uint64_t vram_offset) const { return fb_offset_ + vram_offset; }
  bool vm_fault_stop() const { return vm_fault_stop_; }

  Soc& soc() { return *soc_; }
  Gmc& gmc() { return *gmc_; }
  Ih& ih() { return *ih_; }
  Psp& psp() { return *psp_; }
  Smu& smu() { return *smu_; }
  Gfx& gfx() { return *gfx_; }
  Sdma& sdma() { return *sdma_; }
  // The completion interrupts sleeping waiters hold (MSI enabled on first use).
  CompletionInterrupts& completion_interrupts() { return *completion_interrupts_; }

 private:
  Device(std::unique_ptr<pci::Device> pci, DeviceDiscovery discovery);
  // BAREGPU_TRACE=regs: every register access to stderr, with a heading line when the boot step changes.
  void TraceRegistersToStderr();
  void SetCurrentStep(std::string step);
  // Creates the IP blocks the discovered versions call for (the table in device.cc), in init order.
  absl::Status CreateBlocks(firmware::Store& firmware);
  absl::Status Run(IpBlock& block, absl::string_view phase, absl::Status (IpBlock::*step)());
  absl::Status RunBlocks(bool partial);
  // Resets the whole chip the way soc21_asic_reset would (the SMU's mode1 reset, or a PCI function reset when the
  // SMU's firmware is not running) and records it as a step.
  absl::Status ResetAsic();
  enum class ResetMethod { kMode1, kPciFunction };
  absl::Status ResetChip(ResetMethod method);
  // What resets the chip when the driver cannot: `baregpu sim reset NAME`, or the PCI reset of a real function.
  std::string ResetFix() const;

  std::unique_ptr<pci::Device> pci_;
  DeviceDiscovery discovery_;
  regs::IpBases bases_;
  std::unique_ptr<RegisterIo> io_;
  std::unique_ptr<MemoryManager> memory_;
  uint64_t fb_start_ = 0, fb_offset_ = 0;
  bool vm_fault_stop_ = false;
  std::unique_ptr<Soc> soc_;
  std::unique_ptr<Gmc> gmc_;
  std::unique_ptr<Ih> ih_;
  std::unique_ptr<Psp> psp_;
  std::unique_ptr<Smu> smu_;
  std::unique_ptr<Gfx> gfx_;
  std::unique_ptr<Sdma> sdma_;
  std::vector<IpBlock*> blocks_;
  std::vector<BootStep> steps_;
  BootKind boot_kind_ = BootKind::kFull;
  // The step running ("gmc init_hw"; empty between steps) and the one the stderr trace last headed.
  base::Mutex trace_mutex_;
  std::string current_step_ ABSL_GUARDED_BY(trace_mutex_);
  std::optional<std::string> traced_step_ ABSL_GUARDED_BY(trace_mutex_);
  // Last: it disables the MSI it enabled before the blocks and pci_ go.
  std::unique_ptr<CompletionInterrupts> completion_interrupts_;
};

// The IP versions this driver supports (Navi31's); anything else is refused at Open with its name.
absl::Status CheckSupportedVersions(const Discovery& discovery);

}  // namespace am

#endif  // BAREGPU_AM_DEVICE_H_
