// The booter prepared as nouveau prepares it (ga102_gsp_booter_ctor, ga100_flcn_fw_signature,
// nvkm_falcon_fw_patch, ga102_flcn_fw_load/boot), checked against Debian's 535.113.01 AD102 booters read by hand:
//
//   xxd -e -s 0x33c -l 0x3c booter_load-535.113.01.bin
//     0x33c: 00007710 (patch location)  0x340: 00000000 (patch_sig)  0x344: 00000001 00000001 00000003 (meta: fuse
//     version 1, engine id 1, ucode id 3)  0x350: 00000002 (num_sig)  0x354: 00000000 00000100 00007700 00006000
//     00000001 00000100 00007600 (load header: OS code 0 + 0x100, OS data 0x7700 + 0x6000, 1 app: 0x100 + 0x7600)
//   nvfw_bin_hdr: data_offset 0x378, data_size 0xd700; nvfw_hs_header_v2: sig_prod_offset 0x3c, sig_prod_size 0x300
//   xxd -s 0x3c -l 16: 3d97 d698 8b5a a024 f448 c2d4 9734 86a5 (signature 0)
//   xxd -s 0x1bc -l 16: 96d5 1d7f a44d a0e7 7bba 94de 733b 42fa (signature 1 = 0x3c + 384)
//   xxd -s 0x32c -l 16: ebcb 1ef9 c7dd 3167 310b dc45 c162 462b (signature 1's last 16 bytes)
//   xxd -s 0x7a78 -l 48: zeros (the payload at 0x7700..0x772f, where the signature goes at 0x7710)
//
//   booter_unload-535.113.01.bin: patch location 0x4910, the same meta, OS data 0x4900 + 0x4e00, app 0x100 + 0x4800,
//   data_size 0x9800; signature 0 starts c085 1c47 9057 66c8, signature 1 bd67 95d2 e5e5 f189.
#include "nv/gsp/booter_image.h"

#include <string>

#include "base/file.h"
#include "gtest/gtest.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace nv::gsp {
namespace {

using firmware::nv::testing::Bytes;

std::string ReadOrEmpty(const std::string& path) {
  absl::StatusOr<std::string> data = base::ReadFile(path);
  EXPECT_TRUE(data.ok()) << data.status();
  return data.ok() ? *data : "";
}

TEST(BooterFuseTest, RegisterByEngineBitAndUcodeId) {
  // ga100_flcn_fw_signature: engine bit 0x1 -> 0x824140, 0x4 -> 0x824100, 0x400 -> 0x8241c0, + (ucode_id - 1) * 4.
  absl::StatusOr<uint32_t> reg = BooterFuseRegister(1, 3);  // the AD102 booter: 0x824140 + 2 * 4
  ASSERT_TRUE(reg.ok()) << reg.status();
  EXPECT_EQ(*reg, 0x824148u);
  EXPECT_EQ(*BooterFuseRegister(0x4, 1), 0x824100u);
  EXPECT_EQ(*BooterFuseRegister(0x400, 2), 0x8241c4u);
  EXPECT_EQ(*BooterFuseRegister(0x5, 1), 0x824140u);  // bit 0 is tested first
  EXPECT_FALSE(BooterFuseRegister(0x2, 3).ok());
  EXPECT_FALSE(BooterFuseRegister(1, 0).ok());
}

TEST(BooterFuseTest, SignatureSelection) {
  // Unfused (register 0): the last signature, num_sig - 1.
  EXPECT_EQ(*SelectBooterSignature(1, 2, 0), 1u);
  // fls(1) = 1: fuse_ver 1 - 1 = 0.
  EXPECT_EQ(*SelectBooterSignature(1, 2, 0x1), 0u);
  // fuse_ver 3 with fls(0b11) = 2: signature 1; fls(0b100) = 3: signature 0.
  EXPECT_EQ(*SelectBooterSignature(3, 3, 0x3), 1u);
  EXPECT_EQ(*SelectBooterSignature(3, 3, 0x4), 0u);
  // fls(0b10) = 2 > fuse_ver 1: nouveau's -EINVAL, the chip is fused past the file.
  absl::StatusOr<uint32_t> idx = SelectBooterSignature(1, 2, 0x2);
  ASSERT_FALSE(idx.ok());
  EXPECT_EQ(idx.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(idx.status().message().find("newer firmware"), absl::string_view::npos) << idx.status();
  // fuse_ver 3, fls(1) = 1 -> signature 2, which a 2-signature file lacks (nouveau would read past them).
  EXPECT_FALSE(SelectBooterSignature(3, 2, 0x1).ok());
}

TEST(BooterImageTest, RealAd102BooterLoadUnfused) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string path = root + "/nvidia/ad102/gsp/booter_load-535.113.01.bin";
  const std::string data = ReadOrEmpty(path);
  absl::StatusOr<BooterImage> b = PrepareBooterFile(path, data, /*fuse_register_value=*/0);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->fuse_register, 0x824148u);
  EXPECT_EQ(b->signature_index, 1u);  // unfused: the last of 2
  ASSERT_EQ(b->image.size(), 0xd700u);
  // Signature 1 (file 0x1bc..0x33b) now at payload 0x7710..0x788f.
  EXPECT_EQ(b->image.substr(0x7710, 16),
            std::string("\x96\xd5\x1d\x7f\xa4\x4d\xa0\xe7\x7b\xba\x94\xde\x73\x3b\x42\xfa", 16));
  EXPECT_EQ(b->image.substr(0x7710 + 384 - 16, 16),
            std::string("\xeb\xcb\x1e\xf9\xc7\xdd\x31\x67\x31\x0b\xdc\x45\xc1\x62\x46\x2b", 16));
  // The bytes around it are the file's: zeros before 0x7710 and after 0x7890.
  EXPECT_EQ(b->image.substr(0x7700, 16), std::string(16, '\0'));
  EXPECT_EQ(b->image.substr(0x7890, 16), std::string(16, '\0'));
  // Everything else is the payload unchanged.
  EXPECT_EQ(b->image.substr(0, 0x7710), data.substr(0x378, 0x7710));
  EXPECT_EQ(b->image.substr(0x7890), data.substr(0x378 + 0x7890));
  // The load header and what the falcon gets.
  EXPECT_EQ(b->os_code_offset, 0u);
  EXPECT_EQ(b->os_code_size, 0x100u);
  EXPECT_EQ(b->os_data_offset, 0x7700u);
  EXPECT_EQ(b->os_data_size, 0x6000u);
  EXPECT_EQ(b->app_offset, 0x100u);
  EXPECT_EQ(b->app_size, 0x7600u);
  EXPECT_EQ(b->imem.image_offset, 0x100u);
  EXPECT_EQ(b->imem.mem_offset, 0u);
  EXPECT_EQ(b->imem.size, 0x7600u);
  EXPECT_TRUE(b->imem.secure);
  EXPECT_EQ(b->dmem.image_offset, 0x7700u);
  EXPECT_EQ(b->dmem.mem_offset, 0u);
  EXPECT_EQ(b->dmem.size, 0x6000u);
  EXPECT_FALSE(b->dmem.secure);
  EXPECT_EQ(b->boot_vector, 0x100u);
  // BROM: PKC at 0x7710 - 0x7700 = 0x10 in DMEM (tinygrad's execute_hs passes pkc_off=0x10, engid=1, ucodeid=3
  // for its booter too), engine mask 1, ucode id 3, RSA3K (dev_falcon_second_pri.h MOD_SEL_ALGO_RSA3K = 1).
  EXPECT_EQ(b->brom_pkc_data_offset, 0x10u);
  EXPECT_EQ(b->brom_engine_id_mask, 1u);
  EXPECT_EQ(b->brom_ucode_id, 3u);
  EXPECT_EQ(b->brom_mod_sel_algo, 1u);
}

