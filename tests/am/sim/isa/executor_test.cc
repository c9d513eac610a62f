// Rdna3Executor driven directly: assembled snippets (tests/am/sim/isa/asm, llvm-mc-19) run on FlatMemory, and
// each result is checked against a value worked out by hand from the RDNA3 ISA's operation descriptions.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "am/kernel_dispatch.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/sh_mem_constants.h"
#include "am/sim/isa/memory_view.h"
#include "am/sim/isa/rdna3_executor.h"
#include "am/sim/isa/wave.h"
#include "gtest/gtest.h"
#include "tests/am/sim/isa/asm_snippets.h"
#include "tests/am/sim/model_fixture.h"

namespace am::sim::isa {
namespace {

namespace gc = regs::gc;

constexpr uint64_t kProgram = 0x10000;
constexpr uint64_t kOut = 0x200000;
constexpr uint64_t kIn = 0x300000;
constexpr uint64_t kCounter = 0x400000;

// SH_MEM_CONFIG/SH_MEM_BASES as am::Gfx programs them for VMID 0 (gfx_v11_0's DEFAULT_SH_MEM_CONFIG, the compute
// VMIDs' apertures of gfx_v11_0_init_compute_vmid): no alignment requirement, the shared aperture at
// 0x0001'0000'0000'0000 and the private one at 0x0002'0000'0000'0000.
constexpr ShMemRegisters kDriverShMem{gc::SH_MEM_CONFIG{}
                                          .alignment_mode(gc::SH_MEM_ALIGNMENT_MODE_UNALIGNED)
                                          .initial_inst_prefetch(kInstructionPrefetchLines)
                                          .raw(),
                                      gc::SH_MEM_BASES{}.shared_base(1).private_base(2).raw()};

class ExecutorTest : public ::testing::Test {
 protected:
  // Places the snippet's code at kProgram, in whole pages that hold the instruction prefetcher's guard too.
  void Load(const char* name) {
    std::ifstream in(testing::AsmSnippetPath(name, ".bin"), std::ios::binary);
    ASSERT_TRUE(in) << "missing " << testing::AsmSnippetPath(name, ".bin");
    std::vector<uint8_t> code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    code.resize((CodeBytesWithPrefetchGuard(code.size()) + 4095) / 4096 * 4096, 0);
    std::span<uint8_t> where = fixture_.memory().Place(kProgram, code.size());
    std::memcpy(where.data(), code.data(), code.size());
  }
  // FLOAT_MODE 0xf0: round to nearest even, denormals kept (what clang sets for OpenCL on gfx11).
  DispatchState State(std::vector<uint32_t> user_data, uint32_t threads, uint32_t lds_granules = 0,
                      uint32_t float_mode = 0xf0) {
    DispatchState state;
    state.program_address = kProgram;
    state.pgm_rsrc1 = gc::COMPUTE_PGM_RSRC1{}.float_mode(float_mode).raw();
    state.pgm_rsrc2 = gc::COMPUTE_PGM_RSRC2{}
                          .user_sgpr(static_cast<uint32_t>(user_data.size()))
                          .tgid_x_en(1)
                          .scratch_en(1)
                          .lds_size(lds_granules)
                          .raw();
    for (size_t i = 0; i < user_data.size(); ++i) state.user_data[i] = user_data[i];
    state.num_thread = {threads, 1, 1};
    state.dimensions = {1, 1, 1};
    state.dispatch_initiator = gc::COMPUTE_DISPATCH_INITIATOR{}.compute_shader_en(1).cs_w32_en(1).raw();
    state.tmpring_size = gc::COMPUTE_TMPRING_SIZE{}.waves(1).wavesize(1).raw();  // 256 bytes per wave32: 8 per lane
    state.memory = {Hub::kGc, 0, 0, "sq", false};
    state.sh_mem = kDriverShMem;
    return state;
  }
  static std::vector<uint32_t> Pointer(uint64_t address) {
    return {static_cast<uint32_t>(address), static_cast<uint32_t>(address >> 32)};
  }
  absl::Status Run(const char* name, std::vector<uint32_t> user_data, uint32_t threads = 32) {
    Load(name);
    return executor_.Dispatch(State(std::move(user_data), threads), fixture_.memory());
  }
  std::span<uint32_t> Out(size_t dwords) {
    std::span<uint8_t> bytes = fixture_.memory().Place(kOut, dwords * 4);
    return {reinterpret_cast<uint32_t*>(bytes.data()), dwords};
  }

