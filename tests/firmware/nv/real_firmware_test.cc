// Debian's firmware-nvidia-graphics 20250410-2~bpo12+1 (tools/fetch_firmware.sh): values pinned from the files
// themselves (xxd, readelf -S, readelf -x .fwversion, Python's struct over the offsets nouveau follows), not from
// the parsers; and every file of the package recognised. Skipped when the cache lacks the package.
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>

#include "base/file.h"
#include "firmware/nv/file_kind.h"
#include "firmware/nv/gsp_elf.h"
#include "firmware/nv/hs_header.h"
#include "firmware/nv/requirements.h"
#include "firmware/nv/riscv_desc.h"
#include "gtest/gtest.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace firmware::nv {
namespace {

std::string Read(const std::string& path) {
  absl::StatusOr<std::string> data = base::ReadFile(path);
  EXPECT_TRUE(data.ok()) << data.status();
  return data.ok() ? *data : "";
}

TEST(RealNvidiaFirmwareTest, Ad102BooterLoad) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string path = root + "/nvidia/ad102/gsp/booter_load-535.113.01.bin";
  const std::string data = Read(path);
  ASSERT_EQ(data.size(), 55928u);
  absl::StatusOr<Booter> b = ParseBooter(path, data);
  ASSERT_TRUE(b.ok()) << b.status();
  // nvfw_bin_hdr: bin_size 0xdb00 is past the file's end (0xda78); the payload ends exactly at it.
  EXPECT_EQ(b->bin.header.bin_ver, 1u);
  EXPECT_EQ(b->bin.header.bin_size, 0xdb00u);
  EXPECT_EQ(b->bin.header.header_offset, 0x18u);
  EXPECT_EQ(b->bin.header.data_offset, 0x378u);
  EXPECT_EQ(b->bin.header.data_size, 0xd700u);
  // nvfw_hs_header_v2 at 0x18.
  EXPECT_EQ(b->hs.sig_prod_offset, 0x3cu);
  EXPECT_EQ(b->hs.sig_prod_size, 0x300u);
  EXPECT_EQ(b->hs.patch_loc, 0x33cu);
  EXPECT_EQ(b->hs.patch_sig, 0x340u);
  EXPECT_EQ(b->hs.meta_data_offset, 0x344u);
  EXPECT_EQ(b->hs.meta_data_size, 0xcu);
  EXPECT_EQ(b->hs.num_sig, 0x350u);
  EXPECT_EQ(b->hs.header_offset, 0x354u);
  EXPECT_EQ(b->hs.header_size, 0x24u);
  // The u32s those offsets point at: two 384-byte signatures (RSA-3072), fuse version mask 1.
  EXPECT_EQ(b->patch_loc, 0x7710u);
  EXPECT_EQ(b->patch_sig, 0u);
  EXPECT_EQ(b->num_sig, 2u);
  EXPECT_EQ(b->sig_size, 384u);
  EXPECT_EQ(b->fuse_ver, 1u);
  EXPECT_EQ(b->engine_id, 1u);
  EXPECT_EQ(b->ucode_id, 3u);
  // nvfw_hs_load_header_v2 at 0x354.
  EXPECT_EQ(b->load.os_code_offset, 0u);
  EXPECT_EQ(b->load.os_code_size, 0x100u);
  EXPECT_EQ(b->load.os_data_offset, 0x7700u);
  EXPECT_EQ(b->load.os_data_size, 0x6000u);
  ASSERT_EQ(b->load.num_apps, 1u);
  EXPECT_EQ(b->load.apps[0].offset, 0x100u);
  EXPECT_EQ(b->load.apps[0].size, 0x7600u);
}

TEST(RealNvidiaFirmwareTest, Ga102AndTu102Booters) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string ga102 = root + "/nvidia/ga102/gsp/booter_load-535.113.01.bin";
  absl::StatusOr<Booter> g = ParseBooter(ga102, Read(ga102));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->bin.file_size, 59768u);
  EXPECT_EQ(g->bin.header.bin_size, 0xea00u);
  EXPECT_EQ(g->bin.header.data_size, 0xe600u);
  EXPECT_EQ(g->patch_loc, 0x8410u);
  EXPECT_EQ(g->num_sig, 2u);
  EXPECT_EQ(g->load.os_data_offset, 0x8400u);
  EXPECT_EQ(g->load.os_data_size, 0x6200u);
  EXPECT_EQ(g->load.apps[0].size, 0x8300u);
  // Turing's booter: one 16-byte (AES-128) signature, different meta data, no fuse-version choice.
  const std::string tu102 = root + "/nvidia/tu102/gsp/booter_load-535.113.01.bin";
  absl::StatusOr<Booter> t = ParseBooter(tu102, Read(tu102));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->bin.file_size, 57992u);
  EXPECT_EQ(t->bin.header.data_offset, 0x88u);
  EXPECT_EQ(t->hs.sig_prod_size, 0x10u);
  EXPECT_EQ(t->num_sig, 1u);
  EXPECT_EQ(t->sig_size, 16u);
  EXPECT_EQ(t->fuse_ver, 0u);
  EXPECT_EQ(t->ucode_id, 0xdu);
  EXPECT_EQ(t->patch_loc, 0x8200u);
  EXPECT_EQ(t->load.os_data_offset, 0x8000u);
  EXPECT_EQ(t->load.apps[0].size, 0x7f00u);
  const std::string unload = root + "/nvidia/ad102/gsp/booter_unload-535.113.01.bin";
  absl::StatusOr<Booter> u = ParseBooter(unload, Read(unload));
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->bin.file_size, 39800u);
  EXPECT_EQ(u->patch_loc, 0x4910u);
  EXPECT_EQ(u->load.apps[0].size, 0x4800u);
}

