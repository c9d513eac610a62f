// IH entries decoded as amdgpu and amdkfd decode them: sources by their irqsrcs header names, the SQ's interrupt
// words (kfd_int_process_v11.c), the queue a CP or SDMA entry names, and which entries are faults.
#include "am/ih.h"

#include <array>
#include <cstdint>

#include "absl/strings/match.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/sq_interrupt.h"
#include "am/regs/vmc_srcid_constants.h"
#include "gtest/gtest.h"

namespace am {
namespace {

namespace ih = regs::ih;
namespace sq = regs::sq_interrupt;

// An entry's dwords (amdgpu_ih_decode_iv_helper's layout): client [7:0], source [15:8], ring [23:16], vmid [27:24]
// of dword 0; src_data in dwords 4..7.
std::array<uint32_t, 8> Entry(uint32_t client, uint32_t source, uint32_t ring, uint32_t vmid,
                              std::array<uint32_t, 4> data = {}) {
  return {client | source << 8 | ring << 16 | vmid << 24, 0, 0, 0, data[0], data[1], data[2], data[3]};
}

TEST(IhDecodeTest, AnSqErrorWordNamesTheErrorAndTheWave) {
  const uint32_t ctx0 = sq::kErrorIllegalInstruction << sq::kErrorTypeShift | 3u << sq::kWaveIdShift;
  const uint32_t ctx1 = sq::kEncodingError << sq::kEncodingShift | 1u << sq::kSimdIdShift | 2u << sq::kWgpIdShift;
  const IhEvent e =
      DecodeIhEntry(Entry(ih::SOC21_IH_CLIENTID_GRBM_CP, ih::GFX_11_0_0__SRCID__SQ_INTERRUPT_ID, 0, 8, {ctx0, ctx1}));
  EXPECT_EQ(e.source_name, "SQ_INTERRUPT_ID");
  EXPECT_EQ(e.description, "GRBM_CP SQ_INTERRUPT_ID: error ILLEGAL_INST in wave 3 simd 1 wgp 2 sh 0 (vmid 8)");
  EXPECT_TRUE(IsFault(e));
}

TEST(IhDecodeTest, AnSqWaveMessageIsNoFault) {
  const uint32_t ctx1 = sq::kEncodingInstruction << sq::kEncodingShift;
  const IhEvent e =
      DecodeIhEntry(Entry(ih::SOC21_IH_CLIENTID_GRBM_CP, ih::GFX_11_0_0__SRCID__SQ_INTERRUPT_ID, 0, 8, {0, ctx1}));
  EXPECT_TRUE(absl::StrContains(e.description, "s_sendmsg from wave 0")) << e.description;
  EXPECT_FALSE(IsFault(e));
}

TEST(IhDecodeTest, CpEntriesNameTheirQueue) {
  // gfx_v11_0_eop_irq: me [3:2], pipe [1:0], queue [6:4].
  const uint32_t ring = 1u << 2 | 3u | 5u << 4;
  const IhEvent bad =
      DecodeIhEntry(Entry(ih::SOC21_IH_CLIENTID_GRBM_CP, ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR, ring, 0));
  EXPECT_TRUE(absl::StartsWith(bad.description, "GRBM_CP CP_BAD_OPCODE_ERROR (me 1 pipe 3 queue 5)"))
      << bad.description;
  EXPECT_TRUE(IsFault(bad));
  const IhEvent eop =
      DecodeIhEntry(Entry(ih::SOC21_IH_CLIENTID_GRBM_CP, ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT, ring, 0));
  EXPECT_TRUE(absl::StartsWith(eop.description, "GRBM_CP CP_EOP_INTERRUPT (me 1 pipe 3 queue 5)")) << eop.description;
  EXPECT_FALSE(IsFault(eop));
  for (uint32_t source : {ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT, ih::GFX_11_0_0__SRCID__CP_PRIV_INSTR_FAULT,
                          ih::GFX_11_0_0__SRCID__CP_GPF, ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR}) {
    EXPECT_TRUE(IsFault(DecodeIhEntry(Entry(ih::SOC21_IH_CLIENTID_GRBM_CP, source, ring, 0)))) << source;
  }
}

TEST(IhDecodeTest, SdmaEntriesNameTheirEngineAndQueue) {
  // sdma_v6_0_process_trap_irq: instance [7:4], queue [3:0].
  const IhEvent trap = DecodeIhEntry(Entry(ih::SOC21_IH_CLIENTID_GFX, ih::GFX_11_0_0__SRCID__SDMA_TRAP, 1u << 4, 0));
  EXPECT_TRUE(absl::StartsWith(trap.description, "GFX SDMA_TRAP (sdma 1 queue 0)")) << trap.description;
  EXPECT_FALSE(IsFault(trap));
}

TEST(IhDecodeTest, PageFaultsFromBothHubsAreFaults) {
  // gmc_v11_0_process_interrupt: page bits 43:12 in src_data[0], bit 5 of src_data[1] a write.
  const IhEvent gc =
      DecodeIhEntry(Entry(ih::SOC21_IH_CLIENTID_GFX, ih::UTCL2_1_0__SRCID__FAULT, 0, 1, {0x12345, 0x20}));
  EXPECT_EQ(gc.description, "GFX UTCL2_FAULT: page fault at 0x12345000 (vmid 1, write)");
  EXPECT_TRUE(IsFault(gc));
  const IhEvent mm = DecodeIhEntry(Entry(ih::SOC21_IH_CLIENTID_VMC, ih::VMC_1_0__SRCID__VM_FAULT, 0, 0, {0x1, 0}));
  EXPECT_EQ(mm.description, "VMC VM_FAULT: page fault at 0x1000 (vmid 0, read)");
  EXPECT_TRUE(IsFault(mm));
}

TEST(IhDecodeTest, SourcesNoHeaderNamesSaySo) {
  EXPECT_EQ(IhSourceName(ih::SOC21_IH_CLIENTID_GRBM_CP, 0xff), "source 0xff");
  EXPECT_EQ(IhSourceName(ih::SOC21_IH_CLIENTID_THM, 0), "source 0x00");
  const IhEvent e = DecodeIhEntry(Entry(ih::SOC21_IH_CLIENTID_THM, 1, 0, 0, {1, 2, 3, 4}));
  EXPECT_EQ(e.description, "THM source 0x01 vmid 0 data 0x00000001 0x00000002 0x00000003 0x00000004");
  EXPECT_FALSE(IsFault(e));
}

}  // namespace
}  // namespace am
