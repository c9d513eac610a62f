// Every real amdgpu firmware file in ../shared parses, and what the parser reports agrees with the files.
// Expected offsets and sizes below were read from the files with an independent script (struct.unpack).
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "base/file.h"
#include "firmware/container.h"
#include "gtest/gtest.h"
#include "tests/firmware/debian_firmware.h"
#include "tests/firmware/shared_firmware.h"

namespace firmware {
namespace {

absl::StatusOr<Container> ParseShared(const std::string& dir, const std::string& name, std::string& data) {
  absl::StatusOr<std::string> read = base::ReadFile(dir + "/" + name);
  if (!read.ok()) return read.status();
  data = *std::move(read);
  return ParseContainer(name, data);
}

TEST(RealFirmwareTest, EveryFileParsesWithComponentsInsideAndPlausibleVersions) {
  REQUIRE_SHARED_FIRMWARE(dir);
  auto names = base::ListDirectory(dir);
  ASSERT_TRUE(names.ok()) << names.status();
  int parsed = 0;
  for (const std::string& name : *names) {
    if (!absl::EndsWith(name, ".bin")) continue;
    std::string data;
    absl::StatusOr<Container> c = ParseShared(dir, name, data);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    ++parsed;
    const CommonHeader& h = c->header;
    EXPECT_TRUE(h.header_version_major == 1 || h.header_version_major == 2) << name;
    EXPECT_GE(h.ip_version_major, 3) << name;
    EXPECT_LE(h.ip_version_major, 13) << name;
    EXPECT_EQ(h.ucode_array_offset_bytes, 256u) << name;
    EXPECT_LE(uint64_t{h.ucode_array_offset_bytes} + h.ucode_size_bytes, data.size()) << name;
    EXPECT_FALSE(c->components.empty()) << name;
    // Images handed to the PSP never overlap one another (driver-side views such as a PFP's JT may).
    for (const Component& a : c->components) {
      for (const Component& b : c->components) {
        if (&a == &b || a.load == LoadPath::kDriver || b.load == LoadPath::kDriver) continue;
        EXPECT_TRUE(a.offset + a.size <= b.offset || b.offset + b.size <= a.offset)
            << name << ": " << a.name << " overlaps " << b.name;
      }
    }
    for (const Component& comp : c->components) {
      EXPECT_GT(comp.size, 0u) << name << " " << comp.name;
      EXPECT_LE(comp.offset + comp.size, data.size()) << name << " " << comp.name;
      // Nothing the PSP loads sits in the header area.
      if (comp.load != LoadPath::kDriver) {
        EXPECT_GE(comp.offset, 256u) << name << " " << comp.name;
      }
      for (uint32_t type : comp.types) {
        EXPECT_FALSE(absl::StrContains(TypeName(comp.load, type), " ")) << name << " unnamed type " << type;
      }
    }
  }
  // ../shared/firmware/README.md: 189 files.
  EXPECT_EQ(parsed, 189);
  std::cout << "parsed " << parsed << " real firmware files\n";
}

TEST(RealFirmwareTest, OnlyRlcV22FilesHaveTheSizeBytesQuirkAndItIsHandled) {
  REQUIRE_SHARED_FIRMWARE(dir);
  auto names = base::ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  std::set<std::string> quirky;
  for (const std::string& name : *names) {
    std::string data;
    absl::StatusOr<Container> c = ParseShared(dir, name, data);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    if (c->header.size_bytes == data.size()) continue;
    quirky.insert(name);
    EXPECT_EQ(c->role.kind, FileKind::kRlc) << name;
    EXPECT_EQ(c->layout, "rlc_firmware_header_v2_2") << name;
    EXPECT_LT(c->header.size_bytes, data.size()) << name;
    bool noted = false;
    for (const std::string& note : c->notes) noted |= absl::StrContains(note, "RLC v2.2");
    EXPECT_TRUE(noted) << name;
    // The IRAM and DRAM images lie beyond size_bytes but inside the file.
    const Component* iram = c->Find(LoadPath::kIpFirmware, gfx_fw_type::kRlcIram);
    ASSERT_NE(iram, nullptr) << name;
    EXPECT_GE(iram->offset, c->header.size_bytes) << name;
  }
  // The seven RLC v2.2 files of the bundle (README: "several rlc 2.2 files").
  EXPECT_EQ(quirky, (std::set<std::string>{"beige_goby_rlc.bin", "dimgrey_cavefish_rlc.bin", "gc_10_3_6_rlc.bin",
                                           "gc_10_3_7_rlc.bin", "navy_flounder_rlc.bin", "sienna_cichlid_rlc.bin",
                                           "yellow_carp_rlc.bin"}));
}

// Debian's sienna_cichlid_sos.bin (20250410), psp_firmware_header_v1_3 read with python's struct from byte 32:
// sos {0, 0x21770, 0x14360}, toc {9, 0x35ad0, 0x600}, kdb {0x4002100, 0x360d0, 0x1310}, spl {0x1002100, 0x373e0,
// 0x3a0}, rl and the aux images all zero.
TEST(RealFirmwareTest, SosV13ComponentsOfSiennaCichlid) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions().front());
  std::string data;
  auto c = ParseShared(dir, "sienna_cichlid_sos.bin", data);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->layout, "psp_firmware_header_v1_3");
  struct Want {
    const char* name;
    uint64_t offset, size;
    LoadPath load;
    uint32_t type;
  };
  for (const Want& w : {Want{"sys_drv", 0x100, 0x21770, LoadPath::kBootloader, psp_fw_type::kSysDrv},
                        Want{"sos", 0x100 + 0x21770, 0x14360, LoadPath::kBootloader, psp_fw_type::kSos},
                        Want{"toc", 0x100 + 0x35ad0, 0x600, LoadPath::kToc, psp_fw_type::kToc},
                        Want{"kdb", 0x100 + 0x360d0, 0x1310, LoadPath::kBootloader, psp_fw_type::kKdb},
                        Want{"spl", 0x100 + 0x373e0, 0x3a0, LoadPath::kBootloader, psp_fw_type::kSpl}}) {
    const Component* comp = c->FindByName(w.name);
    ASSERT_NE(comp, nullptr) << w.name;
    EXPECT_EQ(comp->offset, w.offset) << w.name;
    EXPECT_EQ(comp->size, w.size) << w.name;
    EXPECT_EQ(comp->load, w.load) << w.name;
    EXPECT_EQ(comp->types, std::vector<uint32_t>{w.type}) << w.name;
  }
  EXPECT_EQ(c->components.size(), 5u);  // rl, sys_drv_aux and sos_aux are empty in this file
  EXPECT_EQ(c->FindByName("toc")->version, 9u);
}

