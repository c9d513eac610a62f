#include "am/gfx.h"

#include <atomic>
#include <bit>
#include <cstring>

#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/gmc.h"
#include "am/kernel_dispatch.h"
#include "am/poll_backoff.h"
#include "am/regs/gc.h"
#include "am/regs/mqd.h"
#include "am/regs/nbio.h"
#include "am/regs/pm4.h"
#include "am/regs/sh_mem_constants.h"
#include "am/soc.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "firmware/container.h"
#include "firmware/requirements.h"

namespace am {
namespace {

namespace gc = regs::gc;
namespace pm4 = regs::pm4;

// gfx_v11_0_compute_mqd_init: the MQD header and the "all CUs" static thread masks.
constexpr uint32_t kMqdHeader = 0xC0310800;
constexpr uint32_t kAllCus = 0xffffffff;
// The HQD registers from CP_MQD_BASE_ADDR to CP_HQD_PQ_WPTR_HI are the MQD's dwords from cp_mqd_base_addr_lo on,
// in the same order (tinygrad's AM loads them that way).
constexpr uint32_t kHqdFirstMqdDword = offsetof(regs::V11ComputeMqd, cp_mqd_base_addr_lo) / 4;
constexpr uint32_t kHqdCount = gc::CP_HQD_PQ_WPTR_HI::kOffset - gc::CP_MQD_BASE_ADDR::kOffset + 1;
static_assert(offsetof(regs::V11ComputeMqd, cp_hqd_pq_wptr_hi) / 4 == kHqdFirstMqdDword + kHqdCount - 1);

// gfx_v11_0_sw_init for GC 11.0.0: num_pipe_per_mec (gfx_v11_0_config_gfx_rs64 programs each of them).
constexpr uint32_t kMecPipes = 4;

// gfx_v11_0_compute_mqd_init: compute_misc_reserved, CP_HQD_PERSISTENT_STATE.PRELOAD_SIZE and
// CP_HQD_IB_CONTROL.MIN_IB_AVAIL_SIZE as Linux sets them over the registers' power-on values.
constexpr uint32_t kComputeMiscReserved = 0x00000007;
constexpr uint32_t kPreloadSize = 0x55;
constexpr uint32_t kMinIbAvailSize = 3;

// amdgpu_doorbell.h: AMDGPU_NAVI10_DOORBELL_KIQ and _USERQUEUE_END, the MEC's doorbell range (64-bit indexes).
constexpr uint32_t kKiqDoorbell64 = 0x000;
constexpr uint32_t kUserQueueEndDoorbell64 = 0x08A;

// The shader memory configuration (B9), as gfx_v11_0_constants_init and gfx_v11_0_init_compute_vmid program it.
// AMDGPU_NUM_VMID (amdgpu_ids.h): the GC hub's VM contexts, each with its own SH_MEM_CONFIG/SH_MEM_BASES.
constexpr uint32_t kVmids = 16;
// gmc_v11_0_sw_init: vm_manager.first_kfd_vmid = 8. VMIDs below it are amdgpu's graphics VMIDs (the GFXHUB's
// id_mgr num_ids, amdgpu_vmid_mgr_init), the rest the compute (KFD) VMIDs.
constexpr uint32_t kFirstComputeVmid = 8;
// gfx_v11_0.c DEFAULT_SH_MEM_CONFIG: 64-bit FLAT addresses, no alignment requirement, INITIAL_INST_PREFETCH 3.
constexpr uint32_t kInitialInstPrefetch = 3;
// Code images are mapped with a guard for exactly this prefetch (CodeBytesWithPrefetchGuard).
static_assert(kInitialInstPrefetch == kInstructionPrefetchLines);
constexpr uint32_t kShMemConfig = gc::SH_MEM_CONFIG{}
                                      .address_mode(gc::SH_MEM_ADDRESS_MODE_64)
                                      .alignment_mode(gc::SH_MEM_ALIGNMENT_MODE_UNALIGNED)
                                      .initial_inst_prefetch(kInitialInstPrefetch)
                                      .raw();
// SH_MEM_BASES holds address bits 63:48 of each 4 GiB aperture.
constexpr int kApertureBaseShift = 48;
// gmc_v11_0_early_init: the graphics VMIDs' apertures, shared (LDS) at 0x2000'0000'0000'0000 and private
// (scratch) at 0x1000'0000'0000'0000; gfx_v11_0_constants_init writes them >> 48 for VMIDs 1 to 7.
constexpr uint64_t kSharedApertureStart = 0x2000'0000'0000'0000;
constexpr uint64_t kPrivateApertureStart = 0x1000'0000'0000'0000;
constexpr uint32_t kGraphicsShMemBases = gc::SH_MEM_BASES{}
                                             .shared_base(kSharedApertureStart >> kApertureBaseShift)
                                             .private_base(kPrivateApertureStart >> kApertureBaseShift)
                                             .raw();
// gfx_v11_0_init_compute_vmid: LDS_APP_BASE 0x1 and SCRATCH_APP_BASE 0x2 for the compute VMIDs 8 to 15.
constexpr uint32_t kLdsAppBase = 0x1;
constexpr uint32_t kScratchAppBase = 0x2;
constexpr uint32_t kComputeShMemBases = gc::SH_MEM_BASES{}.shared_base(kLdsAppBase).private_base(kScratchAppBase).raw();

constexpr uint32_t Log2(uint64_t value) { return static_cast<uint32_t>(std::countr_zero(value)); }

}  // namespace

absl::Status Gfx::InitSw() {
  MemoryManager& memory = device_.memory();
  BAREGPU_ASSIGN_OR_RETURN(ring_vram_, memory.AllocBoot(kRingBytes, kRingBytes));
  BAREGPU_ASSIGN_OR_RETURN(eop_, memory.AllocBoot(kEopBytes, 4096));
  BAREGPU_ASSIGN_OR_RETURN(mqd_, memory.AllocBoot(sizeof(regs::V11ComputeMqd), 4096));
  BAREGPU_ASSIGN_OR_RETURN(pointers_, memory.AllocBoot(4096, 4096));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> ring, memory.CpuView(ring_vram_, kRingBytes));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> pointers, memory.CpuView(pointers_, 4096));
  auto nbio = device_.Regs<regs::Ip::kNbio>();
  hdp_flush_request_ = static_cast<uint32_t>(nbio.AddressOf<regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_REQ>().value_or(0));
  hdp_flush_done_ = static_cast<uint32_t>(nbio.AddressOf<regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_DONE>().value_or(0));
  BAREGPU_RETURN_IF_ERROR(nbio.status());
  // The registers that select which bank the GC registers after them reach (soc21_grbm_select's GRBM_GFX_CNTL,
  // gfx_v11_0_select_se_sh's GRBM_GFX_INDEX, and the SQ's indirect index): what a debugger's register sequence may
  // write through the debug endpoint (pci/register_sequence.h), since each is put back after the sequence.
  auto g = device_.Regs<regs::Ip::kGc>();
  std::vector<uint32_t> selections;
  for (std::optional<uint64_t> dword :
       {g.AddressOf<gc::GRBM_GFX_CNTL>(), g.AddressOf<gc::GRBM_GFX_INDEX>(), g.AddressOf<gc::SQ_IND_INDEX>()}) {
    if (dword.has_value()) selections.push_back(static_cast<uint32_t>(*dword * 4));
  }
  device_.pci().set_selection_registers(kRegisterBar, std::move(selections));
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio doorbells, device_.pci().MapMmio(2));
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio registers, device_.pci().MapMmio(kRegisterBar));
  // A partial boot keeps the queue's write pointer where the previous process left it (LoadQueue reloads it).
  ring_.Attach({.ring = ring,
                .rptr = pointers.data(),
                .wptr_poll = reinterpret_cast<uint64_t*>(pointers.data() + kWptrPollOffset),
                .doorbells = doorbells,
                .doorbell_offset = kDoorbell64 * 8,
                .registers = registers,
                .hdp_flush_offset = Soc::kRemapMemFlush},
               0);
  return absl::OkStatus();
}

