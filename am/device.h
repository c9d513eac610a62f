// A GPU brought up by baregpu over its BARs: discovery, the register space, the memory manager, and the IP blocks
// run in order (SOC, GMC, IH, then the firmware-dependent blocks), each step timed and recorded. It speaks only
// pci::Device, so the same code drives `sim:navi31` and a 7900 XTX bound to vfio-pci.
#ifndef BAREGPU_AM_DEVICE_H_
#define BAREGPU_AM_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "am/discovery.h"
#include "am/ip_block.h"
#include "am/memory_manager.h"
#include "am/register_io.h"
#include "am/regs/register_space.h"
#include "firmware/store.h"
#include "pci/device.h"

namespace am {

class Gfx;
class Gmc;
class Ih;
class Psp;
class Smu;
class Soc;

struct DeviceOptions {
  // Where firmware comes from (BAREGPU_FIRMWARE_PATH, /lib/firmware/updates, /lib/firmware by default).
  firmware::Store firmware = firmware::Store::Default();
};

struct BootStep {
  std::string block;
  std::string phase;  // "init_sw", "init_hw", "fini_hw"
  absl::Duration duration;
  absl::Status status;
};

class Device {
 public:
  // Reads discovery, checks that every IP version is one baregpu supports, maps the BARs and sets up memory
  // management. Touches no engine state.
  static absl::StatusOr<std::unique_ptr<Device>> Open(std::unique_ptr<pci::Device> pci, DeviceOptions options = {});
  ~Device();

  // Runs every block's init_sw and init_hw in order; stops at the first failure (recorded in steps()).
  absl::Status Boot();
  // fini_hw in reverse order.
  absl::Status Fini();

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

  Soc& soc() { return *soc_; }
  Gmc& gmc() { return *gmc_; }
  Ih& ih() { return *ih_; }
  Psp& psp() { return *psp_; }
  Smu& smu() { return *smu_; }
  Gfx& gfx() { return *gfx_; }

 private:
  Device(std::unique_ptr<pci::Device> pci, DeviceDiscovery discovery);
  absl::Status Run(IpBlock& block, absl::string_view phase, absl::Status (IpBlock::*step)());

  std::unique_ptr<pci::Device> pci_;
  DeviceDiscovery discovery_;
  regs::IpBases bases_;
  std::unique_ptr<RegisterIo> io_;
  std::unique_ptr<MemoryManager> memory_;
  uint64_t fb_start_ = 0;
  std::unique_ptr<Soc> soc_;
  std::unique_ptr<Gmc> gmc_;
  std::unique_ptr<Ih> ih_;
  std::unique_ptr<Psp> psp_;
  std::unique_ptr<Smu> smu_;
  std::unique_ptr<Gfx> gfx_;
  std::vector<IpBlock*> blocks_;
  std::vector<BootStep> steps_;
};

// The IP versions this driver supports (Navi31's); anything else is refused at Open with its name.
absl::Status CheckSupportedVersions(const Discovery& discovery);

}  // namespace am

#endif  // BAREGPU_AM_DEVICE_H_