  testing::ModelFixture fixture_;
  Rdna3Executor executor_{fixture_.context(), 2};
};

float F(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST_F(ExecutorTest, ScalarAlu) {
  std::span<uint32_t> out = Out(32);
  ASSERT_TRUE(Run("salu", Pointer(kOut), 1).ok());
  EXPECT_EQ(out[0], 5u);  // 7 + 0xfffffffe
  EXPECT_EQ(out[1], 1u);  // carry out selected 1
  EXPECT_EQ(static_cast<int32_t>(out[2]), -21);
  EXPECT_EQ(out[3], 0u);           // 1 << 40, low dword
  EXPECT_EQ(out[4], 0x100u);       // high dword
  EXPECT_EQ(out[5], 0x12u);        // bits 15:8 of 0xabcd1234
  EXPECT_EQ(out[6], 0xffff8000u);  // s_movk sign-extends
  EXPECT_EQ(out[7], 64u);          // SCC from a signed compare
  EXPECT_EQ(out[8], 7u);
  EXPECT_EQ(out[9], 8u);
  EXPECT_EQ(out[10], 0xfffffffeu);  // 3 - 5
  EXPECT_EQ(out[11], 9u);           // 10 - 0 - borrow
  EXPECT_EQ(static_cast<int32_t>(out[12]), -8);
  EXPECT_EQ(out[13], 3u);
  EXPECT_EQ(out[14], 0xf0u);
  EXPECT_EQ(out[15], 112u);  // (3 << 2) + 100
  EXPECT_EQ(out[16], 3u);    // high dword of 0x80000000 * 6
  EXPECT_EQ(static_cast<int32_t>(out[17]), -128);
  EXPECT_EQ(out[18], 0x80000000u);
}

TEST_F(ExecutorTest, VectorInteger) {
  std::span<uint32_t> out = Out(12 * 32);
  ASSERT_TRUE(Run("valu_int", Pointer(kOut)).ok());
  for (uint32_t l = 0; l < 32; ++l) {
    SCOPED_TRACE(l);
    EXPECT_EQ(out[0 * 32 + l], 3 * l + 5);
    EXPECT_EQ(out[1 * 32 + l], l - 10);
    EXPECT_EQ(out[2 * 32 + l], (l + 1) / 2);
    EXPECT_EQ(out[3 * 32 + l], l < 16 ? 111u : 64u);
    EXPECT_EQ(out[4 * 32 + l], l > 0 ? 1u : 0u);  // carry of 0xffffffff + l
    const int32_t field = static_cast<int32_t>(l & 7);
    EXPECT_EQ(static_cast<int32_t>(out[5 * 32 + l]), field >= 4 ? field - 8 : field);
    EXPECT_EQ(out[6 * 32 + l], l < 8 ? 77u : 0u);
    EXPECT_EQ(out[7 * 32 + l], l == 9 ? 5u : 0u);
    EXPECT_EQ(out[8 * 32 + l], l >> 4);
    const uint64_t pair = (uint64_t{l == 9 ? 5u : 0u} << 32) | l;
    EXPECT_EQ(out[9 * 32 + l], static_cast<uint32_t>((pair << 31) >> 32));
    EXPECT_EQ(out[10 * 32 + l], l);
    EXPECT_EQ(out[11 * 32 + l], l ^ 1);
  }
}

TEST_F(ExecutorTest, Mad64WritesBit64OfTheSumToItsScalarDestination) {
  std::span<uint32_t> out = Out(9 * 32);
  ASSERT_TRUE(Run("mad64", Pointer(kOut)).ok());
  uint32_t carry = 0, sign = 0;
  for (uint32_t l = 0; l < 32; ++l) {
    SCOPED_TRACE(l);
    // (2^32 - 1) * l * 2^27 + 3 * 2^62 = 3 * 2^62 + l * 2^59 - l * 2^27: past 2^64 from l = 9 (8 * 2^59 = 2^62).
    const uint64_t u = 0xc000000000000000ull + (uint64_t{l} << 59) - (uint64_t{l} << 27);
    EXPECT_EQ(out[0 * 32 + l], static_cast<uint32_t>(u));
    EXPECT_EQ(out[1 * 32 + l], static_cast<uint32_t>(u >> 32));
    if (l >= 9) carry |= 1u << l;
    const uint64_t s = uint64_t{5} - l;  // 5 - l, negative from l = 6
    EXPECT_EQ(out[3 * 32 + l], static_cast<uint32_t>(s));
    EXPECT_EQ(out[4 * 32 + l], static_cast<uint32_t>(s >> 32));
    if (l >= 6) sign |= 1u << l;
    // (2^31 - 1)^2 + 2^63 - 1 = 2^63 + 2^62 - 2^32: a positive 65-bit sum whose low 64 bits look negative.
    EXPECT_EQ(out[6 * 32 + l], 0u);
    EXPECT_EQ(out[7 * 32 + l], 0xbfffffffu);
  }
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(out[2 * 32 + l], carry) << "v_mad_u64_u32 carry-out, lane " << l;
    EXPECT_EQ(out[5 * 32 + l], sign) << "v_mad_i64_i32 bit 64, lane " << l;
    EXPECT_EQ(out[8 * 32 + l], 0u) << "v_mad_i64_i32 bit 64 of a positive sum past INT64_MAX, lane " << l;
  }
  EXPECT_EQ(carry, 0xfffffe00u);
  EXPECT_EQ(sign, 0xffffffc0u);
}

// The executor keeps each program it decoded by address and checks, at every dispatch, that memory still holds that
// code (Program::Unchanged): other code placed at the same address is fetched and decoded again.
TEST_F(ExecutorTest, OtherCodeAtACachedProgramsAddressIsFetchedAgain) {
  std::span<uint32_t> ints = Out(12 * 32);
  ASSERT_TRUE(Run("valu_int", Pointer(kOut)).ok());
  EXPECT_EQ(ints[0 * 32 + 3], 3u * 3 + 5);
  std::span<uint32_t> floats = Out(16 * 32);
  ASSERT_TRUE(Run("valu_float", Pointer(kOut)).ok());
  EXPECT_EQ(F(floats[0 * 32 + 3]), 3.0f / 2 + 1);
  EXPECT_EQ(F(floats[1 * 32 + 3]), 3.0f * 3 - 3);
}

TEST_F(ExecutorTest, VectorFloat) {
  std::span<uint32_t> out = Out(16 * 32);
  ASSERT_TRUE(Run("valu_float", Pointer(kOut)).ok());
  for (uint32_t l = 0; l < 32; ++l) {
    SCOPED_TRACE(l);
    const float f = static_cast<float>(l);
    EXPECT_EQ(F(out[0 * 32 + l]), f / 2 + 1);
    EXPECT_EQ(F(out[1 * 32 + l]), f * f - f);
    EXPECT_EQ(F(out[2 * 32 + l]), std::sqrt(f));
    EXPECT_EQ(static_cast<int32_t>(out[3 * 32 + l]), static_cast<int32_t>(2 - f));
    EXPECT_EQ(F(out[4 * 32 + l]), l > 10 ? 4.0f : -1.0f);
    EXPECT_EQ(F(out[5 * 32 + l]), f + 0.5f);  // exact in half precision for l < 32
    // Half of 2l + 1: sign 0, value 2l + 1 (exact), in the low 16 bits; high half 0 + 0.
    const _Float16 expected = static_cast<_Float16>(2 * f + 1);
    EXPECT_EQ(out[6 * 32 + l] & 0xffff, std::bit_cast<uint16_t>(expected));
    EXPECT_EQ(out[6 * 32 + l] >> 16, 0u);
    EXPECT_EQ(F(out[7 * 32 + l]), f * f);
    EXPECT_EQ(F(out[8 * 32 + l]), 2 * f);
    EXPECT_EQ(F(out[9 * 32 + l]), 0.25f);
    EXPECT_EQ(F(out[10 * 32 + l]), 1.0f / (f + 1));
    EXPECT_EQ(out[11 * 32 + l], 1u);
    EXPECT_EQ(F(out[12 * 32 + l]), l > 10 ? -f : f);
    EXPECT_EQ(F(out[13 * 32 + l]), l > 10 ? f : f + 1);
    EXPECT_EQ(F(out[14 * 32 + l]), l > 10 ? -(f + 1) : f);
    const _Float16 half = static_cast<_Float16>(l > 10 ? -(f + 0.5f) : f + 0.5f);
    EXPECT_EQ(out[15 * 32 + l] & 0xffff, std::bit_cast<uint16_t>(half));
  }
}

TEST_F(ExecutorTest, Vop3WithDpp16AndDpp8) {
  std::span<uint32_t> out = Out(17 * 32);
  ASSERT_TRUE(Run("vop3_dpp", Pointer(kOut)).ok());
  uint32_t carries = 0;
  for (uint32_t l = 0; l < 32; ++l) {
    SCOPED_TRACE(l);
    const float f = static_cast<float>(l);
    EXPECT_EQ(out[0 * 32 + l], (l ^ 1) + 100 + 256 * l);  // quad_perm:[1,0,3,2]
    EXPECT_EQ(out[1 * 32 + l], (l ^ 7) + 100 + 256 * l);  // dpp8:[7,...,0]
    // row_shr:1 bound_ctrl:1: -src0 * |-2| + 0.5 with src0 = l - 1, or 0 for a row's first lane.
    EXPECT_EQ(F(out[2 * 32 + l]), l % 16 == 0 ? 0.5f : -2 * (f - 1) + 0.5f);
    const uint32_t mirrored = (l & 16) + 15 - (l & 15);           // row_mirror
    EXPECT_EQ(F(out[3 * 32 + l]), mirrored >= 11 ? 1.0f : 0.0f);  // clamp(2 (m - 10))
    // row_shl:1: lane l + 1's (l + 1 - 16) + 8; a row's last lane has no source and keeps its old value.
    EXPECT_EQ(out[4 * 32 + l], l % 16 == 15 ? 0xdeadu : l - 7);
    if (l % 16 != 15 && l + 1 < 16 && l + 1 + 8 >= 16) carries |= 1u << l;
    EXPECT_EQ(out[6 * 32 + l], 0xffu);                   // quad_perm:[0,0,0,0]: float(l & ~3) < 6
    EXPECT_EQ(out[7 * 32 + l], l < 16 ? 1000u : l ^ 1);  // dpp8 swaps neighbours, s6 selects src1
    const bool enabled = l < 16 && ((l >> 2) & 1) == 1;  // row_mask:0x5 (row 0), bank_mask:0xa (banks 1, 3)
    EXPECT_EQ(out[8 * 32 + l], enabled ? std::bit_cast<uint32_t>(static_cast<float>(l ^ 1)) : 0xdeadbeefu);
    EXPECT_EQ(out[9 * 32 + l], (l & 16) + 3);  // row_share:3
    // EXEC = even lanes, each reading its odd (inactive) neighbour; odd lanes keep 0xdead.
    const bool active = l % 2 == 0;
    EXPECT_EQ(out[10 * 32 + l], active ? 100u : 0xdeadu);                      // dpp8, fi:0: the inactive lane reads 0
    EXPECT_EQ(out[11 * 32 + l], active ? l + 1 + 100 : 0xdeadu);               // dpp8, fi:1: its value
    EXPECT_EQ(out[12 * 32 + l], 0xdeadu);                                      // dpp16, fi:0, bound_ctrl:0: no write
    EXPECT_EQ(out[13 * 32 + l], active ? 100u : 0xdeadu);                      // dpp16, fi:0, bound_ctrl:1: 0
    EXPECT_EQ(out[14 * 32 + l], active ? l + 1 + 100 : 0xdeadu);               // dpp16, fi:1: its value
    EXPECT_EQ(F(out[15 * 32 + l]), -2.0f * static_cast<float>(l ^ 1) + 0.5f);  // v_fma_mix_f32 quad_perm
    EXPECT_EQ(F(out[16 * 32 + l]), 2.0f * static_cast<float>(l ^ 7) + 3.25f);  // v_dot2_f32_f16 dpp8
  }
  for (uint32_t l = 0; l < 32; ++l) EXPECT_EQ(out[5 * 32 + l], carries) << "lane " << l;
  EXPECT_EQ(carries, 0x7f80u);
}

// MODE.FP_ROUND values (MODE[1:0] single precision, MODE[3:2] double and half precision).
enum Round { kNearestEven = 0, kUp = 1, kDown = 2, kTowardZero = 3 };

// One result of asm/rounding.s under each round mode, worked out by hand from the exact value.
struct RoundedRow {
  const char* what;
  bool single;           // rounded by MODE[1:0] (else MODE[3:2])
  uint32_t mask;         // the bits the row checks
  uint32_t expected[4];  // indexed by Round
};
constexpr RoundedRow kRoundedRows[] = {
    {"v_add_f32 1 + 2^-25", true, ~0u, {0x3f800000, 0x3f800001, 0x3f800000, 0x3f800000}},
    {"v_add_f32 -(1 + 2^-25)", true, ~0u, {0xbf800000, 0xbf800000, 0xbf800001, 0xbf800000}},
    // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46, between 0x3f800002 and 0x3f800003 and nearer the first.
    {"v_mul_f32 (1 + 2^-23)^2", true, ~0u, {0x3f800002, 0x3f800003, 0x3f800002, 0x3f800002}},
    // 2^-22 (1 + 2^-24): a tie between 2^-22 (even) and its successor.
    {"v_fma_f32 (1 + 2^-23)^2 - 1", true, ~0u, {0x34800000, 0x34800001, 0x34800000, 0x34800000}},
    // 0x3fb504f3^2 < 2 < 0x3fb504f4^2, and sqrt(2) lies below their midpoint.
    {"v_sqrt_f32 2", true, ~0u, {0x3fb504f3, 0x3fb504f4, 0x3fb504f3, 0x3fb504f3}},
    {"v_cvt_f32_u32 2^32 - 1", true, ~0u, {0x4f800000, 0x4f800000, 0x4f7fffff, 0x4f7fffff}},
    {"v_add_f64 1 + 2^-54 (low)", false, ~0u, {0, 1, 0, 0}},
    {"v_add_f64 1 + 2^-54 (high)", false, ~0u, {0x3ff00000, 0x3ff00000, 0x3ff00000, 0x3ff00000}},
    {"v_add_f64 -(1 + 2^-54) (low)", false, ~0u, {0, 0, 1, 0}},
    {"v_add_f64 -(1 + 2^-54) (high)", false, ~0u, {0xbff00000, 0xbff00000, 0xbff00000, 0xbff00000}},
    {"v_cvt_f32_f64 1 + 2^-26", true, ~0u, {0x3f800000, 0x3f800001, 0x3f800000, 0x3f800000}},
    {"v_add_f16 1 + 2^-12", false, 0xffff, {0x3c00, 0x3c01, 0x3c00, 0x3c00}},
    {"v_add_f16 -(1 + 2^-12)", false, 0xffff, {0xbc00, 0xbc00, 0xbc01, 0xbc00}},
    {"v_cvt_f16_f32 1 + 2^-12", false, 0xffff, {0x3c00, 0x3c01, 0x3c00, 0x3c00}},
    {"v_rndne_f32 2.5", true, ~0u, {0x40000000, 0x40000000, 0x40000000, 0x40000000}},
    {"v_pk_add_f16 1 + 2^-12, -(1 + 2^-12)", false, ~0u, {0xbc003c00, 0xbc003c01, 0xbc013c00, 0xbc003c00}},
    {"v_dual_add_f32 1 + 2^-25", true, ~0u, {0x3f800000, 0x3f800001, 0x3f800000, 0x3f800000}},
    {"v_dual_mul_f32 (1 + 2^-23)^2", true, ~0u, {0x3f800002, 0x3f800003, 0x3f800002, 0x3f800002}},
};
constexpr size_t kRoundedRowCount = std::size(kRoundedRows);

void ExpectRoundedBlock(std::span<const uint32_t> block, Round single, Round double_half, const char* block_name) {
  for (size_t i = 0; i < kRoundedRowCount; ++i) {
    const RoundedRow& row = kRoundedRows[i];
    const Round mode = row.single ? single : double_half;
    EXPECT_EQ(block[i] & row.mask, row.expected[mode])
        << block_name << " row " << i << ": " << row.what << " under FP_ROUND " << mode << " (single " << single
        << ", double/half " << double_half << ")";
  }
}

TEST_F(ExecutorTest, ModeRoundingFromRsrc1SRoundModeAndSSetreg) {
  std::span<uint32_t> out = Out(3 * kRoundedRowCount);
  Load("rounding");
  // RSRC1.FLOAT_MODE 0xf7: single toward zero, double/half toward +infinity, denormals kept.
  ASSERT_TRUE(executor_.Dispatch(State(Pointer(kOut), 1, 0, 0xf0 | kTowardZero | kUp << 2), fixture_.memory()).ok());
  ExpectRoundedBlock(out.subspan(0, kRoundedRowCount), kTowardZero, kUp, "RSRC1.FLOAT_MODE");
  // s_round_mode 0x9.
  ExpectRoundedBlock(out.subspan(kRoundedRowCount, kRoundedRowCount), kUp, kDown, "s_round_mode");
  // s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 2.
  ExpectRoundedBlock(out.subspan(2 * kRoundedRowCount, kRoundedRowCount), kDown, kNearestEven, "s_setreg");
}

TEST_F(ExecutorTest, DefaultModeRoundsToNearestEven) {
  std::span<uint32_t> out = Out(3 * kRoundedRowCount);
  ASSERT_TRUE(Run("rounding", Pointer(kOut), 1).ok());
  ExpectRoundedBlock(out.subspan(0, kRoundedRowCount), kNearestEven, kNearestEven, "RSRC1.FLOAT_MODE");
}

TEST_F(ExecutorTest, VectorMemoryAtomicsAndScratch) {
  std::span<uint32_t> out = Out(7 * 32);
  for (uint32_t l = 0; l < 32; ++l) out[6 * 32 + l] = 0xaaaaaaaa;
  std::span<uint8_t> in = fixture_.memory().Place(kIn, 64);
  for (int i = 0; i < 64; ++i) in[i] = static_cast<uint8_t>(i);
  std::span<uint8_t> counter = fixture_.memory().Place(kCounter, 4);
  std::vector<uint32_t> user = Pointer(kOut);
  for (uint32_t v : Pointer(kIn)) user.push_back(v);
  for (uint32_t v : Pointer(kCounter)) user.push_back(v);
  ASSERT_TRUE(Run("memory", user).ok());
  uint32_t count = 0;
  std::memcpy(&count, counter.data(), 4);
  EXPECT_EQ(count, 32u);
  std::vector<bool> seen(32, false);
  for (uint32_t l = 0; l < 32; ++l) {
    SCOPED_TRACE(l);
    EXPECT_EQ(out[0 * 32 + l], l);
    EXPECT_EQ(out[1 * 32 + l], 0x3f3eu);
    EXPECT_EQ(out[2 * 32 + l], 0x0f0e0d0cu);
    ASSERT_LT(out[3 * 32 + l], 32u);
    EXPECT_FALSE(seen[out[3 * 32 + l]]) << "two lanes got old value " << out[3 * 32 + l];
    seen[out[3 * 32 + l]] = true;
    EXPECT_EQ(out[4 * 32 + l], l * l);
    EXPECT_EQ(out[5 * 32 + l], 1000 + l);
    EXPECT_EQ(out[6 * 32 + l], 0xaaaa0000u | l);
  }
}

TEST_F(ExecutorTest, FlatAddressesInTheSharedAndPrivateAperturesReachLdsAndScratch) {
  std::span<uint32_t> out = Out(16 * 32);
  Load("flat_aperture");
  // 512 bytes of LDS (one granule); State() gives each lane 8 private bytes.
  ASSERT_TRUE(executor_.Dispatch(State(Pointer(kOut), 32, 1), fixture_.memory()).ok());
  // SH_MEM_BASES shared_base 1, private_base 2 (kDriverShMem): the apertures are 0x0001'0000'0000'0000 and
  // 0x0002'0000'0000'0000, 2^32 bytes each.
  constexpr uint32_t kAperture[8] = {0, 0x10000, 0, 0x20000, 0xffffffff, 0x10000, 0x20000, 0x10000};
  const char* const kWhat[8] = {"src_shared_base (64-bit) low",  "src_shared_base (64-bit) high",
                                "src_private_base (64-bit) low", "src_private_base (64-bit) high",
                                "src_shared_limit (64-bit) low", "src_shared_limit (64-bit) high",
                                "src_private_base (32-bit)",     "src_shared_limit (32-bit)"};
  std::vector<bool> seen(32, false);
  for (uint32_t l = 0; l < 32; ++l) {
    SCOPED_TRACE(l);
    for (int row = 0; row < 8; ++row) EXPECT_EQ(out[row * 32 + l], kAperture[row]) << kWhat[row];
    EXPECT_EQ(out[8 * 32 + l], 1000 + l) << "flat_store to LDS, ds_load";
    EXPECT_EQ(out[9 * 32 + l], 1000 + 31 - l) << "flat_load from LDS";
    ASSERT_LT(out[10 * 32 + l], 32u) << "flat_atomic_add_u32 on LDS";
    EXPECT_FALSE(seen[out[10 * 32 + l]]) << "two lanes got old value " << out[10 * 32 + l];
    seen[out[10 * 32 + l]] = true;
    EXPECT_EQ(out[11 * 32 + l], 32u) << "LDS after 32 flat atomic adds";
    EXPECT_EQ(out[12 * 32 + l], 0u) << "flat_load past the LDS";
    EXPECT_EQ(out[13 * 32 + l], 3 * l) << "flat_store to private, scratch_load";
    EXPECT_EQ(out[14 * 32 + l], 500 + l) << "scratch_store, flat_load from private";
    EXPECT_EQ(out[15 * 32 + l], l + 7) << "flat_store to a global address";
  }
}

// B9: with SH_MEM_BASES at its power-on value 0 (a driver that never programs it) both apertures are at 0, so a
// FLAT address there is in both: the model refuses it with a decoded MEMVIOL instead of guessing an aperture.
TEST_F(ExecutorTest, FlatAccessWithTheAperturesAtTheirPowerOnValuesIsAMemoryViolation) {
  Out(16 * 32);
  Load("flat_aperture");
  DispatchState state = State(Pointer(kOut), 32, 1);
  state.sh_mem = ShMemRegisters{};  // the power-on values
  absl::Status status = executor_.Dispatch(state, fixture_.memory());
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "flat_store_b32")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "in both the shared and the private aperture")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "SH_MEM_BASES of VMID 0 is 0")) << status;
}

