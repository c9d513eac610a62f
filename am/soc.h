// SOC / NBIO 4.3 / HDP 6.0 set-up: the doorbell aperture and the remapped HDP flush page (nbio_v4_3.c,
// hdp_v6_0.c, soc21.c).
#ifndef BAREGPU_AM_SOC_H_
#define BAREGPU_AM_SOC_H_

#include "am/ip_block.h"

namespace am {

class Device;

class Soc final : public IpBlock {
 public:
  // Where the driver remaps the HDP flush registers in BAR5: the last page below 512 KiB (amdgpu's
  // MMIO_REG_HOLE_OFFSET, 0x80000 - PAGE_SIZE), memory flush at +0 and register flush at +4
  // (KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL / _REG_FLUSH_CNTL).
  static constexpr uint32_t kRemapPage = 0x80000 - 0x1000;
  static constexpr uint32_t kRemapMemFlush = kRemapPage + 0;
  static constexpr uint32_t kRemapRegFlush = kRemapPage + 4;

  explicit Soc(Device& device) : device_(device) {}
  absl::string_view name() const override { return "soc"; }
  absl::Status InitHw() override;

  // Makes CPU writes through BAR0 visible to the GPU (amdgpu_device_flush_hdp).
  void FlushHdp();

 private:
  Device& device_;
};

}  // namespace am

#endif  // BAREGPU_AM_SOC_H_