TEST(RealNvidiaFirmwareTest, BootloaderDescriptors) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string ad102 = root + "/nvidia/ad102/gsp/bootloader-535.113.01.bin";
  absl::StatusOr<Bootloader> a = ParseBootloader(ad102, Read(ad102));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->bin.file_size, 32876u);
  EXPECT_EQ(a->bin.header.bin_size, 0x8100u);
  EXPECT_EQ(a->bin.header.data_offset, 0x6cu);
  EXPECT_EQ(a->bin.header.data_size, 0x8000u);
  EXPECT_EQ(a->desc_words, 21u);
  EXPECT_EQ(a->desc.version, 5u);
  EXPECT_EQ(a->desc.bootloader_offset, 0x7000u);
  EXPECT_EQ(a->desc.bootloader_size, 0x458u);
  EXPECT_EQ(a->desc.bootloader_param_offset, 0x7458u);
  EXPECT_EQ(a->desc.bootloader_param_size, 0x10u);
  EXPECT_EQ(a->desc.app_version, 0u);
  EXPECT_EQ(a->desc.manifest_offset, 0u);
  EXPECT_EQ(a->desc.manifest_size, 0x800u);
  EXPECT_EQ(a->desc.monitor_data_offset, 0x800u);
  EXPECT_EQ(a->desc.monitor_data_size, 0x4000u);
  EXPECT_EQ(a->desc.monitor_code_offset, 0x4800u);
  EXPECT_EQ(a->desc.monitor_code_size, 0x2500u);
  EXPECT_EQ(a->desc.is_monitor_enabled, 1u);
  EXPECT_EQ(a->desc.fb_reserved_size, 0x8000u);
  EXPECT_EQ(a->desc.signed_as_code, 0u);
  // GA102: the same layout, a smaller monitor data area.
  const std::string ga102 = root + "/nvidia/ga102/gsp/bootloader-535.113.01.bin";
  absl::StatusOr<Bootloader> g = ParseBootloader(ga102, Read(ga102));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->desc.monitor_data_size, 0x1000u);
  EXPECT_EQ(g->desc.monitor_code_offset, 0x1800u);
  EXPECT_EQ(g->desc.fb_reserved_size, 0x5000u);
  // TU102: version 4, 19 u32s (0x4c bytes between header_offset 0x18 and data_offset 0x64), no monitor.
  const std::string tu102 = root + "/nvidia/tu102/gsp/bootloader-535.113.01.bin";
  absl::StatusOr<Bootloader> t = ParseBootloader(tu102, Read(tu102));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->bin.file_size, 4196u);
  EXPECT_EQ(t->bin.header.data_offset, 0x64u);
  EXPECT_EQ(t->desc.version, 4u);
  EXPECT_EQ(t->desc_words, 19u);
  EXPECT_EQ(t->desc.bootloader_size, 0x488u);
  EXPECT_EQ(t->desc.is_monitor_enabled, 0u);
  EXPECT_FALSE(t->desc.fb_reserved_size.has_value());
}

TEST(RealNvidiaFirmwareTest, GspImages) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string ga102 = root + "/nvidia/ga102/gsp/gsp-535.113.01.bin";
  absl::StatusOr<GspImage> g = ParseGspImage(ga102, Read(ga102));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->file_size, 38061600u);
  EXPECT_EQ(g->elf_type, 1u);  // ET_REL
  EXPECT_EQ(g->machine, kEmRiscv);
  EXPECT_EQ(g->section_header_offset, 38060960u);
  EXPECT_EQ(g->section_count, 10u);
  EXPECT_EQ(g->string_table_index, 9u);
  EXPECT_EQ(g->fw_version, "535.113.01");
  EXPECT_EQ(g->signature_families, (std::vector<std::string>{"cc_gh100", "gh100", "ad10x", "ga10x"}));
  const ElfSection* image = g->Find(".fwimage");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->offset, 0x40u);
  EXPECT_EQ(image->size, 0x2448000u);
  const ElfSection* version = g->Find(".fwversion");
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(version->offset, 0x2448040u);
  EXPECT_EQ(version->size, 0xbu);
  const ElfSection* ad10x = g->Find(".fwsignature_ad10x");
  ASSERT_NE(ad10x, nullptr);
  EXPECT_EQ(ad10x->offset, 0x244a04bu);  // not 4-byte aligned
  EXPECT_EQ(ad10x->size, 0x1000u);

  const std::string tu102 = root + "/nvidia/tu102/gsp/gsp-535.113.01.bin";
  absl::StatusOr<GspImage> t = ParseGspImage(tu102, Read(tu102));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->file_size, 23750944u);
  EXPECT_EQ(t->section_count, 9u);
  EXPECT_EQ(t->fw_version, "535.113.01");
  EXPECT_EQ(t->signature_families, (std::vector<std::string>{"ga100", "tu11x", "tu10x"}));
  ASSERT_NE(t->Find(".fwimage"), nullptr);
  EXPECT_EQ(t->Find(".fwimage")->size, 0x16a3350u);
}

