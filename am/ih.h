// The interrupt handler ring 0 (ih_v6_0.c): a ring in the boot region of VRAM addressed through the MMHUB's
// context 0 (IH_RB_CNTL.MC_SPACE 4, the configuration Linux uses when the PSP loads firmware), the write pointer
// written back next to it, and entries decoded into readable events. Page faults are completed with the hub's
// latched fault status, which is then cleared.
#ifndef BAREGPU_AM_IH_H_
#define BAREGPU_AM_IH_H_

#include <array>
#include <atomic>
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
  std::string source_name;  // "CP_BAD_OPCODE_ERROR", as the *_irqsrcs headers name the source
  // "GFX UTCL2_FAULT: page fault at 0x...: vmid 1, client CPC, write" or "GRBM_CP CP_EOP_INTERRUPT (me 1 pipe 0
  // queue 0) vmid 0 data 0x.."
  std::string description;
};

// Decodes one raw entry; page faults get their address from the entry (the hub's status is added by Ih::Drain).
IhEvent DecodeIhEntry(const std::array<uint32_t, 8>& dwords);
bool IsPageFault(const IhEvent& event);
// Whether the entry reports an error that stops or spoils work: the sources amdgpu handles as a fault of the job
// (gfx_v11_0_priv_reg_irq, _priv_inst_irq, _bad_op_irq, gmc_v11_0_process_interrupt, gfx_v11_0_rlc_gc_fed_irq)
// and the SQ's error words (kfd_int_process_v11.c: illegal instruction, memory violation, EDC errors).
bool IsFault(const IhEvent& event);
// The source's name as its *_irqsrcs header spells it ("CP_BAD_OPCODE_ERROR", "VM_FAULT"), or "source 0x.." when
// the client's header does not name it.
std::string IhSourceName(uint32_t client, uint32_t source);
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
  // The same, keeping only the entries IsFault calls faults; the others (the end-of-pipe and trap entries that
  // sleeping waits ask for) are passed over without a copy or a string, so a drain that finds no fault allocates
  // nothing.
  std::vector<IhEvent> DrainFaults();
  // Whether the IH wrote entries since the last drain (or overflowed): one read of the write-back word, no register
  // access, so waiters may ask often, from any thread, while another drains.
  bool Pending() const;
  bool overflowed_since_last_drain() const { return overflowed_.load(std::memory_order_relaxed); }

 private:
  IhEvent Decode(const std::array<uint32_t, 8>& dwords);
  std::vector<IhEvent> Drain(bool faults_only);

  Device& device_;
  uint64_t ring_ = 0, wptr_ = 0;        // VRAM
  const uint32_t* wptr_cpu_ = nullptr;  // the write-back word, set by InitHw
  // Written by Drain (one thread at a time) and InitHw; atomic because Pending() may be asked meanwhile.
  std::atomic<uint64_t> rptr_{0};  // bytes
  std::atomic<bool> overflowed_{false};
};

}  // namespace am

#endif  // BAREGPU_AM_IH_H_
