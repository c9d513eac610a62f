// The MEC's PM4 packets, each run on a compute queue set up through the HQD registers and fed through its ring and
// doorbell: what lands in memory, registers, the interrupt ring and the shader executor, and how malformed packets
// stop the queue.
#include "am/sim/pm4_engine.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "am/regs/ih_constants.h"
#include "am/regs/mqd.h"
#include "gtest/gtest.h"
#include "tests/am/sim/mec_fixture.h"

namespace am::sim {
namespace {

using testing::MecFixture;
using testing::RecordingExecutor;
using testing::TestQueue;
using testing::WaitUntil;
namespace gc = regs::gc;
namespace pm4 = regs::pm4;
namespace ih = regs::ih;

class Pm4EngineTest : public ::testing::Test {
 protected:
  explicit Pm4EngineTest(ShaderExecutor* executor = nullptr) : mec_(executor) {
    mec_.Boot();
    q_ = mec_.CreateQueue(1, 2);
  }
  template <typename R>
  uint64_t Address() {
    return RegisterAddress<R>(mec_.fixture().bases());
  }
  // The queue stopped on a fault: the error names `text`, an interrupt with `source` arrived, and packets after
  // the bad one did not run.
  void ExpectFault(absl::string_view text, uint32_t source) {
    ASSERT_TRUE(mec_.fixture().interrupts().WaitFor(1)) << mec_.Errors();
    const InterruptEntry entry = mec_.fixture().interrupts().entries().back();
    EXPECT_EQ(entry.client_id, ih::SOC21_IH_CLIENTID_GRBM_CP);
    EXPECT_EQ(entry.source_id, source);
    EXPECT_EQ(entry.ring_id, (2u << 4) | (1u << 2) | 1u);  // queue 2, me 1, pipe 1
    EXPECT_TRUE(mec_.ErrorLogged("mec", text)) << mec_.Errors();
    EXPECT_TRUE(mec_.ErrorLogged("mec", "me1 pipe1 queue2")) << mec_.Errors();
    // A later packet is not executed, even after another doorbell.
    mec_.Submit(q_, MecFixture::WriteDataMemory(MecFixture::DataAddress(60), {1}));
    EXPECT_NE(q_.rptr(), q_.put_wrapped());
    EXPECT_EQ(mec_.Data(60), 0u);
  }

  MecFixture mec_;
  TestQueue q_;
};

TEST_F(Pm4EngineTest, NopsOfEveryKindAdvanceTheReadPointer) {
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_NOP, 2), 1, 2, 3,               // NOP with a 3-dword body
                   pm4::Packet3(pm4::PACKET3_NOP, 0x3fff),                   // Linux's one-dword ring padding
                   pm4::Packet3(pm4::PACKET3_NOP, 0x3fff), pm4::CP_PACKET2,  // type-2 filler
                   pm4::Packet3(pm4::PACKET3_NOP, 0), 0});
  ASSERT_TRUE(mec_.WaitIdle(q_));
  EXPECT_EQ(q_.rptr(), 9u);
  EXPECT_TRUE(mec_.fixture().errors().errors().empty()) << mec_.Errors();
}

TEST_F(Pm4EngineTest, WriteDataToMemory) {
  mec_.Submit(q_, MecFixture::WriteDataMemory(MecFixture::DataAddress(4), {10, 11, 12}));
  ASSERT_TRUE(mec_.WaitIdle(q_));
  EXPECT_EQ(mec_.Data(4), 10u);
  EXPECT_EQ(mec_.Data(5), 11u);
  EXPECT_EQ(mec_.Data(6), 12u);
  // WR_ONE_ADDR: every dword to the same address, the last one stays.
  mec_.Submit(q_, MecFixture::WriteDataMemory(MecFixture::DataAddress(8), {20, 21}, /*WR_ONE_ADDR=*/1u << 16));
  ASSERT_TRUE(mec_.WaitIdle(q_));
  EXPECT_EQ(mec_.Data(8), 21u);
  EXPECT_EQ(mec_.Data(9), 0u);
}

TEST_F(Pm4EngineTest, WriteDataToRegisters) {
  mec_.Submit(q_, MecFixture::WriteDataRegister(Address<gc::SCRATCH_REG0>(), {0xa, 0xb}));
  ASSERT_TRUE(mec_.WaitIdle(q_));
  auto regs = mec_.gc();
  EXPECT_EQ(regs.Read<gc::SCRATCH_REG0>().raw(), 0xau);
  EXPECT_EQ(regs.Read<gc::SCRATCH_REG1>().raw(), 0xbu);
}