// B9: SH_MEM_CONFIG.ALIGNMENT_MODE decides unaligned global and LDS accesses (RDNA3 ISA 3.3.3): UNALIGNED (what
// gfx_v11_0 programs) takes the address as it is, DWORD (the power-on value) aligns it down to the smaller of the
// access size and a dword, DWORD_STRICT and STRICT raise a MEMVIOL.
TEST_F(ExecutorTest, UnalignedAccessFollowsTheAlignmentMode) {
  std::span<uint8_t> in = fixture_.memory().Place(kIn, 4096);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i);
  std::vector<uint32_t> user = Pointer(kIn);
  for (uint32_t v : Pointer(kOut)) user.push_back(v);
  Load("unaligned");
  auto run = [&](uint32_t mode) {
    DispatchState state = State(user, 1, 1);
    state.sh_mem.config = gc::SH_MEM_CONFIG::FromRaw(state.sh_mem.config).alignment_mode(mode).raw();
    return executor_.Dispatch(state, fixture_.memory());
  };
  std::span<uint32_t> out = Out(2);
  ASSERT_TRUE(run(gc::SH_MEM_ALIGNMENT_MODE_UNALIGNED).ok());
  EXPECT_EQ(out[0], 0x04030201u) << "global bytes 1..4";
  EXPECT_EQ(out[1], 0xaa994433u) << "LDS bytes 2..5";

  out = Out(2);
  ASSERT_TRUE(run(gc::SH_MEM_ALIGNMENT_MODE_DWORD).ok());
  EXPECT_EQ(out[0], 0x03020100u) << "global bytes 0..3: the address aligned down";
  EXPECT_EQ(out[1], 0x44332211u) << "LDS bytes 0..3: the address aligned down";

  for (uint32_t mode : {gc::SH_MEM_ALIGNMENT_MODE_DWORD_STRICT, gc::SH_MEM_ALIGNMENT_MODE_STRICT}) {
    SCOPED_TRACE(mode);
    out = Out(2);
    out[0] = 0xdeadbeef;
    absl::Status status = run(mode);
    ASSERT_FALSE(status.ok());
    EXPECT_TRUE(absl::StrContains(status.message(), "global_load_b32")) << status;
    EXPECT_TRUE(
        absl::StrContains(status.message(), absl::StrFormat("4-byte access at %#x is not 4-byte aligned", kIn + 1)))
        << status;
    EXPECT_EQ(out[0], 0xdeadbeefu) << "the wave went on past the MEMVIOL";
  }
}

TEST_F(ExecutorTest, ThirtyTwoBitAddressModeIsRefused) {
  Out(32);
  Load("salu");
  DispatchState state = State(Pointer(kOut), 1);
  state.sh_mem.config = gc::SH_MEM_CONFIG::FromRaw(state.sh_mem.config).address_mode(gc::SH_MEM_ADDRESS_MODE_32).raw();
  absl::Status status = executor_.Dispatch(state, fixture_.memory());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
}

// B10: the SQ prefetches SH_MEM_CONFIG.INITIAL_INST_PREFETCH lines of 128 bytes past the code; with s_endpgm in
// the last dword of a page, the next page is fetched too, and a dispatch without it there faults.
TEST_F(ExecutorTest, InstructionPrefetchReachesPastTheEndOfTheCode) {
  constexpr uint32_t kSEndpgm = 0xbfb00000;  // s_endpgm: SOPP (0xbf80 << 16) opcode 48
  std::span<uint8_t> page = fixture_.memory().Place(kProgram, 4096);
  std::memcpy(page.data() + 4092, &kSEndpgm, 4);
  DispatchState state = State({}, 1);
  state.program_address = kProgram + 4092;
  absl::Status status = executor_.Dispatch(state, fixture_.memory());
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "instruction prefetch past the end of the code")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), absl::StrFormat("%#x", kProgram + 4096))) << status;

  state.sh_mem.config = gc::SH_MEM_CONFIG::FromRaw(state.sh_mem.config).initial_inst_prefetch(0).raw();
  EXPECT_TRUE(executor_.Dispatch(state, fixture_.memory()).ok()) << "no prefetch, nothing past the code";
  state.sh_mem = kDriverShMem;
  fixture_.memory().Place(kProgram + 4096, 4096);
  EXPECT_TRUE(executor_.Dispatch(state, fixture_.memory()).ok()) << "the guard page is there";
}

// The same from the middle of a page: code fetched a line at a time ends mid-page, and the prefetched lines that
// run onto the next page still need it (3 lines past the line at 0xf80 reach 0x1100).
TEST_F(ExecutorTest, InstructionPrefetchFromTheMiddleOfAPageReachesTheNextPage) {
  constexpr uint32_t kSEndpgm = 0xbfb00000;  // s_endpgm: SOPP (0xbf80 << 16) opcode 48
  constexpr uint64_t kLastLine = 4096 - kInstructionCacheLineBytes;
  std::span<uint8_t> page = fixture_.memory().Place(kProgram, 4096);
  std::memcpy(page.data() + kLastLine - 4, &kSEndpgm, 4);
  DispatchState state = State({}, 1);
  state.program_address = kProgram + kLastLine - 4;
  absl::Status status = executor_.Dispatch(state, fixture_.memory());
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "instruction prefetch past the end of the code")) << status;
  fixture_.memory().Place(kProgram + 4096, 4096);
  EXPECT_TRUE(executor_.Dispatch(state, fixture_.memory()).ok()) << "the next page is there";
}

TEST_F(ExecutorTest, LdsAndBarrierAcrossWaves) {
  std::span<uint32_t> out = Out(3 * 64);
  Load("lds");
  // 64 work-items = two wave32s; 260 bytes of LDS = one 512-byte granule.
  ASSERT_TRUE(executor_.Dispatch(State(Pointer(kOut), 64, 1), fixture_.memory()).ok());
  for (uint32_t t = 0; t < 64; ++t) {
    SCOPED_TRACE(t);
    EXPECT_EQ(out[t], 2 * (63 - t));
    EXPECT_EQ(out[64 + t], 64u);
    EXPECT_EQ(out[128 + t], 2u);
  }
}

TEST_F(ExecutorTest, BranchesAndDivergence) {
  std::span<uint32_t> out = Out(3 * 32);
  ASSERT_TRUE(Run("branches", Pointer(kOut)).ok());
  for (uint32_t l = 0; l < 32; ++l) {
    SCOPED_TRACE(l);
    EXPECT_EQ(out[l], 55u);
    EXPECT_EQ(out[32 + l], l % 2 == 0 ? 10 * l : 0u - l);
    EXPECT_EQ(out[64 + l], static_cast<uint32_t>(std::bit_width(l)));
  }
}

TEST_F(ExecutorTest, WorkgroupIdsAcrossAGridOnTheWorkerPool) {
  std::span<uint32_t> out = Out(16 * 32);
  Load("grid");
  DispatchState state = State(Pointer(kOut), 32);
  state.dimensions = {16, 1, 1};
  ASSERT_TRUE(executor_.Dispatch(state, fixture_.memory()).ok());
  for (uint32_t wg = 0; wg < 16; ++wg) {
    for (uint32_t l = 0; l < 32; ++l) EXPECT_EQ(out[wg * 32 + l], wg * 100 + l) << "workgroup " << wg << " lane " << l;
  }
}

TEST_F(ExecutorTest, OutOfBoundsStoreIsAVmFaultThatStopsTheDispatch) {
  std::span<uint32_t> out = Out(1);
  out[0] = 0xdeadbeef;
  // s[0:1] points at unmapped memory; s[2:3] at the output, which the second store would write.
  std::vector<uint32_t> user = Pointer(0x7770000);
  for (uint32_t v : Pointer(kOut)) user.push_back(v);
  absl::Status status = Run("fault", user, 1);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("0x7770000"), std::string::npos) << status;
  EXPECT_NE(status.message().find("global_store_b32"), std::string::npos) << status;
  EXPECT_EQ(fixture_.memory().faults(), 1);
  EXPECT_EQ(out[0], 0xdeadbeefu) << "the store after the faulting one ran";
}

