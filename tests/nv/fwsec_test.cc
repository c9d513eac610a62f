// nv/fwsec: FWSEC-FRTS end to end on the virtual GSP falcon: the driver reads the virtual VBIOS through BAR0's PROM
// window, patches and places FWSEC, runs it, and WPR2 comes up where asked. The expected register values are worked
// out by hand in the comments; negative cases change one thing and check the driver's message names it.
#include "nv/fwsec.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "firmware/nv/virtual_vbios.h"
#include "gtest/gtest.h"
#include "tests/nv/sim/falcon_test_bench.h"

namespace nv {
namespace {

namespace fw = firmware::nv;
using sim::testing::FalconTestBench;

// tinygrad prep_ucode's FRTS place for this FB (256 MiB): vram_size - 0x100000 - 0x100000 = 0xfe00000, 1 MiB.
constexpr FrtsRegion kFrts{.offset = 0xfe00000, .size = 0x100000};
constexpr uint64_t kImageAddress = 0x200000;

std::string Log(const sim::FalconModel& falcon) { return absl::StrJoin(falcon.log(), "\n"); }

FwsecPlacement InFb(FalconTestBench& bench, uint64_t address = kImageAddress) {
  return FwsecPlacement{
      .address = address, .target = DmaTarget::kLocalFb, .write = [&bench](uint64_t at, absl::string_view bytes) {
        const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
        return bench.memory().WriteFb(at, {data, bytes.size()}) ? absl::OkStatus()
                                                                : absl::OutOfRangeError("past the test FB");
      }};
}

class FwsecTest : public ::testing::Test {
 public:
  void SetUp() override {
    absl::StatusOr<fw::Vbios> vbios = fw::ParseVbios("virtual", bench_.rom());
    ASSERT_TRUE(vbios.ok()) << vbios.status();
    vbios_ = *vbios;
  }
  FwsecImage Build(uint32_t init_cmd = fw::kDmemMapperCmdFrts, const FrtsRegion& frts = kFrts) {
    absl::StatusOr<FwsecImage> image =
        BuildFwsecImage(vbios_, bench_.rom(), init_cmd, frts, fw::kVirtualAd102FwsecFuseRegister);
    EXPECT_TRUE(image.ok()) << image.status();
    return image.ok() ? *image : FwsecImage{};
  }
  void Put32(FwsecImage& image, uint32_t dmem_offset, uint32_t value) {
    std::memcpy(image.bytes.data() + image.dmem_offset + dmem_offset, &value, 4);
  }