TEST_F(Pm4EngineTest, WriteDataToAnUnmappedAddressIsAProtectionFault) {
  mec_.Submit(q_, MecFixture::WriteDataMemory(0xdead'0000, {1}));
  ExpectFault("unmapped GPU address 0xdead0000", ih::GFX_11_0_0__SRCID__CP_GPF);
}

// COPY_DATA (before issue 16 the MEC model refused it): register to memory as gfx_v11_0_ring_emit_rreg emits it,
// memory to register, immediate 64-bit data to memory, the GPU clock (64 bits); an unknown selector faults.
TEST_F(Pm4EngineTest, CopyDataMovesRegistersMemoryImmediatesAndTheClock) {
  auto regs = mec_.gc();
  regs.Write(gc::SCRATCH_REG2{}.set_raw(0x5ca1ab1e));
  const auto scratch2 = static_cast<uint32_t>(Address<gc::SCRATCH_REG2>());
  const uint64_t to = MecFixture::DataAddress(10);
  constexpr uint32_t kRegisterToMemory = 0 | (5 << 8) | (1 << 20);  // src register, dst memory, write confirm
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_COPY_DATA, 4), kRegisterToMemory, scratch2, 0, static_cast<uint32_t>(to),
                   static_cast<uint32_t>(to >> 32)});
  ASSERT_TRUE(mec_.WaitIdle(q_)) << mec_.Errors();
  EXPECT_EQ(mec_.Data(10), 0x5ca1ab1eu);

  mec_.SetData(12, 0x600df00d);
  const uint64_t from = MecFixture::DataAddress(12);
  const auto scratch3 = static_cast<uint32_t>(Address<gc::SCRATCH_REG3>());
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_COPY_DATA, 4), 2 | (0 << 8), static_cast<uint32_t>(from),
                   static_cast<uint32_t>(from >> 32), scratch3, 0});
  ASSERT_TRUE(mec_.WaitIdle(q_)) << mec_.Errors();
  EXPECT_EQ(regs.Read<gc::SCRATCH_REG3>().raw(), 0x600df00du);

  const uint64_t wide = MecFixture::DataAddress(14);
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_COPY_DATA, 4), 5 | (5 << 8) | (1 << 16), 0x11112222, 0x33334444,
                   static_cast<uint32_t>(wide), static_cast<uint32_t>(wide >> 32)});
  const uint64_t clock = MecFixture::DataAddress(16);
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_COPY_DATA, 4), 9 | (5 << 8) | (1 << 16), 0, 0,
                   static_cast<uint32_t>(clock), static_cast<uint32_t>(clock >> 32)});
  ASSERT_TRUE(mec_.WaitIdle(q_)) << mec_.Errors();
  EXPECT_EQ(mec_.Data(14), 0x11112222u);
  EXPECT_EQ(mec_.Data(15), 0x33334444u);
  EXPECT_NE(mec_.Data(16) | uint64_t{mec_.Data(17)} << 32, 0u);
  EXPECT_TRUE(mec_.fixture().errors().errors().empty()) << mec_.Errors();

  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_COPY_DATA, 4), 3 | (5 << 8), 0, 0, static_cast<uint32_t>(to),
                   static_cast<uint32_t>(to >> 32)});  // GDS: not modelled
  ExpectFault("COPY_DATA SRC_SEL 3", ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR);
}