// aldebaran_sos.bin of Debian's 20230210-5 is byte for byte the AMDGPU 22.20 bundle's (cmp).
TEST(RealFirmwareTest, SosV13WithAuxImagesOfAldebaran) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions()[1]);
  std::string data;
  auto c = ParseShared(dir, "aldebaran_sos.bin", data);
  ASSERT_TRUE(c.ok()) << c.status();
  const Component* rl = c->FindByName("rl");
  ASSERT_NE(rl, nullptr);
  EXPECT_EQ(rl->offset, 0x100u + 0x33b10);
  EXPECT_EQ(rl->size, 0x15c0u);
  const Component* sos_aux = c->FindByName("sos (aux)");
  ASSERT_NE(sos_aux, nullptr);
  EXPECT_EQ(sos_aux->offset, 0x100u + 0x54960);
  EXPECT_EQ(sos_aux->size, 0x15480u);
  EXPECT_EQ(sos_aux->version, 0x27007fu);
}

// Debian's sienna_cichlid_ta.bin (20250410), ta_firmware_header_v2_0 read with python's struct: 6 descriptors from
// byte 36, ASD {type 1, 0x210000ec, offset 0, 0x30100}, RAP {type 6, 0x7000016, 0x58500, 0x3100}.
TEST(RealFirmwareTest, TaV2DescriptorsOfSiennaCichlid) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions().front());
  std::string data;
  auto c = ParseShared(dir, "sienna_cichlid_ta.bin", data);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->components.size(), 6u);
  const Component* asd = c->Find(LoadPath::kTrustedApp, ta_fw_type::kAsd);
  ASSERT_NE(asd, nullptr);
  EXPECT_EQ(asd->offset, 0x100u);
  EXPECT_EQ(asd->size, 0x30100u);
  EXPECT_EQ(asd->version, 0x210000ecu);
  const Component* rap = c->Find(LoadPath::kTrustedApp, ta_fw_type::kRap);
  ASSERT_NE(rap, nullptr);
  EXPECT_EQ(rap->offset, 0x100u + 0x58500);
  EXPECT_EQ(rap->size, 0x3100u);
}

