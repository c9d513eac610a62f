// The GFX model through its registers, doorbells and memory: SRBM banking, RLC handshakes, the MEC's firmware and
// halt gating, queue activation, dequeue, restart by a new process, the KIQ's MAP_QUEUES, and injected faults.
#include "am/sim/gfx_model.h"

#include "am/regs/ih_constants.h"
#include "gtest/gtest.h"
#include "tests/am/sim/mec_fixture.h"

namespace am::sim {
namespace {

using testing::MecFixture;
using testing::TestQueue;
using testing::WaitUntil;
namespace gc = regs::gc;
namespace pm4 = regs::pm4;

TEST(GfxModelTest, HqdRegistersAreBankedBySrbmSelect) {
  MecFixture mec;
  auto gcr = mec.gc();
  mec.Select(1, 0, 0);
  gcr.Write(gc::CP_HQD_PQ_BASE{}.set_raw(0x1111));
  mec.Select(1, 2, 3);
  gcr.Write(gc::CP_HQD_PQ_BASE{}.set_raw(0x2222));
  EXPECT_EQ(gcr.Read<gc::CP_HQD_PQ_BASE>().raw(), 0x2222u);
  mec.Select(1, 0, 0);
  EXPECT_EQ(gcr.Read<gc::CP_HQD_PQ_BASE>().raw(), 0x1111u);
  mec.Select(1, 0, 1);
  EXPECT_EQ(gcr.Read<gc::CP_HQD_PQ_BASE>().raw(), 0u);
  // ME 0 (the graphics pipe) has no compute HQD: the register is plain storage there, shared by no queue.
  mec.Select(0, 0, 0);
  gcr.Write(gc::CP_HQD_PQ_BASE{}.set_raw(0x3333));
  mec.Select(1, 2, 3);
  EXPECT_EQ(gcr.Read<gc::CP_HQD_PQ_BASE>().raw(), 0x2222u);
  // The banks are the device's state: a new model (a new process) finds them.
  mec.ReopenModel();
  auto again = mec.gc();
  EXPECT_EQ(again.Read<gc::CP_HQD_PQ_BASE>().raw(), 0x2222u);
}

TEST(GfxModelTest, ShMemRegistersAreBankedByVmid) {
  MecFixture mec;
  auto gcr = mec.gc();
  for (uint32_t vmid = 0; vmid < 16; ++vmid) {
    mec.Select(0, 0, 0, vmid);
    gcr.Write(gc::SH_MEM_BASES{}.set_raw(0x10000 * vmid + 2));
  }
  mec.Select(0, 0, 0, 7);
  EXPECT_EQ(gcr.Read<gc::SH_MEM_BASES>().raw(), 0x70002u);
  EXPECT_EQ(mec.gfx().ShMemBases(3), 0x30002u);
}

TEST(GfxModelTest, RlcBootloadCompletesOnlyAfterTheAutoload) {
  MecFixture mec;
  auto gcr = mec.gc();
  EXPECT_EQ(gcr.Read<gc::RLC_RLCS_BOOTLOAD_STATUS>().bootload_complete(), 0u);
  mec.LoadMecFirmware();
  EXPECT_EQ(gcr.Read<gc::RLC_RLCS_BOOTLOAD_STATUS>().bootload_complete(), 1u);
}

TEST(GfxModelTest, RlcSafeModeIsAcknowledgedOnlyByARunningRlc) {
  MecFixture mec;
  auto gcr = mec.gc();
  // gfx_v11_0_set_safe_mode: CMD=1, MESSAGE=1, then wait for CMD to read 0.
  gcr.Write(gc::RLC_SAFE_MODE{}.cmd(1).message(1));
  EXPECT_EQ(gcr.Read<gc::RLC_SAFE_MODE>().cmd(), 1u);
  EXPECT_TRUE(mec.ErrorLogged("rlc", "not running")) << mec.Errors();

  mec.LoadMecFirmware();
  gcr.Write(gc::RLC_SAFE_MODE{}.cmd(1).message(1));
  EXPECT_EQ(gcr.Read<gc::RLC_SAFE_MODE>().cmd(), 0u);
  EXPECT_EQ(gcr.Read<gc::RLC_SAFE_MODE>().message(), 1u);
  gcr.Write(gc::RLC_SAFE_MODE{}.cmd(1).message(0));  // gfx_v11_0_unset_safe_mode
  EXPECT_EQ(gcr.Read<gc::RLC_SAFE_MODE>().cmd(), 0u);
}

TEST(GfxModelTest, MesTimeCountsAt100MHz) {
  MecFixture mec;
  auto gcr = mec.gc();
  auto read = [&] {
    const uint32_t hi = gcr.Read<gc::CP_MES_MTIME_HI>().raw();
    return (uint64_t{hi} << 32) | gcr.Read<gc::CP_MES_MTIME_LO>().raw();
  };
  const auto before_first = std::chrono::steady_clock::now();
  const uint64_t first = read();
  const auto after_first = std::chrono::steady_clock::now();
  ASSERT_TRUE(
      WaitUntil([&] { return std::chrono::steady_clock::now() - after_first >= std::chrono::milliseconds(20); }));
  const uint64_t second = read();
  const auto elapsed_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - before_first).count();
  // At least 20 ms worth of 10 ns ticks passed between the reads, and no more than the wall time allows.
  EXPECT_GE(second - first, 2'000'000u - 1);
  EXPECT_LE(second - first, static_cast<uint64_t>(elapsed_ns) / 10 + 1);
}

TEST(GfxModelTest, GrbmGfxIndexOutsideTheShaderEnginesIsReported) {
  MecFixture mec;
  auto gcr = mec.gc();
  gcr.Write(gc::GRBM_GFX_INDEX{}.se_index(5).sa_index(1).instance_broadcast_writes(1));
  EXPECT_TRUE(mec.fixture().errors().errors().empty()) << mec.Errors();
  gcr.Write(gc::GRBM_GFX_INDEX{}.se_index(6).sa_broadcast_writes(1).instance_broadcast_writes(1));
  EXPECT_TRUE(mec.ErrorLogged("gfx", "selects SE 6")) << mec.Errors();
  EXPECT_EQ(gcr.Read<gc::GRBM_GFX_INDEX>().se_index(), 6u);
}

TEST(GfxModelTest, WithoutMecFirmwareNoEngineRuns) {
  MecFixture mec;
  mec.EnableMec();
  TestQueue q = mec.CreateQueue(0, 0);
  EXPECT_FALSE(mec.gfx().QueueRunning(0, 0));
  EXPECT_TRUE(mec.ErrorLogged("mec", "GFX_FW_TYPE_RS64_MEC")) << mec.Errors();
  EXPECT_TRUE(mec.HqdActive(q));  // the register holds what was written; nothing acts on it
}

TEST(GfxModelTest, WithoutTheRlcAutoloadNoEngineRuns) {
  MecFixture mec;
  mec.fixture().firmware().Load(regs::psp::GFX_FW_TYPE_RS64_MEC, 1);
  mec.fixture().firmware().Load(regs::psp::GFX_FW_TYPE_RS64_MEC_P0_STACK, 1);
  mec.EnableMec();
  mec.CreateQueue(0, 0);
  EXPECT_FALSE(mec.gfx().QueueRunning(0, 0));
  EXPECT_TRUE(mec.ErrorLogged("mec", "RLC autoload")) << mec.Errors();
}

TEST(GfxModelTest, ActivatingAQueueOutsideMec1IsReported) {
  MecFixture mec;
  mec.Boot();
  mec.Select(1, 0, 5);  // GC 11.0.0 has 4 queues per pipe
  mec.gc().Write(gc::CP_HQD_ACTIVE{}.active(1));
  EXPECT_TRUE(mec.ErrorLogged("mec", "queues 0-3 only")) << mec.Errors();
}

TEST(GfxModelTest, DoorbellRunsTheRingAndReportsRptr) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(1, 2);
  EXPECT_TRUE(mec.gfx().QueueRunning(1, 2));
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {0xcafe}));
  ASSERT_TRUE(mec.WaitData(0, 0xcafe));
  ASSERT_TRUE(mec.WaitIdle(q));
  EXPECT_EQ(mec.HqdRead(q, RegisterAddress<gc::CP_HQD_PQ_RPTR>(mec.fixture().bases())), q.put_wrapped());
  EXPECT_EQ(mec.HqdRead(q, RegisterAddress<gc::CP_HQD_PQ_WPTR_LO>(mec.fixture().bases())), q.put);
}

