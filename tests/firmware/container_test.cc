// Malformed firmware is rejected with a message naming the file, the field, the bad value and the limit, and
// never read out of bounds. Inputs are built byte by byte here, or cut from the real files.
#include "firmware/container.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/file.h"
#include "gtest/gtest.h"
#include "tests/firmware/debian_firmware.h"

namespace firmware {
namespace {

void Put32(std::string& s, size_t at, uint32_t v) {
  if (s.size() < at + 4) s.resize(at + 4, '\0');
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}
void Put16(std::string& s, size_t at, uint16_t v) {
  s[at] = static_cast<char>(v);
  s[at + 1] = static_cast<char>(v >> 8);
}

// A common header (amdgpu_ucode.h common_firmware_header) with the ucode array at 256, padded to `size`.
std::string Image(uint16_t major, uint16_t minor, uint32_t ucode_size, uint32_t size, uint32_t header_size = 256) {
  std::string s(size, '\0');
  Put32(s, 0, size);
  Put32(s, 4, header_size);
  Put16(s, 8, major);
  Put16(s, 10, minor);
  Put16(s, 12, 11);
  Put32(s, 16, 0x1234);
  Put32(s, 20, ucode_size);
  Put32(s, 24, 256);
  return s;
}

TEST(ContainerTest, ParsesAHandBuiltImuImage) {
  std::string s = Image(1, 0, 0x300, 0x400);
  Put32(s, 32, 0x200);  // imu_iram_ucode_size_bytes
  Put32(s, 40, 0x100);  // imu_dram_ucode_size_bytes
  auto c = ParseContainer("gc_11_0_0_imu.bin", s);
  ASSERT_TRUE(c.ok()) << c.status();
  const Component* iram = c->Find(LoadPath::kIpFirmware, gfx_fw_type::kImuI);
  const Component* dram = c->Find(LoadPath::kIpFirmware, gfx_fw_type::kImuD);
  ASSERT_NE(iram, nullptr);
  ASSERT_NE(dram, nullptr);
  EXPECT_EQ(iram->offset, 0x100u);
  EXPECT_EQ(iram->size, 0x200u);
  EXPECT_EQ(dram->offset, 0x300u);  // right after IRAM, as amdgpu_ucode_init_single_fw computes it
  EXPECT_EQ(dram->size, 0x100u);
}

TEST(ContainerTest, ParsesHandBuiltRlcV24AndSdmaV30Images) {
  // rlc_firmware_header_v2_4: v2.0 (18 fields), v2.1 (13), v2.2 (4), v2.3 (8) precede the tap delays at 204.
  std::string rlc = Image(2, 4, 0x100, 0x400);
  Put32(rlc, 180, 0x40);   // rlcp_ucode_size_bytes
  Put32(rlc, 184, 0x200);  // rlcp_ucode_offset_bytes
  Put32(rlc, 204, 0x40);   // global_tap_delays_ucode_size_bytes
  Put32(rlc, 208, 0x300);  // global_tap_delays_ucode_offset_bytes
  Put32(rlc, 236, 0x20);   // se3_tap_delays_ucode_size_bytes
  Put32(rlc, 240, 0x380);  // se3_tap_delays_ucode_offset_bytes
  auto c = ParseContainer("gc_11_0_3_rlc.bin", rlc);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->layout, "rlc_firmware_header_v2_4");
  EXPECT_EQ(c->components.size(), 4u);  // RLC_G, RLC_P, global and SE3 tap delays; the rest are empty
  EXPECT_EQ(c->Find(LoadPath::kIpFirmware, gfx_fw_type::kRlcP)->offset, 0x200u);
  EXPECT_EQ(c->Find(LoadPath::kIpFirmware, gfx_fw_type::kGlobalTapDelays)->offset, 0x300u);
  EXPECT_EQ(c->Find(LoadPath::kIpFirmware, gfx_fw_type::kSe3TapDelays)->size, 0x20u);