// The fast paths (FastValu, whole-dword global and FLAT accesses) against the general path they shortcut, which
// is their oracle: asm/fast_paths.s (and its wave64 twin) runs every operation they take, on VGPR, SGPR, inline and
// literal sources, under a full and a partial EXEC, and loads across a page boundary (one lane straddling it), on
// inputs with denormals, infinities, NaNs and equal pairs, with MODE keeping denormals and flushing them; out[] must
// be the same bit for bit.
TEST_F(ExecutorTest, FastPathsMatchTheGeneralPath) {
  constexpr uint32_t kLaneBytes = 160;  // asm/fast_paths.s: lane l's inputs at in + 160l
  constexpr uint32_t kRows = 1024;      // more than the snippet writes
  // Floats the fast path must treat as the general one does (denormals under both MODEs, signed zeros, NaNs).
  constexpr uint32_t kSpecial[] = {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00400000, 0x7f800000,
                                   0xff800000, 0x7fc00000, 0x7f800001, 0xffc00123, 0x3f800000, 0x7f7fffff,
                                   0x0000001f, 0x80000040, 0x00000020, 0x3fc00000};
  for (const bool wave64 : {false, true}) {
    const uint32_t lanes = wave64 ? 64 : 32;
    for (const uint32_t float_mode : {0xf0u, 0x00u}) {
      SCOPED_TRACE(absl::StrFormat("wave%d, FLOAT_MODE %#x", lanes, float_mode));
      Load(wave64 ? "fast_paths_wave64" : "fast_paths");
      std::span<uint8_t> in_bytes = fixture_.memory().Place(kIn, (lanes + 1) * kLaneBytes);
      std::span<uint32_t> in(reinterpret_cast<uint32_t*>(in_bytes.data()), in_bytes.size() / 4);
      uint64_t seed = 0x243f6a8885a308d3;  // a fixed LCG (Knuth's MMIX constants), so every run is the same
      for (size_t i = 0; i < in.size(); ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const uint32_t r = static_cast<uint32_t>(seed >> 32);
        in[i] = (r & 3) == 0 ? kSpecial[(r >> 2) % std::size(kSpecial)] : r;
      }
      for (uint32_t l = 0; l < lanes; l += 3) in[l * kLaneBytes / 4 + 3] = in[l * kLaneBytes / 4];  // v5 = v2
      // Two different NaNs in v2 and v3, v5 and v6 of every fifth lane.
      for (uint32_t l = 1; l < lanes; l += 5) {
        in[l * kLaneBytes / 4 + 0] = 0x7f800001;
        in[l * kLaneBytes / 4 + 1] = 0xffc00123;
        in[l * kLaneBytes / 4 + 3] = 0x7fc00000;
        in[l * kLaneBytes / 4 + 4] = 0xff800abc;
      }
      std::vector<uint32_t> user = Pointer(kOut);
      for (uint32_t word : Pointer(kIn)) user.push_back(word);
      DispatchState state = State(user, lanes, 0, float_mode);
      state.dispatch_initiator = gc::COMPUTE_DISPATCH_INITIATOR{}.compute_shader_en(1).cs_w32_en(wave64 ? 0 : 1).raw();
      std::vector<uint32_t> results[2];
      for (const bool fast : {true, false}) {
        std::span<uint32_t> out = Out(kRows * lanes);
        executor_.set_fast_paths(fast);
        ASSERT_TRUE(executor_.Dispatch(state, fixture_.memory()).ok());
        results[fast].assign(out.begin(), out.end());
      }
      executor_.set_fast_paths(true);
      size_t written = 0;
      for (size_t i = 0; i < results[0].size(); ++i) {
        if (results[0][i] != 0) written = i + 1;
      }
      EXPECT_GT(written, size_t{400} * lanes) << "the snippet wrote fewer rows than it has";
      // Which of two NaN operands a float result keeps is the order the compiler gave the host's instruction its
      // operands, which Valu's own full- and partial-EXEC loops do not agree on: a NaN matches any NaN (the inputs
      // have two NaNs in some lanes of every float operation).
      auto nan = [](uint32_t bits) { return (bits & 0x7f800000) == 0x7f800000 && (bits & 0x7fffff) != 0; };
      size_t nans = 0;
      for (size_t i = 0; i < results[0].size(); ++i) {
        if (results[1][i] != results[0][i] && nan(results[0][i]) && nan(results[1][i])) {
          ++nans;
          continue;
        }
        ASSERT_EQ(results[1][i], results[0][i]) << "row " << i / lanes << " lane " << i % lanes;
      }
      EXPECT_LT(nans, size_t{100}) << "NaNs that differ are the two-NaN lanes of the float operations only";
    }
  }
}

// A store whose lanes walk off the end of a mapped page (asm/page_walk.s, lane l at 256l): the lanes before the
// first one past the page store, that one faults (the GMC names the unmapped page) and stops the dispatch, and the
// lanes after it store nothing; with lane 16 off, lane 17 faults; a b64 store that lane 15 makes across the end of
// the page writes its dword in the page and faults on the next one. The fast path (the lanes in the page the view
// has translated) and the general one leave the same page and report the same fault.
TEST_F(ExecutorTest, StoreLanesWalkingOffAMappedPageStopAtTheFirstUnmappedOne) {
  constexpr uint64_t kPage = 0x500000, kPageBytes = 4096;
  struct Case {
    uint32_t exec;
    uint32_t wide;
  };
  const Case cases[] = {{0xffffffff, 0}, {0xfffeffff, 0}, {0xffffffff, 1}};
  Load("page_walk");
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrFormat("EXEC %#x, %s", c.exec, c.wide ? "b64" : "b32"));
    std::vector<uint8_t> pages[2];
    std::string messages[2];
    int faults[2];
    for (const bool fast : {true, false}) {
      std::span<uint8_t> page = fixture_.memory().Place(kPage, kPageBytes);
      std::vector<uint32_t> user = Pointer(kPage);
      user.push_back(c.exec);
      user.push_back(c.wide);
      const int faults_before = fixture_.memory().faults();
      executor_.set_fast_paths(fast);
      const absl::Status status = executor_.Dispatch(State(user, 32), fixture_.memory());
      ASSERT_FALSE(status.ok());
      EXPECT_TRUE(absl::StrContains(status.message(), absl::StrFormat("%#x", kPage + kPageBytes))) << status;
      messages[fast] = std::string(status.message());
      faults[fast] = fixture_.memory().faults() - faults_before;
      pages[fast].assign(page.begin(), page.end());
      for (uint32_t l = 0; l < 16; ++l) {
        SCOPED_TRACE(l);
        const uint32_t offset = l * 256 + (c.wide ? 252 : 0);
        uint32_t stored[2] = {0, 0};
        std::memcpy(stored, page.data() + offset, std::min<uint64_t>(8, kPageBytes - offset));
        const bool on = ((c.exec >> l) & 1) != 0;
        EXPECT_EQ(stored[0], on ? 0x1000 + l : 0u);
        if (c.wide && offset + 8 <= kPageBytes) {
          EXPECT_EQ(stored[1], on ? ~(0x1000 + l) : 0u);
        }
      }
    }
    executor_.set_fast_paths(true);
    EXPECT_EQ(pages[1], pages[0]);
    EXPECT_EQ(messages[1], messages[0]);
    EXPECT_EQ(faults[1], faults[0]);
  }
}

// asm/lane_pages.s: wide loads and stores whose lanes interleave over 8 pages, as tinygrad's matmul reads rows of a
// matrix, with the pages adjacent or apart so that the first two share a slot of the view's page table (and evict
// one another), at aligned, dword-aligned, unaligned and page-straddling addresses and off the last mapped page, under
// full and partial EXEC, in wave32 and wave64. The fast paths must match the general path bit for bit (memory, out,
// the fault and its count), and both must match what the test works out itself: the lanes in order, each access byte
// by byte up to the first unmapped byte, where the wave stops (the bytes before it moved, later lanes did nothing).
TEST_F(ExecutorTest, WideAccessesOverInterleavedPagesMatchTheGeneralPath) {
  constexpr uint64_t kPageBytes = 4096;
  constexpr uint32_t kAccessBytes[8] = {8, 12, 16, 8, 12, 16, 16, 16};
  constexpr bool kStore[8] = {false, false, false, true, true, true, false, true};
  constexpr uint32_t kSentinel[4] = {0xdead0000, 0xbeef0000, 0xcafe0000, 0xf00d0000};  // v[10:13] before the access
  // Two layouts, each at a base of its own (FlatMemory keeps what a test placed, and the other layout's pages would
  // be mapped where these expect a fault): adjacent pages, and pages `apart` bytes apart with the first two in one
  // slot of the page table (the slot is a hash; only the choice of inputs uses it).
  constexpr uint64_t kAdjacentBase = 0x1000000, kApartBase = 0x10000000;
  uint32_t apart = 2 * kPageBytes;
  while (MemoryView::SlotOf(kApartBase + apart) != MemoryView::SlotOf(kApartBase)) apart += kPageBytes;
  ASSERT_LT(apart, 1u << 21) << "the snippet multiplies 24-bit operands";
  for (const bool wave64 : {false, true}) {
    const uint32_t lanes = wave64 ? 64 : 32;
    Load(wave64 ? "lane_pages_wave64" : "lane_pages");
    // Partial: lane 7 (the first lane in the eighth page) and lane 16 off, in wave64 some of the upper half too.
    const uint64_t full = wave64 ? ~uint64_t{0} : 0xffffffffull;
    for (const uint64_t exec : {full, full & uint64_t{0x7ffeffffff7eff7f}}) {
      for (const uint32_t spacing : {uint32_t{kPageBytes}, apart}) {
        const uint64_t base = spacing == kPageBytes ? kAdjacentBase : kApartBase;
        for (const uint32_t shift : {0u, 4u, 6u, 4072u, 4096u}) {
          for (uint32_t op = 0; op < 8; ++op) {
            SCOPED_TRACE(absl::StrFormat("wave%d, EXEC %#x, pages %#x apart, shift %d, access %d", lanes, exec, spacing,
                                         shift, op));
            auto page_of = [&](uint64_t address) -> int {  // which of the 8 pages holds the byte, else -1
              const uint64_t offset = address - base;
              const uint64_t k = offset / spacing;
              return k < 8 && offset % spacing < kPageBytes ? static_cast<int>(k) : -1;
            };
            std::vector<uint8_t> memory[2];
            std::vector<uint32_t> outs[2];
            std::string messages[2];
            int faults[2];
            for (const bool fast : {true, false}) {
              std::span<uint8_t> pages[8];
              for (uint32_t k = 0; k < 8; ++k) {
                pages[k] = fixture_.memory().Place(base + uint64_t{k} * spacing, kPageBytes);
                for (uint64_t i = 0; i < kPageBytes; ++i) pages[k][i] = static_cast<uint8_t>(k * 37 + i * 11 + 5);
              }
              std::span<uint32_t> out = Out(lanes * 4);
              std::vector<uint32_t> user = Pointer(base);
              for (uint32_t word : Pointer(kOut)) user.push_back(word);
              for (uint32_t word :
                   {static_cast<uint32_t>(exec), static_cast<uint32_t>(exec >> 32), shift, spacing, op}) {
                user.push_back(word);
              }
              DispatchState state = State(user, lanes);
              state.dispatch_initiator =
                  gc::COMPUTE_DISPATCH_INITIATOR{}.compute_shader_en(1).cs_w32_en(wave64 ? 0 : 1).raw();
              const int faults_before = fixture_.memory().faults();
              executor_.set_fast_paths(fast);
              const absl::Status status = executor_.Dispatch(state, fixture_.memory());
              executor_.set_fast_paths(true);
              messages[fast] = std::string(status.message());
              faults[fast] = fixture_.memory().faults() - faults_before;
              outs[fast].assign(out.begin(), out.end());
              memory[fast].clear();
              for (uint32_t k = 0; k < 8; ++k)
                memory[fast].insert(memory[fast].end(), pages[k].begin(), pages[k].end());

              // What the test expects, from its own fill of the pages.
              std::vector<uint8_t> want_memory;
              for (uint32_t k = 0; k < 8; ++k) {
                for (uint64_t i = 0; i < kPageBytes; ++i)
                  want_memory.push_back(static_cast<uint8_t>(k * 37 + i * 11 + 5));
              }
              std::vector<uint32_t> want_out(lanes * 4);
              for (uint32_t l = 0; l < lanes; ++l) {
                for (uint32_t i = 0; i < 4; ++i) want_out[l * 4 + i] = kSentinel[i] | l;
              }
              std::optional<uint64_t> fault;
              for (uint32_t l = 0; l < lanes && !fault.has_value(); ++l) {
                if (((exec >> l) & 1) == 0) continue;
                const uint64_t address = base + uint64_t{l % 8} * spacing + 16 * (l / 8) + shift;
                uint8_t lane_bytes[16];
                for (uint32_t i = 0; i < 4; ++i) {
                  const uint32_t dword = kSentinel[i] | l;
                  std::memcpy(lane_bytes + 4 * i, &dword, 4);
                }
                for (uint32_t b = 0; b < kAccessBytes[op]; ++b) {
                  const int k = page_of(address + b);
                  if (k < 0) {
                    fault = address + b;
                    break;
                  }
                  uint8_t& byte = want_memory[k * kPageBytes + ((address + b - base) & (kPageBytes - 1))];
                  if (kStore[op]) {
                    byte = lane_bytes[b];
                  } else {
                    lane_bytes[b] = byte;
                  }
                }
                if (!kStore[op]) std::memcpy(&want_out[l * 4], lane_bytes, 16);
              }
              EXPECT_EQ(status.ok(), !fault.has_value()) << status;
              if (fault.has_value()) {
                // The GMC names the page (the piece) it could not translate; the wave stores nothing to out.
                EXPECT_TRUE(absl::StrContains(status.message(), absl::StrFormat("%#x", *fault & ~(kPageBytes - 1))))
                    << status;
                want_out.assign(lanes * 4, 0);
              }
              EXPECT_EQ(memory[fast], want_memory);
              EXPECT_EQ(outs[fast], want_out);
            }
            EXPECT_EQ(memory[1], memory[0]);
            EXPECT_EQ(outs[1], outs[0]);
            EXPECT_EQ(messages[1], messages[0]);
            EXPECT_EQ(faults[1], faults[0]);
          }
        }
      }
    }
  }
}