// DMA_DATA (nvd.h): a memory-to-memory copy and a fill; register addressing is refused. Before issue 16 the MEC
// model refused the packet.
TEST_F(Pm4EngineTest, DmaDataCopiesAndFillsMemory) {
  for (uint32_t i = 0; i < 8; ++i) mec_.SetData(30 + i, 0xc0de0000 + i);
  const uint64_t from = MecFixture::DataAddress(30), to = MecFixture::DataAddress(40);
  auto dma = [](uint32_t control, uint64_t source, uint64_t destination, uint32_t command) {
    return std::vector<uint32_t>{pm4::Packet3(pm4::PACKET3_DMA_DATA, 5),
                                 control,
                                 static_cast<uint32_t>(source),
                                 static_cast<uint32_t>(source >> 32),
                                 static_cast<uint32_t>(destination),
                                 static_cast<uint32_t>(destination >> 32),
                                 command};
  };
  mec_.Submit(q_, dma(pm4::PACKET3_DMA_DATA_SRC_SEL(3) | pm4::PACKET3_DMA_DATA_DST_SEL(3), from, to, 6 * 4));
  const uint64_t filled = MecFixture::DataAddress(50);
  mec_.Submit(q_, dma(pm4::PACKET3_DMA_DATA_SRC_SEL(2) | pm4::PACKET3_DMA_DATA_DST_SEL(0), 0xf111f111, filled, 3 * 4));
  ASSERT_TRUE(mec_.WaitIdle(q_)) << mec_.Errors();
  for (uint32_t i = 0; i < 6; ++i) EXPECT_EQ(mec_.Data(40 + i), 0xc0de0000 + i) << i;
  EXPECT_EQ(mec_.Data(46), 0u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(mec_.Data(50 + i), 0xf111f111u) << i;
  EXPECT_EQ(mec_.Data(53), 0u);
  EXPECT_TRUE(mec_.fixture().errors().errors().empty()) << mec_.Errors();
  mec_.Submit(q_, dma(0, from, to, pm4::PACKET3_DMA_DATA_CMD_DAS | 4));
  ExpectFault("a register as source or destination (SAS/DAS 1) is not modelled",
              ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR);
}

// DMA_DATA to or from GDS (SRC_SEL/DST_SEL 1) is refused with a decoded error naming GDS: the model keeps no GDS
// (docs/fidelity.md). The memory it would have copied to stays untouched.
TEST_F(Pm4EngineTest, DmaDataWithGdsIsRefusedNamingGds) {
  const uint64_t to = MecFixture::DataAddress(40);
  mec_.Submit(
      q_, {pm4::Packet3(pm4::PACKET3_DMA_DATA, 5), pm4::PACKET3_DMA_DATA_SRC_SEL(1) | pm4::PACKET3_DMA_DATA_DST_SEL(0),
           0, 0, static_cast<uint32_t>(to), static_cast<uint32_t>(to >> 32), 16});
  ExpectFault("GDS as source or destination (SRC_SEL/DST_SEL 1): the model has no GDS is not modelled",
              ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR);
  EXPECT_EQ(mec_.Data(40), 0u);
}

struct CompareCase {
  uint32_t function;
  uint32_t blocking_value;  // memory value (masked) for which the wait must hold
  uint32_t passing_value;   // memory value that satisfies it
};

class WaitRegMemTest : public Pm4EngineTest, public ::testing::WithParamInterface<CompareCase> {};

// nvd.h: 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 > against reference 100, on (value & 0xffff).
TEST_P(WaitRegMemTest, MemoryWaitHoldsUntilTheCompareIsTrue) {
  const CompareCase c = GetParam();
  mec_.SetData(1, 0xabcd0000 | c.blocking_value);  // the upper half is masked away
  auto reached = MecFixture::WriteDataMemory(MecFixture::DataAddress(0), {1});
  auto wait = MecFixture::WaitRegMemMemory(MecFixture::DataAddress(1), c.function, 100, 0xffff);
  auto after = MecFixture::WriteDataMemory(MecFixture::DataAddress(2), {2});
  mec_.Submit(q_, MecFixture::Concat({reached, wait, after}));
  ASSERT_TRUE(mec_.WaitData(0, 1));
  ASSERT_TRUE(mec_.WaitRptr(q_, static_cast<uint32_t>(reached.size())));  // sitting on the wait
  EXPECT_EQ(mec_.Data(2), 0u);
  mec_.SetData(1, 0xabcd0000 | c.passing_value);
  EXPECT_TRUE(mec_.WaitData(2, 2));
  EXPECT_TRUE(mec_.WaitIdle(q_));
}

INSTANTIATE_TEST_SUITE_P(AllCompareFunctions, WaitRegMemTest,
                         ::testing::Values(CompareCase{1, 100, 99}, CompareCase{2, 101, 100}, CompareCase{3, 99, 100},
                                           CompareCase{4, 100, 7}, CompareCase{5, 99, 100}, CompareCase{6, 100, 101}));

TEST_F(Pm4EngineTest, WaitRegMemAlwaysPassesAtOnce) {
  mec_.SetData(1, 5);
  mec_.Submit(q_, MecFixture::Concat({MecFixture::WaitRegMemMemory(MecFixture::DataAddress(1), 0, 100),
                                      MecFixture::WriteDataMemory(MecFixture::DataAddress(2), {2})}));
  EXPECT_TRUE(mec_.WaitData(2, 2));
}

TEST_F(Pm4EngineTest, WaitRegMemOnARegister) {
  auto wait = std::vector<uint32_t>{pm4::Packet3(pm4::PACKET3_WAIT_REG_MEM, 5),
                                    pm4::WAIT_REG_MEM_MEM_SPACE(0) | pm4::WAIT_REG_MEM_FUNCTION(3),
                                    static_cast<uint32_t>(Address<gc::SCRATCH_REG3>()),
                                    0,
                                    0x42,
                                    0xff,
                                    4};
  mec_.Submit(q_, MecFixture::Concat({wait, MecFixture::WriteDataMemory(MecFixture::DataAddress(2), {2})}));
  ASSERT_TRUE(mec_.WaitRptr(q_, 0));
  EXPECT_EQ(mec_.Data(2), 0u);
  mec_.gc().Write(gc::SCRATCH_REG3{}.set_raw(0x1142));  // masked to 0x42
  EXPECT_TRUE(mec_.WaitData(2, 2));
}

TEST_F(Pm4EngineTest, WaitRegMemWriteThenWaitWritesTheFirstRegisterAndPollsTheSecond) {
  // gfx_v11_0_ring_emit_hdp_flush's shape: write ref to REQ, wait for DONE == ref.
  auto wait = std::vector<uint32_t>{
      pm4::Packet3(pm4::PACKET3_WAIT_REG_MEM, 5),
      pm4::WAIT_REG_MEM_MEM_SPACE(0) | pm4::WAIT_REG_MEM_OPERATION(1) | pm4::WAIT_REG_MEM_FUNCTION(3),
      static_cast<uint32_t>(Address<gc::SCRATCH_REG4>()),
      static_cast<uint32_t>(Address<gc::SCRATCH_REG5>()),
      0x5,
      0x5,
      0x20};
  mec_.Submit(q_, MecFixture::Concat({wait, MecFixture::WriteDataMemory(MecFixture::DataAddress(2), {2})}));
  ASSERT_TRUE(WaitUntil([&] { return mec_.gc().Read<gc::SCRATCH_REG4>().raw() == 0x5; }));
  EXPECT_EQ(mec_.Data(2), 0u);
  mec_.gc().Write(gc::SCRATCH_REG5{}.set_raw(0x5));
  EXPECT_TRUE(mec_.WaitData(2, 2));
}

TEST_F(Pm4EngineTest, WaitRegMemOnUnmappedMemoryIsAProtectionFault) {
  mec_.Submit(q_, MecFixture::WaitRegMemMemory(0x6600'0000, 3, 0));
  ExpectFault("WAIT_REG_MEM on memory", ih::GFX_11_0_0__SRCID__CP_GPF);
}

TEST_F(Pm4EngineTest, WaitRegMemReservedFunctionStopsTheQueue) {
  mec_.Submit(q_, MecFixture::WaitRegMemMemory(MecFixture::DataAddress(1), 7, 0));
  ExpectFault("compare function 7", ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR);
}

TEST_F(Pm4EngineTest, ReleaseMemWritesFencesAndTimestamps) {
  mec_.SetData(11, 0xffffffff);
  mec_.Submit(q_, MecFixture::Concat({
                      MecFixture::ReleaseMem(MecFixture::DataAddress(10), 0x1'2345'6789, 1, 0),  // low 32 bits only
                      MecFixture::ReleaseMem(MecFixture::DataAddress(12), 0x1'2345'6789, 2, 0),  // 64 bits
                      MecFixture::ReleaseMem(MecFixture::DataAddress(14), 0, 3, 0),              // GPU clock counter
                      MecFixture::ReleaseMem(MecFixture::DataAddress(16), 0, 3, 0),
                  }));
  ASSERT_TRUE(mec_.WaitIdle(q_));
  EXPECT_EQ(mec_.Data(10), 0x23456789u);
  EXPECT_EQ(mec_.Data(11), 0xffffffffu);
  EXPECT_EQ(mec_.Data64(12), 0x1'2345'6789u);
  const uint64_t first = mec_.Data64(14), second = mec_.Data64(16);
  EXPECT_GT(first, 0u);
  EXPECT_GE(second, first);
  // The stamps count the same 100 MHz clock the registers read.
  auto regs = mec_.gc();
  const uint64_t now =
      (uint64_t{regs.Read<gc::CP_MES_MTIME_HI>().raw()} << 32) | regs.Read<gc::CP_MES_MTIME_LO>().raw();
  EXPECT_GE(now, second);
  EXPECT_TRUE(mec_.fixture().interrupts().entries().empty());
}

TEST_F(Pm4EngineTest, ReleaseMemInterruptsWhenThePipeEnablesIt) {
  // Pipe 1's TIME_STAMP_INT_ENABLE off: the fence is written, no interrupt.
  const uint64_t pipe1_int_cntl = Address<gc::CP_ME1_PIPE0_INT_CNTL>() + 1;
  mec_.fixture().registers().WriteDword(pipe1_int_cntl, 0);
  mec_.Submit(q_, MecFixture::ReleaseMem(MecFixture::DataAddress(20), 1, 1, 2, /*context_id=*/0x111));
  ASSERT_TRUE(mec_.WaitIdle(q_));
  EXPECT_EQ(mec_.Data(20), 1u);
  mec_.fixture().registers().WriteDword(pipe1_int_cntl, gc::CP_ME1_PIPE0_INT_CNTL{}.time_stamp_int_enable(1).raw());
  mec_.Submit(q_, MecFixture::ReleaseMem(MecFixture::DataAddress(20), 2, 1, 2, /*context_id=*/0x222));
  ASSERT_TRUE(mec_.fixture().interrupts().WaitFor(1));
  EXPECT_EQ(mec_.Data(20), 2u);  // written before the interrupt (INT_SEL 2: after the write is confirmed)
  const std::vector<InterruptEntry> entries = mec_.fixture().interrupts().entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].client_id, ih::SOC21_IH_CLIENTID_GRBM_CP);
  EXPECT_EQ(entries[0].source_id, ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT);
  EXPECT_EQ(entries[0].ring_id, (2u << 4) | (1u << 2) | 1u);
  EXPECT_EQ(entries[0].src_data[0], 0x222u);
}

TEST_F(Pm4EngineTest, ReleaseMem64BitToAnUnalignedAddressIsAFault) {
  mec_.Submit(q_, MecFixture::ReleaseMem(MecFixture::DataAddress(21), 1, 2, 0));  // 4-byte aligned only
  ExpectFault("not 8-byte aligned", ih::GFX_11_0_0__SRCID__CP_GPF);
}

TEST_F(Pm4EngineTest, ReleaseMemReservedDataSelectStopsTheQueue) {
  mec_.Submit(q_, MecFixture::ReleaseMem(MecFixture::DataAddress(20), 1, 6, 0));
  ExpectFault("DATA_SEL 6", ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR);
}

TEST_F(Pm4EngineTest, AcquireMemAndEventWriteAreAccepted) {
  // tinygrad acquire_mem and Linux's CS_PARTIAL_FLUSH event.
  mec_.Submit(
      q_, {pm4::Packet3(pm4::PACKET3_ACQUIRE_MEM, 6), 0, 0xffffffff, 0xffffffff, 0, 0, 0xa,
           pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1) | pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1),
           pm4::Packet3(pm4::PACKET3_EVENT_WRITE, 0), pm4::EVENT_TYPE(pm4::CS_PARTIAL_FLUSH) | pm4::EVENT_INDEX(4)});
  ASSERT_TRUE(mec_.WaitIdle(q_));
  EXPECT_TRUE(mec_.fixture().errors().errors().empty()) << mec_.Errors();
}