// Debian's navi10_ta.bin (20230210-5), ta_firmware_header_v1_0: hdcp {0x17000031, 0, 0x6100}, dtm {0x12000013,
// 0x6100, 0x2100} (python's struct from byte 56).
TEST(RealFirmwareTest, TaV1CountsEveryOffsetFromTheUcodeArray) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions()[1]);
  std::string data;
  auto c = ParseShared(dir, "navi10_ta.bin", data);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->components.size(), 2u);  // XGMI, RAS and secure display are empty
  EXPECT_EQ(c->FindByName("hdcp")->offset, 0x100u);
  EXPECT_EQ(c->FindByName("hdcp")->size, 0x6100u);
  EXPECT_EQ(c->FindByName("dtm")->offset, 0x100u + 0x6100);
  EXPECT_EQ(c->FindByName("dtm")->size, 0x2100u);
}

TEST(RealFirmwareTest, RlcV22ListsAndImages) {
  REQUIRE_SHARED_FIRMWARE(dir);
  std::string data;
  auto c = ParseShared(dir, "sienna_cichlid_rlc.bin", data);
  ASSERT_TRUE(c.ok()) << c.status();
  struct Want {
    uint32_t type;
    uint64_t offset, size;
  };
  for (const Want& w :
       {Want{gfx_fw_type::kRlcG, 0x100, 25088}, Want{gfx_fw_type::kRlcRestoreListSrmCntl, 0x6300, 0x250},
        Want{gfx_fw_type::kRlcRestoreListGpmMem, 0x6550, 0x600},
        Want{gfx_fw_type::kRlcRestoreListSrmMem, 0x6b50, 0x4710}, Want{gfx_fw_type::kRlcIram, 0xb260, 0x10200},
        Want{gfx_fw_type::kRlcDramBoot, 0x1b460, 0x4200}}) {
    const Component* comp = c->Find(LoadPath::kIpFirmware, w.type);
    ASSERT_NE(comp, nullptr) << TypeName(LoadPath::kIpFirmware, w.type);
    EXPECT_EQ(comp->offset, w.offset) << comp->name;
    EXPECT_EQ(comp->size, w.size) << comp->name;
  }
  // The DRAM image ends exactly at the end of the file.
  EXPECT_EQ(0x1b460u + 0x4200u, data.size());
}

// Debian's sienna_cichlid_mec.bin (20250410), gfx_firmware_header_v1_0 read with python's struct: ucode_size_bytes
// 267904, jt_offset 0x104c0, jt_size 0xe0; its sienna_cichlid_pfp.bin: ucode_size_bytes 263168.
TEST(RealFirmwareTest, MecSplitsItsJumpTableAndPfpKeepsIt) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions().front());
  std::string data;
  auto mec = ParseShared(dir, "sienna_cichlid_mec.bin", data);
  ASSERT_TRUE(mec.ok()) << mec.status();
  const Component* code = mec->Find(LoadPath::kIpFirmware, gfx_fw_type::kCpMec);
  const Component* jt = mec->Find(LoadPath::kIpFirmware, gfx_fw_type::kCpMecMe1);
  ASSERT_NE(code, nullptr);
  ASSERT_NE(jt, nullptr);
  EXPECT_EQ(code->size, 267904u - 0xe0 * 4);
  EXPECT_EQ(jt->offset, 0x100u + 0x104c0 * 4);
  EXPECT_EQ(jt->size, 0xe0u * 4);
  EXPECT_EQ(code->offset + code->size, jt->offset);  // the JT is the tail of the image

  auto mec2 = ParseShared(dir, "sienna_cichlid_mec2.bin", data);
  ASSERT_TRUE(mec2.ok());
  EXPECT_NE(mec2->Find(LoadPath::kIpFirmware, gfx_fw_type::kCpMecMe2), nullptr);

  auto pfp = ParseShared(dir, "sienna_cichlid_pfp.bin", data);
  ASSERT_TRUE(pfp.ok()) << pfp.status();
  EXPECT_EQ(pfp->Find(LoadPath::kIpFirmware, gfx_fw_type::kCpPfp)->size, 263168u);
  EXPECT_EQ(pfp->FindByName("jt")->load, LoadPath::kDriver);
}