uint64_t Gfx::ring_mc() const { return device_.McAddress(ring_vram_); }

std::array<uint32_t, regs::pm4::WriteWaitRegister::kDwords> Gfx::HdpFlushPacket() const {
  const uint32_t mec_pipe0 = regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_DONE{}.cp2(1).raw();
  return regs::pm4::WriteWaitRegister::Encode(hdp_flush_request_, hdp_flush_done_, mec_pipe0, mec_pipe0);
}

void Gfx::Select(uint32_t me, uint32_t pipe, uint32_t queue) {
  device_.Regs<regs::Ip::kGc>().Write(gc::GRBM_GFX_CNTL{}.meid(me).pipeid(pipe).queueid(queue));
}

absl::Status Gfx::InitHw() {
  auto g = device_.Regs<regs::Ip::kGc>();
  BAREGPU_RETURN_IF_ERROR(WaitForAutoload());
  // A partial boot finds the queue of the previous process live on the MEC: dequeue it before anything under it
  // changes (gfx_v11_0_kiq_init_register, which drains it; tinygrad's reset_mec dequeues first too).
  BAREGPU_RETURN_IF_ERROR(Dequeue(regs::DequeueRequest::kDrainPipe));
  BAREGPU_RETURN_IF_ERROR(ConfigMec());
  // GC is powered now: its hub can be programmed (gfx_v11_0_hw_init: config_gfx_rs64, then gfxhub_enable).
  BAREGPU_RETURN_IF_ERROR(device_.gmc().EnableGcHub());
  InitShaderMemory();  // gfx_v11_0_hw_init: constants_init after gfxhub_enable, before cp_resume
  EnableMec();
  g.Write(gc::CP_MEC_DOORBELL_RANGE_LOWER{}.doorbell_range_lower(kKiqDoorbell64 * 2));
  g.Write(gc::CP_MEC_DOORBELL_RANGE_UPPER{}.doorbell_range_upper(kUserQueueEndDoorbell64 * 2));
  g.Write(gc::CP_ME1_PIPE0_INT_CNTL{}.time_stamp_int_enable(0).opcode_error_int_enable(1).gpf_int_enable(1));

  ring_.Clear();
  BAREGPU_RETURN_IF_ERROR(g.status());
  return LoadQueue();
}

