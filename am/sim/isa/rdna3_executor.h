// The virtual Navi31's shader engine: runs DISPATCH_DIRECT's kernels by interpreting their gfx1100 machine code.
// Dispatch builds the workgroups and waves as the SPI would (COMPUTE_PGM_RSRC1/2/3, USER_DATA, dimensions, wave32
// or wave64 from the dispatch initiator), runs the workgroups on a bounded set of worker threads, and reports a
// VM fault (the GMC has latched and posted it) or an illegal instruction (the SQ interrupt) as a device error that
// stops the dispatch.
#ifndef BAREGPU_AM_SIM_ISA_RDNA3_EXECUTOR_H_
#define BAREGPU_AM_SIM_ISA_RDNA3_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "am/sim/isa/program.h"
#include "am/sim/isa/wave.h"
#include "am/sim/isa/worker_pool.h"
#include "am/sim/model_context.h"
#include "am/sim/shader_executor.h"
#include "am/sim/wave_slots.h"

namespace am::sim::isa {

struct WaveFault;

class Rdna3Executor final : public ShaderExecutor {
 public:
  // `workers`: the most threads one dispatch uses (0: the machine's hardware threads). `wave_slots`: where the
  // waves show themselves to the SQ's indirect registers (null: nowhere; it must outlive the executor).
  explicit Rdna3Executor(const ModelContext& context, int workers = 0, WaveSlots* wave_slots = nullptr);

  absl::Status Dispatch(const DispatchState& state, GpuMemory& memory) override;

  // For tests: false runs every instruction through the interpreter's general paths, which the fast paths must
  // match bit for bit. Set between dispatches.
  void set_fast_paths(bool enabled) { fast_paths_ = enabled; }

  // Lane-instructions executed by every dispatch so far (instructions x wave width), for benchmarks.
  uint64_t lane_instructions() const { return lane_instructions_.load(std::memory_order_relaxed); }

 private:
  // The program at `address`, fetched (and checked executable, with `prefetch_lines` instruction cache lines past
  // its end) unless the cached one is still what memory holds.
  absl::StatusOr<Program*> ProgramAt(uint64_t address, GpuMemory& memory, const MemoryClient& client,
                                     uint32_t prefetch_lines);
  void ReportIllegalInstruction(const DispatchState& state, const WaveFault& fault, const std::string& message);

  ModelContext context_;
  WaveSlots* wave_slots_;
  std::mutex mu_;  // one dispatch at a time; guards programs_ and waves_by_worker_
  std::map<uint64_t, std::unique_ptr<Program>> programs_;
  WorkerPool pool_;  // its threads() is the most workers one dispatch uses
  // Each worker's waves (one list per pool thread), kept between dispatches as the hardware keeps its register
  // files: a wave starts with what InitWave sets (SGPRs, VGPR0, EXEC) and the rest as the last wave there left it.
  std::vector<std::vector<Wave>> waves_by_worker_;
  std::atomic<uint64_t> lane_instructions_{0};
  bool fast_paths_ = true;
};

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_RDNA3_EXECUTOR_H_
