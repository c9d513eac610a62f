// Rdna3Executor driven directly: assembled snippets (tests/am/sim/isa/asm, llvm-mc-19) run on FlatMemory, and
// each result is checked against a value worked out by hand from the RDNA3 ISA's operation descriptions.
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "am/kernel_dispatch.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/sh_mem_constants.h"
#include "am/sim/isa/rdna3_executor.h"
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

}  // namespace
}  // namespace am::sim::isa