TEST_F(Pm4EngineTest, AcquireMemOfTheWrongSizeStopsTheQueue) {
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_ACQUIRE_MEM, 4), 0, 0, 0, 0, 0});
  ExpectFault("ACQUIRE_MEM packet of 6 dwords", ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR);
}

TEST_F(Pm4EngineTest, SetUconfigRegWritesTheDeviceRegister) {
  // tinygrad set_grbm: GRBM_GFX_INDEX through SET_UCONFIG_REG.
  const uint64_t address = Address<gc::GRBM_GFX_INDEX>();
  const uint32_t value = gc::GRBM_GFX_INDEX{}.se_index(2).sa_broadcast_writes(1).instance_broadcast_writes(1).raw();
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_SET_UCONFIG_REG, 1),
                   static_cast<uint32_t>(address - pm4::PACKET3_SET_UCONFIG_REG_START), value});
  ASSERT_TRUE(mec_.WaitIdle(q_));
  EXPECT_EQ(mec_.gc().Read<gc::GRBM_GFX_INDEX>().raw(), value);
}

TEST_F(Pm4EngineTest, SetShRegPastTheRangeStopsTheQueue) {
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_SET_SH_REG, 2), 0x3ff, 1, 2});
  ExpectFault("runs past the SH range", ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT);
}

