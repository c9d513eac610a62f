// The generated NVIDIA constants against values read from the headers' text (each expectation names its source).
#include "gtest/gtest.h"
#include "nv/regs/clc461_constants.h"
#include "nv/regs/clc46f_constants.h"
#include "nv/regs/clc561_constants.h"
#include "nv/regs/clc56f_constants.h"
#include "nv/regs/clc7b5_constants.h"
#include "nv/regs/clc7c0_constants.h"
#include "nv/regs/clc9c0_constants.h"
#include "nv/regs/gsp_constants.h"
#include "nv/regs/names.h"
#include "nv/regs/qmd.h"
#include "nv/regs/rpc_constants.h"
#include "nv/regs/sequencer_constants.h"
#include "nv/regs/status_constants.h"

namespace nv::regs {
namespace {

TEST(NvConstantsTest, RpcNumbers) {
  // rpc_global_enums.h: X(RM, FREE) //10, X(RM, GSP_SET_SYSTEM_INFO) //72, X(RM, SET_REGISTRY) //73,
  // X(GSP, GSP_RM_CONTROL) //76, X(GSP, GSP_RM_ALLOC) //103; E(FIRST_EVENT = 0x1000), E(GSP_INIT_DONE) // 0x1001.
  EXPECT_EQ(rpc::NV_VGPU_MSG_FUNCTION_NOP, 0u);
  EXPECT_EQ(rpc::NV_VGPU_MSG_FUNCTION_FREE, 10u);
  EXPECT_EQ(rpc::NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO, 72u);
  EXPECT_EQ(rpc::NV_VGPU_MSG_FUNCTION_SET_REGISTRY, 73u);
  EXPECT_EQ(rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, 76u);
  EXPECT_EQ(rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, 103u);
  EXPECT_EQ(rpc::NV_VGPU_MSG_EVENT_FIRST_EVENT, 0x1000u);
  EXPECT_EQ(rpc::NV_VGPU_MSG_EVENT_GSP_INIT_DONE, 0x1001u);
  EXPECT_EQ(rpc::NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER, 0x1002u);
  EXPECT_EQ(rpc::NV_VGPU_MSG_EVENT_OS_ERROR_LOG, 0x1006u);
  EXPECT_EQ(RpcName(103), "NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC");
  EXPECT_EQ(RpcName(0x1001), "NV_VGPU_MSG_EVENT_GSP_INIT_DONE");
  EXPECT_EQ(RpcName(0x7fffffff), "");
}

TEST(NvConstantsTest, GspBootConstants) {
  // gsp_fw_wpr_meta.h: GSP_FW_WPR_META_MAGIC 0xdc3aae21371a60b3ULL, _REVISION 1, _VERIFIED 0xa0a0a0a0a0a0a0a0ULL.
  EXPECT_EQ(gsp::GSP_FW_WPR_META_MAGIC, 0xdc3aae21371a60b3ull);
  EXPECT_EQ(gsp::GSP_FW_WPR_META_REVISION, 1u);
  EXPECT_EQ(gsp::GSP_FW_WPR_META_VERIFIED, 0xa0a0a0a0a0a0a0a0ull);
  // libos_init_args.h: enum {LIBOS_MEMORY_REGION_NONE, _CONTIGUOUS, _RADIX3}; _LOC_SYSMEM is the second of its enum.
  EXPECT_EQ(gsp::LIBOS_MEMORY_REGION_CONTIGUOUS, 1u);
  EXPECT_EQ(gsp::LIBOS_MEMORY_REGION_LOC_SYSMEM, 1u);
  // rpc_headers.h: NV_VGPU_MSG_SIGNATURE_VALID 0x43505256 ("VRPC"), NV_VGPU_MSG_HEADER_VERSION_MAJOR 31:24, _TOT 3.
  EXPECT_EQ(gsp::NV_VGPU_MSG_SIGNATURE_VALID, 0x43505256u);
  EXPECT_EQ(gsp::NV_VGPU_MSG_HEADER_VERSION_MAJOR.Place(gsp::NV_VGPU_MSG_HEADER_VERSION_MAJOR_TOT), 0x03000000u);
  // rmgspseq.h: GSP_SEQ_BUF_REG_SAVE_SIZE (8).
  EXPECT_EQ(gsp::GSP_SEQ_BUF_REG_SAVE_SIZE, 8u);
}

TEST(NvConstantsTest, StatusCodes) {
  // nvstatuscodes.h: NV_OK 0x00000000, NV_ERR_INVALID_ARGUMENT 0x0000001F, NV_ERR_NOT_READY 0x00000055.
  EXPECT_EQ(status::NV_OK, 0u);
  EXPECT_EQ(status::NV_ERR_INVALID_ARGUMENT, 0x1fu);
  EXPECT_EQ(StatusName(0x55), "NV_ERR_NOT_READY");
  const NamedValue* v = FindValue(StatusCodes(), 0x1f);
  ASSERT_NE(v, nullptr);
  EXPECT_STREQ(v->message, "Invalid argument to call");
}

TEST(NvConstantsTest, SequencerOpcodes) {
  // rmgspseq.h: GSP_SEQ_BUF_OPCODE_REG_WRITE = 0, then REG_MODIFY, REG_POLL, DELAY_US, REG_STORE, CORE_RESET,
  // CORE_START, CORE_WAIT_FOR_HALT, CORE_RESUME in order.
  EXPECT_EQ(gsp::GSP_SEQ_BUF_OPCODE_REG_WRITE, 0u);
  EXPECT_EQ(gsp::GSP_SEQ_BUF_OPCODE_REG_POLL, 2u);
  EXPECT_EQ(gsp::GSP_SEQ_BUF_OPCODE_CORE_RESUME, 8u);
}

TEST(NvConstantsTest, ClassIdsAndMethods) {
  // clc7c0.h: AMPERE_COMPUTE_B 0xC7C0, NVC7C0_LAUNCH_DMA 0x01b0, _COMPLETION_TYPE 5:4.
  EXPECT_EQ(cls::AMPERE_COMPUTE_B, 0xc7c0u);
  EXPECT_EQ(cls::NVC7C0_LAUNCH_DMA, 0x1b0u);
  EXPECT_EQ(cls::NVC7C0_LAUNCH_DMA_COMPLETION_TYPE, (Bits{5, 4}));
  EXPECT_EQ(cls::NVC7C0_LAUNCH_DMA_COMPLETION_TYPE.Place(cls::NVC7C0_LAUNCH_DMA_COMPLETION_TYPE_RELEASE_SEMAPHORE),
            0x20u);
  // clc9c0.h: ADA_COMPUTE_A 0xC9C0, NVC9C0_SEND_PCAS_A 0x02b4.
  EXPECT_EQ(cls::ADA_COMPUTE_A, 0xc9c0u);
  EXPECT_EQ(cls::NVC9C0_SEND_PCAS_A, 0x2b4u);
  // clc7b5.h: AMPERE_DMA_COPY_B (0x0000C7B5), NVC7B5_LAUNCH_DMA (0x00000300).
  EXPECT_EQ(cls::AMPERE_DMA_COPY_B, 0xc7b5u);
  EXPECT_EQ(cls::NVC7B5_LAUNCH_DMA, 0x300u);
  // clc56f.h: AMPERE_CHANNEL_GPFIFO_A, NVC56F_SEM_EXECUTE (0x0000006c); clc46f.h: TURING_CHANNEL_GPFIFO_A.
  EXPECT_EQ(cls::AMPERE_CHANNEL_GPFIFO_A, 0xc56fu);
  EXPECT_EQ(cls::NVC56F_SEM_EXECUTE, 0x6cu);
  EXPECT_EQ(cls::TURING_CHANNEL_GPFIFO_A, 0xc46fu);
  // SDK class/clc461.h, clc561.h: TURING_USERMODE_A (0xc461), AMPERE_USERMODE_A (0xc561).
  EXPECT_EQ(cls::TURING_USERMODE_A, 0xc461u);
  EXPECT_EQ(cls::AMPERE_USERMODE_A, 0xc561u);
}

const QmdField* Find(absl::Span<const QmdField> table, absl::string_view name) {
  for (const QmdField& f : table) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

TEST(NvConstantsTest, QmdFields) {
  // clc9c0qmd.h: NVC9C0_QMDV03_00_QMD_MAJOR_VERSION MW(583:580), _CTA_RASTER_WIDTH MW(415:384),
  // _PROGRAM_ADDRESS_LOWER MW(1567:1536), _CONSTANT_BUFFER_ADDR_LOWER(i) MW((1055+(i)*64):(1024+(i)*64)).
  const QmdField* f = Find(QmdC9c0V03_00Fields(), "QMD_MAJOR_VERSION");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->hi, 583u);
  EXPECT_EQ(f->lo, 580u);
  f = Find(QmdC9c0V03_00Fields(), "CTA_RASTER_WIDTH");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->lo, 384u);
  f = Find(QmdC9c0V03_00Fields(), "PROGRAM_ADDRESS_LOWER");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->hi, 1567u);
  f = Find(QmdC9c0V03_00Fields(), "CONSTANT_BUFFER_ADDR_LOWER");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->lo, 1024u);
  EXPECT_EQ(f->stride, 64u);
  // clcbc0qmd.h: NVCBC0_QMDV04_00_QMD_MINOR_VERSION MW(579:576), _GRID_WIDTH MW(1055:1024).
  f = Find(QmdCbc0V04_00Fields(), "GRID_WIDTH");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->hi, 1055u);
  EXPECT_EQ(f->lo, 1024u);
  EXPECT_NE(Find(QmdC7c0V03_00Fields(), "QMD_MAJOR_VERSION"), nullptr);
}

}  // namespace
}  // namespace nv::regs
