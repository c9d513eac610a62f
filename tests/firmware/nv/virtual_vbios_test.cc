// firmware/nv/virtual_vbios: the virtual AD102 VBIOS is deterministic, in the real format, and carries a virtual FWSEC
// the virtual GPU can recognise (identity header, SHA-256, recomputable signatures), as virtual_vbios.h documents.
#include "firmware/nv/virtual_vbios.h"

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/sha256.h"
#include "firmware/nv/vbios.h"
#include "gtest/gtest.h"

namespace firmware::nv {
namespace {

uint32_t Get(const std::string& d, uint64_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(d.at(at + i));
  return v;
}

uint8_t Sum(absl::string_view bytes) {
  uint8_t sum = 0;
  for (char c : bytes) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(c));
  return sum;
}

std::string Build(const VirtualVbiosOptions& options = {}) {
  absl::StatusOr<std::string> rom = BuildVirtualVbios("ad102", options);
  EXPECT_TRUE(rom.ok()) << rom.status();
  return rom.ok() ? *rom : std::string();
}

// If this changes, the virtual GPU's ROM changed: say why in the commit, and update the pin.
TEST(VirtualVbiosTest, IsDeterministicAndPinned) {
  const std::string rom = Build();
  EXPECT_EQ(rom, Build());
  EXPECT_EQ(rom.size(), 0x7000u);
  EXPECT_EQ(base::Sha256::HexHash(rom), "31c89f0f749c613de3b8f5e45303e2c2b4c1651c7585856cc1960656100c095d");
}

TEST(VirtualVbiosTest, OnlyAd102) {
  absl::StatusOr<std::string> rom = BuildVirtualVbios("ga102");
  ASSERT_FALSE(rom.ok());
  EXPECT_TRUE(absl::StrContains(rom.status().message(), "the only virtual NVIDIA chip is ad102"));
  EXPECT_FALSE(BuildVirtualVbios("ad102", {.desc_version = 4}).ok());
}

// Format details a reader other than ours checks: the PC-AT image sums to 0 (nouveau's shadow.c), the BIT header's
// checksum byte balances its 12 bytes, every image is a whole number of 512-byte blocks, the ROM header's size byte.
TEST(VirtualVbiosTest, ChecksumsAndBlocks) {
  const std::string rom = Build();
  EXPECT_EQ(Sum(absl::string_view(rom).substr(0, 0x400)), 0);
  EXPECT_EQ(Sum(absl::string_view(rom).substr(0x1b0, 12)), 0);
  EXPECT_EQ(rom.size() % 512, 0u);
  EXPECT_EQ(static_cast<uint8_t>(rom[2]), 0x400 / 512);
  EXPECT_TRUE(absl::StrContains(rom.substr(0x100, 0x80), "virtual content; not NVIDIA's"));
}

class VirtualFwsecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rom_ = Build();
    absl::StatusOr<Vbios> v = ParseVbios("ad102.rom", rom_);
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_TRUE(v->fwsec.has_value());
    vbios_ = *v;
  }
  std::string rom_;
  Vbios vbios_;
};

// The identity header at IMEM's start, as virtual_vbios.h lays it out.
TEST_F(VirtualFwsecTest, IdentityHeader) {
  const FwsecDescriptor& d = vbios_.fwsec->desc;
  const uint64_t u = d.ucode_offset;
  EXPECT_EQ(rom_.substr(u, 16), std::string("BAREGPU_VFWSEC\0\0", 16));
  EXPECT_EQ(Get(rom_, u + 16, 4), 1u);  // format
  EXPECT_EQ(Get(rom_, u + 20, 4), d.imem_load_size);
  EXPECT_EQ(Get(rom_, u + 24, 4), d.dmem_load_size);
  EXPECT_EQ(static_cast<uint8_t>(rom_[u + 28]), 0x85);  // FWSEC_PROD
  EXPECT_EQ(static_cast<uint8_t>(rom_[u + 29]), 3);     // descriptor version
  EXPECT_EQ(rom_.substr(u + 32, 16), std::string("ad102\0\0\0\0\0\0\0\0\0\0\0", 16));
  EXPECT_EQ(Get(rom_, u + 48, 2), 0x10deu);
  EXPECT_EQ(Get(rom_, u + 50, 2), 0x2684u);
  EXPECT_TRUE(absl::StrContains(rom_.substr(u + 88, 200), "not NVIDIA code")) << rom_.substr(u + 88, 200);
}

