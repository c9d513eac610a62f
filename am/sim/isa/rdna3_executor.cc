#include "am/sim/isa/rdna3_executor.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/sh_mem_constants.h"
#include "am/regs/sq_interrupt.h"
#include "am/regs/sq_wave_field_constants.h"
#include "am/sim/isa/workgroup_runner.h"
#include "base/status_macros.h"

namespace am::sim::isa {
namespace {

namespace gc = regs::gc;

// LDS_SIZE granularity for gfx11 compute: 128 dwords (AMDGPUUsage, COMPUTE_PGM_RSRC2 GRANULATED_LDS_SIZE).
constexpr uint32_t kLdsGranuleBytes = 128 * 4;
constexpr uint32_t kMaxLdsBytes = 64 * 1024;
// COMPUTE_TMPRING_SIZE.WAVESIZE units: 256 bytes per wave.
constexpr uint32_t kScratchGranuleBytes = 256;
constexpr uint32_t kMaxWorkgroupThreads = 1024;
constexpr uint32_t kVgprGranuleWave32 = 8, kVgprGranuleWave64 = 4;

}  // namespace

Rdna3Executor::Rdna3Executor(const ModelContext& context, int workers, WaveSlots* wave_slots)
    : context_(context),
      wave_slots_(wave_slots),
      pool_(workers > 0 ? workers : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
      waves_by_worker_(pool_.threads()) {}

absl::StatusOr<Program*> Rdna3Executor::ProgramAt(uint64_t address, GpuMemory& memory, const MemoryClient& client,
                                                  uint32_t prefetch_lines) {
  auto it = programs_.find(address);
  if (it != programs_.end() && it->second->prefetch_lines() == prefetch_lines &&
      it->second->Unchanged(memory, client)) {
    return it->second.get();
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, Program::Load(memory, client, address, prefetch_lines));
  Program* raw = program.get();
  programs_[address] = std::move(program);
  return raw;
}

void Rdna3Executor::ReportIllegalInstruction(const DispatchState& state, const WaveFault& fault,
                                             const std::string& message) {
  namespace sq = regs::sq_interrupt;
  InterruptEntry entry;
  entry.client_id = regs::ih::SOC21_IH_CLIENTID_GRBM_CP;
  entry.source_id = regs::ih::GFX_11_0_0__SRCID__SQ_INTERRUPT_ID;
  entry.vmid = state.memory.vmid;
  // An ERROR word (kfd_int_process_v11.c): the type, and the wave that raised it: its slot, SIMD, WGP and shader
  // array (SH_ID) as the SQ numbers them.
  const WaveLocation where = fault.location.value_or(WaveLocation{});
  entry.src_data[0] = sq::kErrorIllegalInstruction << sq::kErrorTypeShift |
                      (where.sa << sq::kShIdShift & sq::kShIdMask) | (where.slot << sq::kWaveIdShift & sq::kWaveIdMask);
  entry.src_data[1] = sq::kEncodingError << sq::kEncodingShift | (where.simd << sq::kSimdIdShift & sq::kSimdIdMask) |
                      (where.wgp << sq::kWgpIdShift & sq::kWgpIdMask);
  // The SQ reports the wave's PC through its trap state; the entry's spare words carry it for the driver's log.
  entry.src_data[2] = static_cast<uint32_t>(fault.pc);
  entry.src_data[3] = static_cast<uint32_t>(fault.pc >> 32);
  context_.interrupts.Post(entry);
  context_.errors.Report("sq", message);
}

absl::Status Rdna3Executor::Dispatch(const DispatchState& state, GpuMemory& memory) {
  std::lock_guard lock(mu_);
  const auto rsrc1 = gc::COMPUTE_PGM_RSRC1::FromRaw(state.pgm_rsrc1);
  const auto rsrc2 = gc::COMPUTE_PGM_RSRC2::FromRaw(state.pgm_rsrc2);
  const auto initiator = gc::COMPUTE_DISPATCH_INITIATOR::FromRaw(state.dispatch_initiator);
  const auto tmpring = gc::COMPUTE_TMPRING_SIZE::FromRaw(state.tmpring_size);

  DispatchSetup setup;
  setup.memory = &memory;
  setup.client = state.memory;
  setup.lanes = initiator.cs_w32_en() ? 32 : 64;
  setup.user_data = state.user_data;
  setup.user_sgprs = rsrc2.user_sgpr();
  setup.tgid_enable[0] = rsrc2.tgid_x_en();
  setup.tgid_enable[1] = rsrc2.tgid_y_en();
  setup.tgid_enable[2] = rsrc2.tgid_z_en();
  setup.tg_size_enable = rsrc2.tg_size_en();
  setup.scratch_enable = rsrc2.scratch_en();
  setup.workitem_id_dims = rsrc2.tidig_comp_cnt();
  setup.float_mode = rsrc1.float_mode();
  // The apertures and the alignment mode are the queue's VMID's SH_MEM_BASES / SH_MEM_CONFIG, as the GFX model
  // banks them (their power-on values until the driver programs them).
  const auto sh_mem_config = gc::SH_MEM_CONFIG::FromRaw(state.sh_mem.config);
  if (sh_mem_config.address_mode() != gc::SH_MEM_ADDRESS_MODE_64) {
    return absl::UnimplementedError(absl::StrFormat(
        "SH_MEM_CONFIG %#x of VMID %d selects SH_MEM_ADDRESS_MODE_32, which the interpreter does not model "
        "(gfx_v11_0 programs SH_MEM_ADDRESS_MODE_64)",
        state.sh_mem.config, state.memory.vmid));
  }
  setup.sh_mem = state.sh_mem;
  setup.fast_paths = fast_paths_;
  for (int i = 0; i < 3; ++i) {
    setup.workgroup_size[i] = gc::COMPUTE_NUM_THREAD_X::FromRaw(state.num_thread[i]).num_thread_full();
    setup.grid[i] = state.dimensions[i];
    setup.start[i] = state.start[i];
  }
  const uint64_t threads = uint64_t{setup.workgroup_size[0]} * setup.workgroup_size[1] * setup.workgroup_size[2];
  if (threads == 0 || threads > kMaxWorkgroupThreads) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "workgroup of %dx%dx%d threads (COMPUTE_NUM_THREAD_X/Y/Z): must be 1..%d", setup.workgroup_size[0],
        setup.workgroup_size[1], setup.workgroup_size[2], kMaxWorkgroupThreads));
  }
  setup.lds_bytes = rsrc2.lds_size() * kLdsGranuleBytes;
  if (setup.lds_bytes > kMaxLdsBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("COMPUTE_PGM_RSRC2.LDS_SIZE %d asks for %d bytes of LDS; a "
                        "workgroup has at most %d",
                        rsrc2.lds_size(), setup.lds_bytes, kMaxLdsBytes));
  }
  // What the SQ's indirect registers show of each wave: the VGPRs RSRC1 allocates per lane (AMDGPUUsage,
  // COMPUTE_PGM_RSRC1 GRANULATED_WORKITEM_VGPR_COUNT on gfx10+: granules of 8 in wave32, 4 in wave64, minus one),
  // SQ_WAVE_GPR_ALLOC.VGPR_SIZE in the same granules, and HW_ID2's queue and VMID.
  setup.wave_slots = wave_slots_;
  setup.vgprs = (rsrc1.vgprs() + 1) * (setup.lanes == 32 ? kVgprGranuleWave32 : kVgprGranuleWave64);
  setup.gpr_alloc =
      (rsrc1.vgprs() << regs::sq::SQ_WAVE_GPR_ALLOC__VGPR_SIZE__SHIFT) & regs::sq::SQ_WAVE_GPR_ALLOC__VGPR_SIZE_MASK;
  setup.hw_id2 =
      ((state.queue << regs::sq::SQ_WAVE_HW_ID2__QUEUE_ID__SHIFT) & regs::sq::SQ_WAVE_HW_ID2__QUEUE_ID_MASK) |
      ((state.pipe << regs::sq::SQ_WAVE_HW_ID2__PIPE_ID__SHIFT) & regs::sq::SQ_WAVE_HW_ID2__PIPE_ID_MASK) |
      ((state.me << regs::sq::SQ_WAVE_HW_ID2__ME_ID__SHIFT) & regs::sq::SQ_WAVE_HW_ID2__ME_ID_MASK) |
      ((state.memory.vmid << regs::sq::SQ_WAVE_HW_ID2__VM_ID__SHIFT) & regs::sq::SQ_WAVE_HW_ID2__VM_ID_MASK);
  setup.scratch_bytes_per_lane = setup.scratch_enable ? tmpring.wavesize() * kScratchGranuleBytes / setup.lanes : 0;
  const uint64_t workgroups = uint64_t{setup.grid[0]} * setup.grid[1] * setup.grid[2];
  if (workgroups == 0) return absl::OkStatus();

  absl::StatusOr<Program*> program =
      ProgramAt(state.program_address, memory, state.memory, sh_mem_config.initial_inst_prefetch());
  if (!program.ok()) {
    return absl::Status(program.status().code(), absl::StrFormat("instruction fetch of the program at %#x: %s",
                                                                 state.program_address, program.status().message()));
  }
  setup.program = *program;
  std::atomic<bool> stop{false};
  setup.stop = &stop;
  setup.reset_waves = state.reset_waves;

  // Workgroups are handed out in order from a shared counter, a run of them at a time; the first fault stops the
  // rest. A counter taken per workgroup is a cache line the workers pass back and forth every workgroup (1.5 us for
  // vector_add's); runs of 1/kRunsPerWorker of a worker's share take it a few hundred times a dispatch, and the
  // workers end at most one run (under 1/kRunsPerWorker of the time) apart.
  constexpr uint64_t kRunsPerWorker = 64;
  std::atomic<uint64_t> next{0};
  std::mutex error_mu;
  absl::Status first_error;
  WaveFault first_fault;
  const int threads_used = static_cast<int>(std::min<uint64_t>(pool_.threads(), workgroups));
  const uint64_t run = std::max<uint64_t>(1, workgroups / (static_cast<uint64_t>(threads_used) * kRunsPerWorker));
  auto worker = [&](int worker_index) {
    WorkgroupRunner runner(setup, waves_by_worker_[worker_index]);
    uint64_t index = 0, end = 0;  // the run this worker has taken and not yet run
    while (!setup.stopping()) {
      if (index == end) {
        index = next.fetch_add(run, std::memory_order_relaxed);
        if (index >= workgroups) break;
        end = std::min(index + run, workgroups);
      }
      const uint32_t x = static_cast<uint32_t>(index % setup.grid[0]);
      const uint32_t y = static_cast<uint32_t>((index / setup.grid[0]) % setup.grid[1]);
      const uint32_t z = static_cast<uint32_t>(index / (uint64_t{setup.grid[0]} * setup.grid[1]));
      ++index;
      absl::Status status = runner.Run(x, y, z);
      if (!status.ok() && runner.fault().kind != WaveFault::kNone) {
        std::lock_guard error_lock(error_mu);
        if (first_error.ok()) {
          first_error = absl::InternalError(absl::StrFormat("workgroup (%d, %d, %d): %s", x, y, z, status.message()));
          first_fault = runner.fault();
        }
        stop.store(true, std::memory_order_relaxed);
      }
    }
    lane_instructions_.fetch_add(runner.lane_instructions(), std::memory_order_relaxed);
  };
  pool_.Run(threads_used, worker);

  if (state.reset_waves != nullptr && state.reset_waves->load(std::memory_order_relaxed) && first_error.ok()) {
    return absl::CancelledError("the queue's waves were reset (CP_HQD_DEQUEUE_REQUEST RESET_WAVES)");
  }
  if (!first_error.ok() && first_fault.kind == WaveFault::kIllegalInstruction) {
    ReportIllegalInstruction(state, first_fault, std::string(first_error.message()));
  } else if (!first_error.ok()) {
    context_.errors.Report("sq", std::string(first_error.message()));
  }
  return first_error;
}

}  // namespace am::sim::isa