TEST_F(ExecutorTest, IllegalInstructionPostsTheSqInterrupt) {
  std::span<uint32_t> out = Out(1);
  absl::Status status = Run("illegal", Pointer(kOut), 1);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(out[0], 0x55u) << "the store before the illegal instruction";
  // v_mov (4 bytes), v_mov with literal (8), global_store (8): the bad word is at program + 20.
  EXPECT_NE(status.message().find("0x10014"), std::string::npos) << status;
  EXPECT_NE(status.message().find("bf860000"), std::string::npos) << status;
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  const InterruptEntry entry = fixture_.interrupts().entries()[0];
  EXPECT_EQ(entry.client_id, regs::ih::SOC21_IH_CLIENTID_GRBM_CP);
  EXPECT_EQ(entry.source_id, regs::ih::GFX_11_0_0__SRCID__SQ_INTERRUPT_ID);
  EXPECT_EQ((entry.src_data[0] >> 21) & 0xf, 1u);  // SQ_INTERRUPT_ERROR_TYPE_ILLEGAL_INST
  EXPECT_EQ((entry.src_data[1] >> 6) & 3, 2u);     // SQ_INTERRUPT_WORD_ENCODING_ERROR
  EXPECT_EQ(entry.src_data[2], kProgram + 20);
  ASSERT_FALSE(fixture_.errors().errors().empty());
  EXPECT_EQ(fixture_.errors().errors()[0].model, "sq");
}

TEST_F(ExecutorTest, TrigPreopReturnsSegmentsOfTwoOverPi) {
  std::span<uint32_t> out = Out(12);
  ASSERT_TRUE(Run("trig_preop", Pointer(kOut), 1).ok());
  // What LLVM 19 constant-folds __builtin_amdgcn_trig_preop(x, segment) to (clang-19 -O2 -emit-llvm).
  constexpr uint64_t kExpected[6] = {
      0x3fe45f306dc9c882,  // (1.0, 0): 2/pi truncated to 53 bits
      0x3c94a7f09d5f47d4,  // (1.0, 1)
      0x394a6ee06db14acc,  // (1.0, 2)
      0x3cb529fc2757d1e0,  // (2^100, 0)
      0x02d7ec47e3574215,  // (2^1000, 3)
      0,                   // (-4.0, 31)
  };
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(out[2 * i] | uint64_t{out[2 * i + 1]} << 32, kExpected[i]) << "case " << i;
  }
}

// tinygrad's uint8 min of six values compiles to v_min_u16 and two v_min3_u16; the dispatch hung while the
// interpreter did not know the 16-bit three-operand forms. Expected values from the ISA's pseudocode for each.
TEST_F(ExecutorTest, SixteenBitMinMaxAndMedianOfThree) {
  std::span<uint32_t> out = Out(12);
  absl::Status status = Run("three_way_16bit", Pointer(kOut), 1);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(out[0], 0xaaaa0005u);  // v_min3_u16: 0x8000 is the largest unsigned; the other half is kept
  EXPECT_EQ(out[1], 0xaaaa8000u);  // v_max3_u16
  EXPECT_EQ(out[2], 0xaaaa8000u);  // v_min3_i16: 0x8000 is -32768
  EXPECT_EQ(out[3], 0xaaaa0007u);  // v_max3_i16
  EXPECT_EQ(out[4], 0xaaaa0007u);  // v_med3_u16
  EXPECT_EQ(out[5], 0xaaaa0005u);  // v_med3_i16
  EXPECT_EQ(out[6], 0x0003bbbbu);  // op_sel: src0's high half in, the result to the high half
  EXPECT_EQ(out[7], 0xc000u);      // v_min3_f16 skips the NaN: -2.0
  EXPECT_EQ(out[8], 0x3c00u);      // v_max3_f16: 1.0
  EXPECT_EQ(out[9], 0x3800u);      // v_med3_f16 (1.0, -2.0, 0.5): 0.5
  EXPECT_EQ(out[10], 0xc000u);     // v_med3_f16 with a NaN is v_min3_f16: -2.0
  EXPECT_EQ(out[11], 0x3c00u);     // v_med3_f16 (2.0, 1.0, -1.0), inline constants: 1.0
}

// VOP3 operations the interpreter lacked (issue 24). Expected values worked by hand from the RDNA3 ISA's pseudocode
// for each (the rows of asm/vop3_more.s show the arithmetic); V_MAD_U16's clamp saturating and its wrap without it
// are also what tinygrad's hardware tests (test/amd/hw/test_vop3.py) expect of the hardware.
TEST_F(ExecutorTest, MaxminF16Mad16SumsOfAbsoluteDifferencesAndLerp) {
  std::span<uint32_t> out = Out(13);
  absl::Status status = Run("vop3_more", Pointer(kOut), 1);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(out[0], 0xaaaa3800u);   // v_maxmin_f16 (1, -2, 0.5): 0.5; the other half kept
  EXPECT_EQ(out[1], 0xaaaa3800u);   // v_minmax_f16 (1, -2, 0.5): 0.5
  EXPECT_EQ(out[2], 0xaaaa3c00u);   // v_minmax_f16 (-2, 0.5, 1): 1.0
  EXPECT_EQ(out[3], 0xaaaa5f97u);   // v_mad_u16 300 * 300 + 7 wraps
  EXPECT_EQ(out[4], 0xaaaaffffu);   // ... with clamp saturates
  EXPECT_EQ(out[5], 0xaaaa8ad7u);   // v_mad_i16 300 * -100 + 7 = -29993
  EXPECT_EQ(out[6], 0xaaaa8ad7u);   // ... clamp leaves a result in range alone
  EXPECT_EQ(out[7], 0xaaaa7fffu);   // v_mad_i16 300 * 300 - 100 with clamp: 32767
  EXPECT_EQ(out[8], 1288u);         // v_sad_u8
  EXPECT_EQ(out[9], 0x012003e8u);   // v_sad_hi_u8
  EXPECT_EQ(out[10], 5113u);        // v_sad_u16
  EXPECT_EQ(out[11], 0x0f0104f8u);  // v_sad_u32
  EXPECT_EQ(out[12], 0x01ff0504u);  // v_lerp_u8
}