  // sdma_firmware_header_v3_0: ucode_feature_version, ucode_offset_bytes, ucode_size_bytes.
  std::string sdma = Image(3, 0, 0x200, 0x400);
  Put32(sdma, 40, 0x180);
  auto s = ParseContainer("sdma_7_0_0.bin", sdma);
  ASSERT_TRUE(s.ok()) << s.status();
  const Component* rs64 = s->Find(LoadPath::kIpFirmware, gfx_fw_type::kSdmaUcodeTh0);
  ASSERT_NE(rs64, nullptr);
  EXPECT_EQ(rs64->offset, 0x100u);
  EXPECT_EQ(rs64->size, 0x180u);
}

TEST(ContainerTest, TooShortForTheCommonHeader) {
  auto c = ParseContainer("x_rlc.bin", std::string(20, '\0'));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(c.status().message(), "x_rlc.bin: the file is 20 bytes, shorter than the 32-byte"))
      << c.status();
}

TEST(ContainerTest, SizeBytesLargerThanTheFileMeansTruncated) {
  std::string s = Image(1, 0, 0x100, 0x200);
  Put32(s, 0, 0x300);
  auto c = ParseContainer("navi10_smc.bin", s);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(),
                                "header.size_bytes = 768 but the file is 512 bytes; the amdgpu driver rejects"))
      << c.status();
  EXPECT_TRUE(absl::StrContains(c.status().message(), "truncated")) << c.status();
}

TEST(ContainerTest, UcodeArrayPastTheEnd) {
  std::string s = Image(1, 0, 0x1000, 0x200);
  auto c = ParseContainer("navi10_smc.bin", s);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "header.ucode_size_bytes = 0x1000")) << c.status();
  EXPECT_TRUE(absl::StrContains(c.status().message(), "past the end of the file at 0x200")) << c.status();
}

TEST(ContainerTest, UnknownHeaderVersionListsTheKnownOnes) {
  auto c = ParseContainer("gc_11_0_0_rlc.bin", Image(2, 9, 0x100, 0x400));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(c.status().message(), "header version 2.9")) << c.status();
  EXPECT_TRUE(absl::StrContains(c.status().message(), "known: 1.0, 2.0, 2.1, 2.2, 2.3, 2.4")) << c.status();
}

TEST(ContainerTest, RegionOutsideTheFileNamesItsFields) {
  std::string s = Image(1, 0, 0x100, 0x400);
  Put32(s, 36, 0x3f0);  // mes_ucode_size_bytes
  Put32(s, 40, 0x100);  // mes_ucode_offset_bytes
  auto c = ParseContainer("gc_11_0_0_mes1.bin", s);
  ASSERT_FALSE(c.ok());
  const std::string m(c.status().message());
  EXPECT_TRUE(absl::StrContains(m, "gc_11_0_0_mes1.bin: component 'ucode'")) << m;
  EXPECT_TRUE(absl::StrContains(m, "mes_ucode_size_bytes = 0x3f0")) << m;
  EXPECT_TRUE(absl::StrContains(m, "mes_ucode_offset_bytes = 0x100")) << m;
  EXPECT_TRUE(absl::StrContains(m, "spans 0x100..0x4f0")) << m;
  EXPECT_TRUE(absl::StrContains(m, "past the end of the file at 0x400")) << m;
}

TEST(ContainerTest, HugeOffsetsDoNotWrap) {
  std::string s = Image(1, 0, 0x100, 0x400);
  Put32(s, 36, 0xffffffff);
  Put32(s, 40, 0xffffffff);
  auto c = ParseContainer("gc_11_0_0_mes.bin", s);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "spans 0xffffffff..0x1fffffffe")) << c.status();
}

TEST(ContainerTest, MecJumpTableLargerThanTheImage) {
  std::string s = Image(1, 0, 0x100, 0x400);
  Put32(s, 40, 0x100);  // jt_size in dwords: 0x400 bytes > 0x100
  auto c = ParseContainer("navi10_mec.bin", s);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(),
                                "jt_size = 0x100 dwords (0x400 bytes) is larger than "
                                "header.ucode_size_bytes = 0x100"))
      << c.status();
}

TEST(ContainerTest, SosV2DescriptorCountAtTheDriverLimit) {
  std::string s = Image(2, 0, 0x100, 0x400);
  Put32(s, 32, 26);
  auto c = ParseContainer("psp_13_0_0_sos.bin", s);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "psp_fw_bin_count = 26 is at or above the driver's limit of 26"))
      << c.status();
}