// A queue polls for more work (EngineWakeup) only once it has run packets: a freshly activated one, which a boot
// starts well before its first submission, sleeps at once instead of keeping a core busy for kSpinBeforeSleep.
TEST(GfxModelTest, AQueueSleepsAtOnceUntilItHasRunPackets) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 0);
  auto waits = [&] { return mec.gfx().QueueWaits(0, 0).value_or(EngineWakeup::Waits{}); };
  ASSERT_TRUE(WaitUntil([&] { return waits().slept >= 1; }));
  EXPECT_EQ(waits().polled, 0u);

  // After work it polls before it sleeps again, so that a driver submitting in a loop finds it awake.
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1}));
  ASSERT_TRUE(mec.WaitData(0, 1));
  ASSERT_TRUE(WaitUntil([&] { return waits().slept >= 2; }));
  EXPECT_GE(waits().polled, 1u);
}

TEST(GfxModelTest, WptrRegisterWriteAlsoStartsWork) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 1);
  auto packet = MecFixture::WriteDataMemory(MecFixture::DataAddress(1), {7});
  mec.Write(q, packet);
  mec.Select(1, 0, 1);
  mec.gc().Write(gc::CP_HQD_PQ_WPTR_LO{}.set_raw(static_cast<uint32_t>(q.put)));
  mec.Select(0, 0, 0);
  EXPECT_TRUE(mec.WaitData(1, 7));
}