TEST(BooterImageTest, RealAd102BooterLoadFusedAtOne) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string path = root + "/nvidia/ad102/gsp/booter_load-535.113.01.bin";
  absl::StatusOr<BooterImage> b = PrepareBooterFile(path, ReadOrEmpty(path), /*fuse_register_value=*/1);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->signature_index, 0u);
  EXPECT_EQ(b->image.substr(0x7710, 16),
            std::string("\x3d\x97\xd6\x98\x8b\x5a\xa0\x24\xf4\x48\xc2\xd4\x97\x34\x86\xa5", 16));
}

TEST(BooterImageTest, RealAd102BooterLoadFusedPastTheFile) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string path = root + "/nvidia/ad102/gsp/booter_load-535.113.01.bin";
  // fls(0x2) = 2 > meta[0] = 1.
  absl::StatusOr<BooterImage> b = PrepareBooterFile(path, ReadOrEmpty(path), /*fuse_register_value=*/0x2);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("booter_load-535.113.01.bin"), absl::string_view::npos) << b.status();
}

TEST(BooterImageTest, RealAd102BooterUnload) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string path = root + "/nvidia/ad102/gsp/booter_unload-535.113.01.bin";
  absl::StatusOr<BooterImage> b = PrepareBooterFile(path, ReadOrEmpty(path), /*fuse_register_value=*/1);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->image.size(), 0x9800u);
  EXPECT_EQ(b->signature_index, 0u);
  EXPECT_EQ(b->image.substr(0x4910, 8), std::string("\xc0\x85\x1c\x47\x90\x57\x66\xc8", 8));
  EXPECT_EQ(b->imem.image_offset, 0x100u);
  EXPECT_EQ(b->imem.size, 0x4800u);
  EXPECT_EQ(b->dmem.image_offset, 0x4900u);
  EXPECT_EQ(b->dmem.size, 0x4e00u);
  EXPECT_EQ(b->boot_vector, 0x100u);
  EXPECT_EQ(b->brom_pkc_data_offset, 0x10u);  // 0x4910 - 0x4900
  b = PrepareBooterFile(path, ReadOrEmpty(path), /*fuse_register_value=*/0);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->image.substr(0x4910, 8), std::string("\xbd\x67\x95\xd2\xe5\xe5\xf1\x89", 8));
}