TEST(ContainerTest, SosV2DescriptorTypesAndUnknownTypes) {
  std::string s = Image(2, 0, 0x200, 0x400);
  Put32(s, 32, 2);
  // {fw_type, fw_version, offset_bytes, size_bytes}: a KDB and a type the driver does not know.
  Put32(s, 36, psp_fw_type::kKdb);
  Put32(s, 40, 7);
  Put32(s, 44, 0);
  Put32(s, 48, 0x80);
  Put32(s, 52, 99);
  Put32(s, 56, 1);
  Put32(s, 60, 0x80);
  Put32(s, 64, 0x80);
  auto c = ParseContainer("psp_13_0_0_sos.bin", s);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->components.size(), 2u);
  EXPECT_EQ(c->components[0].name, "kdb");
  EXPECT_EQ(c->components[0].offset, 0x100u);
  EXPECT_EQ(c->components[0].version, 7u);
  EXPECT_EQ(c->components[1].name, "type 99");
  EXPECT_EQ(c->components[1].offset, 0x180u);
  ASSERT_EQ(c->notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(c->notes[0], "fw_type 99")) << c->notes[0];
}

TEST(ContainerTest, SosV21AuxIndexBeyondCount) {
  std::string s = Image(2, 1, 0x100, 0x400);
  Put32(s, 32, 1);
  Put32(s, 36, 5);
  auto c = ParseContainer("psp_13_0_0_sos.bin", s);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "psp_aux_fw_bin_index = 5 is beyond psp_fw_bin_count = 1"))
      << c.status();
}

TEST(ContainerTest, SmcPptableEntriesOutsideTheFile) {
  std::string s = Image(2, 1, 0x100, 0x400);
  Put32(s, 36, 1000);   // pptable_count (smc_firmware_header_v2_1: after ucode_start_addr)
  Put32(s, 40, 0x300);  // pptable_entry_offset
  auto c = ParseContainer("smu_13_0_0.bin", s);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "pptable_entry_offset = 0x300, pptable_count = 1000"))
      << c.status();
}

TEST(ContainerTest, KindFromFileNamesAndUnknownNames) {
  struct Case {
    const char* name;
    FileKind kind;
    int instance;
  };
  for (const Case& k : {Case{"psp_13_0_0_sos.bin", FileKind::kSos, 0},
                        Case{"psp_13_0_0_ta_kicker.bin", FileKind::kTa, 0},
                        Case{"smu_13_0_0.bin.zst", FileKind::kSmc, 0},
                        Case{"sdma_6_0_0.bin.xz", FileKind::kSdma, 0},
                        Case{"navi10_sdma1.bin", FileKind::kSdma, 1},
                        Case{"gc_11_0_0_mes_2.bin", FileKind::kMes, 0},
                        Case{"gc_11_0_0_mes1.bin", FileKind::kMesKiq, 0},
                        Case{"gc_11_0_0_mes.bin", FileKind::kMes, 0},
                        Case{"gc_11_0_0_me.bin", FileKind::kMe, 0},
                        Case{"navi14_mec2_wks.bin", FileKind::kMec2, 0},
                        Case{"gc_11_0_0_rlc_1.bin", FileKind::kRlc, 0},
                        Case{"vega20_sos_old.bin", FileKind::kSos, 0},
                        Case{"/lib/firmware/amdgpu/renoir_gpu_info.bin", FileKind::kGpuInfo, 0},
                        Case{"dcn_3_2_0_dmcub.bin", FileKind::kDmcub, 0},
                        Case{"navi12_dmcu.bin", FileKind::kDmcu, 0},
                        Case{"vcn_4_0_6_1.bin", FileKind::kVcn, 0},
                        Case{"navi10_vcn.bin", FileKind::kVcn, 0},
                        Case{"polaris10_uvd.bin", FileKind::kUvd, 0},
                        Case{"tonga_vce.bin", FileKind::kVce, 0},
                        Case{"isp_4_1_1.bin", FileKind::kIsp, 0},
                        Case{"vpe_6_1_0.bin", FileKind::kVpe, 0},
                        Case{"umsch_mm_4_0_0.bin", FileKind::kUmschMm, 0},
                        Case{"polaris10_mec2_2.bin", FileKind::kMec2, 0},
                        Case{"polaris11_smc_sk.bin", FileKind::kSmc, 0},
                        Case{"picasso_rlc_am4.bin", FileKind::kRlc, 0}}) {
    auto role = RoleFromFileName(k.name);
    ASSERT_TRUE(role.ok()) << k.name << ": " << role.status();
    EXPECT_EQ(role->kind, k.kind) << k.name;
    EXPECT_EQ(role->instance, k.instance) << k.name;
  }
  auto unknown = RoleFromFileName("dcn_3_2_0_mystery.bin");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "pass --kind=KIND")) << unknown.status();
}