TEST(GfxModelTest, WptrPollAddressIsFollowedWhenPollingIsEnabled) {
  MecFixture mec;
  mec.Boot();
  mec.gc().Write(gc::CP_PQ_WPTR_POLL_CNTL{}.en(1).period(1));
  TestQueue q = mec.CreateQueue(0, 0);
  mec.Write(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(2), {9}));  // no doorbell
  EXPECT_TRUE(mec.WaitData(2, 9));
}

TEST(GfxModelTest, DoorbellOutsideTheMecRangeDoesNotReachTheQueue) {
  MecFixture mec;
  mec.Boot();
  mec.gc().Write(gc::CP_MEC_DOORBELL_RANGE_UPPER{}.doorbell_range_upper(0));  // only byte 0
  TestQueue q = mec.CreateQueue(0, 0);
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1}));
  EXPECT_EQ(q.rptr(), 0u);
  // With the range covering it again, the next doorbell delivers everything written so far.
  mec.gc().Write(gc::CP_MEC_DOORBELL_RANGE_LOWER{}.doorbell_range_lower(0));
  mec.gc().Write(gc::CP_MEC_DOORBELL_RANGE_UPPER{}.doorbell_range_upper(0xf8 >> 2));
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(1), {2}));
  ASSERT_TRUE(mec.WaitIdle(q));
  EXPECT_EQ(mec.Data(0), 1u);
  EXPECT_EQ(mec.Data(1), 2u);
}

TEST(GfxModelTest, HaltedMecRunsNothingUntilUnhalted) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 0);
  mec.gc().Write(gc::CP_MEC_RS64_CNTL{}.mec_halt(1).mec_pipe0_active(1));  // gfx_v11_0_cp_compute_enable(false)
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {5}));
  EXPECT_EQ(q.rptr(), 0u);
  EXPECT_EQ(mec.Data(0), 0u);
  mec.gc().Write(gc::CP_MEC_RS64_CNTL{}.mec_pipe0_active(1));
  EXPECT_TRUE(mec.WaitData(0, 5));
}

TEST(GfxModelTest, APipeHeldInResetRunsNothing) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(1, 0);
  mec.gc().Write(gc::CP_MEC_RS64_CNTL{}.mec_pipe1_reset(1).mec_pipe0_active(1).mec_pipe1_active(1));
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {5}));
  EXPECT_EQ(q.rptr(), 0u);
  mec.gc().Write(gc::CP_MEC_RS64_CNTL{}.mec_pipe0_active(1).mec_pipe1_active(1));
  EXPECT_TRUE(mec.WaitData(0, 5));
}

TEST(GfxModelTest, DequeueStopsAtAPacketBoundaryAndActiveReadsZero) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 0);
  auto reached = MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1});
  auto wait = MecFixture::WaitRegMemMemory(MecFixture::DataAddress(1), 3, 0x55);
  auto after = MecFixture::WriteDataMemory(MecFixture::DataAddress(2), {2});
  mec.Submit(q, MecFixture::Concat({reached, wait, after}));
  ASSERT_TRUE(mec.WaitData(0, 1));
  const uint32_t wait_offset = static_cast<uint32_t>(reached.size());
  ASSERT_TRUE(mec.WaitRptr(q, wait_offset));

  mec.Dequeue(q);
  ASSERT_TRUE(WaitUntil([&] { return !mec.HqdActive(q); }));
  EXPECT_FALSE(mec.gfx().QueueRunning(0, 0));
  EXPECT_EQ(mec.HqdRead(q, RegisterAddress<gc::CP_HQD_PQ_RPTR>(mec.fixture().bases())), wait_offset);
  EXPECT_EQ(mec.Data(2), 0u);

  // Mapped again from its registers (Linux writes DEQUEUE_REQUEST back to 0, then activates), the queue resumes
  // at the unfinished wait.
  mec.Select(1, 0, 0);
  mec.gc().Write(gc::CP_HQD_DEQUEUE_REQUEST{}.set_raw(0));
  mec.gc().Write(gc::CP_HQD_ACTIVE{}.active(1));
  mec.Select(0, 0, 0);
  ASSERT_TRUE(mec.gfx().QueueRunning(0, 0));
  mec.SetData(1, 0x55);
  EXPECT_TRUE(mec.WaitData(2, 2));
  EXPECT_TRUE(mec.WaitIdle(q));
}