// The hash: SHA-256 over IMEM with the hash field (IMEM 56..88) zero, then DMEM as built.
std::string IdentityHash(const std::string& rom, const FwsecDescriptor& d) {
  std::string imem = rom.substr(d.ucode_offset, d.imem_load_size);
  imem.replace(56, 32, std::string(32, '\0'));
  base::Sha256 sha;
  sha.Update(imem);
  sha.Update(rom.substr(d.ucode_offset + d.imem_load_size, d.dmem_load_size));
  const base::Sha256::Digest digest = sha.Finish();
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

TEST_F(VirtualFwsecTest, HashCoversTheUcode) {
  const FwsecDescriptor& d = vbios_.fwsec->desc;
  const std::string hash = IdentityHash(rom_, d);
  EXPECT_EQ(rom_.substr(d.ucode_offset + 56, 32), hash);
  std::string changed = rom_;
  changed[d.ucode_offset + 0x1000] ^= 1;  // one bit of IMEM filler
  EXPECT_NE(changed.substr(d.ucode_offset + 56, 32), IdentityHash(changed, d));
}

// Each signature: SHA-256 blocks, the first over "baregpu virtual FWSEC signature, fuse version N:" + the identity
// hash, each next over the previous block; 384 bytes. Lowest fuse version first.
std::string ExpectedSignature(int version, const std::string& hash) {
  std::string out, seed = absl::StrCat("baregpu virtual FWSEC signature, fuse version ", version, ":", hash);
  while (out.size() < 384) {
    const base::Sha256::Digest d = base::Sha256::Hash(seed);
    seed.assign(reinterpret_cast<const char*>(d.data()), d.size());
    out += seed;
  }
  return out.substr(0, 384);
}

TEST_F(VirtualFwsecTest, SignaturesArePresentAndRecomputable) {
  const FwsecDescriptor& d = vbios_.fwsec->desc;
  ASSERT_EQ(d.signature_count, 2);
  ASSERT_EQ(d.size, 44u + 2 * 384);
  const std::string hash = IdentityHash(rom_, d);
  EXPECT_EQ(rom_.substr(d.signatures_offset, 384), ExpectedSignature(0, hash));
  EXPECT_EQ(rom_.substr(d.signatures_offset + 384, 384), ExpectedSignature(1, hash));
  EXPECT_EQ(VirtualFwsecSignature(1, hash), ExpectedSignature(1, hash));
  // The modelled fuse selects the last one.
  absl::StatusOr<uint32_t> index = FwsecSignatureIndex(d.signature_versions, kVirtualAd102FwsecFuseRegister);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(*index, 1u);
}

// What the driver patches is zero as built: init_cmd, the command buffer, the PKC signature slot.
TEST_F(VirtualFwsecTest, PatchedPartsStartZero) {
  const FwsecDescriptor& d = vbios_.fwsec->desc;
  const DmemMapper& m = vbios_.fwsec->dmem_mapper;
  EXPECT_EQ(Get(rom_, m.init_cmd_file_offset, 4), 0u);
  EXPECT_EQ(rom_.substr(m.cmd_in_buffer_file_offset, m.cmd_in_buffer_size), std::string(m.cmd_in_buffer_size, '\0'));
  const uint64_t pkc = d.ucode_offset + d.dmem_image_offset + d.pkc_data_offset;
  EXPECT_EQ(rom_.substr(pkc, 384), std::string(384, '\0'));
  EXPECT_GE(m.cmd_in_buffer_size, kFrtsCommandSize);
  EXPECT_EQ(m.version, 3);
  EXPECT_EQ(m.size, 64);
  // One mask bit per accepted command: FRTS (0x15) and SB (0x19).
  EXPECT_EQ(m.ucode_cmd_mask0, (1u << 0x15) | (1u << 0x19));
}

TEST_F(VirtualFwsecTest, DebugEntryIsADifferentUcode) {
  const UcodeEntry& dbg = vbios_.ucode_table->entries[0];
  ASSERT_EQ(dbg.application_id, 0x45);
  const uint32_t size = dbg.desc_header >> 16;
  const uint64_t ucode = dbg.desc_offset + size;
  EXPECT_EQ(static_cast<uint8_t>(rom_[ucode + 28]), 0x45);
  EXPECT_NE(rom_.substr(ucode + 56, 32), rom_.substr(vbios_.fwsec->desc.ucode_offset + 56, 32));
}

// The virtual GPU's check of a loaded FWSEC, after the driver patched it as nouveau's nvkm_gsp_fwsec_patch and
// tinygrad's prep_ucode do: init_cmd, the FRTS command (read_vbios v1 24 bytes, flags 2; frts_region v1 20 bytes,
// type 2), and the signature for the fuse version.
class CheckVirtualFwsecTest : public VirtualFwsecTest {
 protected:
  void Patch(uint32_t init_cmd, int signature_index) {
    const FwsecDescriptor& d = vbios_.fwsec->desc;
    imem_ = rom_.substr(d.ucode_offset, d.imem_load_size);
    dmem_ = rom_.substr(d.ucode_offset + d.dmem_image_offset, d.dmem_load_size);
    const DmemMapper& m = vbios_.fwsec->dmem_mapper;
    auto put = [&](uint64_t at, uint32_t v) {
      for (int i = 0; i < 4; ++i) dmem_[at + i] = static_cast<char>(v >> (8 * i));
    };
    put(m.dmem_offset + 44, init_cmd);
    const uint64_t c = m.cmd_in_buffer_offset;
    put(c, 1), put(c + 4, 24), put(c + 20, 2);        // read_vbios: ver, hdr, flags
    put(c + 24, 1), put(c + 28, 20), put(c + 40, 2);  // frts_region: ver, hdr, type
    put(c + 32, 0x5ff000), put(c + 36, 0x100);        // addr, size (4 KiB units)
    dmem_.replace(d.pkc_data_offset, 384, rom_.substr(d.signatures_offset + 384 * signature_index, 384));
  }
  absl::StatusOr<VirtualFwsecRun> Check(uint32_t fuse_version = 1) {
    const FwsecDescriptor& d = vbios_.fwsec->desc;
    return CheckVirtualFwsec("ad102", imem_, dmem_, d.pkc_data_offset, d.interface_offset, fuse_version);
  }
  std::string imem_, dmem_;
};

TEST_F(CheckVirtualFwsecTest, AcceptsWhatTheDriverPatched) {
  Patch(0x15, 1);
  absl::StatusOr<VirtualFwsecRun> run = Check();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->application_id, 0x85);
  EXPECT_EQ(run->init_cmd, 0x15u);
  ASSERT_EQ(run->command.size(), 256u);
  EXPECT_EQ(Get(run->command, 0, 4), 1u);
  EXPECT_EQ(Get(run->command, 24 + 8, 4), 0x5ff000u);
}

