// nv/sim/fwsec_model: the virtual FWSEC, run directly (an HsUcodeContext built here, not through a falcon or the
// driver). The image is the virtual VBIOS's FWSEC_PROD, patched by hand at the offsets virtual_vbios.h documents
// (DMEMMAPPER at DMEM 0x200, init_cmd at +44, command buffer at 0x400, PKC slot at 0x800) with the FRTS command
// nouveau's nvkm_gsp_fwsec_patch writes; the expected WPR2 values are worked out in the comments.
#include "nv/sim/fwsec_model.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "firmware/nv/vbios.h"
#include "firmware/nv/virtual_vbios.h"
#include "gtest/gtest.h"

namespace nv::sim {
namespace {

namespace fw = firmware::nv;

constexpr uint64_t kFbSize = 256ull << 20;
constexpr uint32_t kFuse = 0x8241c0;  // nouveau ga102_gsp_fwsec_signature: 0x8241c0 + (ucode_id 1 - 1) * 4
constexpr uint32_t kWpr2Lo = 0x1fa824, kWpr2Hi = 0x1fa828;
constexpr uint32_t kFrtsScratch = 0x1400 + 0xe * 4;  // NV_PBUS_SW_SCRATCH(0xe)
constexpr uint32_t kSbScratch = 0x1400 + 0x15 * 4;   // NV_PBUS_SW_SCRATCH(0x15)
// tinygrad prep_ucode's FRTS offset for this FB: vram_size - 0x100000 - 0x100000 = 0xfe00000, 1 MiB.
constexpr uint32_t kFrtsOffset4k = 0xfe00000 >> 12;  // 0xfe00

class MapPrivBus : public PrivBus {
 public:
  uint32_t Read32(uint32_t address) override { return registers[address]; }
  void Write32(uint32_t address, uint32_t value) override { registers[address] = value; }
  std::map<uint32_t, uint32_t> registers;
};

class NoMemory : public DeviceMemory {
 public:
  bool ReadFb(uint64_t, std::span<uint8_t>) override { return false; }
  bool WriteFb(uint64_t, std::span<const uint8_t>) override { return false; }
  bool ReadSystem(uint64_t, std::span<uint8_t>) override { return false; }
  bool WriteSystem(uint64_t, std::span<const uint8_t>) override { return false; }
};

void Put32(std::vector<uint8_t>& bytes, size_t at, uint32_t value) { std::memcpy(bytes.data() + at, &value, 4); }

class FwsecModelTest : public ::testing::Test {
 public:
  void SetUp() override {
    absl::StatusOr<std::string> rom = fw::BuildVirtualVbios("ad102");
    ASSERT_TRUE(rom.ok()) << rom.status();
    rom_ = *rom;
    absl::StatusOr<fw::Vbios> vbios = fw::ParseVbios("virtual", rom_);
    ASSERT_TRUE(vbios.ok() && vbios->fwsec) << vbios.status();
    const fw::FwsecDescriptor& d = vbios->fwsec->desc;
    imem_.assign(rom_.begin() + d.ucode_offset, rom_.begin() + d.ucode_offset + d.imem_load_size);
    dmem_.assign(rom_.begin() + d.ucode_offset + d.imem_load_size,
                 rom_.begin() + d.ucode_offset + d.imem_load_size + d.dmem_load_size);
    signatures_offset_ = d.signatures_offset;
    for (bool& s : secure_) s = true;
    // The FRTS command (nouveau nvkm_gsp_fwsec_patch): init_cmd 0x15; READ_VBIOS {1, 24, 0, 0, flags 2};
    // FRTS_REGION {1, 20, 0xfe00, 0x100, FB 2}; the signature for fuse version 1 (fls(1)), index 1.
    Put32(dmem_, 0x200 + 44, 0x15);
    PatchFrts(1, 20, kFrtsOffset4k, 0x100, 2);
    PatchSignature(1);
    priv_.registers[kFuse] = 1;
    brom_ = {.paraaddr0 = 0x800, .engine_id_mask = 0x400, .ucode_id = 1, .mod_sel_algo = 1};
  }

  void PatchFrts(uint32_t version, uint32_t size, uint32_t offset_4k, uint32_t size_4k, uint32_t media) {
    const uint32_t c = 0x400;
    const uint32_t words[] = {1, 24, 0, 0, 0, 2, version, size, offset_4k, size_4k, media};
    for (uint32_t i = 0; i < std::size(words); ++i) Put32(dmem_, c + 4 * i, words[i]);
  }
  void PatchSignature(uint32_t index) {
    std::memcpy(dmem_.data() + 0x800, rom_.data() + signatures_offset_ + index * 384, 384);
  }

  HsUcodeOutcome Run() {
    HsUcodeContext context{.falcon = "GSP",
                           .falcon_engine_bit = 0x400,
                           .imem = imem_,
                           .dmem = dmem_,
                           .imem_secure = secure_,
                           .brom = brom_,
                           .priv = &priv_,
                           .memory = &memory_};
    FwsecModel model(kFbSize);
    const absl::Status recognised = model.Recognise(context);
    EXPECT_TRUE(recognised.ok()) << recognised;
    return model.Run(context);
  }