TEST(GfxModelTest, WritingActiveZeroUnderARunningQueueIsRefused) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 0);
  mec.Submit(q, MecFixture::WaitRegMemMemory(MecFixture::DataAddress(0), 3, 1));
  mec.Select(1, 0, 0);
  mec.gc().Write(gc::CP_HQD_ACTIVE{}.active(0));
  mec.Select(0, 0, 0);
  EXPECT_TRUE(mec.ErrorLogged("mec", "CP_HQD_ACTIVE=0 written while the queue runs")) << mec.Errors();
  EXPECT_FALSE(mec.gfx().QueueRunning(0, 0));
  EXPECT_EQ(q.rptr(), 0u);
  // It does not start again until the driver dequeues it.
  mec.Select(1, 0, 0);
  mec.gc().Write(gc::CP_HQD_ACTIVE{}.active(1));
  mec.Select(0, 0, 0);
  EXPECT_TRUE(mec.ErrorLogged("mec", "CP_HQD_ACTIVE=1 refused")) << mec.Errors();
  EXPECT_FALSE(mec.gfx().QueueRunning(0, 0));
}

// Issue 16 B11: the partial boot's old behaviour, a new ring programmed over a queue that still runs.
TEST(GfxModelTest, RewritingPqBaseUnderARunningQueueIsRefused) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 0);
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1}));
  ASSERT_TRUE(mec.WaitIdle(q));
  mec.Select(1, 0, 0);
  mec.gc().Write(gc::CP_HQD_PQ_BASE{}.set_raw(static_cast<uint32_t>((q.ring_address + 0x1000) >> 8)));
  mec.Select(0, 0, 0);
  EXPECT_TRUE(mec.ErrorLogged("mec", "CP_HQD_PQ_BASE=")) << mec.Errors();
  EXPECT_FALSE(mec.gfx().QueueRunning(0, 0));
  EXPECT_EQ(mec.HqdRead(q, RegisterAddress<gc::CP_HQD_PQ_BASE>(mec.fixture().bases())), q.ring_address >> 8);
}

TEST(GfxModelTest, ADequeuedQueueIsReprogrammedAndRestartsTheRing) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 0);
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1}));
  ASSERT_TRUE(mec.WaitIdle(q));
  // tinygrad's reset_mec (and Linux's kiq_init_register): dequeue the live HQD, then set up the ring again.
  mec.Dequeue(q);
  ASSERT_TRUE(WaitUntil([&] { return !mec.HqdActive(q); }));
  TestQueue again = mec.AllocateQueue(0, 0);
  std::fill(again.ring.begin(), again.ring.end(), 0);
  mec.ProgramQueue(again);
  mec.Submit(again, MecFixture::WriteDataMemory(MecFixture::DataAddress(1), {2}));
  EXPECT_TRUE(mec.WaitData(1, 2));
  EXPECT_TRUE(mec.WaitIdle(again));
  EXPECT_TRUE(mec.fixture().errors().errors().empty()) << mec.Errors();
}

// Issue 16 B6: gfx_v11_0_config_gfx_rs64 programs every pipe's start address and pulses its reset.
TEST(GfxModelTest, APipeWithoutTheFirmwaresStartAddressDoesNotAdvance) {
  MecFixture mec;
  mec.LoadMecFirmware();
  while (mec.gc().Read<gc::CP_STAT>().raw() != 0) {
  }
  // The driver's old start-up: pipes enabled and unhalted, the program counter left at its power-on value.
  mec.gc().Write(gc::CP_MEC_DOORBELL_RANGE_LOWER{}.doorbell_range_lower(0));
  mec.gc().Write(gc::CP_MEC_DOORBELL_RANGE_UPPER{}.doorbell_range_upper(0xf8 >> 2));
  mec.gc().Write(gc::CP_MEC_RS64_CNTL{}.mec_pipe0_active(1).mec_halt(0));
  TestQueue q = mec.CreateQueue(0, 0);
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1}));
  EXPECT_TRUE(mec.ErrorLogged("mec", "fetches no valid instruction")) << mec.Errors();
  EXPECT_TRUE(mec.ErrorLogged("mec", "CP_MEC_RS64_PRGRM_CNTR_START/_HI are 0x800/0")) << mec.Errors();
  EXPECT_FALSE(WaitUntil([&] { return mec.Data(0) == 1; }, std::chrono::milliseconds(50)));
  EXPECT_EQ(q.rptr(), 0u);
}

