// A GFX model on a stand-alone device context, driven the way tinygrad's AM driver drives the MEC (AM_GFX in
// tinygrad/runtime/support/am/ip.py): firmware loaded by the (pretend) PSP, MEC pipes enabled, compute queues set up
// by writing the HQD registers under GRBM_GFX_CNTL, work submitted by writing the ring and ringing the 64-bit
// doorbell. Packets are built with the nvd.h encodings (am/regs/pm4.h).
#ifndef BAREGPU_TESTS_AM_SIM_MEC_FIXTURE_H_
#define BAREGPU_TESTS_AM_SIM_MEC_FIXTURE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/mqd.h"
#include "am/regs/pm4_packets.h"
#include "am/regs/psp_constants.h"
#include "am/sim/gfx_model.h"
#include "firmware/virtual_firmware.h"
#include "gtest/gtest.h"
#include "tests/am/sim/model_fixture.h"

namespace am::sim::testing {

namespace gc = regs::gc;
namespace pm4 = regs::pm4;
using Gc = regs::IpRegisters<regs::Ip::kGc, RegisterFile>;

// Polls `condition` until it holds or `timeout` passes; every wait in these tests is bounded by it.
inline bool WaitUntil(const std::function<bool()>& condition,
                      std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

// Shader executor that records what each dispatch handed it.
class RecordingExecutor : public ShaderExecutor {
 public:
  absl::Status Dispatch(const DispatchState& state, GpuMemory&) override {
    std::lock_guard lock(mu_);
    dispatches_.push_back(state);
    return result_;
  }
  std::vector<DispatchState> dispatches() const {
    std::lock_guard lock(mu_);
    return dispatches_;
  }
  void FailWith(absl::Status status) {
    std::lock_guard lock(mu_);
    result_ = std::move(status);
  }

 private:
  mutable std::mutex mu_;
  std::vector<DispatchState> dispatches_;
  absl::Status result_ = absl::OkStatus();
};

// A compute queue's memory as the test (the driver) sees it.
struct TestQueue {
  uint32_t pipe = 0, queue = 0;
  uint64_t ring_address = 0;
  std::span<uint32_t> ring;
  uint64_t rptr_address = 0;  // the rptr report
  uint64_t wptr_address = 0;  // the wptr poll address
  uint32_t doorbell = 0;      // dword index of the queue's 64-bit doorbell
  uint64_t put = 0;           // dwords written so far (the 64-bit wptr)
  uint32_t* rptr_word = nullptr;
  uint64_t* wptr_word = nullptr;

  uint32_t rptr() const { return std::atomic_ref<uint32_t>(*rptr_word).load(std::memory_order_acquire); }
  uint32_t put_wrapped() const { return static_cast<uint32_t>(put % ring.size()); }
};

class MecFixture {
 public:
  // GPU addresses of the test's memory (FlatMemory: anything else faults).
  static constexpr uint64_t kRings = 0x10'0000;
  static constexpr uint64_t kPointers = 0x20'0000;
  static constexpr uint64_t kData = 0x30'0000;
  static constexpr uint64_t kDataBytes = 0x10000;
  // tinygrad: doorbell = AMDGPU_NAVI10_DOORBELL_MEC_RING0 (3) for its queue, a 64-bit index; the model takes dwords.
  static constexpr uint32_t kFirstDoorbell = 3 * 2;

  // The virtual gc_11_0_0_mec.bin's ucode_start_addr, which the virtual PSP's LoadedFirmware stands for.
  static constexpr uint64_t kMecStart = firmware::VirtualUcodeStartAddress(firmware::FileKind::kMec);

  explicit MecFixture(ShaderExecutor* executor = nullptr) : executor_(executor) {
    data_ = fixture_.memory().Place(kData, kDataBytes);
    pointers_ = fixture_.memory().Place(kPointers, 0x1000);
    gfx_.emplace(fixture_.context(), executor_);
  }

  ModelFixture& fixture() { return fixture_; }
  GfxModel& gfx() { return *gfx_; }
  Gc gc() { return fixture_.Regs<regs::Ip::kGc>(); }
  // Replaces the model by a new one over the same registers and state (a second process opening the device).
  void ReopenModel() {
    gfx_.reset();
    gfx_.emplace(fixture_.context(), executor_);
  }
  void DestroyModel() { gfx_.reset(); }

  // What the PSP does for the MEC: load gc_11_0_0_mec.bin's RS64 types and run the RLC autoload.
  void LoadMecFirmware() {
    for (uint32_t type : {regs::psp::GFX_FW_TYPE_RS64_MEC, regs::psp::GFX_FW_TYPE_RS64_MEC_P0_STACK,
                          regs::psp::GFX_FW_TYPE_RS64_MEC_P1_STACK, regs::psp::GFX_FW_TYPE_RS64_MEC_P2_STACK,
                          regs::psp::GFX_FW_TYPE_RS64_MEC_P3_STACK}) {
      fixture_.firmware().Load(type, 1);
    }
    fixture_.firmware().SetRlcAutoloaded();
  }
  // tinygrad AM_GFX.init_hw / _enable_mec and Linux gfx_v11_0_cp_compute_enable(true), plus the per-pipe
  // interrupt enables of gfx_v11_0_set_compute_eop_interrupt_state.
  // gfx_v11_0_wait_for_rlc_autoload_complete's CP_STAT poll (bounded), then gfx_v11_0_config_gfx_rs64's MEC part
  // (tinygrad _config_mec): each pipe's start address from the MEC firmware, latched by a pipe reset pulse.
  void StartMecPipes() {
    Gc regs = gc();
    // Without the RLC autoload the CP never goes idle; the writes below are then lost, as a driver's would be.
    for (int poll = 0; poll < 100 && regs.Read<gc::CP_STAT>().raw() != 0; ++poll) {
    }
    for (uint32_t pipe = 0; pipe < GfxModel::kPipes; ++pipe) {
      Select(1, pipe, 0);
      regs.Write(gc::CP_MEC_RS64_PRGRM_CNTR_START{}.ip_start(static_cast<uint32_t>(kMecStart >> 2)));
      regs.Write(gc::CP_MEC_RS64_PRGRM_CNTR_START_HI{}.ip_start(static_cast<uint32_t>(kMecStart >> 34)));
    }
    Select(0, 0, 0);
    auto cntl = regs.Read<gc::CP_MEC_RS64_CNTL>();
    regs.Write(cntl.mec_pipe0_reset(1).mec_pipe1_reset(1).mec_pipe2_reset(1).mec_pipe3_reset(1));
    regs.Write(cntl.mec_pipe0_reset(0).mec_pipe1_reset(0).mec_pipe2_reset(0).mec_pipe3_reset(0));
  }
  void EnableMec() {
    StartMecPipes();
    Gc regs = gc();
    regs.Write(gc::CP_MEC_DOORBELL_RANGE_LOWER{}.doorbell_range_lower(0));
    regs.Write(gc::CP_MEC_DOORBELL_RANGE_UPPER{}.doorbell_range_upper(0xf8 >> 2));
    for (uint32_t pipe = 0; pipe < GfxModel::kPipes; ++pipe) {
      fixture_.registers().WriteDword(
          RegisterAddress<gc::CP_ME1_PIPE0_INT_CNTL>(fixture_.bases()) + pipe,
          gc::CP_ME1_PIPE0_INT_CNTL{}.time_stamp_int_enable(1).opcode_error_int_enable(1).gpf_int_enable(1).raw());
    }
    regs.Write(
        gc::CP_MEC_RS64_CNTL{}.mec_pipe0_active(1).mec_pipe1_active(1).mec_pipe2_active(1).mec_pipe3_active(1).mec_halt(
            0));
  }
  void Boot() {
    LoadMecFirmware();
    EnableMec();
  }

  void Select(uint32_t me, uint32_t pipe, uint32_t queue, uint32_t vmid = 0) {
    gc().Write(gc::GRBM_GFX_CNTL{}.meid(me).pipeid(pipe).queueid(queue).vmid(vmid));
  }

  // Queue memory for MEC1 (pipe, queue): a ring of `ring_dwords` and its pointer words. The HQD is not touched.
  TestQueue AllocateQueue(uint32_t pipe, uint32_t queue, uint32_t ring_dwords = 1024) {
    TestQueue q;
    q.pipe = pipe;
    q.queue = queue;
    const uint32_t index = pipe * GfxModel::kQueuesPerPipe + queue;
    q.ring_address = kRings + uint64_t{index} * 0x10000;
    std::span<uint8_t> bytes = fixture_.memory().Place(q.ring_address, ring_dwords * 4);
    q.ring = std::span<uint32_t>(reinterpret_cast<uint32_t*>(bytes.data()), ring_dwords);
    q.rptr_address = kPointers + index * 16;
    q.wptr_address = q.rptr_address + 8;
    q.rptr_word = reinterpret_cast<uint32_t*>(pointers_.data() + index * 16);
    q.wptr_word = reinterpret_cast<uint64_t*>(pointers_.data() + index * 16 + 8);
    q.doorbell = kFirstDoorbell + index * 2;
    return q;
  }

  // The MQD for `q` as tinygrad's setup_ring fills it (PM4 queue, VMID `vmid`).
  regs::V11ComputeMqd MqdFor(const TestQueue& q, uint32_t vmid = 0) {
    regs::V11ComputeMqd mqd{};
    mqd.header = 0xC0310800;
    mqd.cp_hqd_pq_base_lo = static_cast<uint32_t>(q.ring_address >> 8);
    mqd.cp_hqd_pq_base_hi = static_cast<uint32_t>(q.ring_address >> 40);
    mqd.cp_hqd_pq_rptr_report_addr_lo = static_cast<uint32_t>(q.rptr_address);
    mqd.cp_hqd_pq_rptr_report_addr_hi = static_cast<uint32_t>(q.rptr_address >> 32);
    mqd.cp_hqd_pq_wptr_poll_addr_lo = static_cast<uint32_t>(q.wptr_address);
    mqd.cp_hqd_pq_wptr_poll_addr_hi = static_cast<uint32_t>(q.wptr_address >> 32);
    mqd.cp_hqd_pq_doorbell_control = gc::CP_HQD_PQ_DOORBELL_CONTROL{}.doorbell_offset(q.doorbell).doorbell_en(1).raw();
    uint32_t log2 = 0;
    while ((1u << log2) < q.ring.size()) ++log2;
    mqd.cp_hqd_pq_control = gc::CP_HQD_PQ_CONTROL{}.rptr_block_size(5).queue_size(log2 - 1).raw();
    mqd.cp_hqd_vmid = vmid;
    mqd.cp_hqd_active = 1;
    return mqd;
  }

  // tinygrad AM_GFX.setup_ring: select the HQD, write CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI from the MQD
  // (CP_HQD_ACTIVE among them, 0 in tinygrad's MQD), then CP_HQD_ACTIVE=1.
  void ProgramQueue(const TestQueue& q, uint32_t vmid = 0) {
    regs::V11ComputeMqd mqd = MqdFor(q, vmid);
    mqd.cp_hqd_active = 0;
    const auto* dwords = reinterpret_cast<const uint32_t*>(&mqd);
    Select(1, q.pipe, q.queue);
    const uint64_t first = RegisterAddress<gc::CP_MQD_BASE_ADDR>(fixture_.bases());
    for (uint32_t i = 0; i < HqdRegisters::kCount; ++i) {
      fixture_.registers().WriteDword(first + i, dwords[HqdRegisters::kMqdFirstDword + i]);
    }
    gc().Write(gc::CP_HQD_ACTIVE{}.active(1));
    Select(0, 0, 0);
  }
  TestQueue CreateQueue(uint32_t pipe, uint32_t queue, uint32_t ring_dwords = 1024, uint32_t vmid = 0) {
    TestQueue q = AllocateQueue(pipe, queue, ring_dwords);
    ProgramQueue(q, vmid);
    return q;
  }

  // Writes `dwords` at the queue's wptr (wrapping) without telling the GPU.
  void Write(TestQueue& q, std::span<const uint32_t> dwords) {
    for (uint32_t d : dwords) {
      q.ring[q.put % q.ring.size()] = d;
      ++q.put;
    }
    std::atomic_ref<uint64_t>(*q.wptr_word).store(q.put, std::memory_order_release);
  }
  // The 64-bit doorbell write, as two dword writes on the bus (low first).
  void Ring(TestQueue& q) {
    fixture_.doorbells().Write(q.doorbell, static_cast<uint32_t>(q.put));
    fixture_.doorbells().Write(q.doorbell + 1, static_cast<uint32_t>(q.put >> 32));
  }
  void Submit(TestQueue& q, std::initializer_list<uint32_t> dwords) {
    Write(q, std::span<const uint32_t>(dwords.begin(), dwords.size()));
    Ring(q);
  }
  void Submit(TestQueue& q, const std::vector<uint32_t>& dwords) {
    Write(q, dwords);
    Ring(q);
  }
  // Until the rptr report shows everything submitted was consumed.
  bool WaitIdle(const TestQueue& q) {
    return WaitUntil([&] { return q.rptr() == q.put_wrapped(); });
  }
  bool WaitRptr(const TestQueue& q, uint32_t rptr) {
    return WaitUntil([&] { return q.rptr() == rptr; });
  }

  uint32_t HqdRead(const TestQueue& q, uint64_t address) {
    Select(1, q.pipe, q.queue);
    const uint32_t value = fixture_.registers().ReadDword(address);
    Select(0, 0, 0);
    return value;
  }
  bool HqdActive(const TestQueue& q) { return HqdRead(q, RegisterAddress<gc::CP_HQD_ACTIVE>(fixture_.bases())) & 1; }
  void Dequeue(const TestQueue& q) {
    Select(1, q.pipe, q.queue);
    gc().Write(gc::CP_HQD_DEQUEUE_REQUEST{}.dequeue_req(2));  // tinygrad: 2 = RESET_WAVES
    Select(0, 0, 0);
  }

  // Data memory: dword i of the test's data buffer, and its GPU address.
  uint32_t Data(uint32_t index) {
    return std::atomic_ref<uint32_t>(reinterpret_cast<uint32_t*>(data_.data())[index]).load(std::memory_order_acquire);
  }
  uint64_t Data64(uint32_t index) {
    return std::atomic_ref<uint64_t>(reinterpret_cast<uint64_t*>(data_.data())[index / 2])
        .load(std::memory_order_acquire);
  }
  void SetData(uint32_t index, uint32_t value) {
    std::atomic_ref<uint32_t>(reinterpret_cast<uint32_t*>(data_.data())[index]).store(value, std::memory_order_release);
  }
  static uint64_t DataAddress(uint32_t index) { return kData + uint64_t{index} * 4; }
  bool WaitData(uint32_t index, uint32_t value) {
    return WaitUntil([&] { return Data(index) == value; });
  }

  bool ErrorLogged(absl::string_view model, absl::string_view text) {
    for (const DeviceError& e : fixture_.errors().errors()) {
      if (e.model == model && absl::string_view(e.message).find(text) != absl::string_view::npos) return true;
    }
    return false;
  }
  std::string Errors() {
    std::string all;
    for (const DeviceError& e : fixture_.errors().errors()) all += e.model + ": " + e.message + "\n";
    return all;
  }

  // Packets from the one encoder per packet (am/regs/pm4_packets.h); `extra` sets further bits of the control
  // dword, so tests can also build what the encoders never emit (reserved bits, other VMIDs).
  template <size_t N>
  static std::vector<uint32_t> Dwords(const std::array<uint32_t, N>& packet) {
    return std::vector<uint32_t>(packet.begin(), packet.end());
  }
  static std::vector<uint32_t> WriteData(uint32_t dst_sel, uint64_t address, std::initializer_list<uint32_t> data,
                                         uint32_t extra) {
    std::vector<uint32_t> p = Dwords(pm4::WriteData::Header(dst_sel, address, static_cast<uint32_t>(data.size())));
    p[1] |= extra;
    p.insert(p.end(), data);
    return p;
  }
  static std::vector<uint32_t> WriteDataMemory(uint64_t address, std::initializer_list<uint32_t> data,
                                               uint32_t extra = 0) {
    return WriteData(pm4::WriteData::kDstMemory, address, data, extra);
  }
  static std::vector<uint32_t> WriteDataRegister(uint64_t address, std::initializer_list<uint32_t> data,
                                                 uint32_t extra = 0) {
    return WriteData(pm4::WriteData::kDstRegister, static_cast<uint32_t>(address), data, extra);
  }
  static std::vector<uint32_t> WaitRegMemMemory(uint64_t address, uint32_t function, uint32_t reference,
                                                uint32_t mask = 0xffffffff) {
    return Dwords(pm4::WaitMemory::Encode(address, reference, static_cast<pm4::Compare>(function), mask));
  }
  static std::vector<uint32_t> ReleaseMem(uint64_t address, uint64_t data, uint32_t data_sel, uint32_t int_sel,
                                          uint32_t context_id = 0) {
    return Dwords(pm4::ReleaseMem::Encode(address, static_cast<pm4::ReleaseData>(data_sel), data,
                                          static_cast<pm4::ReleaseInterrupt>(int_sel), context_id));
  }
  static std::vector<uint32_t> IndirectBuffer(uint64_t address, uint32_t dwords, uint32_t extra = 0) {
    std::vector<uint32_t> p = Dwords(pm4::IndirectBuffer::Encode(address, dwords));
    p[3] |= extra;
    return p;
  }
  static std::vector<uint32_t> Concat(std::initializer_list<std::vector<uint32_t>> parts) {
    std::vector<uint32_t> all;
    for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
  }

 private:
  ModelFixture fixture_;
  ShaderExecutor* executor_;
  std::span<uint8_t> data_;
  std::span<uint8_t> pointers_;
  std::optional<GfxModel> gfx_;
};

}  // namespace am::sim::testing

#endif  // BAREGPU_TESTS_AM_SIM_MEC_FIXTURE_H_
