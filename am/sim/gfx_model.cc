#include "am/sim/gfx_model.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/mqd.h"
#include "am/regs/power_on_values.h"
#include "am/regs/psp_constants.h"
#include "am/sim/discovery_table.h"
#include "firmware/virtual_firmware.h"

namespace am::sim {
namespace {

namespace gc = regs::gc;
namespace pm4 = regs::pm4;

constexpr uint32_t kHqdActive = gc::CP_HQD_ACTIVE::kOffset - HqdRegisters::kFirst;
constexpr uint32_t kHqdDequeueRequest = gc::CP_HQD_DEQUEUE_REQUEST::kOffset - HqdRegisters::kFirst;
constexpr uint32_t kHqdWptrLo = gc::CP_HQD_PQ_WPTR_LO::kOffset - HqdRegisters::kFirst;
constexpr uint32_t kHqdWptrHi = gc::CP_HQD_PQ_WPTR_HI::kOffset - HqdRegisters::kFirst;
constexpr uint32_t kHqdPqBase = gc::CP_HQD_PQ_BASE::kOffset - HqdRegisters::kFirst;
constexpr uint32_t kHqdPqBaseHi = gc::CP_HQD_PQ_BASE_HI::kOffset - HqdRegisters::kFirst;

// How many CP_STAT reads after the RLC autoload the CP still reports busy. gfx_v11_0_wait_for_rlc_autoload_complete
// waits for CP_STAT == 0 as well as BOOTLOAD_COMPLETE; how long the CP firmware takes to settle is not public, so
// the model makes it a fixed number of polls (deterministic for tests, and a driver that never looks at CP_STAT
// never sees the CP idle).
constexpr uint32_t kCpStartupPolls = 3;

// The RS64 MEC's program counter registers as gfx_v11_0_config_gfx_rs64 fills them from the MEC firmware's
// ucode_start_addr (a byte address): START = address >> 2 (ucode_start_addr_lo >> 2 | ucode_start_addr_hi << 30),
// START_HI = ucode_start_addr_hi >> 2.
constexpr uint32_t ProgramStart(uint64_t address) { return static_cast<uint32_t>(address >> 2); }
constexpr uint32_t ProgramStartHi(uint64_t address) { return static_cast<uint32_t>(address >> 34); }

// The RS64 MEC firmware and each pipe's stack (psp_gfx_if.h GFX_FW_TYPE_RS64_MEC*, what gc_11_0_0_mec.bin
// provides), which the PSP must have loaded for the MEC to run a pipe.
constexpr uint32_t kMecStack[GfxModel::kPipes] = {
    regs::psp::GFX_FW_TYPE_RS64_MEC_P0_STACK, regs::psp::GFX_FW_TYPE_RS64_MEC_P1_STACK,
    regs::psp::GFX_FW_TYPE_RS64_MEC_P2_STACK, regs::psp::GFX_FW_TYPE_RS64_MEC_P3_STACK};

// RLC_CP_SCHEDULERS.scheduler0 as gfx_v11_0_kiq_setting writes it: (me << 5) | (pipe << 3) | queue, then bit 7.
constexpr uint32_t kKiqEnable = 0x80;

// MAP_QUEUES / UNMAP_QUEUES dword 1 fields, from the nvd.h PACKET3_MAP_QUEUES_*(x) shifts and the widths up to the
// next field.
struct MapQueuesControl {
  uint32_t raw;
  uint32_t queue_sel() const { return (raw >> 4) & 3; }
  uint32_t queue() const { return (raw >> 13) & 7; }
  uint32_t pipe() const { return (raw >> 16) & 3; }
  uint32_t me() const { return (raw >> 18) & 3; }
  uint32_t engine_sel() const { return (raw >> 26) & 7; }
  uint32_t num_queues() const { return (raw >> 29) & 7; }
  uint32_t action() const { return raw & 3; }  // UNMAP_QUEUES
};
constexpr uint32_t DoorbellOffsetField(uint32_t dword) { return (dword >> 2) & 0x3ffffff; }

// amdgpu's enum amdgpu_unmap_queues_action.
constexpr uint32_t kPreemptQueues = 0, kResetQueues = 1, kPreemptQueuesNoUnmap = 3;
// QUERY_STATUS's control dword (nvd.h PACKET3_QUERY_STATUS_CONTEXT_ID / _INTERRUPT_SEL / _COMMAND: bits 27:0,
// 29:28, 31:30; widths from amdkfd's kfd_pm4_headers_ai.h pm4_mes_query_status). COMMAND values from its
// mes_query_status_command_enum: 0 interrupt only, 1 and 2 the 64-bit fence (at once / after the write
// acknowledgement, the same thing for the model), 3 the fence after the acknowledgement, then the interrupt.
constexpr uint32_t kQueryStatusCommandShift = std::countr_zero(pm4::PACKET3_QUERY_STATUS_COMMAND(1));
constexpr uint32_t kQueryStatusCommandMask = 0x3;
constexpr uint32_t kQueryStatusContextIdMask = pm4::PACKET3_QUERY_STATUS_INTERRUPT_SEL(1) - 1;
constexpr uint32_t kQueryStatusInterruptOnly = 0, kQueryStatusFenceThenInterrupt = 3;

}  // namespace

GfxModel::GfxModel(const ModelContext& context, ShaderExecutor* executor)
    : context_(context),
      executor_(executor),
      state_(StateBlock<State>(context.state.gfx)),
      grbm_gfx_cntl_(RegisterAddress<gc::GRBM_GFX_CNTL>(context.bases)),
      rlc_safe_mode_(RegisterAddress<gc::RLC_SAFE_MODE>(context.bases)),
      rlc_cp_schedulers_(RegisterAddress<gc::RLC_CP_SCHEDULERS>(context.bases)),
      mec_rs64_cntl_(RegisterAddress<gc::CP_MEC_RS64_CNTL>(context.bases)),
      mec_doorbell_lower_(RegisterAddress<gc::CP_MEC_DOORBELL_RANGE_LOWER>(context.bases)),
      mec_doorbell_upper_(RegisterAddress<gc::CP_MEC_DOORBELL_RANGE_UPPER>(context.bases)),
      hqd_first_(RegisterAddress<gc::CP_MQD_BASE_ADDR>(context.bases)) {
  RegisterFile& registers = context_.registers;
  for (uint32_t i = 0; i < HqdRegisters::kCount; ++i) {
    registers.OnRead(hqd_first_ + i, "gfx", [this, i](uint32_t stored) {
      const std::optional<HqdId> id = Selected();
      return id ? Bank(*id).Read(i) : stored;
    });
    registers.OnWrite(hqd_first_ + i, "gfx", [this, i](uint32_t value) { OnHqdWrite(i, value); });
  }

  // SH_MEM_CONFIG / SH_MEM_BASES: one per VMID, selected by GRBM_GFX_CNTL.VMID.
  auto selected_vmid = [this] { return gc::GRBM_GFX_CNTL::FromRaw(context_.registers.Peek(grbm_gfx_cntl_)).vmid(); };
  for (auto [address, bank] : {std::pair{RegisterAddress<gc::SH_MEM_CONFIG>(context.bases), state_.sh_mem_config},
                               std::pair{RegisterAddress<gc::SH_MEM_BASES>(context.bases), state_.sh_mem_bases}}) {
    registers.OnRead(address, "gfx", [bank, selected_vmid](uint32_t) {
      return std::atomic_ref<uint32_t>(bank[selected_vmid()]).load(std::memory_order_acquire);
    });
    registers.OnWrite(address, "gfx", [bank, selected_vmid](uint32_t value) {
      std::atomic_ref<uint32_t>(bank[selected_vmid()]).store(value, std::memory_order_release);
    });
  }

  registers.OnWrite(RegisterAddress<gc::GRBM_GFX_INDEX>(context.bases), "gfx", [this](uint32_t value) {
    const auto index = gc::GRBM_GFX_INDEX::FromRaw(value);
    const Navi31GcConfig config;
    if ((!index.se_broadcast_writes() && index.se_index() >= config.num_se) ||
        (!index.sa_broadcast_writes() && index.sa_index() >= config.num_sa_per_se)) {
      context_.errors.Report(
          "gfx", absl::StrFormat("GRBM_GFX_INDEX %#010x selects SE %d SA %d; this GPU has %d SEs of %d SAs (gc_info)",
                                 value, index.se_index(), index.sa_index(), config.num_se, config.num_sa_per_se));
    }
  });

  // BOOTLOAD_COMPLETE is the RLC's report that its autoload (started by the PSP) brought the CP firmware up.
  registers.OnRead(RegisterAddress<gc::RLC_RLCS_BOOTLOAD_STATUS>(context.bases), "rlc", [this](uint32_t stored) {
    return gc::RLC_RLCS_BOOTLOAD_STATUS::FromRaw(stored)
        .bootload_complete(context_.firmware.rlc_autoloaded() ? 1 : 0)
        .raw();
  });
  registers.OnWrite(rlc_safe_mode_, "rlc", [this](uint32_t value) {
    auto request = gc::RLC_SAFE_MODE::FromRaw(value);
    if (!request.cmd()) return;
    if (!context_.firmware.rlc_autoloaded()) {
      context_.errors.Report("rlc", absl::StrFormat("RLC_SAFE_MODE request %#x while the RLC is not running (no RLC "
                                                    "autoload yet): CMD is never acknowledged",
                                                    value));
      return;
    }
    context_.registers.Poke(rlc_safe_mode_, request.cmd(0).raw());
  });

  registers.OnWrite(mec_rs64_cntl_, "mec", [this](uint32_t value) {
    OnMecCntlWrite(value);
    WakeAll();
  });
  registers.OnWrite(RegisterAddress<gc::CP_PQ_WPTR_POLL_CNTL>(context.bases), "mec", [this](uint32_t) { WakeAll(); });
  // The program counters are per pipe (GRBM_GFX_CNTL me 1 selects one); with nothing selected they are storage.
  for (bool hi : {false, true}) {
    const uint64_t address = hi ? RegisterAddress<gc::CP_MEC_RS64_PRGRM_CNTR_START_HI>(context.bases)
                                : RegisterAddress<gc::CP_MEC_RS64_PRGRM_CNTR_START>(context.bases);
    registers.OnRead(address, "mec", [this, hi](uint32_t stored) {
      const std::optional<uint32_t> pipe = SelectedPipe();
      if (!pipe) return stored;
      return std::atomic_ref<uint32_t>(hi ? state_.program_start_hi[*pipe] : state_.program_start[*pipe]).load();
    });
    registers.OnWrite(address, "mec", [this, hi](uint32_t value) { OnProgramStartWrite(hi, value); });
  }
  registers.OnRead(RegisterAddress<gc::CP_STAT>(context.bases), "cp", [this](uint32_t) { return ReadCpStat(); });

  registers.OnRead(RegisterAddress<gc::CP_MES_MTIME_LO>(context.bases), "gfx",
                   [this](uint32_t) { return static_cast<uint32_t>(context_.clock.Now()); });
  registers.OnRead(RegisterAddress<gc::CP_MES_MTIME_HI>(context.bases), "gfx",
                   [this](uint32_t) { return static_cast<uint32_t>(context_.clock.Now() >> 32); });

  if (std::atomic_ref<uint32_t>(state_.powered_on).load() == 0) PowerOn();

  // A queue a previous process left active carries on from its registers.
  for (uint32_t pipe = 0; pipe < kPipes; ++pipe) {
    for (uint32_t queue = 0; queue < kQueuesPerPipe; ++queue) {
      const HqdId id{kMec, pipe, queue};
      if (Bank(id).Get<gc::CP_HQD_ACTIVE>().active()) Activate(id);
    }
  }
}

GfxModel::~GfxModel() {
  std::vector<std::unique_ptr<ComputeQueue>> queues;
  {
    std::lock_guard lock(queues_mu_);
    for (auto& pipe : queues_) {
      for (auto& queue : pipe) queues.push_back(std::move(queue));
    }
  }
  // Destroying a queue stops its thread and leaves its HQD active, for the next process to pick up.
  queues.clear();
}

void GfxModel::Reset() {
  std::vector<std::unique_ptr<ComputeQueue>> queues;
  {
    std::lock_guard lock(queues_mu_);
    for (auto& pipe : queues_) {
      for (auto& queue : pipe) queues.push_back(std::move(queue));
    }
  }
  queues.clear();
  {
    std::lock_guard lock(queues_mu_);
    for (auto& pipe : clobbered_) std::fill(std::begin(pipe), std::end(pipe), false);
  }
  PowerOn();
}

void GfxModel::PowerOn() {
  // Each HQD bank starts from the HQD registers' reset values (CP_HQD_PQ_CONTROL 0x00308509, ...).
  uint32_t hqd_defaults[HqdRegisters::kCount] = {};
  for (const regs::PowerOnValue& reset : regs::PowerOnValues()) {
    if (reset.ip == regs::Ip::kGc && reset.segment == gc::CP_MQD_BASE_ADDR::kSegment &&
        reset.offset >= HqdRegisters::kFirst && reset.offset < HqdRegisters::kFirst + HqdRegisters::kCount) {
      hqd_defaults[reset.offset - HqdRegisters::kFirst] = reset.value;
    }
  }
  for (auto& pipe : state_.hqd) {
    for (auto& bank : pipe) {
      for (uint32_t i = 0; i < HqdRegisters::kCount; ++i) {
        std::atomic_ref<uint32_t>(bank[i]).store(hqd_defaults[i], std::memory_order_release);
      }
    }
  }
  for (uint32_t vmid = 0; vmid < kVmids; ++vmid) {
    std::atomic_ref<uint32_t>(state_.sh_mem_config[vmid]).store(gc::SH_MEM_CONFIG::kDefault);
    std::atomic_ref<uint32_t>(state_.sh_mem_bases[vmid]).store(gc::SH_MEM_BASES::kDefault);
  }
  for (uint32_t pipe = 0; pipe < kPipes; ++pipe) {
    std::atomic_ref<uint32_t>(state_.program_start[pipe]).store(gc::CP_MEC_RS64_PRGRM_CNTR_START::kDefault);
    std::atomic_ref<uint32_t>(state_.program_start_hi[pipe]).store(gc::CP_MEC_RS64_PRGRM_CNTR_START_HI::kDefault);
    std::atomic_ref<uint32_t>(state_.pipe_latched[pipe]).store(0);
  }
  std::atomic_ref<uint32_t>(state_.cp_stat_polls).store(0);
  std::atomic_ref<uint32_t>(state_.powered_on).store(1, std::memory_order_release);
}

std::optional<uint32_t> GfxModel::SelectedPipe() const {
  const auto cntl = gc::GRBM_GFX_CNTL::FromRaw(context_.registers.Peek(grbm_gfx_cntl_));
  if (cntl.meid() != kMec || cntl.pipeid() >= kPipes) return std::nullopt;
  return cntl.pipeid();
}

bool GfxModel::CpBusy() const {
  return !context_.firmware.rlc_autoloaded() ||
         std::atomic_ref<uint32_t>(state_.cp_stat_polls).load() < kCpStartupPolls;
}

uint32_t GfxModel::ReadCpStat() {
  if (!CpBusy()) return gc::CP_STAT::kDefault;
  // Busy: the RLC is still loading the CP firmware, or the CP is starting it (counted by the driver's polls).
  if (context_.firmware.rlc_autoloaded()) std::atomic_ref<uint32_t>(state_.cp_stat_polls).fetch_add(1);
  return gc::CP_STAT{}.cp_busy(1).raw();
}

void GfxModel::OnProgramStartWrite(bool hi, uint32_t value) {
  const std::optional<uint32_t> pipe = SelectedPipe();
  if (!pipe) return;  // not a MEC1 pipe: plain storage, no pipe fetches from it
  const char* name = hi ? gc::CP_MEC_RS64_PRGRM_CNTR_START_HI::kName : gc::CP_MEC_RS64_PRGRM_CNTR_START::kName;
  if (CpBusy()) {
    context_.errors.Report("mec", absl::StrFormat("MEC1 pipe%d: %s=%#x written while CP_STAT reads busy (the RLC "
                                                  "autoload has not finished starting the CP): the write is lost",
                                                  *pipe, name, value));
    return;
  }
  std::atomic_ref<uint32_t>(hi ? state_.program_start_hi[*pipe] : state_.program_start[*pipe]).store(value);
  // A new start address takes effect at the pipe's next reset (gfx_v11_0_config_gfx_rs64 pulses MEC_PIPEn_RESET).
  std::atomic_ref<uint32_t>(state_.pipe_latched[*pipe]).store(0);
}

void GfxModel::OnMecCntlWrite(uint32_t value) {
  const auto cntl = gc::CP_MEC_RS64_CNTL::FromRaw(value);
  const uint32_t reset[] = {cntl.mec_pipe0_reset(), cntl.mec_pipe1_reset(), cntl.mec_pipe2_reset(),
                            cntl.mec_pipe3_reset()};
  for (uint32_t pipe = 0; pipe < kPipes; ++pipe) {
    if (!reset[pipe]) continue;
    if (CpBusy()) {
      context_.errors.Report(
          "mec", absl::StrFormat("MEC1 pipe%d: MEC_PIPE%d_RESET written while CP_STAT reads busy (the RLC autoload has "
                                 "not finished starting the CP): the pipe does not latch its start address",
                                 pipe, pipe));
      continue;
    }
    std::atomic_ref<uint32_t>(state_.pipe_latched[pipe]).store(1);
  }
}

uint64_t GfxModel::FirmwareStart() const {
  // The start address of the RS64 MEC firmware the PSP loaded. LoadedFirmware knows it when whoever read the
  // container recorded it; otherwise the loaded firmware is the virtual one (the only one the virtual PSP accepts
  // today), whose start address is fixed.
  return context_.firmware.UcodeStart(regs::psp::GFX_FW_TYPE_RS64_MEC)
      .value_or(firmware::VirtualUcodeStartAddress(firmware::FileKind::kMec));
}

bool GfxModel::PipeRunsFirmware(uint32_t pipe) const {
  const uint64_t start = FirmwareStart();
  return std::atomic_ref<uint32_t>(state_.program_start[pipe]).load() == ProgramStart(start) &&
         std::atomic_ref<uint32_t>(state_.program_start_hi[pipe]).load() == ProgramStartHi(start) &&
         std::atomic_ref<uint32_t>(state_.pipe_latched[pipe]).load() != 0;
}

std::string GfxModel::PipeProgramProblem(uint32_t pipe) const {
  if (PipeRunsFirmware(pipe)) return "";
  const uint64_t start = FirmwareStart();
  const uint32_t lo = std::atomic_ref<uint32_t>(state_.program_start[pipe]).load();
  const uint32_t hi = std::atomic_ref<uint32_t>(state_.program_start_hi[pipe]).load();
  if (lo != ProgramStart(start) || hi != ProgramStartHi(start)) {
    return absl::StrFormat(
        "its CP_MEC_RS64_PRGRM_CNTR_START/_HI are %#x/%#x, but the RS64 MEC firmware starts at %#x (START %#x, "
        "START_HI %#x from ucode_start_addr, as gfx_v11_0_config_gfx_rs64 programs them): the pipe fetches no valid "
        "instruction",
        lo, hi, start, ProgramStart(start), ProgramStartHi(start));
  }
  return absl::StrFormat(
      "its start address %#x was written but the pipe was not reset since (CP_MEC_RS64_CNTL.MEC_PIPE%d_RESET "
      "pulse): it still runs from its old program counter",
      start, pipe);
}

std::optional<HqdId> GfxModel::Selected() const {
  const auto cntl = gc::GRBM_GFX_CNTL::FromRaw(context_.registers.Peek(grbm_gfx_cntl_));
  if (cntl.meid() != kMec || cntl.pipeid() >= kPipes || cntl.queueid() >= kQueuesPerPipe) return std::nullopt;
  return HqdId{cntl.meid(), cntl.pipeid(), cntl.queueid()};
}

uint32_t GfxModel::ShMemConfig(uint32_t vmid) const {
  return vmid < kVmids ? std::atomic_ref<uint32_t>(state_.sh_mem_config[vmid]).load() : 0;
}

uint32_t GfxModel::ShMemBases(uint32_t vmid) const {
  return vmid < kVmids ? std::atomic_ref<uint32_t>(state_.sh_mem_bases[vmid]).load() : 0;
}

void GfxModel::OnHqdWrite(uint32_t index, uint32_t value) {
  const std::optional<HqdId> id = Selected();
  if (!id) {
    if (index == kHqdActive && (value & 1)) {
      const auto cntl = gc::GRBM_GFX_CNTL::FromRaw(context_.registers.Peek(grbm_gfx_cntl_));
      context_.errors.Report(
          "mec", absl::StrFormat("CP_HQD_ACTIVE=1 with GRBM_GFX_CNTL selecting me%d pipe%d queue%d: GC 11.0.0 has "
                                 "compute HQDs on me%d, pipes 0-%d, queues 0-%d only; nothing runs",
                                 cntl.meid(), cntl.pipeid(), cntl.queueid(), kMec, kPipes - 1, kQueuesPerPipe - 1));
    }
    return;
  }
  // Linux (gfx_v11_0_kiq_init_register) and tinygrad (reset_mec -> _dequeue_hqds) dequeue a live HQD and wait for
  // CP_HQD_ACTIVE to read 0 before they rewrite it; the CP owns a running queue's HQD. Deactivating it by hand or
  // moving its ring under it is refused: the CP would keep fetching from the old ring.
  if ((index == kHqdActive && !(value & 1)) || index == kHqdPqBase || index == kHqdPqBaseHi) {
    if (QueueLive(*id)) {
      context_.errors.Report(
          "mec", absl::StrFormat("%s: %s=%#x written while the queue runs (not dequeued: CP_HQD_DEQUEUE_REQUEST, then "
                                 "wait for CP_HQD_ACTIVE 0): refused; the queue stops and does not start again until "
                                 "it is dequeued",
                                 id->Name(), index == kHqdActive ? "CP_HQD_ACTIVE" : "CP_HQD_PQ_BASE", value));
      {
        std::lock_guard lock(queues_mu_);
        clobbered_[id->pipe][id->queue] = true;
      }
      Deactivate(*id);
      return;
    }
  }
  Bank(*id).Write(index, value);
  switch (index) {
    case kHqdActive:
      if (value & 1) {
        Activate(*id);
      } else {
        Deactivate(*id);
      }
      return;
    case kHqdDequeueRequest:
      if (const uint32_t request = gc::CP_HQD_DEQUEUE_REQUEST::FromRaw(value).dequeue_req(); request != 0) {
        std::lock_guard lock(queues_mu_);
        clobbered_[id->pipe][id->queue] = false;  // the driver's recovery: the queue is off the MEC now
        ComputeQueue* queue = queues_[id->pipe][id->queue].get();
        if (queue != nullptr && !queue->finished()) {
          queue->RequestDequeue(static_cast<regs::DequeueRequest>(request));
        } else {
          Bank(*id).Set(gc::CP_HQD_ACTIVE::FromRaw(0));  // nothing runs it: the HQD is off at once
        }
      }
      return;
    case kHqdWptrLo:
    case kHqdWptrHi: {
      std::lock_guard lock(queues_mu_);
      if (ComputeQueue* queue = queues_[id->pipe][id->queue].get()) queue->Wake(/*wptr_register_written=*/true);
      return;
    }
  }
}

bool GfxModel::Activate(const HqdId& id) {
  const char* missing = nullptr;
  if (!context_.firmware.Has(regs::psp::GFX_FW_TYPE_RS64_MEC)) {
    missing = "the RS64 MEC firmware (GFX_FW_TYPE_RS64_MEC) is not loaded";
  } else if (!context_.firmware.Has(kMecStack[id.pipe])) {
    missing = "the pipe's RS64 MEC stack (GFX_FW_TYPE_RS64_MEC_Pn_STACK) is not loaded";
  } else if (!context_.firmware.rlc_autoloaded()) {
    missing = "the RLC autoload that starts the CP firmware has not run";
  }
  if (missing != nullptr) {
    context_.errors.Report("mec",
                           absl::StrFormat("%s: CP_HQD_ACTIVE=1 but %s; no engine runs the queue", id.Name(), missing));
    return false;
  }
  if (const std::string problem = PipeProgramProblem(id.pipe); !problem.empty()) {
    context_.errors.Report("mec", absl::StrFormat("%s: CP_HQD_ACTIVE=1 but MEC1 pipe%d cannot run it: %s; the queue "
                                                  "does not advance",
                                                  id.Name(), id.pipe, problem));
  }
  std::unique_ptr<ComputeQueue> previous;
  {
    std::lock_guard lock(queues_mu_);
    if (clobbered_[id.pipe][id.queue]) {
      context_.errors.Report("mec", absl::StrFormat("%s: CP_HQD_ACTIVE=1 refused: the HQD was rewritten while its "
                                                    "queue ran; dequeue it (CP_HQD_DEQUEUE_REQUEST) first",
                                                    id.Name()));
      return false;
    }
    std::unique_ptr<ComputeQueue>& slot = queues_[id.pipe][id.queue];
    if (slot && !slot->finished()) return true;  // already running: activating again changes nothing
    previous = std::move(slot);
  }
  previous.reset();  // a dequeued queue's thread has ended; this only joins it
  ComputeQueue::Hooks hooks;
  hooks.mec_running = [this, pipe = id.pipe] { return MecRunning(pipe); };
  hooks.doorbell_routed = [this](uint64_t index) { return DoorbellRouted(index); };
  hooks.sh_mem = [this](uint32_t vmid) { return ShMemRegisters{ShMemConfig(vmid), ShMemBases(vmid)}; };
  if (IsKiq(id)) {
    hooks.kiq = [this](std::span<const uint32_t> packet, Pm4Engine& engine) {
      return ExecuteKiqPacket(packet, engine);
    };
  }
  auto queue = std::make_unique<ComputeQueue>(context_, executor_, id, Bank(id), std::move(hooks));
  std::lock_guard lock(queues_mu_);
  queues_[id.pipe][id.queue] = std::move(queue);
  return true;
}

void GfxModel::Deactivate(const HqdId& id) {
  std::unique_ptr<ComputeQueue> queue;
  {
    std::lock_guard lock(queues_mu_);
    queue = std::move(queues_[id.pipe][id.queue]);
  }
  queue.reset();  // stops at the packet boundary and joins
}

bool GfxModel::QueueLive(const HqdId& id) {
  std::lock_guard lock(queues_mu_);
  const auto& slot = queues_[id.pipe][id.queue];
  return slot && !slot->finished();
}

bool GfxModel::MecRunning(uint32_t pipe) const {
  const auto rs64 = gc::CP_MEC_RS64_CNTL::FromRaw(context_.registers.Peek(mec_rs64_cntl_));
  const uint32_t active[] = {rs64.mec_pipe0_active(), rs64.mec_pipe1_active(), rs64.mec_pipe2_active(),
                             rs64.mec_pipe3_active()};
  const uint32_t reset[] = {rs64.mec_pipe0_reset(), rs64.mec_pipe1_reset(), rs64.mec_pipe2_reset(),
                            rs64.mec_pipe3_reset()};
  // CP_MEC_CNTL (the F32 MEC's control, powering on with MEC_ME1_HALT set) does not apply to the RS64 MEC:
  // gfx_v11_0_cp_compute_enable touches only CP_MEC_RS64_CNTL when rs64_enable.
  return !rs64.mec_halt() && active[pipe] && !reset[pipe] && PipeRunsFirmware(pipe);
}

bool GfxModel::DoorbellRouted(uint64_t dword_index) const {
  // The range registers hold byte offsets into the doorbell BAR (gfx_v11_0_kiq_init_register: index * 2 << 2 for
  // a 64-bit doorbell index); a doorbell outside [LOWER, UPPER] does not reach the MEC.
  const uint64_t byte = dword_index * 4;
  const uint64_t lower =
      gc::CP_MEC_DOORBELL_RANGE_LOWER::FromRaw(context_.registers.Peek(mec_doorbell_lower_)).doorbell_range_lower()
      << 2;
  const uint64_t upper =
      gc::CP_MEC_DOORBELL_RANGE_UPPER::FromRaw(context_.registers.Peek(mec_doorbell_upper_)).doorbell_range_upper()
      << 2;
  return byte >= lower && byte <= upper;
}

bool GfxModel::IsKiq(const HqdId& id) const {
  const uint32_t scheduler = gc::RLC_CP_SCHEDULERS::FromRaw(context_.registers.Peek(rlc_cp_schedulers_)).scheduler0();
  return (scheduler & kKiqEnable) && scheduler == (kKiqEnable | (id.me << 5) | (id.pipe << 3) | id.queue);
}

void GfxModel::WakeAll() {
  std::lock_guard lock(queues_mu_);
  for (auto& pipe : queues_) {
    for (auto& queue : pipe) {
      if (queue) queue->Wake();
    }
  }
}

bool GfxModel::InjectQueueHang(uint32_t pipe, uint32_t queue) {
  if (pipe >= kPipes || queue >= kQueuesPerPipe) return false;
  std::lock_guard lock(queues_mu_);
  ComputeQueue* q = queues_[pipe][queue].get();
  if (q == nullptr || q->finished()) return false;
  q->InjectHang();
  return true;
}

bool GfxModel::QueueRunning(uint32_t pipe, uint32_t queue) {
  if (pipe >= kPipes || queue >= kQueuesPerPipe) return false;
  std::lock_guard lock(queues_mu_);
  return queues_[pipe][queue] && !queues_[pipe][queue]->finished();
}

std::optional<EngineWakeup::Waits> GfxModel::QueueWaits(uint32_t pipe, uint32_t queue) {
  if (pipe >= kPipes || queue >= kQueuesPerPipe) return std::nullopt;
  std::lock_guard lock(queues_mu_);
  const std::unique_ptr<ComputeQueue>& slot = queues_[pipe][queue];
  if (!slot || slot->finished()) return std::nullopt;
  return slot->waits();
}

Pm4Engine::Status GfxModel::ExecuteKiqPacket(std::span<const uint32_t> packet, Pm4Engine& engine) {
  const uint32_t opcode = pm4::Packet3Opcode(packet[0]);
  auto malformed = [&](const std::string& what) {
    return engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR, what);
  };
  switch (opcode) {
    case pm4::PACKET3_SET_RESOURCES:
      // gfx11_kiq_set_resources: the queue and GWS/OAC/GDS masks the KIQ may hand out; the model hands out all.
      if (packet.size() != 8)
        return malformed(absl::StrFormat("SET_RESOURCES of %d dwords; it takes 8", packet.size()));
      return Pm4Engine::Status::kDone;
    case pm4::PACKET3_MAP_QUEUES: {
      // gfx11_kiq_map_queues: control, doorbell offset, MQD address lo/hi, wptr address lo/hi.
      if (packet.size() != 7) return malformed(absl::StrFormat("MAP_QUEUES of %d dwords; it takes 7", packet.size()));
      const MapQueuesControl control{packet[1]};
      if (control.queue_sel() != 0 || control.num_queues() != 1 || control.engine_sel() != 0 || control.me() != kMec ||
          control.pipe() >= kPipes || control.queue() >= kQueuesPerPipe) {
        return malformed(absl::StrFormat(
            "MAP_QUEUES control %#010x (queue_sel %d, num_queues %d, engine_sel %d, me %d pipe %d queue %d): the "
            "model maps one compute queue (engine_sel 0) given by me%d, pipe 0-%d, queue 0-%d",
            packet[1], control.queue_sel(), control.num_queues(), control.engine_sel(), control.me(), control.pipe(),
            control.queue(), kMec, kPipes - 1, kQueuesPerPipe - 1));
      }
      const HqdId target{kMec, control.pipe(), control.queue()};
      const uint64_t mqd_address = packet[3] | (uint64_t{packet[4]} << 32);
      regs::V11ComputeMqd mqd;
      absl::Status read = ReadMemory(context_.memory, engine.client(), mqd_address,
                                     std::span<uint8_t>(reinterpret_cast<uint8_t*>(&mqd), sizeof(mqd)));
      if (!read.ok()) {
        return engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF,
                            absl::StrFormat("MAP_QUEUES of %s: reading the MQD: %s", target.Name(), read.message()));
      }
      {
        std::lock_guard lock(queues_mu_);
        const auto& slot = queues_[target.pipe][target.queue];
        if (slot && !slot->finished()) {
          return malformed(absl::StrFormat("MAP_QUEUES of %s, which is already mapped", target.Name()));
        }
      }
      const auto* dwords = reinterpret_cast<const uint32_t*>(&mqd);
      HqdRegisters bank = Bank(target);
      for (uint32_t i = 0; i < HqdRegisters::kCount; ++i) bank.Write(i, dwords[HqdRegisters::kMqdFirstDword + i]);
      bank.Set(bank.Get<gc::CP_HQD_PQ_DOORBELL_CONTROL>().doorbell_offset(DoorbellOffsetField(packet[2])));
      bank.Set(gc::CP_HQD_PQ_WPTR_POLL_ADDR::FromRaw(packet[5]));
      bank.Set(gc::CP_HQD_PQ_WPTR_POLL_ADDR_HI::FromRaw(packet[6]));
      bank.Set(gc::CP_HQD_ACTIVE::FromRaw(0).active(1));
      if (!Activate(target)) {
        return engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
                            absl::StrFormat("MAP_QUEUES of %s: the MEC cannot run it", target.Name()));
      }
      return Pm4Engine::Status::kDone;
    }
    case pm4::PACKET3_UNMAP_QUEUES: {
      // gfx11_kiq_unmap_queues: control, doorbell offset, then a fence address and value for
      // PREEMPT_QUEUES_NO_UNMAP.
      if (packet.size() != 6) return malformed(absl::StrFormat("UNMAP_QUEUES of %d dwords; it takes 6", packet.size()));
      const MapQueuesControl control{packet[1]};
      const uint32_t doorbell = DoorbellOffsetField(packet[2]);
      if (control.queue_sel() != 0 || control.engine_sel() != 0 ||
          (control.action() != kPreemptQueues && control.action() != kResetQueues &&
           control.action() != kPreemptQueuesNoUnmap)) {
        return malformed(
            absl::StrFormat("UNMAP_QUEUES control %#010x (action %d, queue_sel %d, engine_sel %d): the "
                            "model unmaps compute queues by doorbell (queue_sel 0, engine_sel 0) with "
                            "actions 0, 1 and 3",
                            packet[1], control.action(), control.queue_sel(), control.engine_sel()));
      }
      if (control.action() == kPreemptQueuesNoUnmap) {
        // Every earlier packet of every queue has run to its end, so the queue is preempted: write the fence.
        const uint64_t address = packet[3] | (uint64_t{packet[4]} << 32);
        absl::StatusOr<uint32_t*> fence = MapDword(context_.memory, engine.client(), address, Access::kWrite);
        if (!fence.ok()) {
          return engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF,
                              absl::StrFormat("UNMAP_QUEUES fence: %s", fence.status().message()));
        }
        std::atomic_ref<uint32_t>(**fence).store(packet[5], std::memory_order_release);
        return Pm4Engine::Status::kDone;
      }
      std::unique_ptr<ComputeQueue> unmapped;
      {
        std::lock_guard lock(queues_mu_);
        for (auto& pipe : queues_) {
          for (auto& slot : pipe) {
            if (slot && !slot->finished() &&
                !(slot->id().pipe == engine.id().pipe && slot->id().queue == engine.id().queue) &&
                Bank(slot->id()).Get<gc::CP_HQD_PQ_DOORBELL_CONTROL>().doorbell_offset() == doorbell) {
              unmapped = std::move(slot);
            }
          }
        }
      }
      if (!unmapped) {
        return malformed(absl::StrFormat("UNMAP_QUEUES of doorbell %#x: no mapped queue has it", doorbell));
      }
      // RESET_QUEUES ends the waves with the queue; PREEMPT_QUEUES lets them finish (the MEC firmware's actions).
      unmapped->RequestDequeue(control.action() == kResetQueues ? regs::DequeueRequest::kResetWaves
                                                                : regs::DequeueRequest::kDrainPipe);
      unmapped.reset();  // joins: the queue is off the MEC when the packet completes
      return Pm4Engine::Status::kDone;
    }
  }
  if (opcode == pm4::PACKET3_QUERY_STATUS) {
    // gfx11_kiq_query_status: control (context id, interrupt select, command), doorbell offset and engine, the fence
    // address and the 64-bit sequence number. Every earlier packet of every queue has run (the model runs them in
    // order), so the status is "done": the fence is written. The interrupt (commands 0 and 3) is the IH source
    // CP_COMPUTE_QUERY_STATUS (irqsrcs_gfx_11_0_0.h) gated by the KIQ pipe's CMP_QUERY_STATUS_INT_ENABLE; its
    // src_data[0] carries CONTEXT_ID, as the EOP interrupt's carries RELEASE_MEM's (decision: no public consumer
    // decodes the entry). INTERRUPT_SEL (completion, process or queue status) does not change it: every status is
    // "done" in the model.
    if (packet.size() != 7) return malformed(absl::StrFormat("QUERY_STATUS of %d dwords; it takes 7", packet.size()));
    const uint32_t command = (packet[1] >> kQueryStatusCommandShift) & kQueryStatusCommandMask;
    if (command == kQueryStatusInterruptOnly) {
      engine.PostQueryStatusInterrupt(packet[1] & kQueryStatusContextIdMask);
      return Pm4Engine::Status::kDone;
    }
    const uint64_t address = packet[3] | (uint64_t{packet[4]} << 32);
    const uint64_t sequence = packet[5] | (uint64_t{packet[6]} << 32);
    absl::Status written = WriteMemory(context_.memory, engine.client(), address,
                                       {reinterpret_cast<const uint8_t*>(&sequence), sizeof(sequence)});
    if (!written.ok()) {
      return engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF,
                          absl::StrFormat("QUERY_STATUS fence: %s", written.message()));
    }
    if (command == kQueryStatusFenceThenInterrupt)
      engine.PostQueryStatusInterrupt(packet[1] & kQueryStatusContextIdMask);
    return Pm4Engine::Status::kDone;
  }
  return malformed(absl::StrFormat("%#x on the KIQ is not modelled", opcode));
}

}  // namespace am::sim
