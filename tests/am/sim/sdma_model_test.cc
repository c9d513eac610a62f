// The SDMA 6.0 engines, driven as Linux's sdma_v6_0.c and tinygrad's AM driver drive them: queue registers,
// 64-bit doorbells, packets in a ring in GPU memory, rptr write-back. Everything goes through registers, doorbells
// and the fixture's memory.
#include "am/sim/sdma_model.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/psp_constants.h"
#include "am/regs/sdma_packets.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/am/sim/model_fixture.h"

namespace am::sim {
namespace {

namespace gc = regs::gc;
namespace sdma = regs::sdma;
using ::testing::HasSubstr;

// GPU addresses the tests place memory at.
constexpr uint64_t kRing[2] = {0x100000, 0x200000};
constexpr uint64_t kWriteback = 0x300000;  // rptr write-back of engine i at + 8 * i
constexpr uint64_t kFences = 0x400000;
constexpr uint64_t kSource = 0x1000000;
constexpr uint64_t kDestination = 0x4000000;
constexpr uint64_t kUnmapped = 0x7f000000;
// Doorbells as Linux assigns them: AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0 (0x100) and ENGINE1 (0x10A), each a 64-bit
// doorbell whose dword index is twice that (amdgpu_doorbell.h, sdma_v6_0_sw_init).
constexpr uint64_t kDoorbell[2] = {0x100 * 2, 0x10a * 2};
constexpr std::chrono::seconds kDeadline(10);

uint32_t Lo(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t Hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

// Packets, written with the field constants of sdma_v6_0_0_pkt_open.h (am/regs/sdma_constants.h).
std::vector<uint32_t> CopyLinear(uint64_t src, uint64_t dst, uint32_t bytes) {
  return {
      sdma::Header(sdma::SDMA_OP_COPY, sdma::SDMA_SUBOP_COPY_LINEAR), bytes - 1, 0, Lo(src), Hi(src), Lo(dst), Hi(dst)};
}
std::vector<uint32_t> Fence(uint64_t address, uint32_t value) {
  return {sdma::Header(sdma::SDMA_OP_FENCE), Lo(address), Hi(address), value};
}
std::vector<uint32_t> Trap(uint32_t context) { return {sdma::Header(sdma::SDMA_OP_TRAP), context}; }
std::vector<uint32_t> WriteLinear(uint64_t address, const std::vector<uint32_t>& data) {
  std::vector<uint32_t> packet = {sdma::Header(sdma::SDMA_OP_WRITE, sdma::SDMA_SUBOP_WRITE_LINEAR), Lo(address),
                                  Hi(address), static_cast<uint32_t>(data.size() - 1)};
  packet.insert(packet.end(), data.begin(), data.end());
  return packet;
}
std::vector<uint32_t> Poll(bool memory, uint32_t function, uint64_t address, uint32_t reference, uint32_t mask,
                           uint32_t retries, bool hdp_flush = false) {
  const uint32_t header = sdma::Header(sdma::SDMA_OP_POLL_REGMEM) |
                          (function << sdma::SDMA_PKT_POLL_REGMEM_HEADER_func_shift) |
                          (uint32_t{memory} << sdma::SDMA_PKT_POLL_REGMEM_HEADER_mem_poll_shift) |
                          (uint32_t{hdp_flush} << sdma::SDMA_PKT_POLL_REGMEM_HEADER_hdp_flush_shift);
  return {header,    Lo(address), Hi(address),
          reference, mask,        (retries << sdma::SDMA_PKT_POLL_REGMEM_DW5_retry_count_shift) | 10};
}
constexpr uint32_t kForever = 0xfff;
std::vector<uint32_t> Indirect(uint64_t base, uint32_t dwords, uint32_t vmid = 0) {
  return {sdma::Header(sdma::SDMA_OP_INDIRECT) | (vmid << sdma::SDMA_PKT_INDIRECT_HEADER_vmid_shift),
          Lo(base),
          Hi(base),
          dwords,
          0,
          0};
}
std::vector<uint32_t> Nop(uint32_t padding = 0) {
  return {sdma::Header(sdma::SDMA_OP_NOP) | (padding << sdma::SDMA_PKT_NOP_HEADER_count_shift)};
}
std::vector<uint32_t> Timestamp(uint32_t sub_op, uint64_t value_or_address) {
  return {sdma::Header(sdma::SDMA_OP_TIMESTAMP, sub_op), Lo(value_or_address), Hi(value_or_address)};
}
std::vector<uint32_t> ConstFill(uint64_t address, uint32_t data, uint32_t bytes, uint32_t fill_size) {
  return {sdma::Header(sdma::SDMA_OP_CONST_FILL) | (fill_size << sdma::SDMA_PKT_CONSTANT_FILL_HEADER_fillsize_shift),
          Lo(address), Hi(address), data, bytes - 1};
}
std::vector<uint32_t> Atomic(uint32_t operation, uint64_t address, uint64_t src, uint64_t cmp = 0, bool loop = false) {
  return {sdma::Header(sdma::SDMA_OP_ATOMIC) | (operation << sdma::SDMA_PKT_ATOMIC_HEADER_atomic_op_shift) |
              (uint32_t{loop} << sdma::SDMA_PKT_ATOMIC_HEADER_loop_shift),
          Lo(address),
          Hi(address),
          Lo(src),
          Hi(src),
          Lo(cmp),
          Hi(cmp),
          0};
}
std::vector<uint32_t> Join(std::initializer_list<std::vector<uint32_t>> packets) {
  std::vector<uint32_t> all;
  for (const auto& p : packets) all.insert(all.end(), p.begin(), p.end());
  return all;
}

template <typename Predicate>
bool Eventually(Predicate predicate, std::chrono::steady_clock::duration within = kDeadline) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

class SdmaModelTest : public ::testing::Test {
 protected:
  SdmaModelTest() {
    fixture_.firmware().Load(regs::psp::GFX_FW_TYPE_SDMA_UCODE_TH0, 1);
    fixture_.firmware().Load(regs::psp::GFX_FW_TYPE_SDMA_UCODE_TH1, 1);
    for (uint64_t ring : kRing) fixture_.memory().Place(ring, kRingBytes);
    writeback_ = fixture_.memory().Place(kWriteback, 4096);
    fences_ = fixture_.memory().Place(kFences, 4096);
  }

  // SDMAn_<suffix>, resolved by name through the register database (independent of the model's own arithmetic).
  uint64_t Reg(int instance, absl::string_view suffix) {
    auto info = regs::Lookup(absl::StrCat("SDMA", instance, "_", suffix));
    EXPECT_TRUE(info.ok()) << info.status();
    auto address = fixture_.bases().Resolve(info->ip(), 0, info->segment(), info->offset());
    EXPECT_TRUE(address.ok()) << address.status();
    return *address;
  }
  void Write(int instance, absl::string_view suffix, uint32_t value) {
    fixture_.registers().WriteDword(Reg(instance, suffix), value);
  }
  uint32_t Read(int instance, absl::string_view suffix) {
    return fixture_.registers().ReadDword(Reg(instance, suffix));
  }

  void CreateModel() { model_ = std::make_unique<SdmaModel>(fixture_.context()); }

  // sdma_v6_0_gfx_resume's order: size, pointers, write-back, base, doorbell, unhalt, RB_ENABLE, IB_ENABLE.
  void StartQueue(int instance, uint32_t ring_dwords_log2 = kRingDwordsLog2) {
    if (!model_) CreateModel();
    auto rb_cntl = gc::SDMA0_QUEUE0_RB_CNTL{}.rb_size(ring_dwords_log2).rb_priv(1);
    Write(instance, "QUEUE0_RB_CNTL", rb_cntl.raw());
    // Moving the wptr back to 0 (a restarted queue) needs MINOR_PTR_UPDATE, as sdma_v6_0_gfx_resume_instance sets it.
    Write(instance, "QUEUE0_MINOR_PTR_UPDATE", gc::SDMA0_QUEUE0_MINOR_PTR_UPDATE{}.enable(1).raw());
    for (const char* r : {"QUEUE0_RB_RPTR", "QUEUE0_RB_RPTR_HI", "QUEUE0_RB_WPTR", "QUEUE0_RB_WPTR_HI"}) {
      Write(instance, r, 0);
    }
    Write(instance, "QUEUE0_RB_RPTR_ADDR_HI", Hi(WritebackAddress(instance)));
    Write(instance, "QUEUE0_RB_RPTR_ADDR_LO", Lo(WritebackAddress(instance)));
    rb_cntl.rptr_writeback_enable(1).f32_wptr_poll_enable(1);
    Write(instance, "QUEUE0_RB_BASE", Lo(kRing[instance] >> 8));
    Write(instance, "QUEUE0_RB_BASE_HI", Lo(kRing[instance] >> 40));
    Write(instance, "QUEUE0_DOORBELL", gc::SDMA0_QUEUE0_DOORBELL{}.enable(1).raw());
    Write(instance, "QUEUE0_DOORBELL_OFFSET", gc::SDMA0_QUEUE0_DOORBELL_OFFSET{}.offset(kDoorbell[instance]).raw());
    Write(instance, "QUEUE0_MINOR_PTR_UPDATE", 0);
    SetHalt(instance, 0);
    Write(instance, "CNTL", gc::SDMA0_CNTL{}.trap_enable(1).raw());
    Write(instance, "QUEUE0_RB_CNTL", rb_cntl.rb_enable(1).raw());
    Write(instance, "QUEUE0_IB_CNTL", gc::SDMA0_QUEUE0_IB_CNTL{}.ib_enable(1).raw());
    wptr_[instance] = 0;
    ring_bytes_[instance] = uint64_t{4} << ring_dwords_log2;
  }
  // F32_CNTL read-modify-written as Linux does (TH1_ENABLE and the priorities keep their power-on values).
  void SetHalt(int instance, uint32_t halt) {
    Write(instance, "F32_CNTL", gc::SDMA0_F32_CNTL::FromRaw(Read(instance, "F32_CNTL")).halt(halt).th1_reset(0).raw());
  }
  void DisableRing(int instance) {
    Write(instance, "QUEUE0_RB_CNTL",
          gc::SDMA0_QUEUE0_RB_CNTL::FromRaw(Read(instance, "QUEUE0_RB_CNTL")).rb_enable(0).raw());
  }

  static uint64_t WritebackAddress(int instance) { return kWriteback + 8 * instance; }
  uint64_t WrittenBackRptr(int instance) {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(writeback_.data() + 8 * instance))
        .load(std::memory_order_acquire);
  }
  uint32_t FenceValue(int slot) {
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(fences_.data() + 4 * slot))
        .load(std::memory_order_acquire);
  }
  static uint64_t FenceAddress(int slot) { return kFences + 4 * slot; }