// The VALU operations added in session 14 (asm/norm_dot.s, one row each). Expected values are worked out from the
// RDNA3 ISA pseudocode, not by the interpreter: the f16/bf16 ones with numpy (np.float16 arithmetic in float64
// rounded once per step, numpy's rint for the normalized conversions: round half to even) and a Fraction-based
// bf16 rounding, the integer ones by hand:
//   snorm(x) = rint(clamp(x, -1, 1) * 32767), unorm(x) = rint(clamp(x, 0, 1) * 65535), NaN -> 0;
//   0.5 * 32767 = 16383.5 -> 16384 (0x4000); 0.5 * 65535 = 32767.5 -> 32768; 0.1f * 65535 = 6553.50009 -> 6554;
//   f16 0x3555 = 0.333251953125, * 65535 = 21839.66 -> 21840 (0x5550).
//   v_dot2_f16_f16 ({1 + 3/1024, 1}, {1 + 3/1024, -1}, 0): the product 1 + 6/1024 + 9/2^20 rounds to 1 + 6/1024,
//   minus 1 leaves 6/1024 = 0x1e00 (rounding only once would give 0x1e02). With S2 = 1 from the high half:
//   1 + (1 + 6/1024) = 0x4003, minus 1 = 0x3c06. 65504 * 2 overflows to +inf; 2^-14 * 0.5 = 2^-15 = 0x0200, a
//   denormal kept. bf16 {1 + 3/128, 1} the same way: 6/128 = 0x3d40 (once: 0x3d42).
//   dot4: 0xff*2 + 2*0xff + 3*5 + 4*6 + 7 = 1066; signed both: -2 - 2 + 15 + 24 + 7 = 42; S0 signed only: -2 + 510
//   + 39 + 7 = 554. dot8 u4 of 0x12345678 and 0x11111111: 1 + ... + 8 = 36; iu4: 1 * 3 + (-1) * 2 + 5 = 6.
//   0xffffff00 + 4 * 255 * 255 wraps to 0x3f704, clamps to 0xffffffff; 0x7fffffff + 4 * 16384 clamps.
//   -MAX_FLOAT is 0xff7fffff. A NaN gets the quiet bit (bit 22) set: sNaN 0x7f800001 -> 0x7fc00001.
// Run with the fast paths on and off: the v_fma_f32/v_fmac_f32 rows take FastValu's fma when they are on.
TEST_F(ExecutorTest, NormalizedConversionsAndDotProducts) {
  constexpr int kRows = 81;
  for (const bool fast : {true, false}) {  // the fma rows take the fast path when it is on
    SCOPED_TRACE(fast ? "fast paths" : "general paths");
    executor_.set_fast_paths(fast);
    std::span<uint32_t> out = Out(kRows);
    absl::Status status = Run("norm_dot", Pointer(kOut), 1);
    ASSERT_TRUE(status.ok()) << status;
    const uint32_t expected[] = {
        0xc0004000u,  // v_cvt_pk_norm_i16_f32 (0.5, -0.5): ties 16384, -16384
        0x80017fffu,  // (2, -inf): 32767, -32767
        0x20000000u,  // (NaN, 0.25): 0, 8191.75 -> 8192
        0xffff8000u,  // v_cvt_pk_norm_u16_f32 (0.5, 2): 32768, 65535
        0x199a0000u,  // (-1, 0.1f): 0, 6554
        0x80014000u,  // v_cvt_pk_norm_i16_f16 (0.5, -1)
        0x7fffc000u,  // op_sel: (-0.5, 1)
        0x5550ffffu,  // v_cvt_pk_norm_u16_f16 (+inf, 0.33325)
        0x007b8000u,  // v_cvt_pk_i16_f32 (-40000.5, 123.9): -32768, 123
        0x0000ffffu,  // v_cvt_pk_u16_f32 (70000, -4): 65535, 0
        0xfffe0000u,  // (NaN, 65534.9): 0, 65534
        0xaaaac000u,  // v_cvt_norm_i16_f16 -0.5: -16384, high half kept
        0xaaaa0000u,  // v_cvt_norm_u16_f16 NaN: 0
        0xaaaaff00u,  // v_sat_pk_u8_i16 {-128, 291}: {0, 255}
        0xaaaa1e00u,  // v_dot2_f16_f16, rounded per step
        0x3c06bbbbu,  // ... S2 and D in the high halves
        0xaaaa7c00u,  // ... overflow: +inf
        0xaaaa0200u,  // ... denormal result
        0xaaaa3d40u,  // v_dot2_bf16_bf16, rounded per step
        0xbf800000u,  // v_dot2acc_f32_f16: 1 + 2 * 0.5 + 3 * -1 = -1
        0x40a00000u,  // v_fma_dx9_zero_f32 (0, inf, 5): 5
        0x40e00000u,  // (2, 3, 1): 7
        0x3f800000u,  // (NaN, 0, 1): 1
        0x40200000u,  // v_fmac_dx9_zero_f32 (inf, 0) + 2.5: 2.5
        0x00004700u,  // v_pk_fmac_f16: {2 * 3 + 1, 0.5 * -4 + 2} = {7, +0}
        0xaaaa3c00u,  // v_sin_f16 0.25 revolutions: 1
        0xaaaabc00u,  // v_cos_f16 0.5 revolutions: -1
        0xaaaa3a00u,  // v_frexp_mant_f16 12: 0.75
        0xaaaa0004u,  // v_frexp_exp_i16_f16 12: 4
        0xaaaa7c00u,  // v_div_fixup_f16 (2, +0, 1): +inf
        0xaaaa4200u,  // v_div_fixup_f16 (-3, 2, 6): 3
        0x11ff3344u,  // v_cvt_pk_u8_f32 300 into byte 2: 255
        0x11220744u,  // 7.9 into byte 1: 7
        1033u,        // v_msad_u8: 1000 + 16 + 1 + 16 (byte 2's reference is 0)
        0xbee00000u,  // v_cvt_off_f32_i4 9: -7/16
        0x3ee00000u,  // 7: 7/16
        222u,         // v_swap_b32
        111u,
        333u,         // v_permlane64_b32 in wave32: a NOP
        0xfff3fffcu,  // v_pk_mad_i16 {3 * 4 - 16, -2 * 7 + 1} = {-4, -13}
        0x41000000u,  // v_dot2_f32_bf16 10 + 2 * 0.5 + 3 * -1 = 8
        1066u,        // v_dot4_u32_u8
        42u,          // v_dot4_i32_iu8, both signed
        554u,         // ... S0 signed
        36u,          // v_dot8_u32_u4
        6u,           // v_dot8_i32_iu4, both signed
        0x0003f704u,  // v_dot4_u32_u8 wraps
        0xffffffffu,  // ... clamp
        0x7fffffffu,  // v_dot4_i32_iu8 clamp
        0xbf800000u,  // v_dual_dot2acc_f32_f16
        77u,          // ... beside v_dual_mov_b32
        22u,          // v_movrels_b32 v1, v20 with M0 = 2: v22
        21u,          // v_movreld_b32 v20, v21: v22 = 21
        24u,          // v_movrelsd_b32 v21, v22: v23 = v24
        21u,          // v_movrelsd_2_b32 v20, v20, M0 = 0x00030001: v23 = v21
        21u,          // v_swaprel_b32 v21, v20: v24 = v21 (21) ...
        24u,          // ... and v21 = v24 (24)
        0x40c00000u,  // v_mullit_f32 (2, 3, 1): 6
        0xff7fffffu,  // (2, 3, 0): -MAX_FLOAT
        0xff7fffffu,  // (2, -inf, 1): -MAX_FLOAT
        0x7fc00001u,  // v_fma_f32 (sNaN 0x7f800001, NaN, NaN): S0's, quiet bit 22 set
        0xffc00123u,  // v_fma_f32 (1, NaN 0xffc00123, NaN): S1's
        0x7fc00001u,  // v_fmac_f32 (2, sNaN) + NaN: S1's, quietened
        0x40400000u,  // v_cubeid_f32 (1, -3, 2): y major, y < 0: 3
        0x3f800000u,  // v_cubesc_f32: x = 1
        0xc0000000u,  // v_cubetc_f32: -z = -2
        0xc0c00000u,  // v_cubema_f32: 2y = -6
        0x40a00000u,  // v_cubeid_f32 (1, 2, -4): z major, z < 0: 5
        0xbf800000u,  // v_cubesc_f32: -x = -1
        0x3f800000u,  // v_cubeid_f32 (-5, 1, 2): x major, x < 0: 1
        0x40000000u,  // v_cubesc_f32: z = 2
        0x00060001u,  // v_qsad_pk_u16_u8: windows 01020304 .. 04050607 against 01020304: 0, 4, 8, 12
        0x0010000bu,  // ... plus 1, 2, 3, 4: {1, 6, 11, 16}
        0x00050001u,  // v_mqsad_pk_u16_u8, reference byte 2 skipped: 0, 3, 6, 9 plus 1..4: {1, 5, 9, 13}
        0x000d0009u,
        0x00020001u,  // v_qsad_pk_u16_u8 with part 1 = 0xfffe: 0xfffe + 4 wraps to 2
        0x0010000bu,
        100u,  // v_mqsad_u32_u8: {100, 200, 0xffffffff, 400} + {0, 3, 6, 9}
        203u,
        5u,  // 0xffffffff + 6 wraps
        409u,
    };
    static_assert(std::size(expected) == kRows);  // every row has its value (an initializer list may fall short)
    for (int row = 0; row < kRows; ++row) EXPECT_EQ(out[row], expected[row]) << "row " << row;
  }
  executor_.set_fast_paths(true);
}

// V_PERMLANE64_B32 in wave64 (asm/permlane64_wave64.s): lane l reads lane l ^ 32 of v1 = 10 * lane; with EXEC
// holding lanes 0-31 only, those lanes still read lanes 32-63 and lanes 32-63 keep their 7.
TEST_F(ExecutorTest, Permlane64SwapsTheHalvesOfAWave64) {
  std::span<uint32_t> out = Out(128);
  Load("permlane64_wave64");
  DispatchState state = State(Pointer(kOut), 64);
  state.dispatch_initiator = gc::COMPUTE_DISPATCH_INITIATOR{}.compute_shader_en(1).cs_w32_en(0).raw();
  absl::Status status = executor_.Dispatch(state, fixture_.memory());
  ASSERT_TRUE(status.ok()) << status;
  for (uint32_t lane = 0; lane < 64; ++lane) {
    EXPECT_EQ(out[lane], 10 * (lane ^ 32)) << "lane " << lane;
    EXPECT_EQ(out[64 + lane], lane < 32 ? 10 * (lane + 32) : 7u) << "partial EXEC, lane " << lane;
  }
}

// V_PERMLANE16_B32 / V_PERMLANEX16_B32 on a full wave32 (RDNA3 ISA pseudocode): each lane of a row takes the lane
// its 4-bit select names, from its own row or (x16) from the other one.
TEST_F(ExecutorTest, PermlaneSwizzlesWithinAndAcrossRowsOfSixteen) {
  std::span<uint32_t> out = Out(64);
  absl::Status status = Run("permlane", Pointer(kOut), 32);
  ASSERT_TRUE(status.ok()) << status;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    // The selects, nibble i for lane i: 0x01234567 gives lanes 0-7 the sources 7..0, 0x89abcdef lanes 8-15 15..8.
    const uint32_t row = lane / 16, in_row = lane % 16, selected = in_row < 8 ? 7 - in_row : 23 - in_row;
    EXPECT_EQ(out[lane], 10 * (row * 16 + selected)) << "permlane16, lane " << lane;
    EXPECT_EQ(out[32 + lane], 10 * ((row ^ 1) * 16 + selected)) << "permlanex16, lane " << lane;
  }
}

TEST_F(ExecutorTest, STrapWithoutATrapHandlerStopsTheDispatchAndDebugtrapContinues) {
  std::span<uint32_t> out = Out(3);
  out[2] = 0xdeadbeef;
  std::vector<uint32_t> user = Pointer(kOut);
  user.push_back(0);  // s2 = 0: the s_trap path
  absl::Status status = Run("halt", user, 1);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("s_trap 2"), std::string::npos) << status;
  EXPECT_EQ(out[0], 0x55u);
  EXPECT_EQ(out[1], 0x66u) << "s_trap 3 (llvm.debugtrap) without a debugger continues";
  EXPECT_EQ(out[2], 0xdeadbeefu) << "the wave ran past s_trap 2";
  ASSERT_FALSE(fixture_.errors().errors().empty());
  EXPECT_EQ(fixture_.errors().errors()[0].model, "sq");
}

TEST_F(ExecutorTest, SSethaltHaltsTheWaveForGood) {
  std::span<uint32_t> out = Out(3);
  out[2] = 0xdeadbeef;
  std::vector<uint32_t> user = Pointer(kOut);
  user.push_back(1);  // s2 = 1: the s_sethalt path
  absl::Status status = Run("halt", user, 1);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("s_sethalt 1"), std::string::npos) << status;
  EXPECT_EQ(out[0], 0x55u);
  EXPECT_EQ(out[1], 0x66u) << "s_sethalt 0 continues";
  EXPECT_EQ(out[2], 0xdeadbeefu) << "the wave ran past s_sethalt 1";
}

TEST_F(ExecutorTest, BadWorkgroupSizeIsRefused) {
  Load("salu");
  DispatchState state = State(Pointer(kOut), 0);
  EXPECT_FALSE(executor_.Dispatch(state, fixture_.memory()).ok());
  state.num_thread = {2048, 1, 1};
  EXPECT_FALSE(executor_.Dispatch(state, fixture_.memory()).ok());
}

// V_WMMA_* (asm/wmma.s in wave32, asm/wmma_wave64.s). Every expected value comes from the matrices, by plain loops
// over rows, columns and K; the tests put the matrices into VGPR images and read D back with their own encoding of
// the layout that AMD's Matrix Instruction Calculator prints for gfx11 (matrix_calculator.py -a rdna3 -i <op> -d):
//   A[i][k] and B[k][j]: bits (k * size) % 32 of VGPR k * size / 32 of lanes i (j), i + 16, ... (every 16th lane);
//   C[i][j] and D[i][j]: VGPR i / (lanes / 16), lane (16 * i) % lanes + j; a 16-bit C/D in the half OPSEL[2] picks.
// The matrices are not symmetric, so a transposed A or B, or C's rows in the wrong VGPRs, changes D.
constexpr int kDim = 16;
constexpr int kHalfBits = 16;
constexpr int kBf16Shift = 16;  // a bf16 is the top half of an f32
constexpr int kSlotVgprs = 4;   // the snippets move VGPRs four at a time (global_load/store_b128)
using Matrix = std::array<std::array<double, kDim>, kDim>;
using IntMatrix = std::array<std::array<int64_t, kDim>, kDim>;

