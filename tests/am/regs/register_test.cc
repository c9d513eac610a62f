// The typed register layer against a fake register space. Expected numbers are read off the Linux 6.12 headers
// (asic_reg/gc/gc_11_0_0_{offset,sh_mask}.h, asic_reg/mmhub/mmhub_3_0_0_*), not from the generated code.
#include "am/regs/register.h"

#include <map>
#include <utility>
#include <vector>

#include "am/regs/gc.h"
#include "am/regs/mmhub.h"
#include "am/regs/register_space.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace am::regs {
namespace {

using ::testing::ElementsAre;

// Registers by absolute dword address; unwritten ones read as 0. Records every access in order.
struct FakeSpace {
  std::map<uint64_t, uint32_t> dwords;
  std::vector<std::pair<char, uint64_t>> log;

  uint32_t ReadDword(uint64_t address) {
    log.push_back({'r', address});
    auto it = dwords.find(address);
    return it == dwords.end() ? 0 : it->second;
  }
  void WriteDword(uint64_t address, uint32_t value) {
    log.push_back({'w', address});
    dwords[address] = value;
  }
};
static_assert(DwordSpace<FakeSpace>);

constexpr uint64_t kGcSeg0 = 0x1260;  // arbitrary test bases; real ones come from the discovery table
constexpr uint64_t kGcSeg1 = 0xa000;
constexpr uint64_t kMmhubSeg0 = 0x1a000;

IpBases TestBases() {
  IpBases bases;
  EXPECT_TRUE(bases.SetBase(Ip::kGc, 0, 0, kGcSeg0).ok());
  EXPECT_TRUE(bases.SetBase(Ip::kGc, 0, 1, kGcSeg1).ok());
  EXPECT_TRUE(bases.SetBase(Ip::kMmhub, 0, 0, kMmhubSeg0).ok());
  return bases;
}

// A misspelt field, or a register of another IP block, must not compile; these concepts say whether they do.
template <typename R>
concept HasMisspeltField = requires(R r) {
  r.queue_sise(1);
};
template <typename Space, typename R>
concept CanRead = requires(Space space) {
  space.template Read<R>();
};

static_assert(!HasMisspeltField<gc::CP_HQD_PQ_CONTROL>);
static_assert(CanRead<IpRegisters<Ip::kGc, FakeSpace>, gc::CP_HQD_PQ_CONTROL>);
static_assert(!CanRead<IpRegisters<Ip::kGc, FakeSpace>, mmhub::MMVM_L2_PROTECTION_FAULT_STATUS>);
static_assert(!CanRead<IpRegisters<Ip::kMmhub, FakeSpace>, gc::GCVM_L2_PROTECTION_FAULT_STATUS>);

TEST(RegisterTest, AddressComesFromTheHeader) {
  // regCP_HQD_PQ_CONTROL 0x1fba, BASE_IDX 0; regGRBM_GFX_CNTL 0x0900, BASE_IDX 1.
  EXPECT_EQ(gc::CP_HQD_PQ_CONTROL::kOffset, 0x1fbau);
  EXPECT_EQ(gc::CP_HQD_PQ_CONTROL::kSegment, 0);
  EXPECT_EQ(gc::GRBM_GFX_CNTL::kOffset, 0x900u);
  EXPECT_EQ(gc::GRBM_GFX_CNTL::kSegment, 1);
  EXPECT_EQ(mmhub::MMVM_L2_PROTECTION_FAULT_STATUS::kOffset, 0x70cu);
}

TEST(RegisterTest, FieldsPackIntoTheirBits) {
  // QUEUE_SIZE 0x3f, RPTR_BLOCK_SIZE 0x3f00, UNORD_DISPATCH 0x10000000.
  constexpr auto control = gc::CP_HQD_PQ_CONTROL{}.queue_size(9).rptr_block_size(5).unord_dispatch(1);
  static_assert(control.raw() == (9u | (5u << 8) | (1u << 28)));
  EXPECT_EQ(control.queue_size(), 9u);
  EXPECT_EQ(control.rptr_block_size(), 5u);
  EXPECT_EQ(control.unord_dispatch(), 1u);
  EXPECT_EQ(control.kmd_queue(), 0u);
  // Setting a field again replaces it and leaves the others.
  auto again = control;
  again.queue_size(3);
  EXPECT_EQ(again.raw(), 3u | (5u << 8) | (1u << 28));
}

TEST(RegisterTest, WriteGoesToSegmentBasePlusOffset) {
  FakeSpace space;
  auto gc_or = IpRegisters<Ip::kGc, FakeSpace>::Create(space, TestBases());
  ASSERT_TRUE(gc_or.ok()) << gc_or.status();
  auto& gc = *gc_or;
  gc.Write(gc::CP_HQD_PQ_CONTROL{}.queue_size(9).rptr_block_size(5).unord_dispatch(1));
  gc.Write(gc::GRBM_GFX_CNTL{}.meid(1).queueid(2));
  EXPECT_EQ(space.dwords.at(kGcSeg0 + 0x1fba), 9u | (5u << 8) | (1u << 28));
  // GRBM_GFX_CNTL: MEID 0xc (shift 2), QUEUEID 0x700 (shift 8), segment 1.
  EXPECT_EQ(space.dwords.at(kGcSeg1 + 0x900), (1u << 2) | (2u << 8));
  EXPECT_TRUE(gc.status().ok());
}

TEST(RegisterTest, ReadDecodesTheDeviceValue) {
  FakeSpace space;
  // MORE_FAULTS bit 0, PERMISSION_FAULTS 0xf0, CID 0x3fe00, RW bit 18, VMID 0xf00000.
  space.dwords[kMmhubSeg0 + 0x70c] = 0x1 | (0x3u << 4) | (0x15u << 9) | (1u << 18) | (0x7u << 20);
  auto mm_or = IpRegisters<Ip::kMmhub, FakeSpace>::Create(space, TestBases());
  ASSERT_TRUE(mm_or.ok()) << mm_or.status();
  auto status = mm_or->Read<mmhub::MMVM_L2_PROTECTION_FAULT_STATUS>();
  EXPECT_EQ(status.more_faults(), 1u);
  EXPECT_EQ(status.permission_faults(), 3u);
  EXPECT_EQ(status.cid(), 0x15u);
  EXPECT_EQ(status.rw(), 1u);
  EXPECT_EQ(status.vmid(), 7u);
  EXPECT_EQ(status.prt(), 0u);
}

TEST(RegisterTest, ModifyKeepsTheOtherFields) {
  FakeSpace space;
  const uint32_t before = 0xdead0000u | 0x3f;  // bits set across many fields
  space.dwords[kGcSeg0 + 0x1fba] = before;
  auto gc_or = IpRegisters<Ip::kGc, FakeSpace>::Create(space, TestBases());
  ASSERT_TRUE(gc_or.ok());
  auto written = gc_or->Modify<gc::CP_HQD_PQ_CONTROL>([](auto& r) { r.rptr_block_size(5).queue_size(2); });
  const uint32_t expected = (before & ~0x3f3fu) | (5u << 8) | 2u;
  EXPECT_EQ(space.dwords.at(kGcSeg0 + 0x1fba), expected);
  EXPECT_EQ(written.raw(), expected);
  // One read, then one write, of the same address.
  EXPECT_THAT(space.log, ElementsAre(std::pair<char, uint64_t>{'r', kGcSeg0 + 0x1fba},
                                     std::pair<char, uint64_t>{'w', kGcSeg0 + 0x1fba}));
}

TEST(RegisterTest, DecodeListsEveryFieldInHeaderOrder) {
  auto reg = gc::GRBM_GFX_CNTL::FromRaw((3u << 0) | (2u << 2) | (0xau << 4) | (7u << 8) | (5u << 11));
  EXPECT_THAT(reg.Decode(), ElementsAre(FieldValue{"PIPEID", 3}, FieldValue{"MEID", 2}, FieldValue{"VMID", 0xa},
                                        FieldValue{"QUEUEID", 7}, FieldValue{"CTXID", 5}));
}

TEST(RegisterTest, SegmentWithoutBaseReadsAllOnesAndIsReported) {
  FakeSpace space;
  IpBases bases;
  ASSERT_TRUE(bases.SetBase(Ip::kGc, 0, 0, kGcSeg0).ok());  // segment 1 missing
  auto gc_or = IpRegisters<Ip::kGc, FakeSpace>::Create(space, bases);
  ASSERT_TRUE(gc_or.ok());
  EXPECT_EQ(gc_or->Read<gc::GRBM_GFX_CNTL>().raw(), 0xffffffffu);
  gc_or->Write(gc::GRBM_GFX_CNTL{}.vmid(1));
  EXPECT_TRUE(space.log.empty());
  EXPECT_FALSE(gc_or->status().ok());
  EXPECT_THAT(std::string(gc_or->status().message()), ::testing::HasSubstr("GRBM_GFX_CNTL is in segment 1"));
}

TEST(RegisterTest, CreateFailsWithoutBasesForTheInstance) {
  FakeSpace space;
  auto gc_or = IpRegisters<Ip::kGc, FakeSpace>::Create(space, TestBases(), /*instance=*/1);
  ASSERT_FALSE(gc_or.ok());
  EXPECT_THAT(std::string(gc_or.status().message()), ::testing::HasSubstr("gc instance 1"));
}

}  // namespace
}  // namespace am::regs
