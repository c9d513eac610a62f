#include "am/sim/ih_model.h"

#include <array>

#include "absl/strings/str_format.h"
#include "am/regs/osssys.h"

namespace am::sim {
namespace {

using RbCntl = regs::osssys::IH_RB_CNTL;
using RbWptr = regs::osssys::IH_RB_WPTR;
using DoorbellRptr = regs::osssys::IH_DOORBELL_RPTR;

// IH_RB_CNTL.MC_SPACE for a ring addressed through the GPU's VM (ih_v6_0_rb_cntl: "use_bus_addr ? 2 : 4").
constexpr uint32_t kMcSpaceGpuVirtual = 4;
constexpr int kBaseShift = 8;  // IH_RB_BASE holds address bits 39:8, IH_RB_BASE_HI bits 47:40

// amdgpu_ih_decode_iv_helper's dword layout of an IH entry.
std::array<uint32_t, 8> Encode(const InterruptEntry& e, uint64_t timestamp) {
  return {(e.client_id & 0xff) | (e.source_id & 0xff) << 8 | (e.ring_id & 0xff) << 16 | (e.vmid & 0xf) << 24 |
              uint32_t{e.vmid_type} << 31,
          static_cast<uint32_t>(timestamp),
          static_cast<uint32_t>(timestamp >> 32) & 0xffff,  // bit 31 (timestamp_src) 0: the GPU's own clock
          (e.pasid & 0xffff) | (e.node_id & 0xff) << 16,
          e.src_data[0],
          e.src_data[1],
          e.src_data[2],
          e.src_data[3]};
}

thread_local bool in_post = false;

}  // namespace

IhModel::IhModel(RegisterFile& registers, const regs::IpBases& bases, GpuMemory& memory, DoorbellRouter& doorbells,
                 const GpuClock& clock, DeviceErrorLog& errors, std::function<void()> raise_msi)
    : registers_(registers),
      memory_(memory),
      doorbells_(doorbells),
      clock_(clock),
      errors_(errors),
      raise_msi_(std::move(raise_msi)),
      rb_cntl_(RegisterAddress<RbCntl>(bases)),
      rb_base_(RegisterAddress<regs::osssys::IH_RB_BASE>(bases)),
      rb_base_hi_(RegisterAddress<regs::osssys::IH_RB_BASE_HI>(bases)),
      rb_rptr_(RegisterAddress<regs::osssys::IH_RB_RPTR>(bases)),
      rb_wptr_(RegisterAddress<RbWptr>(bases)),
      wptr_addr_lo_(RegisterAddress<regs::osssys::IH_RB_WPTR_ADDR_LO>(bases)),
      wptr_addr_hi_(RegisterAddress<regs::osssys::IH_RB_WPTR_ADDR_HI>(bases)),
      doorbell_rptr_(RegisterAddress<DoorbellRptr>(bases)) {
  // WPTR_OVERFLOW_CLEAR: writing 1 clears the overflow flag (ih_v6_0_get_wptr sets it, then clears the bit again).
  registers_.OnWrite(rb_cntl_, "ih", [this](uint32_t value) {
    if (RbCntl{}.set_raw(value).wptr_overflow_clear()) {
      std::lock_guard lock(mu_);
      registers_.Poke(rb_wptr_, RbWptr{}.set_raw(registers_.Peek(rb_wptr_)).rb_overflow(0).raw());
    }
  });
}

void IhModel::Post(const InterruptEntry& entry) {
  if (in_post) {
    // The ring's own memory access faulted and the GMC wants to report it: the fault cannot be delivered.
    dropped_.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  in_post = true;
  const bool signal = Deliver(entry);
  in_post = false;
  if (signal && raise_msi_) raise_msi_();
}

bool IhModel::Deliver(const InterruptEntry& entry) {
  std::lock_guard lock(mu_);
  const RbCntl cntl = RbCntl{}.set_raw(registers_.Peek(rb_cntl_));
  RbWptr wptr = RbWptr{}.set_raw(registers_.Peek(rb_wptr_));
  if (!cntl.rb_enable() || wptr.rb_overflow()) {
    dropped_.fetch_add(1, std::memory_order_acq_rel);
    return false;
  }
  const uint64_t size = uint64_t{4} << cntl.rb_size();  // RB_SIZE: log2 of the ring size in dwords
  const uint64_t base = ((uint64_t{registers_.Peek(rb_base_hi_) & 0xff} << 32) | registers_.Peek(rb_base_))
                        << kBaseShift;
  const DoorbellRptr doorbell = DoorbellRptr{}.set_raw(registers_.Peek(doorbell_rptr_));
  const uint64_t rptr = (doorbell.enable() ? doorbells_.Read(doorbell.offset()) : registers_.Peek(rb_rptr_)) % size;
  const uint64_t write_offset = (uint64_t{wptr.offset()} << 2) % size;
  if ((write_offset + kEntryBytes) % size == rptr) {
    if (cntl.wptr_overflow_enable()) registers_.Poke(rb_wptr_, wptr.rb_overflow(1).raw());
    dropped_.fetch_add(1, std::memory_order_acq_rel);
    return false;
  }
  const MemoryClient client{Hub::kMm, cntl.mc_vmid(), 0, "ih", cntl.mc_space() != kMcSpaceGpuVirtual};
  const std::array<uint32_t, 8> dwords = Encode(entry, clock_.Now());
  absl::Status written = WriteMemory(memory_, client, base + write_offset,
                                     std::span(reinterpret_cast<const uint8_t*>(dwords.data()), kEntryBytes));
  if (!written.ok()) {
    errors_.Report("ih", absl::StrFormat("entry not written: %s", written.message()));
    dropped_.fetch_add(1, std::memory_order_acq_rel);
    return false;
  }
  const uint64_t next = (write_offset + kEntryBytes) % size;
  wptr = wptr.offset(static_cast<uint32_t>(next >> 2));
  registers_.Poke(rb_wptr_, wptr.raw());
  if (cntl.wptr_writeback_enable()) {
    const uint64_t writeback =
        (uint64_t{registers_.Peek(wptr_addr_hi_) & 0xffff} << 32) | registers_.Peek(wptr_addr_lo_);
    auto slot = MapDword(memory_, client, writeback, Access::kWrite);
    if (slot.ok()) {
      std::atomic_ref<uint32_t>(**slot).store(wptr.raw(), std::memory_order_release);
    } else {
      errors_.Report("ih", absl::StrFormat("wptr write-back failed: %s", slot.status().message()));
    }
  }
  delivered_.fetch_add(1, std::memory_order_acq_rel);
  return cntl.enable_intr();
}

}  // namespace am::sim
