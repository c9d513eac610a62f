// The boot structures against values worked out by hand from nouveau's r535.c (r535_gsp_libos_id8,
// r535_gsp_libos_init, r535_gsp_rmargs_init, r535_gsp_wpr_meta_init, r535_gsp_rpc_set_system_info,
// build_registry) and the headers' constants.
#include "nv/gsp/boot_args.h"

#include <cstring>
#include <string>

#include "base/file.h"
#include "firmware/nv/gsp_elf.h"
#include "firmware/nv/riscv_desc.h"
#include "gtest/gtest.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace nv::gsp {
namespace {

TEST(LibosId8Test, PacksUpToEightCharactersFirstHighest) {
  // ASCII: L 4c O 4f G 47 I 49 N 4e T 54 R 52 M 4d A 41 S 53.
  EXPECT_EQ(LibosId8("LOGINIT"), 0x4c4f47494e4954u);
  EXPECT_EQ(LibosId8("LOGINTR"), 0x4c4f47494e5452u);
  EXPECT_EQ(LibosId8("LOGRM"), 0x4c4f47524du);
  EXPECT_EQ(LibosId8("RMARGS"), 0x524d41524753u);
  // nouveau stops after 8 characters (tinygrad's int.from_bytes would keep the last 8 of a longer name).
  EXPECT_EQ(LibosId8("ABCDEFGHIJ"), 0x4142434445464748u);
  EXPECT_EQ(LibosId8(""), 0u);
}

TEST(LibosArgsTest, FourContiguousSysmemRegionsInNouveausOrder) {
  LibosRegions r;
  r.loginit = {0x10000000, 0x10000};
  r.logintr = {0x10010000, 0x10000};
  r.logrm = {0x10020000, 0x10000};
  r.rmargs = {0x10030000, 0x1000};
  absl::StatusOr<std::vector<LibosMemoryRegionInitArgument>> args = BuildLibosArgs(r);
  ASSERT_TRUE(args.ok()) << args.status();
  ASSERT_EQ(args->size(), 4u);
  const uint64_t ids[] = {0x4c4f47494e4954, 0x4c4f47494e5452, 0x4c4f47524d, 0x524d41524753};
  const uint64_t pas[] = {0x10000000, 0x10010000, 0x10020000, 0x10030000};
  const uint64_t sizes[] = {0x10000, 0x10000, 0x10000, 0x1000};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ((*args)[i].id8, ids[i]);
    EXPECT_EQ((*args)[i].pa, pas[i]);
    EXPECT_EQ((*args)[i].size, sizes[i]);
    EXPECT_EQ((*args)[i].kind, 1);  // LIBOS_MEMORY_REGION_CONTIGUOUS
    EXPECT_EQ((*args)[i].loc, 1);   // LIBOS_MEMORY_REGION_LOC_SYSMEM
  }
  // The bytes GSP-RM reads for entry 3: id8, pa, size as little-endian u64s, kind and loc at 24 and 25, zeros after.
  unsigned char bytes[32];
  std::memcpy(bytes, &(*args)[3], sizeof(bytes));
  const unsigned char expected[32] = {0x53, 0x47, 0x52, 0x41, 0x4d, 0x52, 0, 0,  // "RMARGS" id8
                                      0,    0,    0x03, 0x10, 0,    0,    0, 0,  // pa 0x10030000
                                      0,    0x10, 0,    0,    0,    0,    0, 0,  // size 0x1000
                                      1,    1,    0,    0,    0,    0,    0, 0};
  EXPECT_EQ(std::memcmp(bytes, expected, sizeof(bytes)), 0);
}