// Debian's 20230210-5: navi12_smc.bin is byte for byte the AMDGPU 22.20 bundle's (cmp); its sienna_cichlid_smc.bin
// is an smc v2.1 with pptable_count 2.
TEST(RealFirmwareTest, SmcSoftPptables) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions()[1]);
  std::string data;
  auto v20 = ParseShared(dir, "navi12_smc.bin", data);
  ASSERT_TRUE(v20.ok()) << v20.status();
  const Component* ppt = v20->FindByName("pptable");
  ASSERT_NE(ppt, nullptr);
  EXPECT_EQ(ppt->offset, 0x40300u);
  EXPECT_EQ(ppt->size, 0x68au);
  EXPECT_EQ(v20->Field("ucode_start_addr"), 0x20000u);

  auto v21 = ParseShared(dir, "sienna_cichlid_smc.bin", data);
  ASSERT_TRUE(v21.ok()) << v21.status();
  EXPECT_EQ(v21->Field("pptable_count"), 2u);
  int tables = 0;
  for (const Component& comp : v21->components) tables += absl::StartsWith(comp.name, "pptable ") ? 1 : 0;
  EXPECT_EQ(tables, 2);
}

// Debian's 20230210-5: gc_11_0_0_mes.bin's mes_firmware_header_v1_0 (python's struct from byte 32): ucode size
// 0x25d80 at 0x100, data size 0x20000 at 0x25e80; navi10_sdma1.bin and navi10_gpu_info.bin are byte for byte the
// AMDGPU 22.20 bundle's (cmp).
TEST(RealFirmwareTest, MesSdmaImuFreeKinds) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions()[1]);
  std::string data;
  auto mes = ParseShared(dir, "gc_11_0_0_mes.bin", data);
  ASSERT_TRUE(mes.ok()) << mes.status();
  EXPECT_EQ(mes->Find(LoadPath::kIpFirmware, gfx_fw_type::kCpMes)->offset, 0x100u);
  EXPECT_EQ(mes->Find(LoadPath::kIpFirmware, gfx_fw_type::kCpMes)->size, 0x25d80u);
  const Component* stack = mes->Find(LoadPath::kIpFirmware, gfx_fw_type::kMesStack);
  ASSERT_NE(stack, nullptr);
  EXPECT_EQ(stack->offset, 0x25e80u);
  EXPECT_EQ(stack->size, 0x20000u);

  auto sdma1 = ParseShared(dir, "navi10_sdma1.bin", data);
  ASSERT_TRUE(sdma1.ok()) << sdma1.status();
  EXPECT_NE(sdma1->Find(LoadPath::kIpFirmware, gfx_fw_type::kSdma1), nullptr);
  const Component* jt = sdma1->FindByName("jt");
  ASSERT_NE(jt, nullptr);
  EXPECT_EQ(jt->offset, 0x100u + 0x2000 * 4);
  EXPECT_EQ(jt->size, 0x40u * 4);

  auto gpu_info = ParseShared(dir, "navi10_gpu_info.bin", data);
  ASSERT_TRUE(gpu_info.ok()) << gpu_info.status();
  EXPECT_EQ(gpu_info->Field("version_major"), 1u);
  EXPECT_EQ(gpu_info->Field("version_minor"), 2u);
}

}  // namespace
}  // namespace firmware