absl::Status Gfx::SetEndOfPipeInterrupt(bool enable) {
  auto g = device_.Regs<regs::Ip::kGc>();
  g.Modify<gc::CP_ME1_PIPE0_INT_CNTL>([&](auto& r) { r.time_stamp_int_enable(enable ? 1 : 0); });
  const bool now = g.Read<gc::CP_ME1_PIPE0_INT_CNTL>().time_stamp_int_enable() != 0;
  BAREGPU_RETURN_IF_ERROR(g.status());
  if (now != enable) {
    return absl::InternalError(absl::StrFormat(
        "CP_ME1_PIPE0_INT_CNTL.TIME_STAMP_INT_ENABLE reads %d after writing %d: the GC register write was lost (is "
        "GC powered? `baregpu regs` shows the register)",
        now, enable));
  }
  return absl::OkStatus();
}

void Gfx::InitShaderMemory() {
  auto g = device_.Regs<regs::Ip::kGc>();
  base::MutexLock selection(&device_.pci().register_sequence_mutex());  // the GRBM selection is one per device
  for (uint32_t vmid = 0; vmid < kVmids; ++vmid) {
    // soc21_grbm_select(adev, 0, 0, 0, vmid): the banked SH_MEM_* of that VMID.
    g.Write(gc::GRBM_GFX_CNTL{}.vmid(vmid));
    g.Write(gc::SH_MEM_CONFIG::FromRaw(kShMemConfig));
    // Linux leaves VMID 0's SH_MEM_BASES at its power-on 0 (apertures overlapping at 0): amdgpu runs no FLAT code
    // there. baregpu's compute queue runs in VMID 0 (LoadQueue: cp_hqd_vmid 0), so VMID 0 gets the compute VMIDs'
    // apertures, which tinygrad's AM writes for every VMID too (docs/fidelity.md, B9).
    const bool graphics = vmid != 0 && vmid < kFirstComputeVmid;
    g.Write(gc::SH_MEM_BASES::FromRaw(graphics ? kGraphicsShMemBases : kComputeShMemBases));
  }
  Select(0, 0, 0);
}

absl::Status Gfx::WaitForAutoload() {
  auto g = device_.Regs<regs::Ip::kGc>();
  const uint32_t complete = gc::RLC_RLCS_BOOTLOAD_STATUS{}.bootload_complete(1).raw();
  BAREGPU_RETURN_IF_ERROR(device_.io().WaitFor(*g.AddressOf<gc::RLC_RLCS_BOOTLOAD_STATUS>(), complete, complete,
                                               kTimeout, "the RLC autoload to complete"));
  // The CP is still starting the firmware the RLC loaded until CP_STAT reads 0 (every busy bit clear).
  return device_.io().WaitFor(*g.AddressOf<gc::CP_STAT>(), ~uint32_t{0}, gc::CP_STAT{}.raw(), kTimeout,
                              "the CP to go idle after the RLC autoload (CP_STAT 0)");
}