TEST(LibosArgsTest, RejectsUnalignedOrEmptyBuffers) {
  LibosRegions r;
  r.loginit = {0x10000000, 0x10000};
  r.logintr = {0x10010000, 0x10000};
  r.logrm = {0x10020800, 0x10000};  // not page aligned
  r.rmargs = {0x10030000, 0x1000};
  absl::StatusOr<std::vector<LibosMemoryRegionInitArgument>> args = BuildLibosArgs(r);
  ASSERT_FALSE(args.ok());
  EXPECT_NE(args.status().message().find("LOGRM"), absl::string_view::npos) << args.status();
  r.logrm = {0x10020000, 0};
  EXPECT_FALSE(BuildLibosArgs(r).ok());
}

TEST(LibosArgsTest, LogBufferPtesAreEachPage) {
  // create_pte_array over a 0x10000-byte buffer: 16 pages, written from the buffer's second u64.
  absl::StatusOr<std::vector<uint64_t>> ptes = LogBufferPtes({0x10000000, 0x10000});
  ASSERT_TRUE(ptes.ok()) << ptes.status();
  ASSERT_EQ(ptes->size(), 16u);
  EXPECT_EQ((*ptes)[0], 0x10000000u);
  EXPECT_EQ((*ptes)[1], 0x10001000u);
  EXPECT_EQ((*ptes)[15], 0x1000f000u);
  EXPECT_EQ(kLogBufferPteOffset, 8u);
}

TEST(RmArgsTest, NouveausQueueGeometry) {
  // r535_gsp_shared_init with two 0x40000-byte queues: (0x80000 >> 12) = 128 PTEs for the queues, plus
  // DIV_ROUND_UP(128 * 8, 0x1000) = 1 for the table itself: 129; the table takes ALIGN(129 * 8, 0x1000) = 0x1000,
  // so the command queue is at 0x1000 and the status queue at 0x1000 + 0x40000 = 0x41000.
  MessageQueueGeometry q{0x20000000, 129, 0x1000, 0x41000};
  absl::StatusOr<GSP_ARGUMENTS_CACHED> args = BuildRmArgs(q, /*resume=*/false);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->messageQueueInitArguments.sharedMemPhysAddr, 0x20000000u);
  EXPECT_EQ(args->messageQueueInitArguments.pageTableEntryCount, 129u);
  EXPECT_EQ(args->messageQueueInitArguments.cmdQueueOffset, 0x1000u);
  EXPECT_EQ(args->messageQueueInitArguments.statQueueOffset, 0x41000u);
  EXPECT_EQ(args->messageQueueInitArguments.locklessCmdQueueOffset, 0u);
  EXPECT_EQ(args->messageQueueInitArguments.locklessStatQueueOffset, 0u);
  EXPECT_EQ(args->srInitArguments.oldLevel, 0u);
  EXPECT_EQ(args->srInitArguments.flags, 0u);
  EXPECT_EQ(args->srInitArguments.bInPMTransition, 0);
  EXPECT_EQ(args->gpuInstance, 0u);
  EXPECT_EQ(args->profilerArgs.pa, 0u);
  EXPECT_EQ(args->profilerArgs.size, 0u);

  // Resume: NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_3 (ctrl2080gpu.h: 0x3), in a PM transition.
  args = BuildRmArgs(q, /*resume=*/true);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->srInitArguments.oldLevel, 3u);
  EXPECT_EQ(args->srInitArguments.bInPMTransition, 1);
}

TEST(RmArgsTest, RejectsQueuesThatDoNotFollowTheTable) {
  EXPECT_FALSE(BuildRmArgs({0x20000000, 129, 0x800, 0x41000}, false).ok());    // cmdq inside the table page
  EXPECT_FALSE(BuildRmArgs({0x20000000, 129, 0x41000, 0x1000}, false).ok());   // status before command
  EXPECT_FALSE(BuildRmArgs({0x20000000, 0, 0x1000, 0x41000}, false).ok());     // no PTEs
  EXPECT_FALSE(BuildRmArgs({0x20000800, 129, 0x1000, 0x41000}, false).ok());   // unaligned
  EXPECT_FALSE(BuildRmArgs({0x20000000, 1024, 0x1000, 0x41000}, false).ok());  // 8 KiB of PTEs before 0x1000
}