  FalconTestBench bench_;
  Falcon gsp_{bench_.bar0(), kAd102GspFalcon, absl::Milliseconds(50), absl::Milliseconds(50)};
  fw::Vbios vbios_;
};

TEST_F(FwsecTest, FrtsBringsWpr2UpWhereAsked) {
  absl::StatusOr<Wpr2Registers> wpr2 = FwsecFrts(bench_.bar0(), gsp_, kFrts, InFb(bench_));
  ASSERT_TRUE(wpr2.ok()) << wpr2.status() << "\n" << Log(bench_.gsp());
  // NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI VAL (31:4) = address >> 12: LO 0xfe00 << 4; HI (0xfe00000 + 0x100000) >> 12 =
  // 0xff00, << 4.
  EXPECT_EQ(wpr2->lo, 0xfe000u);
  EXPECT_EQ(wpr2->hi, 0xff000u);
  EXPECT_EQ(bench_.Register(0x1fa824), 0xfe000u);
  EXPECT_EQ(bench_.Register(0x1fa828), 0xff000u);
  EXPECT_EQ(bench_.Register(0x1400 + 0xe * 4), 0u);  // NV_PBUS_SW_SCRATCH(0xe): FRTS error 0
  EXPECT_TRUE(absl::StrContains(Log(bench_.gsp()), "FWSEC: FRTS: WPR2 up at FB 0xfe00000-0xff00000"))
      << Log(bench_.gsp());
}

TEST_F(FwsecTest, TheImageIsPatchedAsNouveauPatchesIt) {
  const FwsecImage image = Build();
  // Virtual FWSEC (virtual_vbios.h): IMEM 0x2000 then DMEM 0x1000; DMEMMAPPER at DMEM 0x200 (init_cmd +44), command
  // buffer at 0x400, PKC slot at 0x800; the fuse (1) picks signature 1 of 2.
  ASSERT_EQ(image.bytes.size(), 0x3000u);
  EXPECT_EQ(image.signature_index, 1u);
  EXPECT_EQ(image.pkc_offset, 0x800u);
  EXPECT_EQ(image.engine_id_mask, 0x400u);
  EXPECT_EQ(image.ucode_id, 1u);
  uint32_t words[12];
  std::memcpy(words, image.bytes.data() + 0x2000 + 0x400, sizeof(words));
  const uint32_t expected[12] = {1, 24, 0, 0, 0, 2, 1, 20, 0xfe00, 0x100, 2, 0};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(words[i], expected[i]) << i;
  uint32_t init_cmd;
  std::memcpy(&init_cmd, image.bytes.data() + 0x2000 + 0x200 + 44, 4);
  EXPECT_EQ(init_cmd, 0x15u);
}

TEST_F(FwsecTest, AnUnfusedChipTakesTheLastSignatureAndStillBoots) {
  FalconTestBench unfused(/*fuse=*/0);
  Falcon gsp(unfused.bar0(), kAd102GspFalcon);
  // ga102_gsp_fwsec_signature: BIT(fls(0)) = bit 0, the first signature; the model checks version 0's.
  absl::StatusOr<Wpr2Registers> wpr2 = FwsecFrts(unfused.bar0(), gsp, kFrts, InFb(unfused));
  ASSERT_TRUE(wpr2.ok()) << wpr2.status() << "\n" << Log(unfused.gsp());
  EXPECT_EQ(wpr2->lo, 0xfe000u);
}

TEST_F(FwsecTest, TheImageMayLieInSystemMemory) {
  const FwsecImage image = Build();
  const uint64_t address = FalconTestBench::kSystemBase;
  const FwsecPlacement placement{
      .address = address, .target = DmaTarget::kCoherentSysmem, .write = [this](uint64_t at, absl::string_view bytes) {
        const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
        return bench_.memory().WriteSystem(at, {data, bytes.size()})
                   ? absl::OkStatus()
                   : absl::OutOfRangeError("outside the system range");
      }};
  absl::StatusOr<Wpr2Registers> wpr2 = RunFwsecFrts(bench_.bar0(), gsp_, image, placement, kFrts);
  ASSERT_TRUE(wpr2.ok()) << wpr2.status() << "\n" << Log(bench_.gsp());
  EXPECT_EQ(wpr2->hi, 0xff000u);
}

TEST_F(FwsecTest, SbAfterFrtsLeavesWpr2Up) {
  ASSERT_TRUE(RunFwsecFrts(bench_.bar0(), gsp_, Build(), InFb(bench_), kFrts).ok()) << Log(bench_.gsp());
  const absl::Status sb = RunFwsecSb(bench_.bar0(), gsp_, Build(fw::kDmemMapperCmdSb), InFb(bench_));
  ASSERT_TRUE(sb.ok()) << sb << "\n" << Log(bench_.gsp());
  EXPECT_EQ(bench_.Register(0x1fa828), 0xff000u);
}

TEST_F(FwsecTest, UnpatchedInitCmdIsRefused) {
  FwsecImage image = Build();
  Put32(image, 0x200 + 44, 0);
  const absl::StatusOr<Wpr2Registers> wpr2 = RunFwsecFrts(bench_.bar0(), gsp_, image, InFb(bench_), kFrts);
  EXPECT_EQ(wpr2.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(wpr2.status().message(), "FWSEC-FRTS halted with MAILBOX0 = 0x000000a0"))
      << wpr2.status();
  EXPECT_TRUE(absl::StrContains(Log(bench_.gsp()), "init_cmd 0x0 is not a command this ucode accepts"))
      << Log(bench_.gsp());
  EXPECT_EQ(bench_.Register(0x1fa828), 0u);
}

TEST_F(FwsecTest, TheOtherFusesSignatureIsRefused) {
  FwsecImage image = Build();
  // Signature 0 (fuse version 0) where the fuse selects version 1.
  const fw::FwsecDescriptor& d = vbios_.fwsec->desc;
  image.bytes.replace(image.dmem_offset + image.pkc_offset, fw::kSignatureSize, bench_.rom(), d.signatures_offset,
                      fw::kSignatureSize);
  const absl::StatusOr<Wpr2Registers> wpr2 = RunFwsecFrts(bench_.bar0(), gsp_, image, InFb(bench_), kFrts);
  EXPECT_TRUE(absl::StrContains(wpr2.status().message(), "MAILBOX0 = 0x000000f7")) << wpr2.status();
  EXPECT_TRUE(absl::StrContains(Log(bench_.gsp()), "holds the signature for fuse version 0")) << Log(bench_.gsp());
}

TEST_F(FwsecTest, ARealFwsecImageFailsAtTheMagic) {
  FwsecImage image = Build();
  std::memset(image.bytes.data(), 0, 16);  // whatever a real FWSEC has there, it is not "BAREGPU_VFWSEC"
  const absl::StatusOr<Wpr2Registers> wpr2 = RunFwsecFrts(bench_.bar0(), gsp_, image, InFb(bench_), kFrts);
  EXPECT_TRUE(absl::StrContains(wpr2.status().message(), "MAILBOX0 = 0x000000a0")) << wpr2.status();
  EXPECT_TRUE(absl::StrContains(Log(bench_.gsp()), "a real FWSEC image cannot run on the virtual GPU"))
      << Log(bench_.gsp());
}

TEST_F(FwsecTest, AWrongFrtsRegionVersionIsReportedByFwsec) {
  FwsecImage image = Build();
  Put32(image, 0x400 + 24, 2);  // FWSECLIC_FRTS_REGION_DESC.version
  const absl::StatusOr<Wpr2Registers> wpr2 = RunFwsecFrts(bench_.bar0(), gsp_, image, InFb(bench_), kFrts);
  EXPECT_EQ(wpr2.status().code(), absl::StatusCode::kFailedPrecondition);
  // FwsecError::kFrtsRegionDesc = 2 in bits 31:16: 0x00020000.
  EXPECT_TRUE(absl::StrContains(wpr2.status().message(),
                                "FWSEC-FRTS reported error code 0x2 (NV_PBUS_SW_SCRATCH(0xe) = 0x00020000"))
      << wpr2.status();
}

TEST_F(FwsecTest, AWrongFrtsSizeIsReportedByFwsec) {
  const FrtsRegion two_mib{.offset = 0xfd00000, .size = 0x200000};
  const absl::StatusOr<Wpr2Registers> wpr2 =
      RunFwsecFrts(bench_.bar0(), gsp_, Build(fw::kDmemMapperCmdFrts, two_mib), InFb(bench_), two_mib);
  EXPECT_TRUE(absl::StrContains(wpr2.status().message(), "reported error code 0x4")) << wpr2.status();
}

TEST_F(FwsecTest, AnFrtsRegionBeyondFbIsReportedByFwsec) {
  const FrtsRegion beyond{.offset = FalconTestBench::kFbSize, .size = 0x100000};
  const absl::StatusOr<Wpr2Registers> wpr2 =
      RunFwsecFrts(bench_.bar0(), gsp_, Build(fw::kDmemMapperCmdFrts, beyond), InFb(bench_), beyond);
  EXPECT_TRUE(absl::StrContains(wpr2.status().message(), "reported error code 0x5")) << wpr2.status();
  EXPECT_EQ(bench_.Register(0x1fa828), 0u);
}

TEST_F(FwsecTest, AnUnalignedFrtsRegionIsRefusedBeforeAnythingRuns) {
  const absl::StatusOr<FwsecImage> image =
      BuildFwsecImage(vbios_, bench_.rom(), fw::kDmemMapperCmdFrts, {.offset = 0xfe00800, .size = 0x100000}, 1);
  EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(image.status().message(), "multiples of 4 KiB")) << image.status();
}

TEST_F(FwsecTest, AnImageInAnUnmappedRangeTimesOutInTheDma) {
  const FwsecPlacement nowhere{.address = 0x5000'0000,
                               .target = DmaTarget::kNoncoherentSysmem,
                               .write = [](uint64_t, absl::string_view) { return absl::OkStatus(); }};
  const absl::StatusOr<Wpr2Registers> wpr2 = RunFwsecFrts(bench_.bar0(), gsp_, Build(), nowhere, kFrts);
  EXPECT_EQ(wpr2.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(wpr2.status().message(),
                                "GSP falcon: DMA: the transfer of IMEM block 0x0 from "
                                "0x50000000 did not complete"))
      << wpr2.status();
}

TEST_F(FwsecTest, AGspThatNeverHaltsTimesOut) {
  bench_.gsp().InjectNeverHalt(true);
  const absl::StatusOr<Wpr2Registers> wpr2 = RunFwsecFrts(bench_.bar0(), gsp_, Build(), InFb(bench_), kFrts);
  EXPECT_EQ(wpr2.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(wpr2.status().message(), "FWSEC-FRTS did not halt within 50ms")) << wpr2.status();
}

TEST_F(FwsecTest, ASecondFrtsIsRefusedOnceWpr2IsUp) {
  ASSERT_TRUE(RunFwsecFrts(bench_.bar0(), gsp_, Build(), InFb(bench_), kFrts).ok());
  const absl::StatusOr<Wpr2Registers> again = RunFwsecFrts(bench_.bar0(), gsp_, Build(), InFb(bench_), kFrts);
  EXPECT_TRUE(absl::StrContains(again.status().message(), "reported error code 0x6")) << again.status();
}

TEST_F(FwsecTest, ADescriptorV2VbiosIsNotSupported) {
  absl::StatusOr<std::string> rom = fw::BuildVirtualVbios("ad102", {.desc_version = 2});
  ASSERT_TRUE(rom.ok());
  absl::StatusOr<fw::Vbios> vbios = fw::ParseVbios("virtual v2", *rom);
  ASSERT_TRUE(vbios.ok()) << vbios.status();
  const absl::StatusOr<FwsecImage> image = BuildFwsecImage(*vbios, *rom, fw::kDmemMapperCmdFrts, kFrts, 1);
  EXPECT_EQ(image.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(image.status().message(), "only version 3")) << image.status();
}

TEST_F(FwsecTest, TheFuseIsReadForTheGspEngineOnly) {
  EXPECT_EQ(*ReadFwsecFuse(bench_.bar0(), 0x400, 1), 1u);
  EXPECT_EQ(ReadFwsecFuse(bench_.bar0(), 0x1, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadFwsecFuse(bench_.bar0(), 0x400, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(FwsecTest, ThePromWindowServesTheRom) {
  const std::string rom = ReadVbiosFromProm(bench_.bar0());
  ASSERT_EQ(rom.size(), 1u << 20);  // nvbios_prom_read's 1 MiB window
  EXPECT_EQ(rom.substr(0, bench_.rom().size()), bench_.rom());
}

}  // namespace
}  // namespace nv