absl::StatusOr<uint64_t> Gfx::MecUcodeStart() const {
  BAREGPU_ASSIGN_OR_RETURN(std::vector<firmware::RequiredFile> required, device_.RequiredFirmware());
  for (const firmware::RequiredFile& file : required) {
    if (file.role.kind != firmware::FileKind::kMec) continue;
    BAREGPU_ASSIGN_OR_RETURN(firmware::LoadedFile loaded, firmware_.Load(file.name));
    BAREGPU_ASSIGN_OR_RETURN(firmware::Container container, firmware::ParseContainer(loaded.path, loaded.data));
    const std::optional<uint64_t> lo = container.Field("ucode_start_addr_lo");
    const std::optional<uint64_t> hi = container.Field("ucode_start_addr_hi");
    if (!lo || !hi) {
      return absl::FailedPreconditionError(
          absl::StrFormat("%s (%s) has no ucode_start_addr_lo/hi: the RS64 MEC needs gfx_firmware_header_v2_0",
                          loaded.path, container.layout));
    }
    return (*hi << 32) | *lo;
  }
  return absl::NotFoundError("no MEC firmware among the files GC requires");
}

uint64_t Gfx::RunningMecStart() {
  auto g = device_.Regs<regs::Ip::kGc>();
  base::MutexLock selection(&device_.pci().register_sequence_mutex());
  Select(1, 0, 0);
  const uint64_t start = (uint64_t{g.Read<gc::CP_MEC_RS64_PRGRM_CNTR_START_HI>().ip_start()} << 34) |
                         (uint64_t{g.Read<gc::CP_MEC_RS64_PRGRM_CNTR_START>().ip_start()} << 2);
  Select(0, 0, 0);
  return start;
}

absl::Status Gfx::ConfigMec() {
  // A partial boot finds the MEC running the firmware the last full boot loaded, from where that boot pointed each
  // pipe: the address is read back, not taken from the file again, which may have changed since (the MEC still runs
  // the old one) and cost a read and a parse per partial boot (issue 24: 20% of its CPU).
  uint64_t start = 0;
  if (device_.boot_kind() == BootKind::kPartial) {
    start = RunningMecStart();
  } else {
    BAREGPU_ASSIGN_OR_RETURN(start, MecUcodeStart());
  }
  auto g = device_.Regs<regs::Ip::kGc>();
  // gfx_v11_0_config_gfx_rs64: each pipe's start address (dwords) under its GRBM selection...
  {
    base::MutexLock selection(&device_.pci().register_sequence_mutex());  // the GRBM selection is one per device
    for (uint32_t pipe = 0; pipe < kMecPipes; ++pipe) {
      Select(1, pipe, 0);
      g.Write(gc::CP_MEC_RS64_PRGRM_CNTR_START{}.ip_start(static_cast<uint32_t>(start >> 2)));
      g.Write(gc::CP_MEC_RS64_PRGRM_CNTR_START_HI{}.ip_start(static_cast<uint32_t>(start >> 34)));
    }
    Select(0, 0, 0);
  }
  // ...then a reset pulse of every pipe, which makes it fetch from there.
  auto cntl = g.Read<gc::CP_MEC_RS64_CNTL>();
  g.Write(cntl.mec_pipe0_reset(1).mec_pipe1_reset(1).mec_pipe2_reset(1).mec_pipe3_reset(1));
  g.Write(cntl.mec_pipe0_reset(0).mec_pipe1_reset(0).mec_pipe2_reset(0).mec_pipe3_reset(0));
  return g.status();
}

void Gfx::EnableMec() {
  // Read-modify-write: CP_MEC_RS64_CNTL powers on halted (MEC_HALT) and keeps fields Linux does not touch.
  device_.Regs<regs::Ip::kGc>().Modify<gc::CP_MEC_RS64_CNTL>([](auto& r) {
    r.mec_invalidate_icache(0)
        .mec_pipe0_reset(0)
        .mec_pipe1_reset(0)
        .mec_pipe2_reset(0)
        .mec_pipe3_reset(0)
        .mec_pipe0_active(1)
        .mec_pipe1_active(1)
        .mec_pipe2_active(1)
        .mec_pipe3_active(1)
        .mec_halt(0);
  });
}