// AD102 ships no GSP-RM image of its own: its gsp-535.113.01.bin is a link to GA102's, which signs for ad10x.
TEST(RealNvidiaFirmwareTest, Ad102SharesGa102sImage) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  std::error_code error;
  const std::filesystem::path link = root + "/nvidia/ad102/gsp/gsp-535.113.01.bin";
  ASSERT_TRUE(std::filesystem::is_symlink(link, error));
  EXPECT_EQ(std::filesystem::read_symlink(link, error).string(), "../../ga102/gsp/gsp-535.113.01.bin");
  // AD103's whole gsp directory is a link to AD102's.
  const std::filesystem::path dir = root + "/nvidia/ad103/gsp";
  ASSERT_TRUE(std::filesystem::is_symlink(dir, error));
  EXPECT_EQ(std::filesystem::read_symlink(dir, error).string(), "../ad102/gsp");
}

// Every file of the package, through its links (as the kernel's loader follows them): 242 regular files, 188 links
// to files and 11 links to directories (4 files each), 474 paths in all (find, find -L). Each is recognised and
// parsed or classified without error: 135 paths start with nvfw_bin_hdr's magic and 16 are the GSP-RM ELF (two
// files), all parsed; the other 323 have no container header and are classified by name.
TEST(RealNvidiaFirmwareTest, EveryFileOfThePackageIsRecognised) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::filesystem::path top = root + "/nvidia";
  int regular = 0, file_links = 0, dir_links = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(top)) {
    if (e.is_symlink()) {
      (std::filesystem::is_directory(e.path()) ? dir_links : file_links) += 1;
    } else if (e.is_regular_file()) {
      ++regular;
    }
  }
  EXPECT_EQ(regular, 242);
  EXPECT_EQ(file_links, 188);
  EXPECT_EQ(dir_links, 11);

  int paths = 0, parsed = 0, classified = 0;
  std::map<std::string, int> kinds;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           top, std::filesystem::directory_options::follow_directory_symlink)) {
    if (!e.is_regular_file()) continue;  // follows links
    ++paths;
    const std::string path = e.path().string();
    const std::string data = Read(path);
    std::optional<NvFileKind> kind = DetectNvFile(path, data);
    ASSERT_TRUE(kind.has_value()) << "not recognised: " << path;
    absl::StatusOr<NvFileInfo> info = DescribeNvFile(path, data, *kind);
    EXPECT_TRUE(info.ok()) << path << ": " << info.status();
    if (!info.ok()) continue;
    (info->parsed ? parsed : classified) += 1;
    ++kinds[std::string(NvFileKindName(*kind))];
  }
  EXPECT_EQ(paths, 474);
  EXPECT_EQ(parsed, 135 + 16);
  EXPECT_EQ(classified, 474 - 151);
  // The 16 chips of r535.c each have the four GSP-RM files (64 paths under */gsp/).
  EXPECT_EQ(kinds["gsp"], 16);
  EXPECT_EQ(kinds["booter_load"], 16);
  EXPECT_EQ(kinds["booter_unload"], 16);
  EXPECT_EQ(kinds["bootloader"], 16);
  EXPECT_EQ(kinds["usbc_firmware"], 3);
}

// Per chip, the four files agree on the version: .fwversion says what the names say.
TEST(RealNvidiaFirmwareTest, EveryChipsFilesAreCoherent) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  for (const ChipProfile& chip : ChipProfiles()) {
    for (const RequiredFile& file : RequiredFiles(chip)) {
      Location l = Locate({root}, file.relative_path);
      ASSERT_TRUE(l.path.has_value()) << chip.name << " " << file.relative_path;
      const std::string data = Read(*l.path);
      absl::StatusOr<NvFileInfo> info = DescribeNvFile(*l.path, data, file.kind);
      ASSERT_TRUE(info.ok()) << info.status();
      EXPECT_EQ(info->version, "535.113.01");
      EXPECT_TRUE(CheckForChip(chip, file, *info).ok()) << CheckForChip(chip, file, *info);
    }
  }
}

}  // namespace
}  // namespace firmware::nv
