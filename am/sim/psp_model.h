// The PSP (MP0 13.0.0) of the virtual Navi31, as Linux's psp_v13_0.c / amdgpu_psp.c and tinygrad's AM driver
// (runtime/support/am/ip.py, AM_PSP) drive it:
// - the bootloader mailbox (C2PMSG_35 command and ready bit, C2PMSG_36 buffer address >> 20) takes the sOS
//   package's components one by one, in the order KDB, SPL, SYS_DRV, SOC_DRV, INTF_DRV, DBG_DRV, RAS_DRV, SOS;
// - the sOS then shows a sign of life in C2PMSG_81 and its version in C2PMSG_58;
// - the ring control mailbox (C2PMSG_64, ring address C2PMSG_69/70, size C2PMSG_71) creates and destroys the KM
//   ring, whose write pointer the driver moves in C2PMSG_67 (dwords);
// - each KM ring frame (psp_gfx_rb_frame) points at a command buffer (psp_gfx_cmd_resp): LOAD_TOC, SETUP_TMR,
//   LOAD_IP_FW, AUTOLOAD_RLC, DESTROY_TMR are executed, answered in the buffer's response, then fenced.
// Everything the driver hands over is an MC address read through GpuMemory as MMHUB client MP0; every image must
// be virtual firmware for this ASIC of the expected type (firmware::ValidateVirtualFirmware) or a real Navi31 image
// of that type (firmware::ValidateRealImage: layout, signing key, image kind; the signature itself cannot be
// verified), whose stated version the PSP records and reports (C2PMSG_58, the SMU's version). What the PSP refuses
// it answers with a status (or, for the bootloader, an error in C2PMSG_35's low byte) and explains in the device
// error log.
//
// The PSP's own processor is a thread started with the model: register hooks only record what the driver asked
// and wake it. Its protocol state lives in the persistent model state, so a second process finds a booted PSP
// booted and its ring where it was.
#ifndef BAREGPU_AM_SIM_PSP_MODEL_H_
#define BAREGPU_AM_SIM_PSP_MODEL_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "am/regs/psp.h"
#include "am/sim/model_context.h"
#include "am/sim/smu_model.h"
#include "base/mutex.h"
#include "base/pooled_thread.h"
#include "firmware/requirements.h"

namespace am::sim {

// The PSP's state that outlives the process (StateBlock of ModelState::psp). All zeros is the power-on state: the
// bootloader waiting for its first component, no sOS, no ring, no TMR.
struct PspState {
  // Bootloader. Fields the register hooks touch are accessed through std::atomic_ref only.
  uint32_t bootloader_busy;    // a command was written to C2PMSG_35 and is not yet answered
  uint32_t bootloader_error;   // latched error code shown in C2PMSG_35[7:0]; 0 when none
  uint32_t bootloader_stage;   // position in the boot order (1-based) of the last component loaded; 0 none
  uint32_t bootloader_loaded;  // bit i: component i of the boot order was loaded
  uint32_t sos_alive;          // the sOS is running
  uint32_t sos_heartbeat;      // the sOS's sign of life counter (C2PMSG_81)
  // KM ring.
  uint32_t ring_created;
  uint32_t ring_size_bytes;
  uint64_t ring_address;
  uint32_t ring_rptr_dwords;  // the next frame the PSP reads, in dwords from the ring's start
  // TOC and TMR.
  uint32_t toc_loaded;
  uint32_t toc_tmr_size;  // what LOAD_TOC answered
  uint32_t tmr_set;
  uint64_t tmr_address;
  uint32_t tmr_size;
};

class PspModel {
 public:
  PspModel(const ModelContext& context, SmuModel& smu);
  ~PspModel();
  PspModel(const PspModel&) = delete;
  PspModel& operator=(const PspModel&) = delete;

  // Fault injection: every later KM command with this GFX_CMD_ID_* is answered with `status` and not executed.
  // A status of 0 (TEE_SUCCESS) removes the injection.
  void InjectCommandFailure(uint32_t cmd_id, uint32_t status);
  // Fault injection: the sOS takes KM commands with this id off the ring and never answers them (no response, no
  // fence), as a hung sOS would.
  void InjectCommandStall(uint32_t cmd_id);
  // Fault injection: LOAD_IP_FW of this GFX_FW_TYPE_* is refused as though its image failed the PSP's check.
  void RejectFirmwareType(uint32_t gfx_fw_type);

