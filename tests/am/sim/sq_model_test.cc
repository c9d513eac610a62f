// The SQ's indirect wave registers over the wave slots, spoken to through registers as a debugger would, with a
// thread standing in for the shader executor's worker (it answers copy requests and honours halts between its
// "instructions", as WorkgroupRunner does).
#include "am/sim/sq_model.h"

#include <atomic>
#include <thread>

#include "am/regs/gc.h"
#include "am/regs/sq_cmd_constants.h"
#include "am/regs/sq_ind_constants.h"
#include "am/regs/sq_wave_constants.h"
#include "am/regs/sq_wave_field_constants.h"
#include "gtest/gtest.h"
#include "tests/am/sim/model_fixture.h"

namespace am::sim {
namespace {

namespace gc = regs::gc;
namespace sq = regs::sq;

// A worker that holds WGP `wgp` with `waves` waves and keeps changing them: wave w's PC counts its "instructions",
// s0 = w, v3 of lane l = 100 * w + l, and EXEC = PC's low half in every register of the copy, so a torn copy shows.
class FakeWorker {
 public:
  FakeWorker(WaveSlots& slots, uint32_t waves) : slots_(slots), waves_(waves) {
    wgp_ = *slots_.ClaimWgp();
    for (uint32_t w = 0; w < waves_; ++w) slots_.Occupy(wgp_, w);
    thread_ = std::thread([this] { Loop(); });
  }
  ~FakeWorker() {
    stop_.store(true);
    thread_.join();
    for (uint32_t w = 0; w < waves_; ++w) slots_.Vacate(wgp_, w);
    slots_.ReleaseWgp(wgp_);
  }
  uint32_t wgp() const { return wgp_; }
  uint64_t steps(uint32_t w) const { return pcs_[w].load(); }

 private:
  void Loop() {
    while (!stop_.load()) {
      for (uint32_t w = 0; w < waves_; ++w) {
        if (!slots_.HaltRequested(wgp_, w)) pcs_[w].fetch_add(4);
        if (slots_.CopyRequested(wgp_, w)) slots_.Publish(wgp_, w, Copy(w));
      }
      std::this_thread::yield();
    }
  }
  WaveSnapshot Copy(uint32_t w) const {
    WaveSnapshot s;
    s.pc = pcs_[w].load();
    s.status = sq::SQ_WAVE_STATUS__VALID_MASK | (slots_.HaltRequested(wgp_, w) ? sq::SQ_WAVE_STATUS__HALT_MASK : 0);
    s.sgpr[0] = w;
    s.sgpr[sq::ixSQ_WAVE_EXEC_LO - sq::SQIND_WAVE_SGPRS_OFFSET] = static_cast<uint32_t>(s.pc);
    s.vgprs = 4;
    s.vgpr.assign(s.vgprs * WaveSnapshot::kMaxLanes, 0);
    for (uint32_t lane = 0; lane < WaveSnapshot::kMaxLanes; ++lane)
      s.vgpr[3 * WaveSnapshot::kMaxLanes + lane] = 100 * w + lane;
    return s;
  }

  WaveSlots& slots_;
  uint32_t waves_;
  uint32_t wgp_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> pcs_[8] = {};
  std::thread thread_;
};

class SqModelTest : public ::testing::Test {
 protected:
  SqModelTest() : sq_(fixture_.context(), slots_) {}
  // Selects wave `w` of the worker's WGP (wave w sits on SIMD w % 4, slot w / 4) for the reads that follow.
  void Select(uint32_t wgp, uint32_t w, uint32_t index, uint32_t lane = 0, bool auto_incr = false) {
    const WaveLocation where = WaveSlots::Locate(wgp, w);
    auto g = fixture_.Regs<regs::Ip::kGc>();
    g.Write(gc::GRBM_GFX_INDEX{}.se_index(where.se).sa_index(where.sa).instance_index((where.wgp << 2) | where.simd));
    g.Write(gc::SQ_IND_INDEX{}.wave_id(where.slot).index(index).workitem_id(lane).auto_incr(auto_incr ? 1 : 0));
  }
  uint32_t Data() { return fixture_.Regs<regs::Ip::kGc>().Read<gc::SQ_IND_DATA>().raw(); }