  // Copies the packets into the ring at the wptr (wrapping at its end) and advances the wptr; rings the 64-bit
  // doorbell unless told otherwise (tinygrad's AMDCopyQueue._submit, sdma_v6_0_ring_set_wptr).
  void Append(int instance, const std::vector<uint32_t>& dwords) {
    auto ring = fixture_.memory().Map({}, kRing[instance], ring_bytes_[instance], Access::kWrite);
    ASSERT_TRUE(ring.ok());
    for (uint32_t dword : dwords) {
      std::memcpy(ring->data() + (wptr_[instance] % ring_bytes_[instance]), &dword, 4);
      wptr_[instance] += 4;
    }
  }
  void RingDoorbell(int instance) {
    fixture_.doorbells().Write(kDoorbell[instance], Lo(wptr_[instance]));
    fixture_.doorbells().Write(kDoorbell[instance] + 1, Hi(wptr_[instance]));
  }
  void Submit(int instance, const std::vector<uint32_t>& dwords) {
    Append(instance, dwords);
    RingDoorbell(instance);
  }
  // Waits until the engine has consumed everything submitted (the rptr write-back reaches the wptr).
  bool Drained(int instance) {
    return Eventually([&] { return WrittenBackRptr(instance) == wptr_[instance]; });
  }

  bool HasError(absl::string_view model, absl::string_view text) {
    for (const DeviceError& e : fixture_.errors().errors()) {
      if (e.model == model && absl::StrContains(e.message, text)) return true;
    }
    return false;
  }
  std::vector<InterruptEntry> Interrupts() { return fixture_.interrupts().entries(); }

  static constexpr uint32_t kRingDwordsLog2 = 10;  // 4 KiB rings
  static constexpr uint64_t kRingBytes = 4096;