TEST(GfxModelTest, AStartAddressTakesEffectOnlyAfterAPipeReset) {
  MecFixture mec;
  mec.LoadMecFirmware();
  while (mec.gc().Read<gc::CP_STAT>().raw() != 0) {
  }
  mec.Select(1, 0, 0);
  mec.gc().Write(gc::CP_MEC_RS64_PRGRM_CNTR_START{}.ip_start(static_cast<uint32_t>(MecFixture::kMecStart >> 2)));
  mec.gc().Write(gc::CP_MEC_RS64_PRGRM_CNTR_START_HI{}.ip_start(static_cast<uint32_t>(MecFixture::kMecStart >> 34)));
  mec.Select(0, 0, 0);
  mec.gc().Write(gc::CP_MEC_DOORBELL_RANGE_LOWER{}.doorbell_range_lower(0));
  mec.gc().Write(gc::CP_MEC_DOORBELL_RANGE_UPPER{}.doorbell_range_upper(0xf8 >> 2));
  mec.gc().Write(gc::CP_MEC_RS64_CNTL{}.mec_pipe0_active(1).mec_halt(0));
  TestQueue q = mec.CreateQueue(0, 0);
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1}));
  EXPECT_TRUE(mec.ErrorLogged("mec", "was not reset since")) << mec.Errors();
  EXPECT_EQ(q.rptr(), 0u);
  // The pulse: the pipe now fetches from the start address and the queue runs.
  mec.gc().Modify<gc::CP_MEC_RS64_CNTL>([](auto& r) { r.mec_pipe0_reset(1); });
  mec.gc().Modify<gc::CP_MEC_RS64_CNTL>([](auto& r) { r.mec_pipe0_reset(0); });
  EXPECT_TRUE(mec.WaitData(0, 1));
}

// Issue 16 B15: gfx_v11_0_wait_for_rlc_autoload_complete waits for CP_STAT == 0 as well.
TEST(GfxModelTest, CpStatReadsBusyUntilTheCpHasStarted) {
  MecFixture mec;
  EXPECT_EQ(mec.gc().Read<gc::CP_STAT>().cp_busy(), 1u);  // the RLC has not loaded anything yet
  mec.LoadMecFirmware();
  int polls = 0;
  while (mec.gc().Read<gc::CP_STAT>().raw() != 0) ASSERT_LT(++polls, 100);
  EXPECT_GT(polls, 0);  // busy for a while after BOOTLOAD_COMPLETE
  EXPECT_EQ(mec.gc().Read<gc::CP_STAT>().raw(), 0u);
}

TEST(GfxModelTest, ProgrammingTheMecBeforeCpStatIsIdleIsLost) {
  MecFixture mec;
  mec.LoadMecFirmware();  // BOOTLOAD_COMPLETE reads 1, but nobody waited for CP_STAT
  mec.Select(1, 0, 0);
  mec.gc().Write(gc::CP_MEC_RS64_PRGRM_CNTR_START{}.ip_start(static_cast<uint32_t>(MecFixture::kMecStart >> 2)));
  mec.Select(0, 0, 0);
  mec.gc().Modify<gc::CP_MEC_RS64_CNTL>([](auto& r) { r.mec_pipe0_reset(1); });
  mec.gc().Modify<gc::CP_MEC_RS64_CNTL>([](auto& r) { r.mec_pipe0_reset(0).mec_pipe0_active(1).mec_halt(0); });
  EXPECT_TRUE(mec.ErrorLogged("mec", "written while CP_STAT reads busy")) << mec.Errors();
  mec.Select(1, 0, 0);
  EXPECT_EQ(mec.gc().Read<gc::CP_MEC_RS64_PRGRM_CNTR_START>().raw(), gc::CP_MEC_RS64_PRGRM_CNTR_START::kDefault);
  mec.Select(0, 0, 0);
}

// Issue 16 B8: the banked registers power on with the kernel's defaults, and CP_MEC_CNTL (the F32 MEC's, halted
// at power-on) does not hold the RS64 MEC.
TEST(GfxModelTest, BankedRegistersPowerOnWithTheirDefaults) {
  MecFixture mec;
  for (uint32_t pipe = 0; pipe < GfxModel::kPipes; ++pipe) {
    mec.Select(1, pipe, 3);
    EXPECT_EQ(mec.gc().Read<gc::CP_HQD_PQ_CONTROL>().raw(), gc::CP_HQD_PQ_CONTROL::kDefault);
    EXPECT_EQ(mec.gc().Read<gc::CP_HQD_PERSISTENT_STATE>().raw(), gc::CP_HQD_PERSISTENT_STATE::kDefault);
    EXPECT_EQ(mec.gc().Read<gc::CP_MEC_RS64_PRGRM_CNTR_START>().raw(), gc::CP_MEC_RS64_PRGRM_CNTR_START::kDefault);
  }
  mec.Select(0, 0, 0, 5);
  EXPECT_EQ(mec.gc().Read<gc::SH_MEM_CONFIG>().raw(), gc::SH_MEM_CONFIG::kDefault);
  mec.Select(0, 0, 0);
  EXPECT_EQ(mec.gc().Read<gc::CP_MEC_CNTL>().mec_me1_halt(), 1u);
  EXPECT_EQ(mec.gc().Read<gc::CP_MEC_RS64_CNTL>().mec_halt(), 1u);
  mec.Boot();
  TestQueue q = mec.CreateQueue(1, 2);
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {7}));
  EXPECT_TRUE(mec.WaitData(0, 7)) << mec.Errors();
}