TEST_F(Pm4EngineTest, DispatchWithoutAShaderExecutorIsADeviceError) {
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_DISPATCH_DIRECT, 3), 1, 1, 1, 1});
  ExpectFault("no shader executor", ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR);
  EXPECT_EQ(q_.rptr(), 0u);  // the dispatch did not complete
}

// Constructed before the queue's model, which holds a pointer to it.
struct ExecutorHolder {
  RecordingExecutor executor_;
};

class DispatchTest : protected ExecutorHolder, public Pm4EngineTest {
 protected:
  DispatchTest() : Pm4EngineTest(&executor_) {}
  std::vector<uint32_t> SetSh(uint64_t address, std::initializer_list<uint32_t> values) {
    std::vector<uint32_t> p{pm4::Packet3(pm4::PACKET3_SET_SH_REG, static_cast<uint32_t>(values.size())),
                            static_cast<uint32_t>(address - pm4::PACKET3_SET_SH_REG_START)};
    p.insert(p.end(), values);
    return p;
  }
};

TEST_F(DispatchTest, DispatchHandsTheComputeStateToTheExecutor) {
  std::vector<uint32_t> user_data(16);
  for (uint32_t i = 0; i < 16; ++i) user_data[i] = 0x100 + i;
  std::vector<uint32_t> set_user{
      pm4::Packet3(pm4::PACKET3_SET_SH_REG, 16),
      static_cast<uint32_t>(Address<gc::COMPUTE_USER_DATA_0>() - pm4::PACKET3_SET_SH_REG_START)};
  set_user.insert(set_user.end(), user_data.begin(), user_data.end());
  mec_.Submit(q_, MecFixture::Concat({
                      SetSh(Address<gc::COMPUTE_PGM_LO>(), {0x12345678, 0x9a}),  // PGM_LO, PGM_HI
                      SetSh(Address<gc::COMPUTE_PGM_RSRC1>(), {0x11, 0x22}),     // RSRC1, RSRC2
                      SetSh(Address<gc::COMPUTE_PGM_RSRC3>(), {0x33}),
                      SetSh(Address<gc::COMPUTE_START_X>(), {4, 5, 6}),
                      SetSh(Address<gc::COMPUTE_NUM_THREAD_X>(), {64, 2, 1}),
                      SetSh(Address<gc::COMPUTE_TMPRING_SIZE>(), {0x44}),
                      SetSh(Address<gc::COMPUTE_RESOURCE_LIMITS>(), {0x55}),
                      set_user,
                      {pm4::Packet3(pm4::PACKET3_DISPATCH_DIRECT, 3), 7, 8, 9, 0x1021},
                  }));
  ASSERT_TRUE(mec_.WaitIdle(q_)) << mec_.Errors();
  const std::vector<DispatchState> dispatches = executor_.dispatches();
  ASSERT_EQ(dispatches.size(), 1u);
  const DispatchState& d = dispatches[0];
  EXPECT_EQ(d.program_address, 0x9a'1234'5678ull << 8);
  EXPECT_EQ(d.pgm_rsrc1, 0x11u);
  EXPECT_EQ(d.pgm_rsrc2, 0x22u);
  EXPECT_EQ(d.pgm_rsrc3, 0x33u);
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(d.user_data[i], 0x100 + i) << i;
  EXPECT_EQ(d.start, (std::array<uint32_t, 3>{4, 5, 6}));
  EXPECT_EQ(d.num_thread, (std::array<uint32_t, 3>{64, 2, 1}));
  EXPECT_EQ(d.dimensions, (std::array<uint32_t, 3>{7, 8, 9}));
  EXPECT_EQ(d.dispatch_initiator, 0x1021u);
  EXPECT_EQ(d.tmpring_size, 0x44u);
  EXPECT_EQ(d.resource_limits, 0x55u);
  EXPECT_EQ(d.memory.hub, Hub::kGc);
  EXPECT_EQ(d.memory.vmid, 0u);
  EXPECT_EQ(d.memory.fault_cid, 8u);  // the waves access memory as the TCP (gfxhub_v3_0.c gfxhub_client_ids)
}