// The 24 GiB AD102 layout, as fb_layout_test.cc works it out.
FbLayout Ad102Layout() {
  FbLayout l;
  l.fbSize = 0x600000000;
  l.vgaWorkspaceOffset = 0x5fff00000;
  l.vgaWorkspaceSize = 0x100000;
  l.gspFwWprEnd = 0x5fff00000;
  l.frtsOffset = 0x5ffe00000;
  l.frtsSize = 0x100000;
  l.bootBinOffset = 0x5ffdf8000;
  l.bootBinSize = 0x8000;
  l.gspFwOffset = 0x5fd9b0000;
  l.gspFwSize = 0x2448000;
  l.gspFwHeapOffset = 0x5f5a00000;
  l.gspFwHeapSize = 0x7f00000;
  l.gspFwWprStart = 0x5f5900000;
  l.wpr2Size = 0xa600000;
  l.nonWprHeapOffset = 0x5f5800000;
  l.nonWprHeapSize = 0x100000;
  l.gspFwRsvdStart = 0x5f5800000;
  return l;
}

WprMetaSources Sources() {
  WprMetaSources s;
  s.radix3_level0_pa = 0x30000000;
  s.bootloader_pa = 0x31000000;
  s.signature_pa = 0x32000000;
  s.signature_section_size = 0x1000;  // readelf -S: .fwsignature_ad10x size 0x1000
  // ad102/gsp/bootloader-535.113.01.bin (xxd -e at 0x18): monitorCodeOffset 0x4800, monitorDataOffset 0x800,
  // manifestOffset 0.
  s.bootloader_code_offset = 0x4800;
  s.bootloader_data_offset = 0x800;
  s.bootloader_manifest_offset = 0;
  return s;
}

TEST(WprMetaTest, EveryFieldAsNouveauWritesIt) {
  absl::StatusOr<GspFwWprMeta> m = BuildWprMeta(Ad102Layout(), Sources());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->magic, 0xdc3aae21371a60b3u);  // gsp_fw_wpr_meta.h GSP_FW_WPR_META_MAGIC
  EXPECT_EQ(m->revision, 1u);                // GSP_FW_WPR_META_REVISION
  EXPECT_EQ(m->sysmemAddrOfRadix3Elf, 0x30000000u);
  EXPECT_EQ(m->sizeOfRadix3Elf, 0x2448000u);
  EXPECT_EQ(m->sysmemAddrOfBootloader, 0x31000000u);
  EXPECT_EQ(m->sizeOfBootloader, 0x8000u);
  EXPECT_EQ(m->bootloaderCodeOffset, 0x4800u);
  EXPECT_EQ(m->bootloaderDataOffset, 0x800u);
  EXPECT_EQ(m->bootloaderManifestOffset, 0u);
  EXPECT_EQ(m->sysmemAddrOfSignature, 0x32000000u);
  EXPECT_EQ(m->sizeOfSignature, 0x1000u);  // ALIGN(0x1000, 256)
  EXPECT_EQ(m->gspFwRsvdStart, 0x5f5800000u);
  EXPECT_EQ(m->nonWprHeapOffset, 0x5f5800000u);
  EXPECT_EQ(m->nonWprHeapSize, 0x100000u);
  EXPECT_EQ(m->gspFwWprStart, 0x5f5900000u);
  EXPECT_EQ(m->gspFwHeapOffset, 0x5f5a00000u);
  EXPECT_EQ(m->gspFwHeapSize, 0x7f00000u);
  EXPECT_EQ(m->gspFwOffset, 0x5fd9b0000u);
  EXPECT_EQ(m->bootBinOffset, 0x5ffdf8000u);
  EXPECT_EQ(m->frtsOffset, 0x5ffe00000u);
  EXPECT_EQ(m->frtsSize, 0x100000u);
  EXPECT_EQ(m->gspFwWprEnd, 0x5fff00000u);
  EXPECT_EQ(m->fbSize, 0x600000000u);
  EXPECT_EQ(m->vgaWorkspaceOffset, 0x5fff00000u);
  EXPECT_EQ(m->vgaWorkspaceSize, 0x100000u);
  EXPECT_EQ(m->bootCount, 0u);
  EXPECT_EQ(m->partitionRpcAddr, 0u);
  EXPECT_EQ(m->verified, 0u);
  // The bytes the booter reads: the magic first (little-endian), gspFwRsvdStart at 88, verified at 248 zero.
  unsigned char bytes[sizeof(GspFwWprMeta)];
  std::memcpy(bytes, &*m, sizeof(bytes));
  const unsigned char magic[8] = {0xb3, 0x60, 0x1a, 0x37, 0x21, 0xae, 0x3a, 0xdc};
  EXPECT_EQ(std::memcmp(bytes, magic, 8), 0);
  const unsigned char rsvd[8] = {0x00, 0x00, 0x80, 0xf5, 0x05, 0, 0, 0};  // 0x5f5800000
  EXPECT_EQ(std::memcmp(bytes + 88, rsvd, 8), 0);
  for (int i = 248; i < 256; ++i) EXPECT_EQ(bytes[i], 0) << i;
}