// Every name form Linux 6.12's amdgpu asks for with a suffix after the kind (amdgpu_ucode_request formats and
// MODULE_FIRMWARE lists: amdgpu_psp.c, imu_v11_0.c, smu_v13_0.c, gfx_v9_0.c, gfx_v9_4_3.c, gfx_v10_0.c,
// gfx_v8_0.c, amdgpu_mes.c, mes_v12_0.c), each from its chip prefix.
TEST(ContainerTest, KindFromEverySuffixedNameLinuxRequests) {
  struct Case {
    const char* name;
    FileKind kind;
  };
  for (const Case& k : {Case{"psp_13_0_0_sos_kicker.bin", FileKind::kSos},   // "%s_sos_kicker.bin"
                        Case{"psp_13_0_0_ta_kicker.bin", FileKind::kTa},     // "%s_ta_kicker.bin"
                        Case{"gc_11_0_0_imu_kicker.bin", FileKind::kImu},    // "%s_imu_kicker.bin"
                        Case{"gc_11_0_0_rlc_kicker.bin", FileKind::kRlc},    // "%s_rlc_kicker.bin"
                        Case{"raven_kicker_rlc.bin", FileKind::kRlc},        // "%s_kicker_rlc.bin"
                        Case{"smu_13_0_0_kicker.bin", FileKind::kSmc},       // "%s_kicker.bin" (smu_v13_0.c)
                        Case{"smu_13_0_10_kicker.bin.zst", FileKind::kSmc},  //
                        Case{"gc_12_0_0_uni_mes.bin", FileKind::kMes},       // "%s_uni_mes.bin"
                        Case{"gc_9_4_3_sjt_mec.bin", FileKind::kMec},        // "%s_sjt_mec.bin"
                        Case{"aldebaran_sjt_mec2.bin", FileKind::kMec2},     // "%s_sjt_mec2.bin"
                        Case{"navi14_pfp_wks.bin", FileKind::kPfp},          // "%s_pfp%s.bin" with "_wks"
                        Case{"navi14_ce_wks.bin", FileKind::kCe},            //
                        Case{"polaris10_me_2.bin", FileKind::kMe},           // "%s_me_2.bin"
                        Case{"polaris12_ce_2.bin", FileKind::kCe},           // "%s_ce_2.bin"
                        Case{"gc_11_5_2_mes_2.bin", FileKind::kMes},         // "%s_mes%s.bin" with "_2"
                        Case{"gc_11_0_3_mes1.bin", FileKind::kMesKiq},       // "%s_mes%s.bin" with "1"
                        Case{"gc_11_0_0_rlc_1.bin.xz", FileKind::kRlc},      // Debian's board variant
                        Case{"polaris10_k2_smc.bin", FileKind::kSmc},        // "%s_k2_smc.bin"
                        Case{"polaris10_k_mc.bin", FileKind::kMc}}) {        // "%s_k_mc.bin"
    auto role = RoleFromFileName(k.name);
    ASSERT_TRUE(role.ok()) << k.name << ": " << role.status();
    EXPECT_EQ(role->kind, k.kind) << k.name << " is " << FileKindName(role->kind);
  }
}