// Waves that fault (an illegal instruction) leave the queue standing at the dispatch with the error logged; the CP
// posts no error of its own (the packet was fine: the SQ reports the waves' error), unlike a bad packet.
TEST_F(DispatchTest, ExecutorErrorStopsTheQueueWithoutACpInterrupt) {
  executor_.FailWith(absl::InvalidArgumentError("illegal instruction at pc 0x40"));
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_DISPATCH_DIRECT, 3), 1, 1, 1, 1});
  ASSERT_TRUE(WaitUntil([&] { return mec_.ErrorLogged("mec", "illegal instruction at pc 0x40"); })) << mec_.Errors();
  EXPECT_TRUE(mec_.ErrorLogged("mec", "me1 pipe1 queue2")) << mec_.Errors();
  EXPECT_TRUE(mec_.fixture().interrupts().entries().empty());
  // A later packet is not executed, even after another doorbell.
  mec_.Submit(q_, MecFixture::WriteDataMemory(MecFixture::DataAddress(60), {1}));
  EXPECT_NE(q_.rptr(), q_.put_wrapped());
  EXPECT_EQ(mec_.Data(60), 0u);
  executor_.FailWith(absl::OkStatus());
}

// A kernel that never ends: the executor runs until its queue's waves are reset (bounded, so a regression fails
// instead of hanging).
class SpinningExecutor : public ShaderExecutor {
 public:
  absl::Status Dispatch(const DispatchState& state, GpuMemory&) override {
    running_.store(true);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (state.reset_waves == nullptr || !state.reset_waves->load()) {
      if (std::chrono::steady_clock::now() > deadline) return absl::DeadlineExceededError("never reset");
      std::this_thread::yield();
    }
    cancelled_.store(true);
    return absl::CancelledError("waves reset");
  }
  std::atomic<bool> running_{false}, cancelled_{false};
};
struct SpinningHolder {
  SpinningExecutor executor_;
};

class SpinningDispatchTest : protected SpinningHolder, public Pm4EngineTest {
 protected:
  SpinningDispatchTest() : Pm4EngineTest(&executor_) {}
  void RequestDequeue(uint32_t request) {
    mec_.Select(1, q_.pipe, q_.queue);
    mec_.gc().Write(gc::CP_HQD_DEQUEUE_REQUEST{}.dequeue_req(request));
    mec_.Select(0, 0, 0);
  }
};

// Issue 23: CP_HQD_DEQUEUE_REQUEST DRAIN_PIPE (1) waits for the dispatch (amdgpu_amdkfd_gfx_v11.c); RESET_WAVES (2)
// ends its waves, the queue goes inactive and no device error is reported.
TEST_F(SpinningDispatchTest, DrainWaitsForTheDispatchAndResetWavesEndsIt) {
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_DISPATCH_DIRECT, 3), 1, 1, 1, 1});
  ASSERT_TRUE(WaitUntil([&] { return executor_.running_.load(); }));
  RequestDequeue(static_cast<uint32_t>(regs::DequeueRequest::kDrainPipe));
  // A drain sets nothing the waves see: the dispatch still runs, the queue is still active.
  EXPECT_FALSE(executor_.cancelled_.load());
  EXPECT_TRUE(mec_.HqdActive(q_));
  RequestDequeue(static_cast<uint32_t>(regs::DequeueRequest::kResetWaves));
  ASSERT_TRUE(WaitUntil([&] { return !mec_.HqdActive(q_); })) << mec_.Errors();
  EXPECT_TRUE(executor_.cancelled_.load());
  EXPECT_EQ(mec_.Errors(), "");
}