uint16_t F16Bits(double value) { return std::bit_cast<uint16_t>(static_cast<_Float16>(value)); }
double FromF16(uint32_t bits) { return std::bit_cast<_Float16>(static_cast<uint16_t>(bits)); }
// The matrices hold bf16 values already, so the encoding is the f32's top half.
uint16_t Bf16Bits(double value) {
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(value)) >> kBf16Shift);
}
double FromBf16(uint32_t bits) { return std::bit_cast<float>(bits << kBf16Shift); }
double RoundToF16(double value) { return FromF16(F16Bits(value)); }
// To nearest even: add half a bf16 ulp less one, plus the kept lowest bit, then cut.
double RoundToBf16(double value) {
  const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(value));
  const uint32_t half_ulp = 1u << (kBf16Shift - 1);
  return FromBf16((bits + half_ulp - 1 + ((bits >> kBf16Shift) & 1)) >> kBf16Shift);
}

// A wave's VGPRs as the snippets move them: slot s, lane l, dword j at memory[(s * lanes + l) * 4 + j].
class VgprImages {
 public:
  explicit VgprImages(int lanes) : lanes_(lanes) {}
  uint32_t& at(int vgpr, int lane) { return v_[vgpr][lane]; }
  uint32_t at(int vgpr, int lane) const { return v_[vgpr][lane]; }
  void ToSlots(const std::vector<int>& first_vgprs, std::span<uint32_t> memory) const {
    for (size_t s = 0; s < first_vgprs.size(); ++s) {
      for (int lane = 0; lane < lanes_; ++lane) {
        for (int j = 0; j < kSlotVgprs; ++j) {
          memory[(s * lanes_ + lane) * kSlotVgprs + j] = at(first_vgprs[s] + j, lane);
        }
      }
    }
  }
  void FromSlots(const std::vector<int>& first_vgprs, std::span<const uint32_t> memory) {
    for (size_t s = 0; s < first_vgprs.size(); ++s) {
      for (int lane = 0; lane < lanes_; ++lane) {
        for (int j = 0; j < kSlotVgprs; ++j) {
          at(first_vgprs[s] + j, lane) = memory[(s * lanes_ + lane) * kSlotVgprs + j];
        }
      }
    }
  }

  // A (element(i, k) = A[i][k]) or B (element(j, k) = B[k][j]), `bits` per element.
  void PutInput(int first_vgpr, int bits, const std::function<uint32_t(int outer, int k)>& element) {
    for (int lane = 0; lane < lanes_; ++lane) {
      for (int k = 0; k < kDim; ++k) {
        const uint32_t mask = (1u << bits) - 1;
        at(first_vgpr + k * bits / 32, lane) |= (element(lane % kDim, k) & mask) << (k * bits % 32);
      }
    }
  }
  // C or D: the whole 32 bits, or the half `shift` selects of a 16-bit matrix.
  int AccumulatorVgpr(int row) const { return row / (lanes_ / kDim); }
  int AccumulatorLane(int row, int column) const { return (kDim * row) % lanes_ + column; }
  void PutAccumulator(int first_vgpr, int shift, const std::function<uint32_t(int row, int column)>& element) {
    for (int row = 0; row < kDim; ++row) {
      for (int column = 0; column < kDim; ++column) {
        at(first_vgpr + AccumulatorVgpr(row), AccumulatorLane(row, column)) |= element(row, column) << shift;
      }
    }
  }
  uint32_t Accumulator(int first_vgpr, int row, int column) const {
    return at(first_vgpr + AccumulatorVgpr(row), AccumulatorLane(row, column));
  }

 private:
  int lanes_;
  std::array<std::array<uint32_t, kMaxLanes>, kVgprCount> v_{};
};

// The inputs of asm/wmma.s. Float matrices hold values their type represents exactly; a8/b8/a4/b4 hold raw bytes
// and nibbles (the WMMA's NEG bits decide their signedness).
struct WmmaInputs {
  Matrix a16, b16, abf, bbf, c32, c16_lo, c16_hi, cbf_lo, cbf_hi;
  IntMatrix a8, b8, a4, b4, c_i32;
};

// A fixed pseudo-random sequence (a 64-bit LCG, Knuth's MMIX constants).
class Sequence {
 public:
  uint32_t Next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state_ >> 33);
  }
  int Between(int low, int high) { return low + static_cast<int>(Next() % static_cast<uint32_t>(high - low + 1)); }

 private:
  uint64_t state_ = 0x5eed;
};

// Small integers: every product, sum and result is exact in every type (|D| < 128 for f16/bf16).
// With `fractions`, the float matrices hold fractions of many magnitudes instead, so the sums round.
WmmaInputs MakeInputs(bool fractions) {
  Sequence random;
  WmmaInputs in;
  auto value = [&](int small, auto round) {
    if (!fractions) return static_cast<double>(random.Between(-small, small));
    return round(random.Between(-30000, 30000) / 7919.0 * std::ldexp(1.0, random.Between(-4, 2)));
  };
  auto f16 = [](double v) { return RoundToF16(v); };
  auto bf16 = [](double v) { return RoundToBf16(v); };
  auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  for (int i = 0; i < kDim; ++i) {
    for (int j = 0; j < kDim; ++j) {
      in.a16[i][j] = value(3, f16);
      in.b16[i][j] = value(2, f16);
      in.abf[i][j] = value(3, bf16);
      in.bbf[i][j] = value(2, bf16);
      in.c32[i][j] = value(30, f32);
      in.c16_lo[i][j] = value(15, f16);
      in.c16_hi[i][j] = value(15, f16);
      in.cbf_lo[i][j] = value(15, bf16);
      in.cbf_hi[i][j] = value(15, bf16);
      in.a8[i][j] = random.Between(0, 255);
      in.b8[i][j] = random.Between(0, 255);
      in.a4[i][j] = random.Between(0, 15);
      in.b4[i][j] = random.Between(0, 15);
      // Rows 0 and 1 sit next to INT32_MAX and INT32_MIN, so that sums there overflow (wrapping, or with CLAMP
      // saturating).
      in.c_i32[i][j] = i == 0 ? INT32_MAX - 40 + j : i == 1 ? INT32_MIN + 40 - j : random.Between(-100000, 100000);
    }
  }
  return in;
}

double Dot(const Matrix& a, const Matrix& b, int i, int j, const std::function<double(int k, double)>& b_mod = {}) {
  double sum = 0;
  for (int k = 0; k < kDim; ++k) sum += a[i][k] * (b_mod ? b_mod(k, b[k][j]) : b[k][j]);
  return sum;
}
double AbsDot(const Matrix& a, const Matrix& b, int i, int j) {
  double sum = 0;
  for (int k = 0; k < kDim; ++k) sum += std::fabs(a[i][k] * b[k][j]);
  return sum;
}
int64_t IntDot(const IntMatrix& a, bool a_signed, const IntMatrix& b, bool b_signed, int bits, int i, int j) {
  auto value = [bits](int64_t raw, bool is_signed) {
    return is_signed && raw >= (1 << (bits - 1)) ? raw - (1 << bits) : raw;
  };
  int64_t sum = 0;
  for (int k = 0; k < kDim; ++k) sum += value(a[i][k], a_signed) * value(b[k][j], b_signed);
  return sum;
}

class WmmaTest : public ExecutorTest {
 protected:
  // asm/wmma.s's slots: inputs v8-v91 and v172-v179, results v68-v179.
  static std::vector<int> InputSlots() {
    std::vector<int> slots;
    for (int v = 8; v < 92; v += kSlotVgprs) slots.push_back(v);
    slots.push_back(172);
    slots.push_back(176);
    return slots;
  }
  static std::vector<int> OutputSlots() {
    std::vector<int> slots;
    for (int v = 68; v < 180; v += kSlotVgprs) slots.push_back(v);
    return slots;
  }
  // What v[172:179] holds before the WMMA that writes their low halves.
  static uint32_t Prior(int vgpr, int lane) { return 0xa5000000u | vgpr << 8 | lane; }

  VgprImages Encode(const WmmaInputs& in) {
    VgprImages v(32);
    v.PutInput(8, 16, [&](int i, int k) { return F16Bits(in.a16[i][k]); });
    v.PutInput(16, 16, [&](int j, int k) { return F16Bits(in.b16[k][j]); });
    v.PutInput(24, 16, [&](int i, int k) { return Bf16Bits(in.abf[i][k]); });
    v.PutInput(32, 16, [&](int j, int k) { return Bf16Bits(in.bbf[k][j]); });
    v.PutInput(40, 8, [&](int i, int k) { return static_cast<uint32_t>(in.a8[i][k]); });
    v.PutInput(44, 8, [&](int j, int k) { return static_cast<uint32_t>(in.b8[k][j]); });
    v.PutInput(48, 4, [&](int i, int k) { return static_cast<uint32_t>(in.a4[i][k]); });
    v.PutInput(50, 4, [&](int j, int k) { return static_cast<uint32_t>(in.b4[k][j]); });
    v.PutAccumulator(52, 0, [&](int i, int j) { return std::bit_cast<uint32_t>(static_cast<float>(in.c32[i][j])); });
    v.PutAccumulator(60, 0, [&](int i, int j) { return static_cast<uint32_t>(in.c_i32[i][j]); });
    for (int c16 : {68, 84}) {
      v.PutAccumulator(c16, 0, [&](int i, int j) { return uint32_t{F16Bits(in.c16_lo[i][j])}; });
      v.PutAccumulator(c16, kHalfBits, [&](int i, int j) { return uint32_t{F16Bits(in.c16_hi[i][j])}; });
    }
    v.PutAccumulator(76, 0, [&](int i, int j) { return uint32_t{Bf16Bits(in.cbf_lo[i][j])}; });
    v.PutAccumulator(76, kHalfBits, [&](int i, int j) { return uint32_t{Bf16Bits(in.cbf_hi[i][j])}; });
    for (int r = 172; r < 180; ++r) {
      for (int lane = 0; lane < 32; ++lane) v.at(r, lane) = Prior(r, lane);
    }
    return v;
  }

  // Runs asm/wmma.s on `images` with EXEC = `exec` during the WMMAs; the results replace v68-v179 of `images`.
  absl::Status RunWmma(VgprImages& images, uint32_t exec = 0xffffffffu) {
    const std::vector<int> inputs = InputSlots(), outputs = OutputSlots();
    std::span<uint8_t> in_bytes = fixture_.memory().Place(kIn, inputs.size() * 32 * kSlotVgprs * 4);
    images.ToSlots(inputs, {reinterpret_cast<uint32_t*>(in_bytes.data()), in_bytes.size() / 4});
    out_ = Out(outputs.size() * 32 * kSlotVgprs);
    std::fill(out_.begin(), out_.end(), kUntouched);
    std::vector<uint32_t> user = Pointer(kOut);
    for (uint32_t v : Pointer(kIn)) user.push_back(v);
    user.push_back(exec);
    absl::Status status = Run("wmma", user);
    if (status.ok()) images.FromSlots(outputs, out_);
    return status;
  }