  testing::ModelFixture fixture_;
  WaveSlots slots_;
  SqModel sq_;
};

TEST_F(SqModelTest, AnEmptySlotReadsZero) {
  Select(0, 0, sq::ixSQ_WAVE_STATUS);
  EXPECT_EQ(Data(), 0u);
}

TEST_F(SqModelTest, ReadsAConsistentCopyOfARunningWave) {
  FakeWorker worker(slots_, 2);
  for (int i = 0; i < 50; ++i) {
    Select(worker.wgp(), 1, sq::ixSQ_WAVE_PC_LO, 0, /*auto_incr=*/true);
    const uint32_t pc_lo = Data();
    EXPECT_EQ(Data(), 0u);  // PC_HI: auto-increment moved on to the next register
    // The SGPR burst is one copy too: EXEC (set to the PC's low half) matches it.
    Select(worker.wgp(), 1, sq::SQIND_WAVE_SGPRS_OFFSET, 0, /*auto_incr=*/true);
    EXPECT_EQ(Data(), 1u);  // s0 = the wave's index
    Select(worker.wgp(), 1, sq::ixSQ_WAVE_PC_LO);
    const uint32_t later = Data();
    EXPECT_GE(later, pc_lo);
  }
  Select(worker.wgp(), 1, sq::ixSQ_WAVE_STATUS);
  EXPECT_TRUE(Data() & sq::SQ_WAVE_STATUS__VALID_MASK);
  Select(worker.wgp(), 1, sq::SQIND_WAVE_VGPRS_OFFSET + 3, /*lane=*/7);
  EXPECT_EQ(Data(), 107u);
  Select(worker.wgp(), 0, sq::SQIND_WAVE_VGPRS_OFFSET + 9, /*lane=*/7);  // past the wave's 4 VGPRs
  EXPECT_EQ(Data(), 0u);
}

TEST_F(SqModelTest, SetHaltBroadcastStopsTheWavesUntilResumed) {
  FakeWorker worker(slots_, 2);
  auto g = fixture_.Regs<regs::Ip::kGc>();
  auto halt_all = [&](bool halt) {
    g.Write(gc::GRBM_GFX_INDEX{}.se_broadcast_writes(1).sa_broadcast_writes(1).instance_broadcast_writes(1));
    g.Write(gc::SQ_CMD{}.cmd(sq::SQ_IND_CMD_CMD_SETHALT).mode(sq::SQ_IND_CMD_MODE_BROADCAST).data(halt ? 1 : 0));
  };
  halt_all(true);
  Select(worker.wgp(), 0, sq::ixSQ_WAVE_STATUS);
  EXPECT_TRUE(Data() & sq::SQ_WAVE_STATUS__HALT_MASK);
  const uint64_t halted_at = worker.steps(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(worker.steps(0), halted_at);  // no progress while halted
  halt_all(false);
  Select(worker.wgp(), 0, sq::ixSQ_WAVE_STATUS);
  EXPECT_FALSE(Data() & sq::SQ_WAVE_STATUS__HALT_MASK);
  const uint64_t resumed_at = worker.steps(0);
  for (int i = 0; i < 1000 && worker.steps(0) == resumed_at; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GT(worker.steps(0), resumed_at);
}

TEST_F(SqModelTest, AReadWhileGrbmBroadcastsReadsZeroAndUnknownCommandsAreReported) {
  FakeWorker worker(slots_, 1);
  auto g = fixture_.Regs<regs::Ip::kGc>();
  g.Write(gc::GRBM_GFX_INDEX{}.se_broadcast_writes(1).sa_broadcast_writes(1).instance_broadcast_writes(1));
  g.Write(gc::SQ_IND_INDEX{}.wave_id(0).index(sq::ixSQ_WAVE_STATUS));
  EXPECT_EQ(Data(), 0u);
  g.Write(gc::SQ_CMD{}.cmd(sq::SQ_IND_CMD_CMD_KILL).mode(sq::SQ_IND_CMD_MODE_BROADCAST));
  bool reported = false;
  for (const DeviceError& error : fixture_.errors().errors()) {
    if (error.message.find("SQ_CMD") != std::string::npos && error.message.find("not modelled") != std::string::npos) {
      reported = true;
    }
  }
  EXPECT_TRUE(reported);
  Select(worker.wgp(), 0, sq::ixSQ_WAVE_STATUS);
  EXPECT_TRUE(Data() & sq::SQ_WAVE_STATUS__VALID_MASK);  // the wave was not killed
}

}  // namespace
}  // namespace am::sim