TEST(GfxModelTest, DroppedDoorbellLeavesWorkUntilTheNextDoorbell) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 0);
  mec.fixture().doorbells().InjectDrop(2);  // both halves of the 64-bit doorbell write are lost
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1}));
  EXPECT_EQ(mec.fixture().doorbells().dropped(), 2u);
  EXPECT_EQ(q.rptr(), 0u);
  EXPECT_EQ(mec.Data(0), 0u);
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(1), {2}));
  ASSERT_TRUE(mec.WaitIdle(q));
  EXPECT_EQ(mec.Data(0), 1u);
  EXPECT_EQ(mec.Data(1), 2u);
}

TEST(GfxModelTest, HungQueueStopsConsumingButAnswersADequeue) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 3);
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1}));
  ASSERT_TRUE(mec.WaitIdle(q));
  const uint32_t frozen = q.rptr();
  ASSERT_TRUE(mec.gfx().InjectQueueHang(0, 3));
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(1), {2}));
  EXPECT_EQ(q.rptr(), frozen);
  EXPECT_EQ(mec.Data(1), 0u);
  EXPECT_TRUE(mec.gfx().QueueRunning(0, 3));
  mec.Dequeue(q);
  EXPECT_TRUE(WaitUntil([&] { return !mec.HqdActive(q); }));
  EXPECT_EQ(q.rptr(), frozen);
  EXPECT_EQ(mec.Data(1), 0u);
  EXPECT_FALSE(mec.gfx().InjectQueueHang(0, 3));
}

TEST(GfxModelTest, ANewModelRestartsAQueueLeftActive) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(2, 1);
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1}));
  ASSERT_TRUE(mec.WaitIdle(q));
  mec.DestroyModel();  // the process exits; the HQD stays active in the device's registers
  mec.Write(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(1), {2}));
  mec.ReopenModel();
  EXPECT_TRUE(mec.gfx().QueueRunning(2, 1));
  EXPECT_TRUE(mec.HqdActive(q));
  mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(2), {3}));
  ASSERT_TRUE(mec.WaitIdle(q));
  EXPECT_EQ(mec.Data(1), 2u);
  EXPECT_EQ(mec.Data(2), 3u);
  EXPECT_EQ(mec.Data(0), 1u);
}

TEST(GfxModelTest, ResetStopsEveryQueueAndClearsTheBanks) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 2);
  mec.Select(0, 0, 0, 4);
  mec.gc().Write(gc::SH_MEM_BASES{}.set_raw(0x20001));
  ASSERT_TRUE(mec.gfx().QueueRunning(0, 2));
  mec.gfx().Reset();
  EXPECT_FALSE(mec.gfx().QueueRunning(0, 2));
  EXPECT_FALSE(mec.HqdActive(q));
  EXPECT_EQ(mec.HqdRead(q, RegisterAddress<gc::CP_HQD_PQ_BASE>(mec.fixture().bases())), 0u);
  EXPECT_EQ(mec.gfx().ShMemBases(4), 0u);
  // Nothing comes back to life in a new model either.
  mec.ReopenModel();
  EXPECT_FALSE(mec.gfx().QueueRunning(0, 2));
}

TEST(GfxModelTest, KiqMapQueuesLoadsTheMqdAndUnmapQueuesDequeues) {
  MecFixture mec;
  mec.Boot();
  // gfx_v11_0_kiq_setting: the KIQ is me1 pipe3 queue0 here; Linux then programs it directly.
  mec.gc().Write(gc::RLC_CP_SCHEDULERS{}.scheduler0(0x80 | (1 << 5) | (3 << 3) | 0));
  TestQueue kiq = mec.CreateQueue(3, 0);
  TestQueue user = mec.AllocateQueue(1, 1);
  constexpr uint64_t kMqdAddress = 0x40'0000;
  std::span<uint8_t> mqd_memory = mec.fixture().memory().Place(kMqdAddress, sizeof(regs::V11ComputeMqd));
  regs::V11ComputeMqd mqd = mec.MqdFor(user);
  mqd.cp_hqd_pq_doorbell_control = gc::CP_HQD_PQ_DOORBELL_CONTROL{}.doorbell_en(1).raw();  // the packet gives it
  std::memcpy(mqd_memory.data(), &mqd, sizeof(mqd));

  // gfx11_kiq_map_queues
  mec.Submit(kiq, {pm4::Packet3(pm4::PACKET3_MAP_QUEUES, 5),
                   pm4::PACKET3_MAP_QUEUES_QUEUE(1) | pm4::PACKET3_MAP_QUEUES_PIPE(1) | pm4::PACKET3_MAP_QUEUES_ME(1) |
                       pm4::PACKET3_MAP_QUEUES_NUM_QUEUES(1),
                   pm4::PACKET3_MAP_QUEUES_DOORBELL_OFFSET(user.doorbell), static_cast<uint32_t>(kMqdAddress),
                   static_cast<uint32_t>(kMqdAddress >> 32), static_cast<uint32_t>(user.wptr_address),
                   static_cast<uint32_t>(user.wptr_address >> 32)});
  ASSERT_TRUE(mec.WaitIdle(kiq)) << mec.Errors();
  EXPECT_TRUE(mec.gfx().QueueRunning(1, 1));
  EXPECT_TRUE(mec.HqdActive(user));
  EXPECT_EQ(mec.HqdRead(user, RegisterAddress<gc::CP_HQD_PQ_BASE>(mec.fixture().bases())),
            static_cast<uint32_t>(user.ring_address >> 8));
  mec.Submit(user, MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {0x77}));
  EXPECT_TRUE(mec.WaitData(0, 0x77));

  // gfx11_kiq_unmap_queues (RESET_QUEUES)
  mec.Submit(kiq, {pm4::Packet3(pm4::PACKET3_UNMAP_QUEUES, 4),
                   pm4::PACKET3_UNMAP_QUEUES_ACTION(1) | pm4::PACKET3_UNMAP_QUEUES_NUM_QUEUES(1),
                   pm4::PACKET3_UNMAP_QUEUES_DOORBELL_OFFSET0(user.doorbell), 0, 0, 0});
  ASSERT_TRUE(mec.WaitIdle(kiq)) << mec.Errors();
  EXPECT_FALSE(mec.gfx().QueueRunning(1, 1));
  EXPECT_FALSE(mec.HqdActive(user));
}