TEST(WprMetaTest, SignatureSizeIsItsAllocation) {
  // r535_gsp_oneinit: nvkm_gsp_mem_ctor(gsp, ALIGN(size, 256)): a 0x1001-byte section takes 0x1100.
  WprMetaSources s = Sources();
  s.signature_section_size = 0x1001;
  absl::StatusOr<GspFwWprMeta> m = BuildWprMeta(Ad102Layout(), s);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->sizeOfSignature, 0x1100u);
}

TEST(WprMetaTest, RejectsBadSources) {
  WprMetaSources s = Sources();
  s.bootloader_pa = 0x31000800;
  absl::StatusOr<GspFwWprMeta> m = BuildWprMeta(Ad102Layout(), s);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("sysmemAddrOfBootloader"), absl::string_view::npos) << m.status();
  s = Sources();
  s.bootloader_code_offset = 0x8000;  // the image is 0x8000 bytes
  m = BuildWprMeta(Ad102Layout(), s);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("bootloaderCodeOffset"), absl::string_view::npos) << m.status();
  FbLayout broken = Ad102Layout();
  broken.frtsOffset += 0x1000;
  EXPECT_FALSE(BuildWprMeta(broken, Sources()).ok());
}

TEST(WprMetaTest, BootloaderOffsetsFromTheRealFile) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string path = root + "/nvidia/ad102/gsp/bootloader-535.113.01.bin";
  absl::StatusOr<std::string> data = base::ReadFile(path);
  ASSERT_TRUE(data.ok()) << data.status();
  absl::StatusOr<firmware::nv::Bootloader> bl = firmware::nv::ParseBootloader(path, *data);
  ASSERT_TRUE(bl.ok()) << bl.status();
  WprMetaSources s;
  SetBootloaderOffsets(*bl, s);
  // xxd -e -s 0x18: RM_RISCV_UCODE_DESC words 8 (manifestOffset) 0, 10 (monitorDataOffset) 0x800,
  // 12 (monitorCodeOffset) 0x4800; nvfw_bin_hdr.data_size (0x14) 0x8000.
  EXPECT_EQ(s.bootloader_code_offset, 0x4800u);
  EXPECT_EQ(s.bootloader_data_offset, 0x800u);
  EXPECT_EQ(s.bootloader_manifest_offset, 0u);
  EXPECT_EQ(bl->bin.header.data_size, 0x8000u);
}

