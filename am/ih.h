// The interrupt handler ring 0 (ih_v6_0.c): a ring in the boot region of VRAM addressed through the MMHUB's
// context 0 (IH_RB_CNTL.MC_SPACE 4, the configuration Linux uses when the PSP loads firmware), the write pointer
// written back next to it, and entries decoded into readable events. Page faults are completed with the hub's
// latched fault status, which is then cleared.
#ifndef BAREGPU_AM_IH_H_
#define BAREGPU_AM_IH_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "am/ip_block.h"

namespace am {

class Device;

// One decoded IH entry (layout: amdgpu_ih_decode_iv_helper).
struct IhEvent {
  uint32_t client_id, source_id, ring_id, vmid;
  bool vmid_from_mmhub;
  uint32_t pasid;
  uint64_t timestamp;  // 100 MHz GPU clock ticks
  std::array<uint32_t, 4> src_data;
  std::string
      description;  // "GFX/UTCL2 page fault at 0x...: vmid 1, client 0x.., write" or "GRBM_CP src 0xb5 ring 0x.."
};

// Decodes one raw entry; page faults get their address from the entry (the hub's status is added by Ih::Drain).
IhEvent DecodeIhEntry(const std::array<uint32_t, 8>& dwords);
bool IsPageFault(const IhEvent& event);
// A page fault entry's fields as gmc_v11_0_process_interrupt reads them from src_data: the faulting page's address,
// whether the access was a write, whether the fault is a retry fault.
uint64_t FaultAddress(const IhEvent& event);
bool FaultIsWrite(const IhEvent& event);
bool FaultIsRetry(const IhEvent& event);
// "GRBM_CP", "VMC", ... for a SOC21 IH client id.
std::string IhClientName(uint32_t client);

class Ih final : public IpBlock {
 public:
  static constexpr uint64_t kRingBytes = 256 << 10;  // amdgpu's IH_RING_SIZE for ih_v6_0

  explicit Ih(Device& device) : device_(device) {}
  absl::string_view name() const override { return "ih"; }
  absl::Status InitSw() override;
  absl::Status InitHw() override;
  absl::Status FiniHw() override;

  // Every entry since the last drain, decoded; the read pointer moves past them. A ring that overflowed is
  // cleared, and overflowed_since_last_drain() says entries were lost.
  std::vector<IhEvent> Drain();
  bool overflowed_since_last_drain() const { return overflowed_; }

 private:
  IhEvent Decode(const std::array<uint32_t, 8>& dwords);

  Device& device_;
  uint64_t ring_ = 0, wptr_ = 0;  // VRAM
  uint64_t rptr_ = 0;             // bytes
  bool overflowed_ = false;
};

}  // namespace am

#endif  // BAREGPU_AM_IH_H_