TEST(BooterImageTest, TruncatedFileIsAnError) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string path = root + "/nvidia/ad102/gsp/booter_load-535.113.01.bin";
  const std::string data = ReadOrEmpty(path);
  absl::StatusOr<BooterImage> b = PrepareBooterFile(path, data.substr(0, 0x1000), 0);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("booter_load"), absl::string_view::npos) << b.status();
  // A parsed booter handed another (shorter) buffer is refused, not read past.
  absl::StatusOr<firmware::nv::Booter> parsed = firmware::nv::ParseBooter(path, data);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(PrepareBooter(*parsed, data.substr(0, 0x400), 0).ok());
}

// A synthetic booter in the real files' shape (nvfw_bin_hdr, nvfw_hs_header_v2 at 0x18, the indirect values, the
// load header), with two 16-byte signatures, so that the patch is checked without the cache.
std::string SyntheticBooter(uint32_t engine_id, uint32_t app_size) {
  Bytes f;
  const uint32_t data_offset = 0x100, data_size = 0x400;
  f.U32(0x0, 0x10de)
      .U32(0x4, 1)
      .U32(0x8, data_offset + data_size)
      .U32(0xc, 0x18)
      .U32(0x10, data_offset)
      .U32(0x14, data_size);
  // nvfw_hs_header_v2: sig_prod_offset 0x60, sig_prod_size 0x20, patch_loc @0x80, patch_sig @0x84, meta @0x88 (12
  // bytes), num_sig @0x94, load header @0x98 (0x1c bytes).
  f.U32(0x18, 0x60).U32(0x1c, 0x20).U32(0x20, 0x80).U32(0x24, 0x84).U32(0x28, 0x88).U32(0x2c, 12).U32(0x30, 0x94);
  f.U32(0x34, 0x98).U32(0x38, 0x1c);
  f.Text(0x60, std::string(16, 'A')).Text(0x70, std::string(16, 'B'));
  f.U32(0x80, 0x210);  // patch location: payload 0x210, in the OS data 0x200..0x3ff
  f.U32(0x84, 0);
  f.U32(0x88, 1).U32(0x8c, engine_id).U32(0x90, 3);
  f.U32(0x94, 2);
  // Load header: OS code 0 + 0x100, OS data 0x200 + 0x200, 1 app at 0x100.
  f.U32(0x98, 0).U32(0x9c, 0x100).U32(0xa0, 0x200).U32(0xa4, 0x200).U32(0xa8, 1).U32(0xac, 0x100).U32(0xb0, app_size);
  f.Resize(data_offset + data_size);
  return f.str();
}

TEST(BooterImageTest, SyntheticPatchAndBrom) {
  const std::string file = SyntheticBooter(/*engine_id=*/1, /*app_size=*/0x100);
  absl::StatusOr<BooterImage> b = PrepareBooterFile("synthetic", file, 0);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->signature_index, 1u);
  EXPECT_EQ(b->image.size(), 0x400u);
  EXPECT_EQ(b->image.substr(0x210, 16), std::string(16, 'B'));
  EXPECT_EQ(b->image.substr(0x220, 16), std::string(16, '\0'));
  EXPECT_EQ(b->brom_pkc_data_offset, 0x10u);
  EXPECT_EQ(b->fuse_register, 0x824148u);
  b = PrepareBooterFile("synthetic", file, 1);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->image.substr(0x210, 16), std::string(16, 'A'));
}

TEST(BooterImageTest, HandEditedBooterIsRefusedNotFollowed) {
  const std::string file = SyntheticBooter(/*engine_id=*/1, /*app_size=*/0x100);
  absl::StatusOr<firmware::nv::Booter> parsed = firmware::nv::ParseBooter("synthetic", file);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  firmware::nv::Booter edited = *parsed;
  edited.patch_loc = 0x3f8;  // 16 bytes from 0x3f8 run past the 0x400-byte payload
  absl::StatusOr<BooterImage> b = PrepareBooter(edited, file, 0);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("patch location"), absl::string_view::npos) << b.status();
  edited = *parsed;
  edited.load.apps.clear();
  EXPECT_FALSE(PrepareBooter(edited, file, 0).ok());
  edited = *parsed;
  edited.hs.meta_data_size = 0;  // a Turing-style booter
  EXPECT_FALSE(PrepareBooter(edited, file, 0).ok());
}

TEST(BooterImageTest, SyntheticErrors) {
  // An engine without a fuse bank.
  absl::StatusOr<BooterImage> b = PrepareBooterFile("synthetic", SyntheticBooter(0x2, 0x100), 0);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("engine id"), absl::string_view::npos) << b.status();
  // An app that is not whole 256-byte DMA chunks.
  b = PrepareBooterFile("synthetic", SyntheticBooter(0x1, 0x80), 0);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("256"), absl::string_view::npos) << b.status();
}

}  // namespace
}  // namespace nv::gsp
