// An NVIDIA GPU the driver brings up over its BARs, the way nouveau's r535 code and tinygrad's NVDev do: identify the
// chip (NV_PMC_BOOT_0/42), wait for the VBIOS's devinit (GFW boot), load the real GSP-RM 535.113.01 files, unload
// GSP-RM from a chip another process left with WPR2 up (the GSP's reset, FWSEC-SB, booter_unload; a function reset
// only when that fails), read the FB size, lay out WPR2 (nv/gsp/fb_layout), run FWSEC-FRTS from the
// GPU's own VBIOS on the GSP falcon (nv/fwsec), prepare GSP-RM's boot memory and queue its first RPCs (nv/gsp_rm),
// run booter_load on SEC2, which starts GSP-RM on the GSP's RISC-V core, carry out GSP-RM's CPU sequencer up to
// INIT_DONE, read its static information, and allocate through an RM client (nv/rm) the objects the HCQ backend
// will need (device, subdevice, VA space, channel group, context share, GPFIFO channel, compute, copy, usermode),
// freeing them again. Shutdown() (also at destruction) unloads GSP-RM, runs FWSEC-SB and booter_unload, leaving WPR2
// down for the next process (nouveau r535_gsp_fini).
#ifndef BAREGPU_NV_DEVICE_H_
#define BAREGPU_NV_DEVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "firmware/nv/gsp_elf.h"
#include "firmware/nv/riscv_desc.h"
#include "nv/falcon.h"
#include "nv/fwsec.h"
#include "nv/gsp/fb_layout.h"
#include "nv/gsp_rm.h"
#include "pci/device.h"

namespace nv {

// One step of Boot(), timed.
struct BootStep {
  std::string name;    // "identify", "gfw-boot", "firmware", "wpr2", "fb", "layout", "fwsec-frts", "gsp-memory",
                       // "booter-load", "init-done", "static-info", "rm-objects"; at shutdown "unload", "fwsec-sb",
                       // "booter-unload"
  std::string detail;  // what the step found or did, for people ("AD102 rev a1", "WPR2 0x5ffe00000-0x5fff00000")
  absl::Duration duration;
  absl::Status status;
  absl::Time start;  // tells which step a traced access or RPC belongs to
};

struct DeviceOptions {
  // tu102_devinit_wait polls GFW boot 2050 times with 1-2 ms sleeps: at most about 4 s.
  absl::Duration gfw_boot_timeout = absl::Milliseconds(2050 * 2);
  // How long GSP-RM may take to answer: nouveau's r535_gsp_rpc_poll / msgq waits are bounded by seconds.
  absl::Duration rpc_timeout = absl::Seconds(4);
  // How long a falcon's ucode may run before it must have halted (Falcon::kDefaultHaltTimeout: nouveau's 2 s).
  absl::Duration falcon_halt_timeout = Falcon::kDefaultHaltTimeout;
  // When set, told of every BAR0 access the driver makes (`baregpu boot --trace=regs`); costs a call per access.
  std::function<void(bool write, uint32_t address, uint32_t value)> register_tracer;
  // When set, told of every RPC to and message from GSP-RM (`--trace=rpc`).
  gsp::MessageQueue::Tracer rpc_tracer;
};

class Device {
 public:
  // The chips this driver boots: AD102 (BOOT_42 architecture 0x19, implementation 2), whose falcon engines
  // (nv::kAd102GspFalcon) and firmware directory (nvidia/ad102) it uses.
  static absl::StatusOr<std::unique_ptr<Device>> Open(std::unique_ptr<pci::Device> pci, DeviceOptions options = {});
  static absl::StatusOr<std::unique_ptr<Device>> Open(absl::string_view name, DeviceOptions options = {});
  // Whether `pci` is an NVIDIA function (its configuration space's vendor id), for callers that pick a driver.
  static bool IsNvidia(pci::Device& pci);