TEST_F(Pm4EngineTest, PredExecSkipsWhatItDoesNotSelect) {
  auto skipped = MecFixture::WriteDataMemory(MecFixture::DataAddress(30), {1});
  auto kept = MecFixture::WriteDataMemory(MecFixture::DataAddress(31), {2});
  mec_.Submit(q_, MecFixture::Concat({
                      {pm4::Packet3(pm4::PACKET3_PRED_EXEC, 0), (2u << 24) | static_cast<uint32_t>(skipped.size())},
                      skipped,
                      {pm4::Packet3(pm4::PACKET3_PRED_EXEC, 0), (1u << 24) | static_cast<uint32_t>(kept.size())},
                      kept,
                  }));
  ASSERT_TRUE(mec_.WaitIdle(q_));
  EXPECT_EQ(mec_.Data(30), 0u);
  EXPECT_EQ(mec_.Data(31), 2u);
}

TEST(Pm4RingTest, PacketsWrapAroundTheRingEnd) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 0, /*ring_dwords=*/32);
  // 7-dword WRITE_DATA packets over a 32-dword ring: they straddle the end at every alignment.
  for (uint32_t i = 0; i < 20; ++i) {
    mec.Submit(q, MecFixture::WriteDataMemory(MecFixture::DataAddress(i), {i + 1, i + 1, i + 1}));
    ASSERT_TRUE(mec.WaitIdle(q)) << i << mec.Errors();
  }
  for (uint32_t i = 0; i < 20; ++i) EXPECT_EQ(mec.Data(i), i + 1) << i;
  EXPECT_GT(q.put, 4 * q.ring.size());
}

TEST(Pm4RingTest, APacketLargerThanTheRingStopsTheQueue) {
  MecFixture mec;
  mec.Boot();
  TestQueue q = mec.CreateQueue(0, 0, /*ring_dwords=*/32);
  mec.Submit(q, {pm4::Packet3(pm4::PACKET3_NOP, 40)});
  ASSERT_TRUE(mec.fixture().interrupts().WaitFor(1));
  EXPECT_TRUE(mec.ErrorLogged("mec", "larger than the ring")) << mec.Errors();
}

TEST_F(Pm4EngineTest, Type0PacketsAreRefused) {
  mec_.Submit(q_, {0x00001234, 0});
  ExpectFault("type-0 packet", ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR);
}

TEST_F(Pm4EngineTest, UnknownOpcodeStopsTheQueue) {
  mec_.Submit(q_, {pm4::Packet3(0xee, 0), 0});
  ExpectFault("opcode 0xee", ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR);
}

class IndirectBufferTest : public Pm4EngineTest {
 protected:
  static constexpr uint64_t kIbs = 0x50'0000;
  IndirectBufferTest() {
    std::span<uint8_t> bytes = mec_.fixture().memory().Place(kIbs, 0x4000);
    ibs_ = std::span<uint32_t>(reinterpret_cast<uint32_t*>(bytes.data()), bytes.size() / 4);
  }
  // Writes `dwords` at dword `at` of the IB area and returns its GPU address.
  uint64_t PutIb(uint32_t at, const std::vector<uint32_t>& dwords) {
    std::copy(dwords.begin(), dwords.end(), ibs_.begin() + at);
    return kIbs + uint64_t{at} * 4;
  }
  std::span<uint32_t> ibs_;
};

TEST_F(IndirectBufferTest, RunsAnIb) {
  auto body = MecFixture::WriteDataMemory(MecFixture::DataAddress(40), {0x40});
  const uint64_t ib = PutIb(0, body);
  mec_.Submit(q_, MecFixture::Concat({MecFixture::IndirectBuffer(ib, static_cast<uint32_t>(body.size())),
                                      MecFixture::WriteDataMemory(MecFixture::DataAddress(41), {0x41})}));
  ASSERT_TRUE(mec_.WaitIdle(q_)) << mec_.Errors();
  EXPECT_EQ(mec_.Data(40), 0x40u);
  EXPECT_EQ(mec_.Data(41), 0x41u);
}