  std::string rom_;
  std::vector<uint8_t> imem_, dmem_;
  uint64_t signatures_offset_ = 0;
  bool secure_[0x2000 / 256];
  BromRegisters brom_;
  MapPrivBus priv_;
  NoMemory memory_;
};

TEST_F(FwsecModelTest, FrtsBringsWpr2UpAtTheRegion) {
  priv_.registers[kFrtsScratch] = 0xdead0000;  // a stale error code: FWSEC clears it
  const HsUcodeOutcome outcome = Run();
  EXPECT_EQ(outcome.mailbox0, 0u) << outcome.log;
  // VAL 31:4 holds address >> 12: LO = 0xfe00 << 4; HI = (0xfe00000 + 0x100000) >> 12 = 0xff00, << 4.
  EXPECT_EQ(priv_.registers[kWpr2Lo], 0xfe000u);
  EXPECT_EQ(priv_.registers[kWpr2Hi], 0xff000u);
  EXPECT_EQ(priv_.registers[kFrtsScratch], 0u);
  EXPECT_TRUE(absl::StrContains(outcome.log, "WPR2 up at FB 0xfe00000-0xff00000")) << outcome.log;
}

TEST_F(FwsecModelTest, FuseZeroTakesSignatureZero) {
  priv_.registers[kFuse] = 0;  // fls(0) = 0: version 0, index 0
  PatchSignature(0);
  EXPECT_EQ(Run().mailbox0, 0u);
  EXPECT_EQ(priv_.registers[kWpr2Lo], 0xfe000u);
}

TEST_F(FwsecModelTest, SbReportsSuccessAndLeavesWpr2Alone) {
  Put32(dmem_, 0x200 + 44, 0x19);
  priv_.registers[kSbScratch] = 0xffff;
  const HsUcodeOutcome outcome = Run();
  EXPECT_EQ(outcome.mailbox0, 0u) << outcome.log;
  EXPECT_EQ(priv_.registers[kSbScratch], 0u);
  EXPECT_EQ(priv_.registers.count(kWpr2Lo), 0u);
}

TEST_F(FwsecModelTest, ARealImageIsNotRecognised) {
  imem_[0] = 0;  // anything but the virtual magic
  HsUcodeContext context{.falcon = "GSP", .imem = imem_, .dmem = dmem_};
  const absl::Status status = FwsecModel(kFbSize).Recognise(context);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "\"BAREGPU_VFWSEC\"")) << status;
}

struct BromCase {
  const char* name;
  void (*mutate)(FwsecModelTest&, std::vector<uint8_t>& imem, std::vector<uint8_t>& dmem, BromRegisters& brom,
                 bool* secure, MapPrivBus& priv);
  uint32_t mailbox0;  // FLCN_STATUS (flcnretval.h)
  const char* log;
};

class FwsecBromTest : public FwsecModelTest, public ::testing::WithParamInterface<BromCase> {};