  ~Device();
  // Runs the steps in order and stops at the first failure; every step is recorded in steps().
  absl::Status Boot();
  // Unloads a booted GSP-RM (UNLOADING_GUEST_DRIVER, the GSP's reset, FWSEC-SB, booter_unload), recording the steps.
  // OK at once when GSP-RM is not running.
  absl::Status Shutdown();
  const std::vector<BootStep>& steps() const { return steps_; }

  pci::Device& pci() { return *pci_; }
  pci::Mmio bar0() const { return bar0_; }
  // Known after the steps that read them.
  const std::string& chip() const { return chip_; }
  uint64_t fb_size() const { return fb_size_; }
  const gsp::FbLayout& layout() const { return layout_; }
  const Wpr2Registers& wpr2() const { return wpr2_; }
  // After "static-info".
  const gsp::GspStaticConfigInfo& static_info() const { return static_info_; }
  // From the static information: its gpuNameString, the GPCs in gpcMask and their TPCs.
  std::string gpu_name() const;
  int gpc_count() const;
  int tpc_count() const;
  bool gsp_running() const { return gsp_running_; }
  // The GSP-RM release of the image it booted (.fwversion: "535.113.01"); after "firmware".
  const std::string& gsp_version() const { return gsp_image_.fw_version; }

 private:
  Device(std::unique_ptr<pci::Device> pci, pci::Mmio bar0, std::span<uint8_t> bar1, DeviceOptions options);
  template <typename Step>
  absl::Status Run(absl::string_view name, Step step);

  absl::StatusOr<std::string> Identify();
  absl::StatusOr<std::string> WaitForGfwBoot();
  absl::StatusOr<std::string> ReadFb();
  absl::StatusOr<std::string> ResetIfWpr2IsUp();
  absl::StatusOr<std::string> LoadFirmware();
  absl::StatusOr<std::string> LayOutWpr2();
  absl::StatusOr<std::string> RunFwsecFrts();
  // FWSEC's image goes to the first bytes of FB, written through BAR1.
  FwsecPlacement FbPlacement();
  absl::StatusOr<std::string> PrepareGspRm();
  absl::StatusOr<std::string> RunBooterLoad();
  absl::StatusOr<std::string> WaitForInitDone();
  absl::StatusOr<std::string> ReadStaticInfo();
  absl::StatusOr<std::string> ExerciseRmObjects();
  absl::StatusOr<std::string> UnloadGspRm();
  absl::StatusOr<std::string> RunFwsecSb();
  absl::StatusOr<std::string> RunBooterUnload();
  // Runs a booter file's image on SEC2 with `mailboxes`; returns the mailboxes it left.
  absl::StatusOr<FalconMailboxes> RunBooter(absl::string_view file, absl::string_view data,
                                            const FalconMailboxes& mailboxes);

  class TracingBar0;
  std::unique_ptr<pci::Device> pci_;
  std::unique_ptr<TracingBar0> tracing_bar0_;  // set with options.register_tracer: bar0_ goes through it
  pci::Mmio bar0_;
  std::span<uint8_t> bar1_;  // FB, as far as BAR1 shows it
  DeviceOptions options_;
  std::vector<BootStep> steps_;
  std::string chip_;
  uint64_t fb_size_ = 0;
  gsp::VgaWorkspace vga_workspace_;
  uint64_t boot_bin_size_ = 0;
  uint64_t gsp_fw_size_ = 0;
  // The real files (paths and bytes) and what was parsed out of them.
  struct File {
    std::string path;
    std::string data;
  };
  File bootloader_file_, gsp_file_, booter_load_file_, booter_unload_file_;
  firmware::nv::Bootloader bootloader_;
  firmware::nv::GspImage gsp_image_;
  std::unique_ptr<GspRm> gsp_rm_;
  gsp::GspStaticConfigInfo static_info_{};
  bool gsp_running_ = false;
  gsp::FbLayout layout_;
  Wpr2Registers wpr2_;
};

}  // namespace nv

#endif  // BAREGPU_NV_DEVICE_H_