  testing::ModelFixture fixture_;
  std::span<uint8_t> writeback_;
  std::span<uint8_t> fences_;
  std::unique_ptr<SdmaModel> model_;
  uint64_t wptr_[2] = {};
  uint64_t ring_bytes_[2] = {kRingBytes, kRingBytes};
};

TEST_F(SdmaModelTest, CopyLinearMovesTheBytesThenTheFenceAndRptrFollow) {
  constexpr uint32_t kBytes = (1 << 20) + 3;  // odd size: the copy is byte-exact
  auto src = fixture_.memory().Place(kSource, kBytes);
  auto dst = fixture_.memory().Place(kDestination, kBytes + 1);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
  StartQueue(0);
  Submit(0, Join({CopyLinear(kSource, kDestination, kBytes), Fence(FenceAddress(0), 0x1234)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 0x1234; }));
  EXPECT_EQ(std::memcmp(src.data(), dst.data(), kBytes), 0);
  EXPECT_EQ(dst[kBytes], 0);  // not one byte more
  ASSERT_TRUE(Drained(0));
  EXPECT_EQ(WrittenBackRptr(0), (7 + 4) * 4u);
  EXPECT_EQ(Read(0, "QUEUE0_RB_RPTR"), (7 + 4) * 4u);
  EXPECT_EQ(Read(0, "QUEUE0_RB_WPTR"), (7 + 4) * 4u);  // the register follows the doorbell
  EXPECT_TRUE(fixture_.errors().errors().empty());
}

TEST_F(SdmaModelTest, WriteLinearStoresItsInlineData) {
  auto dst = fixture_.memory().Place(kDestination, 4096);
  std::vector<uint32_t> data(300);
  for (size_t i = 0; i < data.size(); ++i) data[i] = 0xa0000000u + static_cast<uint32_t>(i);
  StartQueue(0);
  Submit(0, Join({WriteLinear(kDestination + 8, data), Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_EQ(std::memcmp(dst.data() + 8, data.data(), data.size() * 4), 0);
  EXPECT_EQ(dst[7], 0);
  EXPECT_EQ(dst[8 + data.size() * 4], 0);
}

// SRBM_WRITE (sdma_v6_0_ring_emit_wreg, which Linux's SDMA VM flush uses) writes a register from the ring; the
// model refused it as "not modelled" before issue 16.
TEST_F(SdmaModelTest, SrbmWriteWritesTheRegister) {
  const uint64_t scratch = RegisterAddress<regs::gc::SCRATCH_REG0>(fixture_.bases());
  StartQueue(0);
  const auto write = sdma::EncodeSrbmWrite(static_cast<uint32_t>(scratch), 0x5eed1234);
  Submit(0, Join({{write.begin(), write.end()}, Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_EQ(fixture_.registers().Peek(scratch), 0x5eed1234u);
  // Only the enabled bytes: byte 1 alone.
  std::array<uint32_t, 3> low_byte = write;
  low_byte[0] = sdma::Header(sdma::SDMA_OP_SRBM_WRITE) | (0x2u << sdma::SDMA_PKT_SRBM_WRITE_HEADER_byte_en_shift);
  low_byte[2] = 0xffffffff;
  Submit(0, Join({{low_byte.begin(), low_byte.end()}, Fence(FenceAddress(0), 2)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 2; }));
  EXPECT_EQ(fixture_.registers().Peek(scratch), 0x5eedff34u);
  EXPECT_TRUE(fixture_.errors().errors().empty());
}

// COND_EXE (sdma_v6_0_ring_init_cond_exec, around every IB Linux schedules): the guarded dwords run while the
// condition word equals the reference and are skipped whole otherwise. Before issue 16 the model refused it.
TEST_F(SdmaModelTest, CondExeRunsOrSkipsTheGuardedDwords) {
  auto condition = fixture_.memory().Place(kDestination, 4096);
  StartQueue(0);
  const std::vector<uint32_t> guarded = Fence(FenceAddress(1), 7);
  const auto cond = sdma::EncodeCondExe(kDestination, 1, static_cast<uint32_t>(guarded.size()));
  condition[0] = 1;
  Submit(0, Join({{cond.begin(), cond.end()}, guarded, Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_EQ(FenceValue(1), 7u);
  condition[0] = 0;
  const std::vector<uint32_t> skipped = Fence(FenceAddress(1), 8);
  Submit(0, Join({{cond.begin(), cond.end()}, skipped, Fence(FenceAddress(0), 2)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 2; }));
  EXPECT_EQ(FenceValue(1), 7u);  // the guarded fence did not run
  ASSERT_TRUE(Drained(0));
  EXPECT_TRUE(fixture_.errors().errors().empty());
}

// PTEPDE_GEN (sdma_v6_0_vm_set_pte_pde, Linux's page-table updates for contiguous VRAM): count entries of
// (address + i * step) | flags. Before issue 16 the model refused it.
TEST_F(SdmaModelTest, GenPtePdeWritesPageTableEntries) {
  auto table = fixture_.memory().Place(kDestination, 4096);
  StartQueue(0);
  constexpr uint64_t kFlags = 0x71, kFirst = 0x12340000, kStep = 0x1000;
  constexpr uint32_t kCount = 300;  // more than the model writes in one piece
  const auto gen = sdma::EncodeGenPtePde(kDestination + 8, kFirst, kCount, kStep, kFlags);
  Submit(0, Join({{gen.begin(), gen.end()}, Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  std::vector<uint64_t> entries(kCount + 2);
  std::memcpy(entries.data(), table.data(), entries.size() * 8);
  EXPECT_EQ(entries[0], 0u);
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(entries[i + 1], (kFirst + i * kStep) | kFlags) << i;
  EXPECT_EQ(entries[kCount + 1], 0u);
  // COPY_BACKWARDS is decoded but not run: the queue stops, naming its fields.
  Submit(0, Join({{sdma::Header(sdma::SDMA_OP_PTEPDE, sdma::SDMA_SUBOP_PTEPDE_COPY_BACKWARDS) |
                       (1u << sdma::SDMA_PKT_PTEPDE_COPY_BACKWARDS_HEADER_direction_shift),
                   Lo(kSource), Hi(kSource), Lo(kDestination), Hi(kDestination), 0x0f01, 3},
                  Fence(FenceAddress(0), 2)}));
  ASSERT_TRUE(Eventually([&] {
    return HasError("sdma0",
                    "PTEPDE_COPY_BACKWARDS is not modelled: src 0x1000000, dst 0x4000000, PTE_SIZE 0, "
                    "DIRECTION 1");
  }));
  EXPECT_TRUE(Interrupts().empty());
  EXPECT_EQ(FenceValue(0), 1u);
}

std::vector<uint32_t> PtepdeCopy(uint64_t src, uint64_t dst, uint32_t entries, uint64_t flags, uint32_t header = 0) {
  return {sdma::Header(sdma::SDMA_OP_PTEPDE, sdma::SDMA_SUBOP_PTEPDE_COPY) | header,
          Lo(src),
          Hi(src),
          Lo(dst),
          Hi(dst),
          Lo(flags),
          Hi(flags),
          (entries - 1) & sdma::SDMA_PKT_PTEPDE_COPY_COUNT_count_mask};
}
std::vector<uint32_t> PtepdeRmw(uint64_t address, uint64_t mask, uint64_t value, uint32_t entries,
                                uint32_t header = 0) {
  return {sdma::Header(sdma::SDMA_OP_PTEPDE, sdma::SDMA_SUBOP_PTEPDE_RMW) | header,
          Lo(address),
          Hi(address),
          Lo(mask),
          Hi(mask),
          Lo(value),
          Hi(value),
          entries - 1};
}

// PTEPDE_COPY: count + 1 entries from the source table, each with the MASK dwords ORed in (as PTEPDE_GEN's flags).
// Before: refused as "only PTEPDE_GEN is modelled".
TEST_F(SdmaModelTest, PtepdeCopyCopiesEntriesWithTheMaskOredIn) {
  auto src = fixture_.memory().Place(kSource, 4096);
  auto dst = fixture_.memory().Place(kDestination, 4096);
  constexpr uint32_t kCount = 300;  // more than the model copies in one piece
  constexpr uint64_t kFlags = uint64_t{1} << 54 | 0x1;
  std::vector<uint64_t> entries(kCount);
  for (uint32_t i = 0; i < kCount; ++i) entries[i] = 0x80000000ull + i * 0x1000ull;
  std::memcpy(src.data(), entries.data(), kCount * 8);
  StartQueue(0);
  Submit(0, Join({PtepdeCopy(kSource, kDestination + 8, kCount, kFlags), Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  std::vector<uint64_t> copied(kCount + 2);
  std::memcpy(copied.data(), dst.data(), copied.size() * 8);
  EXPECT_EQ(copied[0], 0u);
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(copied[i + 1], entries[i] | kFlags) << i;
  EXPECT_EQ(copied[kCount + 1], 0u);
  EXPECT_TRUE(fixture_.errors().errors().empty());
}

TEST_F(SdmaModelTest, PtepdeCopyRefusesMisalignedTablesAndUndefinedModes) {
  fixture_.memory().Place(kSource, 4096);
  fixture_.memory().Place(kDestination, 4096);
  StartQueue(0);
  Submit(0, Join({PtepdeCopy(kSource + 4, kDestination, 1, 0), Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  EXPECT_EQ(Interrupts()[0].source_id, regs::ih::GFX_11_0_0__SRCID__SDMA_QUEUE_HANG);
  EXPECT_TRUE(HasError("sdma0", "PTEPDE_COPY source 0x1000004 or destination 0x4000000 is not 8-byte aligned"));
  EXPECT_EQ(FenceValue(0), 0u);
  StartQueue(1);
  Submit(1, Join({PtepdeCopy(kSource, kDestination, 1, 0, 1u << sdma::SDMA_PKT_PTEPDE_COPY_HEADER_ptepde_op_shift),
                  Fence(FenceAddress(1), 1)}));
  ASSERT_TRUE(Eventually([&] { return HasError("sdma1", "PTEPDE_COPY with PTEPDE_OP or TMZ"); }));
  EXPECT_EQ(FenceValue(1), 0u);
}

// PTEPDE_RMW: each entry keeps its bits outside MASK and takes VALUE's inside it. Before: refused.
TEST_F(SdmaModelTest, PtepdeRmwReplacesTheMaskedBitsOfEachEntry) {
  auto table = fixture_.memory().Place(kDestination, 4096);
  constexpr uint32_t kCount = 5;
  for (uint32_t i = 0; i < kCount + 1; ++i) {
    const uint64_t entry = 0xffff'0000'0000'0071ull + i * 0x1000;
    std::memcpy(table.data() + i * 8, &entry, 8);
  }
  StartQueue(0);
  // Clear the valid bit (0) and set MTYPE (bits 50:48) to 3 in the first five entries.
  constexpr uint64_t kMask = uint64_t{7} << 48 | 1, kValue = uint64_t{3} << 48;
  Submit(0, Join({PtepdeRmw(kDestination, kMask, kValue, kCount), Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  for (uint32_t i = 0; i < kCount + 1; ++i) {
    uint64_t entry = 0;
    std::memcpy(&entry, table.data() + i * 8, 8);
    const uint64_t before = 0xffff'0000'0000'0071ull + i * 0x1000;
    ASSERT_EQ(entry, i < kCount ? (before & ~kMask) | kValue : before) << i;
  }
  // A misaligned entry is malformed; GPA (a guest physical address) is not modelled.
  Submit(0, PtepdeRmw(kDestination + 4, kMask, kValue, 1));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  EXPECT_TRUE(HasError("sdma0", "PTEPDE_RMW address 0x4000004 is not 8-byte aligned"));
  StartQueue(1);
  Submit(1, PtepdeRmw(kDestination, kMask, kValue, 1, 1u << sdma::SDMA_PKT_PTEPDE_RMW_HEADER_gpa_shift));
  ASSERT_TRUE(Eventually([&] { return HasError("sdma1", "PTEPDE_RMW with GPA"); }));
}

// DUMMY_TRAP: TRAP's interrupt with its INT_CONTEXT, gated by TRAP_ENABLE. Before: refused as not modelled.
TEST_F(SdmaModelTest, DummyTrapRaisesTheTrapInterrupt) {
  StartQueue(1);
  Submit(1, Join({{sdma::Header(sdma::SDMA_OP_DUMMY_TRAP), 0x0123456}, Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  const InterruptEntry entry = Interrupts()[0];
  EXPECT_EQ(entry.source_id, regs::ih::GFX_11_0_0__SRCID__SDMA_TRAP);
  EXPECT_EQ((entry.ring_id & 0xf0) >> 4, 1u);
  EXPECT_EQ(entry.src_data[0], 0x0123456u);
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  Write(1, "CNTL", gc::SDMA0_CNTL{}.trap_enable(0).raw());
  Submit(1, Join({{sdma::Header(sdma::SDMA_OP_DUMMY_TRAP), 1}, Fence(FenceAddress(0), 2)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 2; }));
  EXPECT_EQ(Interrupts().size(), 1u);
  EXPECT_TRUE(fixture_.errors().errors().empty());
}

// SEM, PRE_EXE and GPUVM_INV are decoded but not run (their meaning is not public, docs/fidelity.md): the queue
// stops with a device error naming the fields, without an interrupt, and the packets after them do not run.
TEST_F(SdmaModelTest, SemPreExeAndGpuvmInvStopTheQueueNamingTheirFields) {
  struct Case {
    std::vector<uint32_t> packet;
    const char* error;
  };
  const Case cases[] = {
      {{sdma::Header(sdma::SDMA_OP_SEM) | (1u << sdma::SDMA_PKT_SEMAPHORE_HEADER_signal_shift), Lo(kFences),
        Hi(kFences)},
       "SEM is not modelled: signal on the semaphore at 0x400000 (WRITE_ONE 0, MAILBOX 0)"},
      {{sdma::Header(sdma::SDMA_OP_SEM), Lo(kFences), Hi(kFences)}, "SEM is not modelled: wait on the semaphore"},
      {{sdma::Header(sdma::SDMA_OP_PRE_EXE) | (2u << sdma::SDMA_PKT_PRE_EXE_HEADER_dev_sel_shift), 4},
       "PRE_EXE is not modelled: DEV_SEL 0x2 guarding 4 dwords"},
      {{sdma::Header(sdma::SDMA_OP_GPUVM_INV), 0x1, 0x2, 0}, "GPUVM_INV is not modelled: PER_VMID_INV_REQ 0x0001"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    fixture_.errors().Clear();
    DisableRing(0);
    StartQueue(0);
    Submit(0, Join({c.packet, Fence(FenceAddress(0), 1)}));
    ASSERT_TRUE(Eventually([&] { return HasError("sdma0", c.error); }));
    EXPECT_TRUE(Interrupts().empty());
    EXPECT_EQ(FenceValue(0), 0u);
  }
}

// POLL_REGMEM's VM_INVALIDATION sub-op (amdgpu's single-packet SDMA VM flush): INVALIDATEREQ goes to the named GC
// hub engine's REQ register and the engine waits for INVALIDATEACK in its ACK. Before: "not modelled".
TEST_F(SdmaModelTest, VmInvalidationRequestsThroughTheEngineAndWaitsForItsAck) {
  auto reg = [&](const char* name) { return *regs::ResolveAddress(fixture_.bases(), name, regs::Ip::kGc); };
  const uint64_t req = reg("GCVM_INVALIDATE_ENG5_REQ"), ack = reg("GCVM_INVALIDATE_ENG5_ACK");
  std::atomic<uint32_t> requested{0};
  fixture_.registers().OnWrite(req, "test", [&](uint32_t value) { requested.store(value); });
  constexpr uint32_t kVmid = 3;
  // Every engine's REQ has the same fields; the register database types engine 17 (the one GmcModel uses).
  const uint32_t request = gc::GCVM_INVALIDATE_ENG17_REQ{}.per_vmid_invalidate_req(1u << kVmid).raw();
  const std::vector<uint32_t> invalidation = {
      sdma::Header(sdma::SDMA_OP_POLL_REGMEM, sdma::SDMA_SUBOP_VM_INVALIDATION) |
          (5u << sdma::SDMA_PKT_VM_INVALIDATION_HEADER_gfx_eng_id_shift) |
          (0x1fu << sdma::SDMA_PKT_VM_INVALIDATION_HEADER_mm_eng_id_shift),
      request, 0xffffffff,
      ((1u << kVmid) << sdma::SDMA_PKT_VM_INVALIDATION_ADDRESSRANGEHI_invalidateack_shift) |
          (0x1fu << sdma::SDMA_PKT_VM_INVALIDATION_ADDRESSRANGEHI_addressrangehi_shift)};
  StartQueue(0);
  Submit(0, Join({invalidation, Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return requested.load() == request; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(FenceValue(0), 0u);  // waiting for the ack
  fixture_.registers().Poke(ack, 1u << kVmid);
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_TRUE(fixture_.errors().errors().empty());

  // An engine past the hub's 18 is malformed.
  std::vector<uint32_t> bad = invalidation;
  bad[0] = sdma::Header(sdma::SDMA_OP_POLL_REGMEM, sdma::SDMA_SUBOP_VM_INVALIDATION) |
           (18u << sdma::SDMA_PKT_VM_INVALIDATION_HEADER_gfx_eng_id_shift) |
           (0x1fu << sdma::SDMA_PKT_VM_INVALIDATION_HEADER_mm_eng_id_shift);
  Submit(0, bad);
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  EXPECT_TRUE(HasError("sdma0", "VM_INVALIDATION GCVM engine 18: the hub has engines 0-17"));
}

TEST_F(SdmaModelTest, TrapPostsTheInterruptLinuxDecodes) {
  StartQueue(1);
  Submit(1, Trap(0x0abcdef));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  const InterruptEntry entry = Interrupts()[0];
  EXPECT_EQ(entry.client_id, regs::ih::SOC21_IH_CLIENTID_GFX);
  EXPECT_EQ(entry.source_id, regs::ih::GFX_11_0_0__SRCID__SDMA_TRAP);
  EXPECT_EQ((entry.ring_id & 0xf0) >> 4, 1u);  // instance, as sdma_v6_0_process_trap_irq reads it
  EXPECT_EQ(entry.ring_id & 0xf, 0u);          // queue
  EXPECT_EQ(entry.src_data[0], 0x0abcdefu);
}

TEST_F(SdmaModelTest, TrapIsSilentWithoutTrapEnable) {
  StartQueue(0);
  Write(0, "CNTL", gc::SDMA0_CNTL{}.trap_enable(0).raw());
  Submit(0, Join({Trap(1), Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_TRUE(Interrupts().empty());
}

TEST_F(SdmaModelTest, PollRegmemComparesWithEveryFunction) {
  struct Case {
    uint32_t function;
    uint32_t value;
    bool passes;  // against reference 5 under mask 0xff
  };
  const Case cases[] = {
      {0, 9, true}, {1, 4, true},  {1, 5, false}, {2, 5, true},  {2, 6, false}, {3, 5, true},  {3, 4, false},
      {4, 4, true}, {4, 5, false}, {5, 5, true},  {5, 4, false}, {6, 6, true},  {6, 5, false},
  };
  StartQueue(0);
  uint32_t* location = reinterpret_cast<uint32_t*>(fences_.data() + 512);
  int slot = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrFormat("function %d, value %d", c.function, c.value));
    // The mask drops the high byte before the compare.
    std::atomic_ref<uint32_t>(*location).store(0xab00 | c.value, std::memory_order_release);
    const size_t interrupts = Interrupts().size();
    // One check, no retries: a failed compare times out at once and the queue moves on.
    Submit(0, Join({Poll(true, c.function, kFences + 512, 5, 0xff, 0), Fence(FenceAddress(slot), 1)}));
    ASSERT_TRUE(Eventually([&] { return FenceValue(slot) == 1; }));
    const auto entries = Interrupts();
    if (c.passes) {
      EXPECT_EQ(entries.size(), interrupts);
    } else {
      ASSERT_EQ(entries.size(), interrupts + 1);
      EXPECT_EQ(entries.back().source_id, regs::ih::GFX_11_0_0__SRCID__SDMA_POLL_TIMEOUT);
    }
    ++slot;
  }
  EXPECT_TRUE(HasError("sdma0", "timed out"));
}

TEST_F(SdmaModelTest, PollRegmemWaitsForMemoryWithoutGivingUp) {
  StartQueue(0);
  uint32_t* location = reinterpret_cast<uint32_t*>(fences_.data() + 512);
  const auto before = Join({Fence(FenceAddress(0), 1)});
  Submit(0, Join({before, Poll(true, 3, kFences + 512, 7, 0xffffffff, kForever), Fence(FenceAddress(1), 2)}));
  ASSERT_TRUE(Eventually([&] { return WrittenBackRptr(0) == before.size() * 4; }));
  EXPECT_EQ(FenceValue(1), 0u);  // held at the poll
  std::atomic_ref<uint32_t>(*location).store(7, std::memory_order_release);
  ASSERT_TRUE(Eventually([&] { return FenceValue(1) == 2; }));
  EXPECT_TRUE(Drained(0));
  EXPECT_TRUE(Interrupts().empty());
}

TEST_F(SdmaModelTest, PollRegmemReadsRegistersAndTheHdpFlushWritesTheRequest) {
  StartQueue(0);
  // A plain GC register as the polled one (SDMA0_QUEUE0_DUMMY_REG has no behaviour in the model).
  const uint64_t reg = Reg(0, "QUEUE0_DUMMY_REG");
  fixture_.registers().WriteDword(reg, 0x10);
  Submit(0, Join({Poll(false, 5, reg * 4, 0x10, 0xffffffff, 0), Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_TRUE(Interrupts().empty());

  // HDP flush form: the reference goes to the request register (ADDR_HI), then the done register (ADDR_LO) is
  // polled. With both on one plain register the write itself satisfies the poll.
  Submit(0, Join({Poll(false, 3, (uint64_t{reg * 4} << 32) | (reg * 4), 0x4, 0x4, 0, /*hdp_flush=*/true),
                  Fence(FenceAddress(1), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(1) == 1; }));
  EXPECT_EQ(fixture_.registers().Peek(reg), 0x4u);
  EXPECT_TRUE(Interrupts().empty());
}

TEST_F(SdmaModelTest, TimestampsComeFromTheGpuClock) {
  StartQueue(0);
  const uint64_t start = fixture_.context().clock.Now();
  Submit(0, Join({Timestamp(sdma::SDMA_SUBOP_TIMESTAMP_GET_GLOBAL, kFences + 64),
                  Timestamp(sdma::SDMA_SUBOP_TIMESTAMP_SET, uint64_t{1} << 50),
                  Timestamp(sdma::SDMA_SUBOP_TIMESTAMP_GET, kFences + 72), Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  const uint64_t end = fixture_.context().clock.Now();
  const uint64_t global = *reinterpret_cast<uint64_t*>(fences_.data() + 64);
  const uint64_t local = *reinterpret_cast<uint64_t*>(fences_.data() + 72);
  EXPECT_GE(global, start);
  EXPECT_LE(global, end);
  EXPECT_GE(local, uint64_t{1} << 50);  // counts on from the value TIMESTAMP_SET gave it
  EXPECT_LE(local, (uint64_t{1} << 50) + (end - start));
}

TEST_F(SdmaModelTest, IndirectBufferRunsItsPacketsUnderItsVmid) {
  constexpr uint64_t kIb = 0x500000;
  auto ib = fixture_.memory().Place(kIb, 4096);
  auto dst = fixture_.memory().Place(kDestination, 64);
  const auto ib_packets = Join({WriteLinear(kDestination, {0x11, 0x22}), Fence(FenceAddress(0), 5)});
  std::memcpy(ib.data(), ib_packets.data(), ib_packets.size() * 4);
  StartQueue(0);
  Submit(0, Join({Indirect(kIb, static_cast<uint32_t>(ib_packets.size())), Fence(FenceAddress(1), 6)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(1) == 6; }));
  EXPECT_EQ(FenceValue(0), 5u);
  EXPECT_EQ(reinterpret_cast<uint32_t*>(dst.data())[1], 0x22u);
  EXPECT_TRUE(fixture_.errors().errors().empty());
}

TEST_F(SdmaModelTest, IndirectBufferIsSizeChecked) {
  constexpr uint64_t kIb = 0x500000;
  auto ib = fixture_.memory().Place(kIb, 4096);
  const auto fence = Fence(FenceAddress(0), 5);  // 4 dwords, but the IB claims 3
  std::memcpy(ib.data(), fence.data(), fence.size() * 4);
  StartQueue(0);
  Submit(0, Join({Indirect(kIb, 3), Fence(FenceAddress(1), 6)}));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  EXPECT_EQ(Interrupts()[0].source_id, regs::ih::GFX_11_0_0__SRCID__SDMA_QUEUE_HANG);
  EXPECT_TRUE(HasError("sdma0", "past the IB's end"));
  EXPECT_EQ(FenceValue(0), 0u);
  EXPECT_EQ(FenceValue(1), 0u);
  EXPECT_EQ(Read(0, "QUEUE0_RB_RPTR"), 0u);  // stopped at the INDIRECT
}

TEST_F(SdmaModelTest, IndirectIsRefusedInsideAnIbMisalignedOrWithoutIbEnable) {
  constexpr uint64_t kIb = 0x500000;
  auto ib = fixture_.memory().Place(kIb, 4096);
  const auto nested = Indirect(kIb, 6);
  std::memcpy(ib.data(), nested.data(), nested.size() * 4);
  StartQueue(0);
  Submit(0, Indirect(kIb, 6));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  EXPECT_TRUE(HasError("sdma0", "INDIRECT inside an IB"));

  StartQueue(1);
  Submit(1, Indirect(kIb + 4, 6));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(2));
  EXPECT_TRUE(HasError("sdma1", "not 32-byte aligned"));

  DisableRing(1);
  StartQueue(1);
  Write(1, "QUEUE0_IB_CNTL", 0);
  Submit(1, Indirect(kIb, 6));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(3));
  EXPECT_TRUE(HasError("sdma1", "IB_ENABLE is 0"));
}

TEST_F(SdmaModelTest, ConstantFillRepeatsTheDataAtItsFillSize) {
  auto dst = fixture_.memory().Place(kDestination, 256);
  StartQueue(0);
  Submit(0, Join({ConstFill(kDestination, 0x11223344, 10, 2), ConstFill(kDestination + 64, 0xaabbccdd, 5, 0),
                  ConstFill(kDestination + 128, 0x99887766, 6, 1), Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  const uint8_t dword[] = {0x44, 0x33, 0x22, 0x11, 0x44, 0x33, 0x22, 0x11, 0x44, 0x33, 0x00};
  EXPECT_EQ(std::memcmp(dst.data(), dword, sizeof(dword)), 0);
  const uint8_t byte[] = {0xdd, 0xdd, 0xdd, 0xdd, 0xdd, 0x00};
  EXPECT_EQ(std::memcmp(dst.data() + 64, byte, sizeof(byte)), 0);
  const uint8_t word[] = {0x66, 0x77, 0x66, 0x77, 0x66, 0x77, 0x00};
  EXPECT_EQ(std::memcmp(dst.data() + 128, word, sizeof(word)), 0);
}

TEST_F(SdmaModelTest, AtomicsFollowTheTcOpEncoding) {
  auto dst = fixture_.memory().Place(kDestination, 64);
  auto* q = reinterpret_cast<uint64_t*>(dst.data());
  auto* d = reinterpret_cast<uint32_t*>(dst.data());
  q[0] = 40;                         // ADD_RTN_64 (0x2f)
  d[2] = 7;                          // CMPSWAP_RTN_32 (0x08), compare matches
  d[3] = 7;                          // CMPSWAP_32 (0x48), compare fails
  d[4] = 3;                          // INC_32 (0x58) wraps at the source value
  q[3] = 0xffffffff00000000;         // UMAX_64 (0x74)
  d[8] = static_cast<uint32_t>(-5);  // SMIN_RTN_32 (0x11)
  StartQueue(0);
  Submit(0, Join({Atomic(0x2f, kDestination, 2), Atomic(0x08, kDestination + 8, 99, 7),
                  Atomic(0x48, kDestination + 12, 99, 8), Atomic(0x58, kDestination + 16, 3),
                  Atomic(0x74, kDestination + 24, 0xffffffff00000001), Atomic(0x11, kDestination + 32, 1),
                  Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_EQ(q[0], 42u);
  EXPECT_EQ(d[2], 99u);
  EXPECT_EQ(d[3], 7u);
  EXPECT_EQ(d[4], 0u);
  EXPECT_EQ(q[3], 0xffffffff00000001u);
  EXPECT_EQ(d[8], static_cast<uint32_t>(-5));
}

TEST_F(SdmaModelTest, LoopingCmpSwapWaitsForItsCompareValue) {
  auto dst = fixture_.memory().Place(kDestination, 64);
  auto* d = reinterpret_cast<uint32_t*>(dst.data());
  StartQueue(0);
  const auto before = Fence(FenceAddress(0), 1);
  Submit(0, Join({before, Atomic(0x48, kDestination, 2, 1, /*loop=*/true), Fence(FenceAddress(1), 1)}));
  ASSERT_TRUE(Eventually([&] { return WrittenBackRptr(0) == before.size() * 4; }));
  EXPECT_EQ(FenceValue(1), 0u);
  std::atomic_ref<uint32_t>(d[0]).store(1, std::memory_order_release);
  ASSERT_TRUE(Eventually([&] { return FenceValue(1) == 1; }));
  EXPECT_EQ(std::atomic_ref<uint32_t>(d[0]).load(), 2u);
}

// An engine polls for more work (EngineWakeup) only once it has run packets: a freshly started one, which a boot
// starts well before its first packet, sleeps at once instead of keeping a core busy for kSpinBeforeSleep.
TEST_F(SdmaModelTest, AnEngineSleepsAtOnceUntilItHasRunPackets) {
  StartQueue(0);
  ASSERT_TRUE(Eventually([&] { return model_->EngineWaits(0).slept >= 1; }));
  EXPECT_EQ(model_->EngineWaits(0).polled, 0u);

  // After work it polls before it sleeps again, so that a driver submitting in a loop finds it awake.
  Submit(0, Fence(FenceAddress(0), 1));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  ASSERT_TRUE(Eventually([&] { return model_->EngineWaits(0).slept >= 2; }));
  EXPECT_GE(model_->EngineWaits(0).polled, 1u);
}

TEST_F(SdmaModelTest, NopPaddingIsSkipped) {
  StartQueue(0);
  // Two padding dwords that would be an unknown opcode if decoded.
  Submit(0, Join({Nop(2), {0xff, 0xff}, Nop(), Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_TRUE(fixture_.errors().errors().empty());
}

TEST_F(SdmaModelTest, PacketsWrapAroundTheRingAndPointersKeepGrowing) {
  constexpr uint32_t kLog2 = 6;  // 64-dword ring
  StartQueue(0, kLog2);
  auto dst = fixture_.memory().Place(kDestination, 4096);
  uint32_t expected = 0;
  // 7-dword WRITEs and 4-dword FENCEs land across the ring's end several times.
  for (uint32_t round = 1; round <= 20; ++round) {
    Submit(0, Join({WriteLinear(kDestination + 4 * round, {round * 3, round * 5, round * 7}),
                    Fence(FenceAddress(0), round)}));
    ASSERT_TRUE(Eventually([&] { return FenceValue(0) == round; })) << "round " << round;
    expected = round * 3;
    EXPECT_EQ(reinterpret_cast<uint32_t*>(dst.data())[round], expected);
  }
  ASSERT_TRUE(Drained(0));
  EXPECT_EQ(WrittenBackRptr(0), 20u * 11 * 4);  // past the 256-byte ring many times over
  EXPECT_GT(WrittenBackRptr(0), 256u);
}

TEST_F(SdmaModelTest, AnUnknownOpcodeStopsTheQueueUntilTheRingIsReset) {
  StartQueue(0);
  Submit(0, Join({Fence(FenceAddress(0), 1), {0x0000003f}, Fence(FenceAddress(1), 1)}));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  const InterruptEntry entry = Interrupts()[0];
  EXPECT_EQ(entry.client_id, regs::ih::SOC21_IH_CLIENTID_GFX);
  EXPECT_EQ(entry.source_id, regs::ih::GFX_11_0_0__SRCID__SDMA_QUEUE_HANG);
  EXPECT_TRUE(HasError("sdma0", "unknown SDMA opcode 0x3f"));
  EXPECT_EQ(FenceValue(0), 1u);
  EXPECT_EQ(FenceValue(1), 0u);
  EXPECT_EQ(WrittenBackRptr(0), 16u);  // stopped at the bad packet

  // More work does not run on a stopped queue.
  Submit(0, Fence(FenceAddress(2), 1));
  Write(0, "QUEUE0_RB_WPTR", Lo(wptr_[0]));

  // The driver's recovery: disable, reset the pointers, enable again.
  DisableRing(0);
  StartQueue(0);
  Submit(0, Fence(FenceAddress(3), 1));
  ASSERT_TRUE(Eventually([&] { return FenceValue(3) == 1; }));
  EXPECT_EQ(FenceValue(2), 0u);
}

TEST_F(SdmaModelTest, AMemoryFaultStopsTheQueueWithAPageFaultInterrupt) {
  StartQueue(0);
  Submit(0, Join({CopyLinear(kUnmapped, kFences, 64), Fence(FenceAddress(1), 1)}));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  EXPECT_EQ(Interrupts()[0].source_id, regs::ih::GFX_11_0_0__SRCID__SDMA_PAGE_FAULT);
  EXPECT_TRUE(HasError("sdma0", "memory fault"));
  EXPECT_GE(fixture_.memory().faults(), 1);
  EXPECT_EQ(FenceValue(1), 0u);
}

TEST_F(SdmaModelTest, MalformedSizesAndAddressesAreRefused) {
  StartQueue(0, 4);  // 16-dword ring
  // A WRITE of 4 + 13 dwords can never be all in a 16-dword ring: refused as soon as its count is readable.
  auto write = WriteLinear(kDestination, std::vector<uint32_t>(13, 0));
  write.resize(4);
  Submit(0, write);
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  EXPECT_TRUE(HasError("sdma0", "larger than the 16-dword ring"));

  StartQueue(1);
  Submit(1, Fence(kFences + 2, 1));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(2));
  EXPECT_TRUE(HasError("sdma1", "FENCE address 0x400002 is not dword-aligned"));
}

TEST_F(SdmaModelTest, APacketTheModelDoesNotImplementStopsTheQueueWithoutAnInterrupt) {
  StartQueue(0);
  Submit(0, Join({{sdma::Header(sdma::SDMA_OP_COPY, sdma::SDMA_SUBOP_COPY_TILED), 0, 0, 0, 0, 0, 0},
                  Fence(FenceAddress(0), 1)}));
  ASSERT_TRUE(Eventually([&] { return HasError("sdma0", "not modelled"); }));
  EXPECT_TRUE(Interrupts().empty());
  EXPECT_EQ(FenceValue(0), 0u);
}

TEST_F(SdmaModelTest, AWptrBeyondTheRingIsRefused) {
  StartQueue(0);
  Append(0, Fence(FenceAddress(0), 1));
  Write(0, "QUEUE0_RB_WPTR", static_cast<uint32_t>(kRingBytes + 16));
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  EXPECT_TRUE(HasError("sdma0", "more than the 0x1000-byte ring holds"));
  EXPECT_EQ(FenceValue(0), 0u);
}

TEST_F(SdmaModelTest, AHungEngineConsumesNothingUntilReleased) {
  StartQueue(0);
  StartQueue(1);
  model_->InjectHang(0, true);
  Submit(0, Fence(FenceAddress(0), 1));
  Submit(1, Fence(FenceAddress(1), 1));
  ASSERT_TRUE(Eventually([&] { return FenceValue(1) == 1; }));  // the other engine runs on
  EXPECT_EQ(FenceValue(0), 0u);
  EXPECT_EQ(WrittenBackRptr(0), 0u);
  model_->InjectHang(0, false);
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_TRUE(Drained(0));
}

TEST_F(SdmaModelTest, ADroppedDoorbellLeavesTheWorkUntilTheNextDoorbell) {
  StartQueue(0);
  fixture_.doorbells().InjectDrop(2);  // both halves of the 64-bit doorbell
  Submit(0, Fence(FenceAddress(0), 1));
  EXPECT_EQ(fixture_.doorbells().dropped(), 2u);
  RingDoorbell(0);  // nothing new, but this doorbell arrives
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_TRUE(Drained(0));
}

TEST_F(SdmaModelTest, ADroppedDoorbellLeavesTheWorkUntilAWptrWrite) {
  StartQueue(1);
  StartQueue(0);
  fixture_.doorbells().InjectDrop(2);
  Submit(1, Fence(FenceAddress(1), 1));
  Submit(0, Fence(FenceAddress(0), 1));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  EXPECT_EQ(FenceValue(1), 0u);  // its doorbell was lost
  Write(1, "QUEUE0_RB_WPTR", Lo(wptr_[1]));
  ASSERT_TRUE(Eventually([&] { return FenceValue(1) == 1; }));
}

// Issue 16 B7: F32_CNTL written whole (the driver's old `halt(0).th1_reset(0)`) clears TH1_ENABLE, which powers on
// set; the F32's queue thread then never runs.
TEST_F(SdmaModelTest, AnF32CntlWithoutTh1EnableRunsNothing) {
  StartQueue(0);
  Submit(0, Fence(FenceAddress(0), 1));
  ASSERT_TRUE(Eventually([&] { return FenceValue(0) == 1; }));
  DisableRing(0);
  Write(0, "F32_CNTL", gc::SDMA0_F32_CNTL{}.halt(0).th1_reset(0).raw());
  Write(0, "QUEUE0_RB_CNTL", gc::SDMA0_QUEUE0_RB_CNTL::FromRaw(Read(0, "QUEUE0_RB_CNTL")).rb_enable(1).raw());
  EXPECT_TRUE(HasError("sdma0", "TH1 does not run"));
  Submit(0, Fence(FenceAddress(0), 2));
  EXPECT_FALSE(Eventually([&] { return FenceValue(0) == 2; }, std::chrono::milliseconds(50)));
  // The read-modify-write Linux does keeps TH1_ENABLE: the engine runs.
  Write(0, "F32_CNTL", gc::SDMA0_F32_CNTL::kDefault);
  SetHalt(0, 0);
  EXPECT_TRUE(Eventually([&] { return FenceValue(0) == 2; }));
}

// Issue 16 B7: a wptr moved back by a register write is only taken with MINOR_PTR_UPDATE=1
// (sdma_v6_0_gfx_resume_instance: "before programing wptr to a less value, need set minor_ptr_update first").
TEST_F(SdmaModelTest, MovingTheWptrBackNeedsMinorPtrUpdate) {
  StartQueue(0);
  Submit(0, Fence(FenceAddress(0), 1));
  ASSERT_TRUE(Drained(0));
  const uint32_t wptr = Read(0, "QUEUE0_RB_WPTR");
  ASSERT_NE(wptr, 0u);
  DisableRing(0);
  Write(0, "QUEUE0_RB_WPTR", 0);
  EXPECT_EQ(Read(0, "QUEUE0_RB_WPTR"), wptr);
  EXPECT_TRUE(HasError("sdma0", "without SDMA0_QUEUE0_MINOR_PTR_UPDATE=1: ignored"));
  Write(0, "QUEUE0_MINOR_PTR_UPDATE", gc::SDMA0_QUEUE0_MINOR_PTR_UPDATE{}.enable(1).raw());
  Write(0, "QUEUE0_RB_WPTR", 0);
  Write(0, "QUEUE0_MINOR_PTR_UPDATE", 0);
  EXPECT_EQ(Read(0, "QUEUE0_RB_WPTR"), 0u);
}

TEST_F(SdmaModelTest, NothingRunsWithoutFirmwareOrWhileHalted) {
  fixture_.firmware().Clear();
  StartQueue(0);
  EXPECT_TRUE(HasError("sdma0", "has not loaded the SDMA firmware"));
  fixture_.firmware().Load(regs::psp::GFX_FW_TYPE_SDMA_UCODE_TH0, 1);
  fixture_.firmware().Load(regs::psp::GFX_FW_TYPE_SDMA_UCODE_TH1, 1);

  SetHalt(1, 1);
  // StartQueue unhalts as Linux does; halt again before the ring is enabled, as a driver that forgot would leave it.
  Write(1, "QUEUE0_RB_CNTL", 0);
  Write(1, "QUEUE0_RB_BASE", Lo(kRing[1] >> 8));
  Write(1, "QUEUE0_RB_RPTR_ADDR_LO", Lo(WritebackAddress(1)));
  Write(1, "QUEUE0_DOORBELL_OFFSET", gc::SDMA0_QUEUE0_DOORBELL_OFFSET{}.offset(kDoorbell[1]).raw());
  Write(1, "QUEUE0_DOORBELL", gc::SDMA0_QUEUE0_DOORBELL{}.enable(1).raw());
  Write(1, "QUEUE0_RB_CNTL",
        gc::SDMA0_QUEUE0_RB_CNTL{}.rb_size(kRingDwordsLog2).rptr_writeback_enable(1).rb_enable(1).raw());
  EXPECT_TRUE(HasError("sdma1", "SDMA1_F32_CNTL.HALT is 1"));
  Submit(1, Fence(FenceAddress(1), 1));
  EXPECT_EQ(Read(1, "QUEUE0_RB_RPTR"), 0u);
  SetHalt(1, 0);  // unhalting starts the enabled queue
  ASSERT_TRUE(Eventually([&] { return FenceValue(1) == 1; }));
}

TEST_F(SdmaModelTest, DisablingTheRingStopsItAndEnablingResumesFromTheRegisters) {
  StartQueue(0);
  Submit(0, Fence(FenceAddress(0), 1));
  ASSERT_TRUE(Drained(0));
  DisableRing(0);
  Submit(0, Fence(FenceAddress(1), 1));  // the doorbell still moves RB_WPTR
  EXPECT_EQ(Read(0, "QUEUE0_RB_WPTR"), wptr_[0]);
  EXPECT_EQ(FenceValue(1), 0u);
  Write(0, "QUEUE0_RB_CNTL", gc::SDMA0_QUEUE0_RB_CNTL::FromRaw(Read(0, "QUEUE0_RB_CNTL")).rb_enable(1).raw());
  ASSERT_TRUE(Eventually([&] { return FenceValue(1) == 1; }));
  EXPECT_TRUE(Drained(0));
}

TEST_F(SdmaModelTest, ANewModelOverTheSameRegistersResumesTheQueue) {
  StartQueue(0);
  StartQueue(1);
  Submit(0, Fence(FenceAddress(0), 1));
  Submit(1, Fence(FenceAddress(1), 1));
  ASSERT_TRUE(Drained(0) && Drained(1));
  model_.reset();  // the process ends; registers and model state stay
  CreateModel();
  Submit(0, Fence(FenceAddress(2), 2));
  Submit(1, Fence(FenceAddress(3), 3));
  ASSERT_TRUE(Eventually([&] { return FenceValue(2) == 2 && FenceValue(3) == 3; }));
  ASSERT_TRUE(Drained(0) && Drained(1));
  EXPECT_EQ(WrittenBackRptr(0), 32u);  // counts on from where the first model stopped
}

TEST_F(SdmaModelTest, AQueueStoppedOnAnErrorStaysStoppedInANewModel) {
  StartQueue(0);
  Submit(0, {0x3f});
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  model_.reset();
  fixture_.errors().Clear();
  CreateModel();
  EXPECT_TRUE(HasError("sdma0", "stopped on an error"));
  Submit(0, Fence(FenceAddress(0), 1));
  DisableRing(0);  // recovery as before
  StartQueue(0);
  Submit(0, Fence(FenceAddress(1), 1));
  ASSERT_TRUE(Eventually([&] { return FenceValue(1) == 1; }));
  EXPECT_EQ(FenceValue(0), 0u);
}

TEST_F(SdmaModelTest, StatusRegisterShowsIdleOnceTheRingIsEmpty) {
  StartQueue(0);
  model_->InjectHang(0, true);
  Submit(0, Fence(FenceAddress(0), 1));
  auto status = gc::SDMA0_STATUS_REG::FromRaw(Read(0, "STATUS_REG"));
  EXPECT_EQ(status.idle(), 0u);
  EXPECT_EQ(status.rb_empty(), 0u);
  model_->InjectHang(0, false);
  ASSERT_TRUE(Drained(0));
  status = gc::SDMA0_STATUS_REG::FromRaw(Read(0, "STATUS_REG"));
  EXPECT_EQ(status.idle(), 1u);
  EXPECT_EQ(status.rb_empty(), 1u);
}

}  // namespace
}  // namespace am::sim