absl::Status Gfx::LoadQueue() {
  auto g = device_.Regs<regs::Ip::kGc>();
  // The queue starts empty at the driver's write pointer: 0 at boot, past the lost commands after a reset.
  const uint64_t wptr_now = ring_.wptr();
  const uint32_t start = static_cast<uint32_t>(wptr_now & (ring_.size_units() - 1));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> pointers, device_.memory().CpuView(pointers_, 4096));
  std::memset(pointers.data(), 0, pointers.size());
  std::memcpy(pointers.data(), &start, sizeof(start));
  std::memcpy(pointers.data() + kWptrPollOffset, &wptr_now, sizeof(wptr_now));

  // Every HQD field Linux derives from a register starts from that register's power-on value, not from zero.
  regs::V11ComputeMqd mqd{};
  mqd.header = kMqdHeader;
  mqd.compute_pipelinestat_enable = 1;
  mqd.compute_misc_reserved = kComputeMiscReserved;
  mqd.compute_static_thread_mgmt_se0 = mqd.compute_static_thread_mgmt_se1 = kAllCus;
  mqd.compute_static_thread_mgmt_se2 = mqd.compute_static_thread_mgmt_se3 = kAllCus;
  const uint64_t eop = device_.McAddress(eop_), mqd_mc = device_.McAddress(mqd_),
                 ring_mc = device_.McAddress(ring_vram_);
  const uint64_t rptr = device_.McAddress(pointers_), wptr = device_.McAddress(pointers_ + kWptrPollOffset);
  mqd.cp_hqd_eop_base_addr_lo = static_cast<uint32_t>(eop >> 8);
  mqd.cp_hqd_eop_base_addr_hi = static_cast<uint32_t>(eop >> 40);
  mqd.cp_hqd_eop_control =
      gc::CP_HQD_EOP_CONTROL::FromRaw(gc::CP_HQD_EOP_CONTROL::kDefault).eop_size(Log2(kEopBytes / 4) - 1).raw();
  mqd.cp_mqd_base_addr_lo = static_cast<uint32_t>(mqd_mc);
  mqd.cp_mqd_base_addr_hi = static_cast<uint32_t>(mqd_mc >> 32);
  mqd.cp_mqd_control = gc::CP_MQD_CONTROL::FromRaw(gc::CP_MQD_CONTROL::kDefault).vmid(0).raw();
  mqd.cp_hqd_pq_base_lo = static_cast<uint32_t>(ring_mc >> 8);
  mqd.cp_hqd_pq_base_hi = static_cast<uint32_t>(ring_mc >> 40);
  mqd.cp_hqd_pq_control = gc::CP_HQD_PQ_CONTROL::FromRaw(gc::CP_HQD_PQ_CONTROL::kDefault)
                              .queue_size(Log2(kRingBytes / 4) - 1)
                              .rptr_block_size(Log2(4096 / 4) - 1)
                              .unord_dispatch(1)
                              .tunnel_dispatch(0)
                              .priv_state(1)
                              .kmd_queue(1)
                              .raw();
  mqd.cp_hqd_pq_rptr_report_addr_lo = static_cast<uint32_t>(rptr);
  mqd.cp_hqd_pq_rptr_report_addr_hi = static_cast<uint32_t>(rptr >> 32);
  mqd.cp_hqd_pq_wptr_poll_addr_lo = static_cast<uint32_t>(wptr);
  mqd.cp_hqd_pq_wptr_poll_addr_hi = static_cast<uint32_t>(wptr >> 32);
  mqd.cp_hqd_pq_doorbell_control = gc::CP_HQD_PQ_DOORBELL_CONTROL::FromRaw(gc::CP_HQD_PQ_DOORBELL_CONTROL::kDefault)
                                       .doorbell_offset(kDoorbell64 * 2)
                                       .doorbell_en(1)
                                       .doorbell_source(0)
                                       .doorbell_hit(0)
                                       .raw();
  mqd.cp_hqd_pq_rptr = start;
  mqd.cp_hqd_pq_wptr_lo = static_cast<uint32_t>(wptr_now);
  mqd.cp_hqd_pq_wptr_hi = static_cast<uint32_t>(wptr_now >> 32);
  mqd.cp_hqd_vmid = 0;
  mqd.cp_hqd_persistent_state =
      gc::CP_HQD_PERSISTENT_STATE::FromRaw(gc::CP_HQD_PERSISTENT_STATE::kDefault).preload_size(kPreloadSize).raw();
  mqd.cp_hqd_ib_control =
      gc::CP_HQD_IB_CONTROL::FromRaw(gc::CP_HQD_IB_CONTROL::kDefault).min_ib_avail_size(kMinIbAvailSize).raw();
  mqd.cp_hqd_active = 0;  // activated last, after every other register
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> mqd_view, device_.memory().CpuView(mqd_, sizeof(mqd)));
  std::memcpy(mqd_view.data(), &mqd, sizeof(mqd));
  device_.soc().FlushHdp();

  const uint32_t* dwords = reinterpret_cast<const uint32_t*>(&mqd);
  const uint64_t first = *g.AddressOf<gc::CP_MQD_BASE_ADDR>();
  base::MutexLock selection(&device_.pci().register_sequence_mutex());  // the GRBM selection is one per device
  Select(1, 0, 0);
  for (uint32_t i = 0; i < kHqdCount; ++i) device_.io().WriteDword(first + i, dwords[kHqdFirstMqdDword + i]);
  g.Write(gc::CP_HQD_ACTIVE{}.active(1));
  Select(0, 0, 0);
  return g.status();
}