TEST(GfxModelTest, KiqRefusesQueuesTheMecDoesNotHave) {
  MecFixture mec;
  mec.Boot();
  mec.gc().Write(gc::RLC_CP_SCHEDULERS{}.scheduler0(0x80 | (1 << 5) | (3 << 3) | 0));
  TestQueue kiq = mec.CreateQueue(3, 0);
  // Queue 5 of pipe 0: GC 11.0.0's MEC has 4 queues per pipe.
  mec.Submit(
      kiq, {pm4::Packet3(pm4::PACKET3_MAP_QUEUES, 5),
            pm4::PACKET3_MAP_QUEUES_QUEUE(5) | pm4::PACKET3_MAP_QUEUES_ME(1) | pm4::PACKET3_MAP_QUEUES_NUM_QUEUES(1), 0,
            0, 0, 0, 0});
  ASSERT_TRUE(mec.fixture().interrupts().WaitFor(1));
  EXPECT_TRUE(mec.ErrorLogged("mec", "me 1 pipe 0 queue 5")) << mec.Errors();
  EXPECT_FALSE(mec.gfx().QueueRunning(0, 1));
}

// gfx11_kiq_query_status (COMMAND 2, no interrupt): the 64-bit sequence number lands at the fence address once
// everything before it ran. Before issue 16 the KIQ model refused QUERY_STATUS; commands 0 and 3 (with an interrupt)
// were refused until session 9 (KiqQueryStatusCanRaiseItsInterrupt).
TEST(GfxModelTest, KiqQueryStatusWritesItsFence) {
  MecFixture mec;
  mec.Boot();
  mec.gc().Write(gc::RLC_CP_SCHEDULERS{}.scheduler0(0x80 | (1 << 5) | (3 << 3) | 0));
  TestQueue kiq = mec.CreateQueue(3, 0);
  const uint64_t fence = MecFixture::DataAddress(20);
  auto query = [&](uint32_t command) {
    return std::vector<uint32_t>{pm4::Packet3(pm4::PACKET3_QUERY_STATUS, 5),
                                 pm4::PACKET3_QUERY_STATUS_CONTEXT_ID(0) | pm4::PACKET3_QUERY_STATUS_INTERRUPT_SEL(0) |
                                     pm4::PACKET3_QUERY_STATUS_COMMAND(command),
                                 pm4::PACKET3_QUERY_STATUS_DOORBELL_OFFSET(0x10) | pm4::PACKET3_QUERY_STATUS_ENG_SEL(0),
                                 static_cast<uint32_t>(fence),
                                 static_cast<uint32_t>(fence >> 32),
                                 0x89abcdef,
                                 0x01234567};
  };
  mec.Submit(kiq, query(2));
  ASSERT_TRUE(mec.WaitIdle(kiq)) << mec.Errors();
  EXPECT_EQ(mec.Data(20), 0x89abcdefu);
  EXPECT_EQ(mec.Data(21), 0x01234567u);
  EXPECT_TRUE(mec.fixture().interrupts().entries().empty());
}

