// The AMD queue types: PM4 on the MEC compute ring, SDMA on the copy ring. Every packet comes from am/regs' one
// encoder per packet (pm4_packets.h, sdma_packets.h: Linux 6.12's gfx_v11_0.c and sdma_v6_0.c encodings), kernel
// launches from am::KernelDispatch; this layer only places them and records which dwords variables patch.
#ifndef BAREGPU_HCQ_AMD_QUEUES_H_
#define BAREGPU_HCQ_AMD_QUEUES_H_

#include <cstdint>
#include <vector>

#include "am/implicit_arguments.h"
#include "am/regs/pm4_packets.h"
#include "hcq/hw_queue.h"

namespace hcq::amd {

class AmdDevice;

class Pm4Queue final : public ComputeQueue {
 public:
  explicit Pm4Queue(AmdDevice& device);
  ComputeQueue& exec(const Program& program, ArgsState& args, const Dims& global, const Dims& local) override;
  ComputeQueue& memory_barrier() override;

 private:
  void EmitWait(Value address, Value value) override;
  void EmitSignal(Value address, Value value) override;
  void EmitTimestamp(Value address) override;
  absl::Status WriteRing(std::span<const uint32_t> dwords) override;
  absl::Status WriteIndirect(uint64_t va, uint32_t dwords) override;
  absl::Status PrepareBind() override;
  void ReleaseMem(Value address, am::regs::pm4::ReleaseData data_sel, Value value, uint64_t alignment,
                  am::regs::pm4::ReleaseInterrupt interrupt);
  // Fills the kernel's hidden arguments and dispatch packet for one launch; dimensions given by variables are
  // patched at submit, as the dispatch's own are.
  static absl::Status FillImplicitArguments(const am::ImplicitArguments& implicit, uint64_t descriptor, ArgsState& args,
                                            const Dims& global, const Dims& local);

  AmdDevice& amd_;
  // A bound queue's indirect buffers (one unless it is longer than an IB's 20-bit size) and their packets, built
  // at bind so a submit allocates nothing.
  struct IbPiece {
    uint32_t offset, dwords;
  };
  std::vector<IbPiece> ib_pieces_;
  std::vector<uint32_t> indirect_;
  // The buffer address indirect_'s packets point at, so that a submit re-encodes them only when it moved: packets
  // stored a dword at a time and copied into the ring at once cost a failed store forward on every submit.
  static constexpr uint64_t kNotEncoded = ~uint64_t{0};
  uint64_t indirect_va_ = kNotEncoded;
};

class SdmaQueue final : public CopyQueue {
 public:
  explicit SdmaQueue(AmdDevice& device);
  CopyQueue& copy(Value destination, Value source, uint64_t size) override;

 private:
  void EmitWait(Value address, Value value) override;
  void EmitSignal(Value address, Value value) override;
  void EmitTimestamp(Value address) override;
  absl::Status WriteRing(std::span<const uint32_t> dwords) override;
  absl::Status WriteIndirect(uint64_t va, uint32_t dwords) override;
  absl::Status PrepareBind() override;

  AmdDevice& amd_;
};

}  // namespace hcq::amd

#endif  // BAREGPU_HCQ_AMD_QUEUES_H_