  // What C2PMSG_35[7:0] holds after the bootloader refused a command (with bit 31 set: it is no longer busy).
  // Linux's psp_v13_0_wait_for_bootloader only says that a failed command sets these bits; the values are the
  // virtual PSP's. The first error stays until a reset: the bootloader takes nothing more.
  enum BootloaderError : uint32_t {
    kBootloaderBadComponent = 1,   // unreadable, not virtual firmware, corrupted, or not the component named
    kBootloaderOutOfOrder = 2,     // out of the boot order, repeated, or SOS before SYS_DRV
    kBootloaderUnknownCommand = 3  // not a PSP_BL__LOAD_* command this bootloader takes
  };

  // Power-on state (mode1 reset): bootloader waiting, no sOS, ring or TMR; pending work dropped. The device resets
  // the registers and LoadedFirmware itself.
  void Reset();

  // The sizes the virtual PSP uses (see psp_model.cc for their sources).
  static constexpr uint32_t kBootloaderBufferBytes = 1u << 20;  // PSP_1_MEG (amdgpu_psp.h)
  static constexpr uint32_t kTmrAlignment = 1u << 20;           // PSP_TMR_ALIGNMENT (amdgpu_psp.h)
  static constexpr int kFbUnitShift = 24;  // MMMC_VM_FB_LOCATION_BASE/TOP and FB_OFFSET count 16 MiB units
  static uint32_t TocTmrSize();

 private:
  enum Work : uint32_t { kBootloaderWork = 1, kControlWork = 2, kRingWork = 4 };
  struct Response {
    uint32_t status = regs::psp::TEE_SUCCESS;
    uint32_t tmr_size = 0;
  };

  void Wake(uint32_t work);
  void Run();
  void RunBootloaderCommand();
  uint32_t ExecuteBootloaderCommand(uint32_t command, uint64_t address);
  // A real component in the bootloader buffer at `address`, as long as its PSP image header (`header`, read from
  // there) says.
  absl::StatusOr<std::string> ReadRealBootComponent(uint64_t address, absl::string_view header);
  void RunControlCommand();
  uint32_t CreateRing();
  void DrainRing();
  void ProcessFrame(uint64_t frame_address);
  Response Execute(const regs::psp::PspGfxCmdResp& command);
  Response LoadToc(const regs::psp::PspGfxCmdLoadToc& cmd);
  Response SetupTmr(const regs::psp::PspGfxCmdSetupTmr& cmd);
  // Why SETUP_TMR's addresses cannot be the TMR's (flags, MC window, physical address); empty when they can.
  std::string CheckTmrAddresses(const regs::psp::PspGfxCmdSetupTmr& cmd);
  Response LoadIpFirmware(const regs::psp::PspGfxCmdLoadIpFw& cmd);
  Response AutoloadRlc();
  // What an image the driver handed over turned out to be.
  struct CheckedImage {
    std::string error;         // empty when accepted, else why not
    uint32_t version = 0;      // the version it states (real firmware) or the virtual firmware's
    uint64_t ucode_start = 0;  // real RS64 CP ucode: where it starts (firmware::RealImageIdentity); else 0
  };
  // Reads `size` bytes at `address` and checks them as virtual firmware (firmware::ValidateVirtualFirmware) or, when
  // they carry the PSP image marker, as real firmware (firmware::ValidateRealImage).
  CheckedImage CheckImage(uint64_t address, uint64_t size, firmware::LoadPath load, uint32_t type,
                          const firmware::IpVersion& ip);
  void Error(std::string message);

  ModelContext context_;
  SmuModel& smu_;
  PspState& state_;
  MemoryClient client_;
  firmware::AsicProfile profile_;
  // The block (IP version) each GFX_FW_TYPE_* this ASIC takes belongs to (firmware::RequiredFiles).
  std::map<uint32_t, firmware::IpVersion> ip_firmware_;
  uint64_t bootloader_command_ = 0, bootloader_address_ = 0, sos_version_ = 0, sos_sign_of_life_ = 0;
  uint64_t ring_control_ = 0, ring_address_lo_ = 0, ring_address_hi_ = 0, ring_size_ = 0, ring_wptr_ = 0;

  // Fault injection, set by tests on their thread, read by the PSP's.
  base::Mutex injection_mu_;
  std::map<uint32_t, uint32_t> failing_commands_ ABSL_GUARDED_BY(injection_mu_);
  std::set<uint32_t> rejected_types_ ABSL_GUARDED_BY(injection_mu_);
  std::set<uint32_t> stalling_commands_ ABSL_GUARDED_BY(injection_mu_);

  // Held by the PSP thread while it executes; Reset takes it so that it never races a command.
  std::mutex execute_mu_;
  // What the hooks asked the PSP thread to do (a Work mask) and whether it should stop; guarded by mu_.
  std::mutex mu_;
  std::condition_variable wake_;
  uint32_t pending_ = 0;
  bool stop_ = false;
  base::PooledThread thread_;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_PSP_MODEL_H_