TEST_P(FwsecBromTest, RefusesWithAFlcnStatusAndTouchesNothing) {
  const BromCase& c = GetParam();
  c.mutate(*this, imem_, dmem_, brom_, secure_, priv_);
  const HsUcodeOutcome outcome = Run();
  EXPECT_EQ(outcome.mailbox0, c.mailbox0) << outcome.log;
  EXPECT_TRUE(absl::StrContains(outcome.log, c.log)) << outcome.log;
  EXPECT_EQ(priv_.registers.count(kWpr2Lo), 0u);
  EXPECT_EQ(priv_.registers.count(kWpr2Hi), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Refusals, FwsecBromTest,
    ::testing::Values(BromCase{"ModSel",
                               [](FwsecModelTest&, std::vector<uint8_t>&, std::vector<uint8_t>&, BromRegisters& b,
                                  bool*, MapPrivBus&) { b.mod_sel_algo = 0; },
                               0xa0, "MOD_SEL.ALGO is 0"},
                      BromCase{"UcodeId",
                               [](FwsecModelTest&, std::vector<uint8_t>&, std::vector<uint8_t>&, BromRegisters& b,
                                  bool*, MapPrivBus&) { b.ucode_id = 2; },
                               0xa0, "BROM_CURR_UCODE_ID is 2"},
                      BromCase{"EngineMask",  // FLCN_ERR_HS_CHK_ENGID_MISMATCH
                               [](FwsecModelTest&, std::vector<uint8_t>&, std::vector<uint8_t>&, BromRegisters& b,
                                  bool*, MapPrivBus&) { b.engine_id_mask = 0x1; },
                               0xb7, "BROM_ENGIDMASK is 0x1"},
                      BromCase{"NotSecure",
                               [](FwsecModelTest&, std::vector<uint8_t>&, std::vector<uint8_t>&, BromRegisters&,
                                  bool* s, MapPrivBus&) { s[3] = false; },
                               0xa0, "IMEM block 3 (0x300) was not loaded secure"},
                      BromCase{"FuseRevoked",  // fls(0x80) = 8: no signature for version 8 (SignatureVersions 0x3)
                               [](FwsecModelTest&, std::vector<uint8_t>&, std::vector<uint8_t>&, BromRegisters&, bool*,
                                  MapPrivBus& p) { p.registers[kFuse] = 0x80; },
                               0xa2, "selects version 8"},
                      BromCase{"OtherFusesSignature",  // FLCN_ERR_APM_BROM_SIGN_FAIL
                               [](FwsecModelTest& t, std::vector<uint8_t>&, std::vector<uint8_t>&, BromRegisters&,
                                  bool*, MapPrivBus&) { t.PatchSignature(0); },
                               0xf7, "holds the signature for fuse version 0; the fuse selects version 1"},
                      BromCase{"NoSignature",
                               [](FwsecModelTest&, std::vector<uint8_t>&, std::vector<uint8_t>& d, BromRegisters&,
                                  bool*, MapPrivBus&) { std::memset(d.data() + 0x800, 0, 384); },
                               0xf7, "holds no signature of this ucode"},
                      BromCase{"UnpatchedInitCmd",
                               [](FwsecModelTest&, std::vector<uint8_t>&, std::vector<uint8_t>& d, BromRegisters&,
                                  bool*, MapPrivBus&) { Put32(d, 0x200 + 44, 0); },
                               0xa0, "init_cmd 0x0 is not a command this ucode accepts"},
                      BromCase{"ChangedImem",
                               [](FwsecModelTest&, std::vector<uint8_t>& i, std::vector<uint8_t>&, BromRegisters&,
                                  bool*, MapPrivBus&) { i[0x1000] ^= 1; },
                               0xa0, "SHA-256 mismatch"}),
    [](const ::testing::TestParamInfo<BromCase>& info) { return std::string(info.param.name); });

struct FrtsCase {
  const char* name;
  uint32_t version, size, offset_4k, size_4k, media;
  uint32_t error;  // FwsecError, in NV_PBUS_SW_SCRATCH(0xe) bits 31:16
  const char* log;
};

class FwsecFrtsCommandTest : public FwsecModelTest, public ::testing::WithParamInterface<FrtsCase> {};

TEST_P(FwsecFrtsCommandTest, ReportsTheErrorCodeAndLeavesWpr2Down) {
  const FrtsCase& c = GetParam();
  PatchFrts(c.version, c.size, c.offset_4k, c.size_4k, c.media);
  const HsUcodeOutcome outcome = Run();
  EXPECT_EQ(outcome.mailbox0, 0u) << "the ucode ran: " << outcome.log;
  EXPECT_EQ(priv_.registers[kFrtsScratch], c.error << 16);
  EXPECT_TRUE(absl::StrContains(outcome.log, c.log)) << outcome.log;
  EXPECT_EQ(priv_.registers.count(kWpr2Lo), 0u);
}

INSTANTIATE_TEST_SUITE_P(Commands, FwsecFrtsCommandTest,
                         ::testing::Values(FrtsCase{"Version", 2, 20, kFrtsOffset4k, 0x100, 2, 2, "version 2 size 20"},
                                           FrtsCase{"Size", 1, 24, kFrtsOffset4k, 0x100, 2, 2, "version 1 size 24"},
                                           FrtsCase{"Media", 1, 20, kFrtsOffset4k, 0x100, 1, 3, "media type 1"},
                                           FrtsCase{"RegionSize", 1, 20, kFrtsOffset4k, 0x200, 2, 4, "FRTS is 1 MiB"},
                                           // 256 MiB = 0x10000 pages: 0xff01 + 0x100 ends past it.
                                           FrtsCase{"BeyondFb", 1, 20, 0xff01, 0x100, 2, 5, "does not lie inside FB"},
                                           FrtsCase{"AtZero", 1, 20, 0, 0x100, 2, 5, "does not lie inside FB"}),
                         [](const ::testing::TestParamInfo<FrtsCase>& info) { return std::string(info.param.name); });

TEST_F(FwsecModelTest, ReadVbiosDescriptorIsChecked) {
  Put32(dmem_, 0x400 + 20, 0);  // flags 0
  const HsUcodeOutcome outcome = Run();
  EXPECT_EQ(priv_.registers[kFrtsScratch], 1u << 16);
  EXPECT_TRUE(absl::StrContains(outcome.log, "READ_VBIOS descriptor version 1 size 24 flags 0x0")) << outcome.log;
}

TEST_F(FwsecModelTest, FrtsRunsOncePerBoot) {
  priv_.registers[kWpr2Hi] = 0xff000;
  Run();
  EXPECT_EQ(priv_.registers[kFrtsScratch], 6u << 16);
}

}  // namespace
}  // namespace nv::sim