TEST_F(CheckVirtualFwsecTest, RejectsTheWrongSignature) {
  Patch(0x15, 0);  // the signature for fuse version 0 on a GPU fused at version 1
  absl::StatusOr<VirtualFwsecRun> run = Check();
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(absl::StrContains(run.status().message(), "not the one for fuse version 1")) << run.status();
}

TEST_F(CheckVirtualFwsecTest, RejectsAnUnknownCommand) {
  Patch(0, 1);
  absl::StatusOr<VirtualFwsecRun> run = Check();
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(absl::StrContains(run.status().message(), "init_cmd 0x0 is not a command")) << run.status();
}

TEST_F(CheckVirtualFwsecTest, RejectsChangedCode) {
  Patch(0x15, 1);
  imem_[0x1800] ^= 0x40;
  absl::StatusOr<VirtualFwsecRun> run = Check();
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(absl::StrContains(run.status().message(), "SHA-256 mismatch")) << run.status();
}

TEST_F(CheckVirtualFwsecTest, RejectsWhatIsNotVirtualFwsec) {
  Patch(0x15, 1);
  imem_.replace(0, 16, std::string(16, '\x90'));
  absl::StatusOr<VirtualFwsecRun> run = Check();
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(absl::StrContains(run.status().message(), "not virtual FWSEC")) << run.status();
}

}  // namespace
}  // namespace firmware::nv
