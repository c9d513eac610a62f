// An NVIDIA GPU the driver brings up over its BARs, the way nouveau's r535 code and tinygrad's NVDev do: identify the
// chip (NV_PMC_BOOT_0/42), wait for the VBIOS's devinit (GFW boot), read the FB size, reset a chip another process
// left with WPR2 up, lay out WPR2 for GSP-RM (nv/gsp/fb_layout) from the real 535.113.01 files' sizes, and run
// FWSEC-FRTS from the GPU's own VBIOS on the GSP falcon (nv/fwsec), which brings WPR2 up around FRTS.
//
// What follows FWSEC-FRTS in a GSP-RM boot (booter load on SEC2, GSP-RM's INIT_DONE, static info, the RM client) is
// not driven yet: Boot() stops there with Unimplemented, naming the next step (issue 22).
#ifndef BAREGPU_NV_DEVICE_H_
#define BAREGPU_NV_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nv/fwsec.h"
#include "nv/gsp/fb_layout.h"
#include "pci/device.h"

namespace nv {

// One step of Boot(), timed.
struct BootStep {
  std::string name;    // "identify", "gfw-boot", "fb", "wpr2", "firmware", "layout", "fwsec-frts"
  std::string detail;  // what the step found or did, for people ("AD102 rev a1", "WPR2 0x5ffe00000-0x5fff00000")
  absl::Duration duration;
  absl::Status status;
};

struct DeviceOptions {
  // tu102_devinit_wait polls GFW boot 2050 times with 1-2 ms sleeps: at most about 4 s.
  absl::Duration gfw_boot_timeout = absl::Milliseconds(2050 * 2);
};

class Device {
 public:
  // The chips this driver boots: AD102 (BOOT_42 architecture 0x19, implementation 2), whose falcon engines
  // (nv::kAd102GspFalcon) and firmware directory (nvidia/ad102) it uses.
  static absl::StatusOr<std::unique_ptr<Device>> Open(std::unique_ptr<pci::Device> pci, DeviceOptions options = {});
  static absl::StatusOr<std::unique_ptr<Device>> Open(absl::string_view name, DeviceOptions options = {});
  // Whether `pci` is an NVIDIA function (its configuration space's vendor id), for callers that pick a driver.
  static bool IsNvidia(pci::Device& pci);

  // Runs the steps in order and stops at the first failure; every step is recorded in steps().
  absl::Status Boot();
  const std::vector<BootStep>& steps() const { return steps_; }

  pci::Device& pci() { return *pci_; }
  pci::Mmio bar0() const { return bar0_; }
  // Known after the steps that read them.
  const std::string& chip() const { return chip_; }
  uint64_t fb_size() const { return fb_size_; }
  const gsp::FbLayout& layout() const { return layout_; }
  const Wpr2Registers& wpr2() const { return wpr2_; }

 private:
  Device(std::unique_ptr<pci::Device> pci, pci::Mmio bar0, std::span<uint8_t> bar1, DeviceOptions options);
  template <typename Step>
  absl::Status Run(absl::string_view name, Step step);

  absl::StatusOr<std::string> Identify();
  absl::StatusOr<std::string> WaitForGfwBoot();
  absl::StatusOr<std::string> ReadFb();
  absl::StatusOr<std::string> ResetIfWpr2IsUp();
  absl::StatusOr<std::string> SizeFirmware();
  absl::StatusOr<std::string> LayOutWpr2();
  absl::StatusOr<std::string> RunFwsecFrts();

  std::unique_ptr<pci::Device> pci_;
  pci::Mmio bar0_;
  std::span<uint8_t> bar1_;  // FB, as far as BAR1 shows it
  DeviceOptions options_;
  std::vector<BootStep> steps_;
  std::string chip_;
  uint64_t fb_size_ = 0;
  gsp::VgaWorkspace vga_workspace_;
  uint64_t boot_bin_size_ = 0;
  uint64_t gsp_fw_size_ = 0;
  gsp::FbLayout layout_;
  Wpr2Registers wpr2_;
};

}  // namespace nv

#endif  // BAREGPU_NV_DEVICE_H_