// The 24 GiB layout and meta from the real files' sizes, read through the parsers: the same numbers as above.
TEST(WprMetaTest, FromTheRealFiles) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string gsp_path = root + "/nvidia/ad102/gsp/gsp-535.113.01.bin";
  const std::string bl_path = root + "/nvidia/ad102/gsp/bootloader-535.113.01.bin";
  absl::StatusOr<std::string> gsp_data = base::ReadFile(gsp_path);
  absl::StatusOr<std::string> bl_data = base::ReadFile(bl_path);
  ASSERT_TRUE(gsp_data.ok() && bl_data.ok());
  absl::StatusOr<firmware::nv::GspImage> gsp = firmware::nv::ParseGspImage(gsp_path, *gsp_data);
  absl::StatusOr<firmware::nv::Bootloader> bl = firmware::nv::ParseBootloader(bl_path, *bl_data);
  ASSERT_TRUE(gsp.ok()) << gsp.status();
  ASSERT_TRUE(bl.ok()) << bl.status();
  const firmware::nv::ElfSection* fwimage = gsp->Find(".fwimage");
  ASSERT_NE(fwimage, nullptr);

  FbLayoutInputs in;
  in.fb_size = FbSizeFromUsableFbSizeInMb(24576);
  absl::StatusOr<VgaWorkspace> vga = VgaWorkspaceFromRegister(in.fb_size, std::nullopt);
  ASSERT_TRUE(vga.ok()) << vga.status();
  in.vga_workspace = *vga;
  in.boot_bin_size = bl->bin.header.data_size;
  in.gsp_fw_size = fwimage->size;
  absl::StatusOr<FbLayout> layout = ComputeFbLayout(in);
  ASSERT_TRUE(layout.ok()) << layout.status();

  WprMetaSources s = Sources();
  s.signature_section_size = 0;
  SetBootloaderOffsets(*bl, s);
  ASSERT_TRUE(SetSignatureSection(*gsp, ".fwsignature_ad10x", s).ok());
  EXPECT_EQ(s.signature_section_size, 0x1000u);  // readelf -S: .fwsignature_ad10x size 0x1000
  absl::StatusOr<GspFwWprMeta> m = BuildWprMeta(*layout, s);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<GspFwWprMeta> by_hand = BuildWprMeta(Ad102Layout(), Sources());
  ASSERT_TRUE(by_hand.ok());
  EXPECT_EQ(std::memcmp(&*m, &*by_hand, sizeof(GspFwWprMeta)), 0);

  // A chip whose section the image lacks.
  absl::Status missing = SetSignatureSection(*gsp, ".fwsignature_tu10x", s);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("ad10x"), absl::string_view::npos) << missing;
}

TEST(SystemInfoTest, NouveausFields) {
  SystemInfoInputs in;
  in.bar0_address = 0xfb000000;
  in.bar1_address = 0x7800000000;
  in.bar3_address = 0x7c00000000;
  in.bus = 0x65;
  in.device = 0x1f;
  in.function = 7;
  absl::StatusOr<GspSystemInfo> info = BuildSystemInfo(in);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->gpuPhysAddr, 0xfb000000u);
  EXPECT_EQ(info->gpuPhysFbAddr, 0x7800000000u);
  EXPECT_EQ(info->gpuPhysInstAddr, 0x7c00000000u);
  // pci_dev_id: 0x65 << 8 | (0x1f << 3 | 7) = 0x6500 | 0xff.
  EXPECT_EQ(info->nvDomainBusDeviceFunc, 0x65ffu);
  EXPECT_EQ(info->maxUserVa, 0x7ffffffff000u);  // (1 << 47) - 4096
  EXPECT_EQ(info->pciConfigMirrorBase, 0x88000u);
  EXPECT_EQ(info->pciConfigMirrorSize, 0x1000u);
  EXPECT_EQ(info->bIsPassthru, 0);
  EXPECT_EQ(info->hypervisorType, 0u);
  for (unsigned char b : info->acpiMethodData) ASSERT_EQ(b, 0);
  // 01:00.0.
  in.bus = 1;
  in.device = 0;
  in.function = 0;
  info = BuildSystemInfo(in);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->nvDomainBusDeviceFunc, 0x100u);
}