TEST_F(IndirectBufferTest, ChainedIbReplacesTheRestOfTheCurrentOne) {
  auto second = MecFixture::WriteDataMemory(MecFixture::DataAddress(43), {0x43});
  const uint64_t second_ib = PutIb(0x100, second);
  auto first = MecFixture::Concat({MecFixture::WriteDataMemory(MecFixture::DataAddress(42), {0x42}),
                                   MecFixture::IndirectBuffer(second_ib, static_cast<uint32_t>(second.size()),
                                                              /*CHAIN=*/1u << 20),
                                   MecFixture::WriteDataMemory(MecFixture::DataAddress(44), {0x44})});
  const uint64_t first_ib = PutIb(0, first);
  mec_.Submit(q_, MecFixture::Concat({MecFixture::IndirectBuffer(first_ib, static_cast<uint32_t>(first.size())),
                                      MecFixture::WriteDataMemory(MecFixture::DataAddress(45), {0x45})}));
  ASSERT_TRUE(mec_.WaitIdle(q_)) << mec_.Errors();
  EXPECT_EQ(mec_.Data(42), 0x42u);
  EXPECT_EQ(mec_.Data(43), 0x43u);
  EXPECT_EQ(mec_.Data(44), 0u);  // after the chain: never reached
  EXPECT_EQ(mec_.Data(45), 0x45u);
}

TEST_F(IndirectBufferTest, NestsTwoLevelsButNotThree) {
  auto ib2 = MecFixture::WriteDataMemory(MecFixture::DataAddress(46), {0x46});
  const uint64_t ib2_address = PutIb(0x200, ib2);
  auto ib1 = MecFixture::IndirectBuffer(ib2_address, static_cast<uint32_t>(ib2.size()));
  const uint64_t ib1_address = PutIb(0x100, ib1);
  mec_.Submit(q_, MecFixture::IndirectBuffer(ib1_address, static_cast<uint32_t>(ib1.size())));
  ASSERT_TRUE(mec_.WaitIdle(q_)) << mec_.Errors();
  EXPECT_EQ(mec_.Data(46), 0x46u);

  auto ib3 = MecFixture::IndirectBuffer(ib1_address, static_cast<uint32_t>(ib1.size()));  // IB -> IB -> IB
  const uint64_t ib3_address = PutIb(0x300, ib3);
  auto outer = MecFixture::IndirectBuffer(ib3_address, static_cast<uint32_t>(ib3.size()));
  const uint64_t outer_address = PutIb(0x400, outer);
  mec_.Submit(q_, MecFixture::IndirectBuffer(outer_address, static_cast<uint32_t>(outer.size())));
  ExpectFault("at most 2 levels", ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR);
}

TEST_F(IndirectBufferTest, APacketRunningPastTheIbEndStopsTheQueue) {
  auto body = MecFixture::WriteDataMemory(MecFixture::DataAddress(47), {1, 2, 3});
  const uint64_t ib = PutIb(0, body);
  mec_.Submit(q_, MecFixture::IndirectBuffer(ib, static_cast<uint32_t>(body.size()) - 1));
  ExpectFault("runs past the IB's end", ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR);
  EXPECT_EQ(mec_.Data(47), 0u);
}

TEST_F(IndirectBufferTest, AnIbWithoutTheValidBitIsRefused) {
  auto body = MecFixture::WriteDataMemory(MecFixture::DataAddress(48), {1});
  const uint64_t ib = PutIb(0, body);
  mec_.Submit(q_, {pm4::Packet3(pm4::PACKET3_INDIRECT_BUFFER, 2), static_cast<uint32_t>(ib),
                   static_cast<uint32_t>(ib >> 32), static_cast<uint32_t>(body.size())});
  ExpectFault("without INDIRECT_BUFFER_VALID", ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR);
  EXPECT_EQ(mec_.Data(48), 0u);
}

TEST_F(IndirectBufferTest, PredExecSkippingPastTheIbEndStopsTheQueue) {
  const uint64_t ib = PutIb(0, {pm4::Packet3(pm4::PACKET3_PRED_EXEC, 0), (2u << 24) | 5, 0, 0});
  mec_.Submit(q_, MecFixture::IndirectBuffer(ib, 4));
  ExpectFault("PRED_EXEC skips 5 dwords past the IB's end", ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR);
}

TEST_F(IndirectBufferTest, AnEndlessChainStillAnswersADequeue) {
  // An IB whose last packet chains back to itself: the driver's hang, which a dequeue must still end.
  const uint64_t ib = kIbs;
  PutIb(0, MecFixture::Concat({MecFixture::WriteDataMemory(MecFixture::DataAddress(49), {1}),
                               MecFixture::IndirectBuffer(ib, 9, /*CHAIN=*/1u << 20)}));
  mec_.Submit(q_, MecFixture::IndirectBuffer(ib, 9));
  ASSERT_TRUE(mec_.WaitData(49, 1));
  mec_.Dequeue(q_);
  EXPECT_TRUE(WaitUntil([&] { return !mec_.HqdActive(q_); }));
  EXPECT_EQ(q_.rptr(), 0u);  // the IB packet never completed
}

TEST_F(IndirectBufferTest, AnIbAtAnUnmappedAddressIsAProtectionFault) {
  mec_.Submit(q_, MecFixture::IndirectBuffer(0x7700'0000, 16));
  ExpectFault("INDIRECT_BUFFER of 16 dwords at 0x77000000", ih::GFX_11_0_0__SRCID__CP_GPF);
}

}  // namespace
}  // namespace am::sim