// The waves go with the queue (gfx_v11_0_kcq_fini_register unmaps with RESET_QUEUES; tinygrad writes RESET_WAVES):
// a close must not wait for a kernel that never ends, and nothing may run once the memory under it is freed.
absl::Status Gfx::FiniHw() { return Dequeue(regs::DequeueRequest::kResetWaves); }

absl::Status Gfx::Dequeue(regs::DequeueRequest request) {
  auto g = device_.Regs<regs::Ip::kGc>();
  base::MutexLock selection(&device_.pci().register_sequence_mutex());  // the GRBM selection is one per device
  Select(1, 0, 0);
  absl::Status idle = g.status();
  // gfx_v11_0_kiq_init_register / tinygrad's _dequeue_hqds: only an active HQD is dequeued; wait for it to go
  // inactive, then withdraw the request (the MQD's cp_hqd_dequeue_request is 0).
  if (idle.ok() && g.Read<gc::CP_HQD_ACTIVE>().active()) {
    g.Write(gc::CP_HQD_DEQUEUE_REQUEST{}.dequeue_req(static_cast<uint32_t>(request)));
    idle = device_.io().WaitFor(*g.AddressOf<gc::CP_HQD_ACTIVE>(), gc::CP_HQD_ACTIVE{}.active(1).raw(), 0, kTimeout,
                                "the compute queue to dequeue");
    g.Write(gc::CP_HQD_DEQUEUE_REQUEST{}.dequeue_req(0));
  }
  Select(0, 0, 0);
  return idle;
}

absl::Status Gfx::WaitIdle(absl::Duration timeout) {
  PollBackoff backoff(absl::Now() + timeout);
  while (!idle()) {
    if (!backoff.Wait()) {
      const std::vector<std::string> pending = ring_.PendingPackets();
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s: the compute queue (MEC1 pipe 0 queue 0) made no progress for %s: rptr %#x, wptr %#x, stuck at %s",
          device_.pci().name(), absl::FormatDuration(timeout), ring_.rptr(), ring_.wptr() & (ring_.size_units() - 1),
          pending.empty() ? "nothing" : pending.front()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<QueueReset> Gfx::ResetQueue() {
  QueueReset reset{.queue = "compute queue (MEC1 pipe 0 queue 0)", .method = "HQD dequeue and reload"};
  reset.rptr = ring_.rptr();
  reset.wptr = ring_.wptr() & (ring_.size_units() - 1);
  reset.lost_dwords = ring_.pending();
  reset.lost_packets = ring_.PendingPackets();
  // A hung queue still answers a dequeue at its next packet boundary (the CP preempts it); one that does not
  // needs the whole chip reset, which is the caller's decision (Device::Boot with full_reset).
  // RESET_WAVES (amdgpu's queue reset, KFD_PREEMPT_TYPE_WAVEFRONT_RESET): a hung kernel's waves are killed.
  if (absl::Status dequeued = Dequeue(regs::DequeueRequest::kResetWaves); !dequeued.ok()) {
    return absl::InternalError(
        absl::StrFormat("%s: the compute queue cannot be reset: %s; only a full reset "
                        "(baregpu boot --reset) recovers the MEC now",
                        device_.pci().name(), dequeued.message()));
  }
  BAREGPU_RETURN_IF_ERROR(LoadQueue());
  return reset;
}

}  // namespace am