// QUERY_STATUS commands 0 (interrupt only) and 3 (fence, then interrupt): CP_COMPUTE_QUERY_STATUS with the context
// id in src_data[0], from the KIQ's me/pipe/queue, when the KIQ pipe's CMP_QUERY_STATUS_INT_ENABLE is set; without
// it the fence alone. Before: "QUERY_STATUS command 3: the model writes fences ... and raises no interrupt".
TEST(GfxModelTest, KiqQueryStatusCanRaiseItsInterrupt) {
  MecFixture mec;
  mec.Boot();
  mec.gc().Write(gc::RLC_CP_SCHEDULERS{}.scheduler0(0x80 | (1 << 5) | (3 << 3) | 0));
  TestQueue kiq = mec.CreateQueue(3, 0);
  const uint64_t fence = MecFixture::DataAddress(20);
  auto query = [&](uint32_t command, uint32_t context, uint32_t sequence) {
    return std::vector<uint32_t>{pm4::Packet3(pm4::PACKET3_QUERY_STATUS, 5),
                                 pm4::PACKET3_QUERY_STATUS_CONTEXT_ID(context) |
                                     pm4::PACKET3_QUERY_STATUS_INTERRUPT_SEL(0) |
                                     pm4::PACKET3_QUERY_STATUS_COMMAND(command),
                                 pm4::PACKET3_QUERY_STATUS_DOORBELL_OFFSET(0x10) | pm4::PACKET3_QUERY_STATUS_ENG_SEL(0),
                                 static_cast<uint32_t>(fence),
                                 static_cast<uint32_t>(fence >> 32),
                                 sequence,
                                 0};
  };
  const uint64_t int_cntl = RegisterAddress<gc::CP_ME1_PIPE0_INT_CNTL>(mec.fixture().bases()) + 3;
  // Disabled: the fence is written, no interrupt.
  mec.fixture().registers().WriteDword(int_cntl, 0);
  mec.Submit(kiq, query(3, 0x0badcafe, 1));
  ASSERT_TRUE(mec.WaitIdle(kiq)) << mec.Errors();
  EXPECT_EQ(mec.Data(20), 1u);
  EXPECT_TRUE(mec.fixture().interrupts().entries().empty());
  // Enabled: command 3 writes the fence and then interrupts; command 0 interrupts without touching the fence.
  mec.fixture().registers().WriteDword(int_cntl, gc::CP_ME1_PIPE0_INT_CNTL{}.cmp_query_status_int_enable(1).raw());
  mec.Submit(kiq, query(3, 0x0badcafe, 2));
  ASSERT_TRUE(mec.fixture().interrupts().WaitFor(1));
  EXPECT_EQ(mec.Data(20), 2u);
  mec.Submit(kiq, query(0, 0x0000042, 3));
  ASSERT_TRUE(mec.fixture().interrupts().WaitFor(2));
  ASSERT_TRUE(mec.WaitIdle(kiq)) << mec.Errors();
  EXPECT_EQ(mec.Data(20), 2u);
  const std::vector<InterruptEntry> entries = mec.fixture().interrupts().entries();
  ASSERT_EQ(entries.size(), 2u);
  for (const InterruptEntry& entry : entries) {
    EXPECT_EQ(entry.client_id, regs::ih::SOC21_IH_CLIENTID_GRBM_CP);
    EXPECT_EQ(entry.source_id, regs::ih::GFX_11_0_0__SRCID__CP_COMPUTE_QUERY_STATUS);
  }
  EXPECT_EQ(entries[0].src_data[0], 0x0badcafeu);
  EXPECT_EQ(entries[1].src_data[0], 0x42u);
  EXPECT_TRUE(mec.fixture().errors().errors().empty()) << mec.Errors();
}

TEST(GfxModelTest, UnmapQueuesOfAnUnknownDoorbellIsRefused) {
  MecFixture mec;
  mec.Boot();
  mec.gc().Write(gc::RLC_CP_SCHEDULERS{}.scheduler0(0x80 | (1 << 5) | (3 << 3) | 0));
  TestQueue kiq = mec.CreateQueue(3, 0);
  mec.Submit(kiq, {pm4::Packet3(pm4::PACKET3_UNMAP_QUEUES, 4),
                   pm4::PACKET3_UNMAP_QUEUES_ACTION(1) | pm4::PACKET3_UNMAP_QUEUES_NUM_QUEUES(1),
                   pm4::PACKET3_UNMAP_QUEUES_DOORBELL_OFFSET0(0x40), 0, 0, 0});
  ASSERT_TRUE(mec.fixture().interrupts().WaitFor(1));
  EXPECT_TRUE(mec.ErrorLogged("mec", "no mapped queue has it")) << mec.Errors();
}

TEST(GfxModelTest, MapQueuesOnAnOrdinaryQueueIsRefused) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 0);
  mec.Submit(q, {pm4::Packet3(pm4::PACKET3_MAP_QUEUES, 5), 0, 0, 0, 0, 0, 0});
  ASSERT_TRUE(mec.fixture().interrupts().WaitFor(1));
  EXPECT_TRUE(mec.ErrorLogged("mec", "not the KIQ")) << mec.Errors();
  EXPECT_EQ(mec.fixture().interrupts().entries()[0].source_id, regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR);
}

}  // namespace
}  // namespace am::sim
