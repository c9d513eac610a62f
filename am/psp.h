// The PSP (MP0 13.0.0) block: loads every firmware the GPU needs, as psp_v13_0.c / amdgpu_psp.c do with PSP
// firmware loading. If the sOS is not alive, the bootloader gets the sOS package's components (KDB, SPL, SYS_DRV,
// SOC_DRV, INTF_DRV, DBG_DRV, RAS_DRV, SOS) through C2PMSG_35/36; then the KM ring is created (C2PMSG_64/69/70/71)
// and commands go through it: LOAD_TOC (which sizes the TMR), LOAD_IP_FW for the SMU firmware, SETUP_TMR, LOAD_IP_FW
// for every other IP firmware, and AUTOLOAD_RLC, which starts the RLC and the CP firmware.
//
// Firmware comes from a firmware::Store; which files and which PSP types each provides comes from
// firmware::RequiredFiles for the device's IP versions. Every failure names the step, the firmware file and the
// PSP's status, decoded.
#ifndef BAREGPU_AM_PSP_H_
#define BAREGPU_AM_PSP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "am/ip_block.h"
#include "am/regs/psp.h"
#include "firmware/container.h"
#include "firmware/requirements.h"
#include "firmware/store.h"

namespace am {

class Device;

class Psp final : public IpBlock {
 public:
  static constexpr absl::Duration kTimeout = absl::Seconds(2);
  // amdgpu_psp.h: PSP_1_MEG (the firmware staging buffer) and PSP_TMR_ALIGNMENT; amdgpu_psp.c: the KM ring's
  // 0x1000 bytes (psp_ring_init) and the page-sized fence and command buffers.
  static constexpr uint64_t kStagingBytes = 1 << 20;
  static constexpr uint64_t kTmrAlignment = 1 << 20;
  static constexpr uint32_t kRingBytes = 0x1000;
  static constexpr uint64_t kPageBytes = 0x1000;

  Psp(Device& device, firmware::Store store) : device_(device), store_(std::move(store)) {}
  absl::string_view name() const override { return "psp"; }
  absl::Status InitSw() override;
  absl::Status InitHw() override;
  absl::Status FiniHw() override;

  // One KM-ring command: `command` is filled in (cmd_id and cmd), the response comes back in it.
  absl::Status Submit(regs::psp::PspGfxCmdResp& command, absl::string_view what);
  bool sos_alive();
  // The bootloader refused a command and takes none until the chip is reset: C2PMSG_35 shows its ready bit with a
  // non-zero status beside it (psp_v13_0_wait_for_bootloader accepts the ready bit alone).
  bool bootloader_stopped();
  uint32_t sos_version();

  // Each step of InitHw that ran, for the boot log ("bootloader: 8 components", "LOAD_IP_FW SMU v0x...").
  const std::vector<std::string>& log() const { return log_; }

 private:
  struct File {
    firmware::RequiredFile required;
    firmware::LoadedFile loaded;
    firmware::Container container;
  };

  // Finds, reads and checks every firmware file the device's IP versions need.
  absl::Status LoadFiles();
  absl::Status RunBootloader();
  // Waits for the bootloader's ready bit and fails at once, naming the status, when it answered with an error.
  absl::Status WaitForBootloader(absl::string_view what);
  absl::Status CreateRing();
  // LOAD_TOC, which answers the TMR's size, and the TMR's allocation (psp_tmr_init).
  absl::Status InitTmr();
  // SETUP_TMR with the TMR's MC and physical addresses (psp_tmr_load).
  absl::Status LoadTmr();
  // LOAD_IP_FW of every type every component of `file` provides.
  absl::Status LoadIpFirmware(const File& file);
  absl::Status LoadIpFirmware(const File& file, const firmware::Component& component, uint32_t type);
  absl::Status Stage(absl::string_view bytes);
  const File* FindRole(firmware::FileKind kind) const;

  Device& device_;
  firmware::Store store_;
  std::vector<File> files_;
  uint64_t staging_ = 0, ring_ = 0, command_ = 0, fence_ = 0, tmr_ = 0;  // VRAM
  uint32_t tmr_size_ = 0;
  uint32_t fence_value_ = 0;
  uint32_t ring_wptr_ = 0;  // dwords
  std::vector<std::string> log_;
};

// "TEE_ERROR_NOT_SUPPORTED (0xffff000a)" for a PSP command status.
std::string PspStatusName(uint32_t status);

}  // namespace am

#endif  // BAREGPU_AM_PSP_H_