  // Checks every result of asm/wmma.s against the matrices. `exact`: every float result must be the exact value;
  // otherwise within the error of summing 17 terms in f32 (at most 16 roundings of 2^-24 of the running sum, so
  // 16 * 2^-24 * the sum of the terms' magnitudes) plus the 16-bit result's own rounding.
  void ExpectResults(const WmmaInputs& in, const VgprImages& v, bool exact) {
    auto expect_float = [&](const char* what, double got, double want, double magnitude, double result_epsilon) {
      const double tolerance = exact ? 0 : 16 * std::ldexp(magnitude, -24) + result_epsilon * std::fabs(want);
      EXPECT_NEAR(got, want, tolerance) << what;
    };
    const double kF32 = 0, kF16 = std::ldexp(1.0, -11), kBf16 = std::ldexp(1.0, -8);  // half an ulp, relative
    auto f32_at = [&](int first, int i, int j) { return static_cast<double>(F(v.Accumulator(first, i, j))); };
    int saturated[2] = {0, 0};
    for (int i = 0; i < kDim; ++i) {
      for (int j = 0; j < kDim; ++j) {
        SCOPED_TRACE(absl::StrFormat("row %d column %d", i, j));
        const double ab = Dot(in.a16, in.b16, i, j), ab_mag = AbsDot(in.a16, in.b16, i, j);
        const double bf = Dot(in.abf, in.bbf, i, j), bf_mag = AbsDot(in.abf, in.bbf, i, j);
        const double c = in.c32[i][j];
        expect_float("f32_f16", f32_at(92, i, j), ab + c, ab_mag + std::fabs(c), kF32);
        expect_float("f32_bf16", f32_at(100, i, j), bf + c, bf_mag + std::fabs(c), kF32);
        expect_float("f32_f16 C = 1.0", f32_at(148, i, j), ab + 1, ab_mag + 1, kF32);
        expect_float("f32_f16 neg_lo:[1,0,1] neg_hi:[1,0,0]", f32_at(156, i, j), -ab - c, ab_mag + std::fabs(c), kF32);
        const double b_even_negated = Dot(in.a16, in.b16, i, j, [](int k, double b) { return k % 2 == 0 ? -b : b; });
        expect_float("f32_f16 neg_lo:[0,1,0] neg_hi:[0,0,1]", f32_at(164, i, j), b_even_negated + std::fabs(c),
                     ab_mag + std::fabs(c), kF32);

        // 16-bit results: the half OPSEL[2] picks is written, the other half keeps what was there.
        const uint32_t low_written = v.Accumulator(68, i, j), high_written = v.Accumulator(84, i, j);
        expect_float("f16 (low halves)", FromF16(low_written & 0xffff), ab + in.c16_lo[i][j],
                     ab_mag + std::fabs(in.c16_lo[i][j]), kF16);
        EXPECT_EQ(low_written >> kHalfBits, F16Bits(in.c16_hi[i][j])) << "f16 op_sel:[0,0,0] kept the high half";
        expect_float("f16 op_sel:[0,0,1] (high halves)", FromF16(high_written >> kHalfBits), ab + in.c16_hi[i][j],
                     ab_mag + std::fabs(in.c16_hi[i][j]), kF16);
        EXPECT_EQ(high_written & 0xffff, F16Bits(in.c16_lo[i][j])) << "f16 op_sel:[0,0,1] kept the low half";
        const uint32_t bf16_written = v.Accumulator(76, i, j);
        expect_float("bf16 (low halves)", FromBf16(bf16_written & 0xffff), bf + in.cbf_lo[i][j],
                     bf_mag + std::fabs(in.cbf_lo[i][j]), kBf16);
        EXPECT_EQ(bf16_written >> kHalfBits, Bf16Bits(in.cbf_hi[i][j])) << "bf16 kept the high half";
        const uint32_t constant_written = v.Accumulator(172, i, j);
        expect_float("f16 C = -2.0", FromF16(constant_written & 0xffff), ab - 2, ab_mag + 2, kF16);
        EXPECT_EQ(constant_written >> kHalfBits,
                  Prior(172 + v.AccumulatorVgpr(i), v.AccumulatorLane(i, j)) >> kHalfBits);

        // Integers: exact, wrapping at 32 bits, or saturating with CLAMP.
        const int64_t ci = in.c_i32[i][j];
        auto wrapped = [](int64_t sum) { return static_cast<uint32_t>(sum); };
        auto clamped = [&](int64_t sum, int& count) {
          if (sum > INT32_MAX || sum < INT32_MIN) ++count;
          return static_cast<uint32_t>(std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX));
        };
        EXPECT_EQ(v.Accumulator(108, i, j), wrapped(IntDot(in.a8, true, in.b8, true, 8, i, j) + ci)) << "iu8 signed";
        EXPECT_EQ(v.Accumulator(116, i, j), wrapped(IntDot(in.a8, false, in.b8, false, 8, i, j) + ci))
            << "iu8 unsigned";
        EXPECT_EQ(v.Accumulator(124, i, j), clamped(IntDot(in.a8, true, in.b8, false, 8, i, j) + ci, saturated[0]))
            << "iu8 signed A, unsigned B, clamp";
        EXPECT_EQ(v.Accumulator(132, i, j), wrapped(IntDot(in.a4, true, in.b4, true, 4, i, j) + ci)) << "iu4 signed";
        EXPECT_EQ(v.Accumulator(140, i, j), clamped(IntDot(in.a4, false, in.b4, true, 4, i, j) + ci, saturated[1]))
            << "iu4 unsigned A, signed B, clamp";
      }
    }
    EXPECT_GT(saturated[0], 0) << "no iu8 result exercised CLAMP";
    EXPECT_GT(saturated[1], 0) << "no iu4 result exercised CLAMP";
  }

  static constexpr uint32_t kUntouched = 0xdeadbeef;
  std::span<uint32_t> out_;  // asm/wmma.s's results in memory
};

TEST_F(WmmaTest, SmallIntegerMatricesMultiplyExactlyInEveryVariant) {
  const WmmaInputs in = MakeInputs(/*fractions=*/false);
  VgprImages v = Encode(in);
  ASSERT_TRUE(RunWmma(v).ok());
  ExpectResults(in, v, /*exact=*/true);
}

TEST_F(WmmaTest, FractionsSumInSinglePrecision) {
  const WmmaInputs in = MakeInputs(/*fractions=*/true);
  VgprImages v = Encode(in);
  ASSERT_TRUE(RunWmma(v).ok());
  ExpectResults(in, v, /*exact=*/false);
}

TEST_F(WmmaTest, AnF16ResultWithOpsel2WritesTheHighHalvesAndKeepsTheLowHalves) {
  const WmmaInputs in = MakeInputs(/*fractions=*/false);
  VgprImages v = Encode(in);
  ASSERT_TRUE(RunWmma(v).ok());
  for (int r = 84; r < 92; ++r) {
    for (int lane = 0; lane < 32; ++lane) {
      const int row = 2 * (r - 84) + lane / 16, column = lane % 16;
      const double want = Dot(in.a16, in.b16, row, column) + in.c16_hi[row][column];
      EXPECT_EQ(v.at(r, lane) >> kHalfBits, F16Bits(want)) << "v" << r << " lane " << lane;
      EXPECT_EQ(v.at(r, lane) & 0xffff, F16Bits(in.c16_lo[row][column])) << "v" << r << " lane " << lane;
    }
  }
}

TEST_F(WmmaTest, ExecOtherThanAllOnesIsAnIllegalInstruction) {
  VgprImages v = Encode(MakeInputs(false));
  absl::Status status = RunWmma(v, /*exec=*/0x0000ffff);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "v_wmma_f32_16x16x16_f16")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "WMMA")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "EXEC is 0xffff")) << status;
  for (uint32_t word : out_) ASSERT_EQ(word, kUntouched) << "a store after the refused WMMA ran";
  ASSERT_TRUE(fixture_.interrupts().WaitFor(1));
  EXPECT_EQ((fixture_.interrupts().entries()[0].src_data[0] >> 21) & 0xf, 1u);  // SQ_INTERRUPT_ERROR_TYPE_ILLEGAL_INST
}

TEST_F(WmmaTest, LanesThatDoNotRepeatAAndBAreRefused) {
  VgprImages v = Encode(MakeInputs(false));
  v.at(9, 20) ^= 1;  // A's elements 2 and 3 of row 4, in lane 20's copy only
  absl::Status status = RunWmma(v);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "WMMA's A in lane 20 (VGPR 1 of its block) differs from lane 4's"))
      << status;
}

// asm/wmma_wave64.s: in wave64 C and D take 4 VGPRs with 4 rows each; A and B keep their VGPRs, in 4 copies.
TEST_F(WmmaTest, Wave64HoldsFourRowsPerAccumulatorVgpr) {
  const WmmaInputs in = MakeInputs(/*fractions=*/false);
  VgprImages v(64);
  v.PutInput(8, 16, [&](int i, int k) { return F16Bits(in.a16[i][k]); });
  v.PutInput(16, 16, [&](int j, int k) { return F16Bits(in.b16[k][j]); });
  v.PutAccumulator(24, 0, [&](int i, int j) { return std::bit_cast<uint32_t>(static_cast<float>(in.c32[i][j])); });
  v.PutAccumulator(28, 0, [&](int i, int j) { return uint32_t{F16Bits(in.c16_lo[i][j])}; });
  v.PutAccumulator(28, kHalfBits, [&](int i, int j) { return uint32_t{F16Bits(in.c16_hi[i][j])}; });
  v.PutInput(32, 8, [&](int i, int k) { return static_cast<uint32_t>(in.a8[i][k]); });
  v.PutInput(36, 8, [&](int j, int k) { return static_cast<uint32_t>(in.b8[k][j]); });
  v.PutAccumulator(40, 0, [&](int i, int j) { return static_cast<uint32_t>(in.c_i32[i][j]); });
  const std::vector<int> inputs{8, 12, 16, 20, 24, 28, 32, 36, 40}, outputs{28, 32, 36, 40, 44, 48};
  std::span<uint8_t> in_bytes = fixture_.memory().Place(kIn, inputs.size() * 64 * kSlotVgprs * 4);
  v.ToSlots(inputs, {reinterpret_cast<uint32_t*>(in_bytes.data()), in_bytes.size() / 4});
  std::span<uint32_t> out = Out(outputs.size() * 64 * kSlotVgprs);
  std::vector<uint32_t> user = Pointer(kOut);
  for (uint32_t word : Pointer(kIn)) user.push_back(word);
  user.push_back(0xffffffffu);
  user.push_back(0xffffffffu);
  Load("wmma_wave64");
  DispatchState state = State(user, 64);
  state.dispatch_initiator = gc::COMPUTE_DISPATCH_INITIATOR{}.compute_shader_en(1).cs_w32_en(0).raw();
  ASSERT_TRUE(executor_.Dispatch(state, fixture_.memory()).ok());
  v.FromSlots(outputs, out);
  for (int i = 0; i < kDim; ++i) {
    for (int j = 0; j < kDim; ++j) {
      SCOPED_TRACE(absl::StrFormat("row %d column %d", i, j));
      const double ab = Dot(in.a16, in.b16, i, j);
      EXPECT_EQ(F(v.Accumulator(44, i, j)), ab + in.c32[i][j]) << "f32_f16";
      EXPECT_EQ(v.Accumulator(28, i, j),
                uint32_t{F16Bits(ab + in.c16_hi[i][j])} << kHalfBits | F16Bits(in.c16_lo[i][j]))
          << "f16 op_sel:[0,0,1]";
      EXPECT_EQ(v.Accumulator(48, i, j),
                static_cast<uint32_t>(IntDot(in.a8, true, in.b8, true, 8, i, j) + in.c_i32[i][j]))
          << "iu8 signed";
    }
  }
  // The layout itself: row 5 of D is in VGPR 1 (rows 4-7), lanes 16-31.
  EXPECT_EQ(F(v.at(45, 16 + 3)), Dot(in.a16, in.b16, 5, 3) + in.c32[5][3]);
}

TEST_F(WmmaTest, Wave64NeedsAllSixtyFourLanes) {
  Load("wmma_wave64");
  std::vector<uint32_t> user = Pointer(kOut);
  for (uint32_t word : Pointer(kIn)) user.push_back(word);
  user.push_back(0xffffffffu);
  user.push_back(0);  // the high half of EXEC off
  fixture_.memory().Place(kIn, 9 * 64 * kSlotVgprs * 4);
  Out(6 * 64 * kSlotVgprs);
  DispatchState state = State(user, 64);
  state.dispatch_initiator = gc::COMPUTE_DISPATCH_INITIATOR{}.compute_shader_en(1).cs_w32_en(0).raw();
  absl::Status status = executor_.Dispatch(state, fixture_.memory());
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(
      absl::StrContains(status.message(), "every lane of the wave64 enabled (EXEC all ones), but EXEC is 0xffffffff"))
      << status;
}

}  // namespace
}  // namespace am::sim::isa
