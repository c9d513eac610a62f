// The AMD queue types: PM4 on the MEC compute ring, SDMA on the copy ring. Encodings follow Linux 6.12's
// gfx_v11_0.c and sdma_v6_0.c (the functions named at each command), with opcodes and fields from the generated
// am/regs/pm4_constants.h, pm4_event_constants.h and sdma_constants.h.
#ifndef BAREGPU_HCQ_AMD_QUEUES_H_
#define BAREGPU_HCQ_AMD_QUEUES_H_

#include <cstdint>

#include "am/implicit_arguments.h"
#include "hcq/hw_queue.h"

namespace hcq::amd {

class AmdDevice;

class Pm4Queue final : public ComputeQueue {
 public:
  explicit Pm4Queue(AmdDevice& device);
  ComputeQueue& exec(const Program& program, ArgsState& args, const Dims& global, const Dims& local) override;
  ComputeQueue& memory_barrier() override;

 private:
  void EmitWait(uint64_t address, Value value) override;
  void EmitSignal(uint64_t address, Value value) override;
  void EmitTimestamp(uint64_t address) override;
  absl::Status WriteRing(std::span<const uint32_t> dwords) override;
  absl::Status WriteIndirect(uint64_t va, uint32_t dwords) override;
  void ReleaseMem(uint64_t address, uint32_t data_sel, Value value);
  // SET_SH_REG of consecutive registers from `first` (an absolute dword address); returns the first value's offset.
  uint32_t SetShRegs(uint32_t first, std::initializer_list<uint32_t> values);
  // Fills the kernel's hidden arguments and dispatch packet for one launch; dimensions given by variables are
  // patched at submit, as the dispatch's own are.
  static absl::Status FillImplicitArguments(const am::ImplicitArguments& implicit, uint64_t descriptor, ArgsState& args,
                                            const Dims& global, const Dims& local);

  AmdDevice& amd_;
  uint32_t sh_base_[9] = {};  // absolute addresses of the COMPUTE_* registers exec writes (see queues.cc)
};

class SdmaQueue final : public CopyQueue {
 public:
  explicit SdmaQueue(AmdDevice& device);
  CopyQueue& copy(uint64_t destination, uint64_t source, uint64_t size) override;

 private:
  void EmitWait(uint64_t address, Value value) override;
  void EmitSignal(uint64_t address, Value value) override;
  void EmitTimestamp(uint64_t address) override;
  absl::Status WriteRing(std::span<const uint32_t> dwords) override;
  absl::Status WriteIndirect(uint64_t va, uint32_t dwords) override;
  void PadForBind() override;

  AmdDevice& amd_;
  uint32_t indirect_[8] = {};  // NOP padding + INDIRECT, built per submit without allocating
};

}  // namespace hcq::amd

#endif  // BAREGPU_HCQ_AMD_QUEUES_H_