TEST(SystemInfoTest, RejectsImpossiblePciAddresses) {
  SystemInfoInputs in;
  in.bar0_address = 0xfb000000;
  in.device = 32;
  EXPECT_FALSE(BuildSystemInfo(in).ok());
  in.device = 0;
  in.function = 8;
  EXPECT_FALSE(BuildSystemInfo(in).ok());
  in.function = 0;
  in.bar0_address = 0;
  EXPECT_FALSE(BuildSystemInfo(in).ok());
}

TEST(RegistryTest, NouveausDefaultTableByteForByte) {
  absl::StatusOr<std::string> table = BuildRegistryTable(DefaultRegistryEntries());
  ASSERT_TRUE(table.ok()) << table.status();
  // Header 8 bytes + 2 entries of 16 = 40; "RMSecBusResetEnable\0" (20 bytes) at 40, "RMForcePcieConfigSave\0"
  // (22 bytes) at 60; 82 = 0x52 bytes in all.
  std::string expected;
  expected += std::string("\x52\0\0\0\x02\0\0\0", 8);                       // size 82, numEntries 2
  expected += std::string("\x28\0\0\0\x01\0\0\0\x01\0\0\0\x04\0\0\0", 16);  // name 40, DWORD, 1, length 4
  expected += std::string("\x3c\0\0\0\x01\0\0\0\x01\0\0\0\x04\0\0\0", 16);  // name 60, DWORD, 1, length 4
  expected += std::string("RMSecBusResetEnable\0", 20);
  expected += std::string("RMForcePcieConfigSave\0", 22);
  ASSERT_EQ(expected.size(), 82u);
  EXPECT_EQ(*table, expected);
}

TEST(RegistryTest, StringAndBinaryValuesFollowTheirKey) {
  // Header 8 + 2 * 16 = 40; "A\0" at 40, its value "xy\0" at 42 (length 3); "B\0" at 45, binary "\x01\x02" at 47
  // (length 2); 49 bytes.
  std::vector<RegistryEntry> entries = {{"A", kRegistryTypeString, 0, "xy"}, {"B", kRegistryTypeBinary, 0, "\x01\x02"}};
  absl::StatusOr<std::string> table = BuildRegistryTable(entries);
  ASSERT_TRUE(table.ok()) << table.status();
  std::string expected;
  expected += std::string("\x31\0\0\0\x02\0\0\0", 8);
  expected += std::string("\x28\0\0\0\x03\0\0\0\x2a\0\0\0\x03\0\0\0", 16);
  expected += std::string("\x2d\0\0\0\x02\0\0\0\x2f\0\0\0\x02\0\0\0", 16);
  expected += std::string("A\0xy\0B\0\x01\x02", 9);
  EXPECT_EQ(*table, expected);
}

TEST(RegistryTest, RejectsBadEntries) {
  EXPECT_FALSE(BuildRegistryTable({{"", kRegistryTypeDword, 1, ""}}).ok());
  EXPECT_FALSE(BuildRegistryTable({{std::string(64, 'k'), kRegistryTypeDword, 1, ""}}).ok());
  EXPECT_TRUE(BuildRegistryTable({{std::string(63, 'k'), kRegistryTypeDword, 1, ""}}).ok());
  EXPECT_FALSE(BuildRegistryTable({{"Key", 7, 1, ""}}).ok());
  EXPECT_FALSE(BuildRegistryTable({{"Key", kRegistryTypeDword, 1, "oops"}}).ok());
  EXPECT_FALSE(BuildRegistryTable({{"Key", kRegistryTypeString, 0, std::string("a\0b", 3)}}).ok());
  // An empty table is the header alone.
  absl::StatusOr<std::string> empty = BuildRegistryTable({});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, std::string("\x08\0\0\0\0\0\0\0", 8));
}

}  // namespace
}  // namespace nv::gsp