// Fuzz: any name either gets a kind or is refused with the --kind hint; the name in the message is printable.
TEST(ContainerTest, RandomNamesGetAKindOrTheKindHint) {
  std::mt19937 rng(10);
  const std::string alphabet = "abcdegiklmnoprstuvw_0123456789./\n\x1b\xff";
  const std::vector<std::string> pieces = {"_sos",      "_ta",        "_kicker", "_rlc", "_mec2", "_2",   "_1",
                                           "gc_11_0_0", "psp_13_0_0", ".bin",    ".zst", "smu_",  "_mes", "sdma"};
  for (int round = 0; round < 5000; ++round) {
    std::string name;
    for (int i = rng() % 6; i >= 0; --i) {
      name += rng() % 2 ? pieces[rng() % pieces.size()] : std::string(1, alphabet[rng() % alphabet.size()]);
    }
    auto role = RoleFromFileName(name);
    if (role.ok()) continue;
    const std::string message(role.status().message());
    EXPECT_TRUE(absl::StrContains(message, "pass --kind=KIND")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// Debian's sienna_cichlid_sos.bin (20250410): psp_firmware_header_v1_3, size_bytes 227456 (0x37880), the KDB
// descriptor at bytes 56-67: fw_version 0x4002100, offset_bytes 0x360d0, size_bytes 0x1310 (read with python's struct).
TEST(ContainerTest, TruncatedRealFileIsRejectedClearly) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions().front());
  auto data = base::ReadFile(dir + "/sienna_cichlid_sos.bin");
  ASSERT_TRUE(data.ok());
  auto c = ParseContainer("sienna_cichlid_sos.bin", data->substr(0, 200000));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(std::string(c.status().message()),
            "sienna_cichlid_sos.bin: header.size_bytes = 227456 but the file is 200000 bytes; the amdgpu driver "
            "rejects such a file (amdgpu_ucode_validate); it is truncated (reinstall it from linux-firmware)");
}

TEST(ContainerTest, CorruptedRealFileIsRejectedClearly) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions().front());
  auto data = base::ReadFile(dir + "/sienna_cichlid_sos.bin");
  ASSERT_TRUE(data.ok());
  std::string bad = *data;
  Put32(bad, 60, 0x00ffff00);  // kdb.offset_bytes: common header (32) + sos, toc descriptors (24) + fw_version (4)
  auto c = ParseContainer("sienna_cichlid_sos.bin", bad);
  ASSERT_FALSE(c.ok());
  const std::string m(c.status().message());
  EXPECT_TRUE(absl::StrContains(m, "component 'kdb' (kdb.size_bytes = 0x1310, kdb.offset_bytes = 0xffff00")) << m;
  EXPECT_TRUE(absl::StrContains(m, "past the end of the file at 0x37880")) << m;
}

// Every prefix of a real file, and deterministic single-byte corruptions, either parse or fail with the file's
// name in the message; none may crash (the ASan build turns an out-of-bounds read into a failure).
TEST(ContainerTest, EveryTruncationAndRandomCorruptionIsHandled) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions().front());
  for (const char* name : {"navi10_gpu_info.bin", "psp_13_0_5_toc.bin"}) {
    auto data = base::ReadFile(dir + "/" + name);
    ASSERT_TRUE(data.ok());
    for (size_t len = 0; len < data->size(); ++len) {
      auto c = ParseContainer(name, data->substr(0, len));
      ASSERT_FALSE(c.ok()) << name << " cut to " << len;
      EXPECT_TRUE(absl::StartsWith(c.status().message(), name)) << c.status();
    }
  }
  uint32_t seed = 12345;
  for (const char* name : {"sienna_cichlid_sos.bin", "sienna_cichlid_rlc.bin", "sienna_cichlid_ta.bin",
                           "sienna_cichlid_smc.bin", "gc_11_0_0_mes_2.bin"}) {
    auto data = base::ReadFile(dir + "/" + name);
    ASSERT_TRUE(data.ok());
    for (int i = 0; i < 500; ++i) {
      std::string bad = *data;
      seed = seed * 1664525u + 1013904223u;
      bad[(seed >> 8) % 256] = static_cast<char>(seed >> 24);  // the header area, where the offsets live
      auto c = ParseContainer(name, bad);
      if (!c.ok()) {
        EXPECT_TRUE(absl::StartsWith(c.status().message(), name)) << c.status();
      }
    }
  }
}

}  // namespace
}  // namespace firmware
