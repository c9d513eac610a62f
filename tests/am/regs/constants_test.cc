// Spot checks of the generated constants against values read off the Linux 6.12 headers, and of the packet
// helpers built on them.
#include "am/regs/discovery_constants.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/hw_id_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/pm4.h"
#include "am/regs/pm4_event_constants.h"
#include "am/regs/psp_constants.h"
#include "am/regs/smu_constants.h"
#include "am/regs/smu_driver_if_constants.h"
#include "am/regs/vm.h"
#include "gtest/gtest.h"

namespace am::regs {
namespace {

TEST(ConstantsTest, Pm4OpcodesAndFieldsFromNvdH) {
  EXPECT_EQ(pm4::PACKET3_NOP, 0x10u);
  EXPECT_EQ(pm4::PACKET3_DISPATCH_DIRECT, 0x15u);
  EXPECT_EQ(pm4::PACKET3_PRED_EXEC, 0x23u);
  EXPECT_EQ(pm4::PACKET3_WRITE_DATA, 0x37u);
  EXPECT_EQ(pm4::PACKET3_WAIT_REG_MEM, 0x3cu);
  EXPECT_EQ(pm4::PACKET3_INDIRECT_BUFFER, 0x3fu);
  EXPECT_EQ(pm4::PACKET3_EVENT_WRITE, 0x46u);
  EXPECT_EQ(pm4::PACKET3_RELEASE_MEM, 0x49u);
  EXPECT_EQ(pm4::PACKET3_ACQUIRE_MEM, 0x58u);
  EXPECT_EQ(pm4::PACKET3_SET_SH_REG, 0x76u);
  EXPECT_EQ(pm4::PACKET3_SET_SH_REG_START, 0x2c00u);
  EXPECT_EQ(pm4::PACKET3_SET_UCONFIG_REG, 0x79u);
  EXPECT_EQ(pm4::PACKET3_SET_UCONFIG_REG_START, 0xc000u);
  // Field macros become functions: WAIT_REG_MEM_ENGINE(x) is ((x) << 8), RELEASE_MEM_DATA_SEL(x) ((x) << 29).
  EXPECT_EQ(pm4::WAIT_REG_MEM_ENGINE(1), 0x100u);
  EXPECT_EQ(pm4::WAIT_REG_MEM_FUNCTION(3), 3u);
  EXPECT_EQ(pm4::PACKET3_RELEASE_MEM_DATA_SEL(2), 2u << 29);
  EXPECT_EQ(pm4::INDIRECT_BUFFER_VALID, 1u << 23);
  // Event types for EVENT_WRITE / RELEASE_MEM: soc21_enum.h VGT_EVENT_TYPE.
  EXPECT_EQ(pm4::CS_PARTIAL_FLUSH, 0x7u);
  EXPECT_EQ(pm4::CACHE_FLUSH_AND_INV_TS_EVENT, 0x14u);
  EXPECT_EQ(pm4::BOTTOM_OF_PIPE_TS, 0x28u);
}

TEST(ConstantsTest, Packet3Header) {
  // The largest NOP, which Linux pads rings with, is 0xffff1000: type 3, count 0x3fff, opcode 0x10.
  EXPECT_EQ(pm4::Packet3(pm4::PACKET3_NOP, 0x3fff), 0xffff1000u);
  constexpr uint32_t header = pm4::Packet3(pm4::PACKET3_RELEASE_MEM, 6);
  EXPECT_EQ(pm4::PacketType(header), 3u);
  EXPECT_EQ(pm4::PacketCount(header), 6u);
  EXPECT_EQ(pm4::Packet3Opcode(header), 0x49u);
  EXPECT_TRUE(pm4::IsShReg(0x2c00));
  EXPECT_FALSE(pm4::IsShReg(0x3000));
  EXPECT_TRUE(pm4::IsUconfigReg(0xc3ff));
}

TEST(ConstantsTest, PspCommandsFirmwareTypesAndStatus) {
  EXPECT_EQ(psp::GFX_CMD_ID_SETUP_TMR, 5u);
  EXPECT_EQ(psp::GFX_CMD_ID_LOAD_IP_FW, 6u);
  EXPECT_EQ(psp::GFX_CTRL_CMD_ID_INIT_GPCOM_RING, 0x20000u);
  EXPECT_EQ(psp::GFX_FW_TYPE_RLC_G, 8u);
  EXPECT_EQ(psp::GFX_FW_TYPE_SDMA0, 9u);
  EXPECT_EQ(psp::TEE_ERROR_NOT_SUPPORTED, 0xffff000au);
  EXPECT_EQ(psp::PSP_ERR_UNKNOWN_COMMAND, 0x100u);
}

TEST(ConstantsTest, SmuMessagesAndClocks) {
  EXPECT_EQ(smu::PPSMC_Result_OK, 1u);
  EXPECT_EQ(smu::PPSMC_Result_UnknownCmd, 0xfeu);
  EXPECT_EQ(smu::PPSMC_MSG_GetSmuVersion, 2u);
  EXPECT_EQ(smu::PPSMC_MSG_GetDriverIfVersion, 3u);
  EXPECT_EQ(smu::PPCLK_GFXCLK, 0u);
  EXPECT_EQ(smu::PPCLK_UCLK, 2u);
  EXPECT_EQ(smu::SMU13_0_0_DRIVER_IF_VERSION, 0x3du);
}

TEST(ConstantsTest, InterruptClientsAndSources) {
  EXPECT_EQ(ih::SOC15_IH_CLIENTID_SDMA0, 0x08u);
  EXPECT_EQ(ih::SOC15_IH_CLIENTID_VMC, 0x12u);
  EXPECT_EQ(ih::SOC15_IH_CLIENTID_GRBM_CP, 0x14u);
  EXPECT_EQ(ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT, 181u);
  EXPECT_EQ(ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT, 184u);
}

TEST(ConstantsTest, DiscoveryAndHardwareIds) {
  EXPECT_EQ(discovery::BINARY_SIGNATURE, 0x28211407u);
  EXPECT_EQ(discovery::GC_TABLE_ID, 0x4347u);
  EXPECT_EQ(discovery::GC, 1u);
  EXPECT_EQ(discovery::MP1_HWID, 1u);
  EXPECT_EQ(discovery::GC_HWID, 11u);
  EXPECT_EQ(discovery::NBIF_HWID, 108u);
}

TEST(ConstantsTest, PageTableBits) {
  EXPECT_EQ(vm::AMDGPU_PTE_VALID, 1u);
  EXPECT_EQ(vm::AMDGPU_PTE_SYSTEM, 2u);
  EXPECT_EQ(vm::AMDGPU_PTE_WRITEABLE, 1u << 6);
  EXPECT_EQ(vm::AMDGPU_PDE_PTE, uint64_t{1} << 54);
  EXPECT_EQ(vm::AMDGPU_PTE_MTYPE_NV10_MASK, uint64_t{7} << 48);
  EXPECT_EQ(vm::PteFragment(9), uint64_t{9} << 7);
  EXPECT_EQ(vm::PteFragmentOf(vm::PteFragment(31) | vm::AMDGPU_PTE_VALID), 31u);
  // The MTYPE replaces only bits 50:48.
  const uint64_t pte = vm::AMDGPU_PTE_VALID | (uint64_t{7} << 48) | vm::AMDGPU_PDE_PTE;
  EXPECT_EQ(vm::PteWithMtypeNv10(pte, 2), vm::AMDGPU_PTE_VALID | (uint64_t{2} << 48) | vm::AMDGPU_PDE_PTE);
  EXPECT_EQ(vm::PdeBlockFragmentSize(9), uint64_t{9} << 59);
}

}  // namespace
}  // namespace am::regs
