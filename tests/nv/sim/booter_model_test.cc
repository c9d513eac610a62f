// The virtual booter against a driver's inputs built here by hand: IMEM, DMEM and the BROM registers as nouveau's
// ga102_gsp_booter_ctor / ga102_flcn_fw_load / ga102_flcn_fw_boot would leave them, the GspFwWprMeta as
// r535_gsp_oneinit and r535_gsp_wpr_meta_init compute it for a 24 GiB AD102 (the arithmetic is in the comments), the
// radix3 table as nvkm_gsp_radix3_sg builds it. File offsets were read from the real files with xxd and readelf
// (Debian firmware-nvidia-graphics 20250410-2~bpo12+1), not from the project's parsers. Skipped without that package.
#include "nv/sim/booter_model.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nv/gsp/layouts.h"
#include "nv/sim/falcon_model.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace nv::sim {
namespace {

using ::testing::HasSubstr;

// A priv bus of plain registers (0 until written).
class FakePrivBus : public PrivBus {
 public:
  uint32_t Read32(uint32_t address) override {
    auto it = regs_.find(address);
    return it == regs_.end() ? 0 : it->second;
  }
  void Write32(uint32_t address, uint32_t value) override { regs_[address] = value; }

 private:
  std::map<uint32_t, uint32_t> regs_;
};

// FB of `fb_size` bytes, sparse (pages appear when written, zero before), and system memory made of the buffers
// the test maps at bus addresses; a range that is not wholly inside one buffer is unreachable.
class FakeDeviceMemory : public DeviceMemory {
 public:
  explicit FakeDeviceMemory(uint64_t fb_size) : fb_size_(fb_size) {}

  bool ReadFb(uint64_t address, std::span<uint8_t> out) override {
    if (!InFb(address, out.size())) return false;
    for (uint64_t i = 0; i < out.size();) {
      const uint64_t a = address + i, page = a / kPage, off = a % kPage, n = std::min(kPage - off, out.size() - i);
      auto it = fb_.find(page);
      if (it == fb_.end()) {
        std::memset(out.data() + i, 0, n);
      } else {
        std::memcpy(out.data() + i, it->second.data() + off, n);
      }
      i += n;
    }
    return true;
  }
  bool WriteFb(uint64_t address, std::span<const uint8_t> data) override {
    if (!InFb(address, data.size())) return false;
    for (uint64_t i = 0; i < data.size();) {
      const uint64_t a = address + i, page = a / kPage, off = a % kPage, n = std::min(kPage - off, data.size() - i);
      std::vector<uint8_t>& p = fb_[page];
      p.resize(kPage);
      std::memcpy(p.data() + off, data.data() + i, n);
      i += n;
    }
    return true;
  }
  bool ReadSystem(uint64_t bus_address, std::span<uint8_t> out) override {
    uint8_t* p = System(bus_address, out.size());
    if (p == nullptr) return false;
    std::memcpy(out.data(), p, out.size());
    return true;
  }
  bool WriteSystem(uint64_t bus_address, std::span<const uint8_t> data) override {
    uint8_t* p = System(bus_address, data.size());
    if (p == nullptr) return false;
    std::memcpy(p, data.data(), data.size());
    return true;
  }

  std::vector<uint8_t>& Map(uint64_t bus_address, uint64_t size) {
    std::vector<uint8_t>& b = system_[bus_address];
    b.assign(size, 0);
    return b;
  }
  // The bytes at a bus address, or nullptr when [bus_address, + size) is not inside one mapped buffer.
  uint8_t* System(uint64_t bus_address, uint64_t size) {
    auto it = system_.upper_bound(bus_address);
    if (it == system_.begin()) return nullptr;
    --it;
    const uint64_t off = bus_address - it->first;
    if (off > it->second.size() || size > it->second.size() - off) return nullptr;
    return it->second.data() + off;
  }
  std::string FbBytes(uint64_t address, uint64_t size) {
    std::string out(size, '\0');
    EXPECT_TRUE(ReadFb(address, std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), size)));
    return out;
  }

 private:
  static constexpr uint64_t kPage = 0x10000;
  bool InFb(uint64_t address, uint64_t size) const { return address <= fb_size_ && size <= fb_size_ - address; }

  uint64_t fb_size_;
  std::map<uint64_t, std::vector<uint8_t>> fb_;
  std::map<uint64_t, std::vector<uint8_t>> system_;
};

// The test's AD102: 24 GiB of FB (an RTX 4090's), so nouveau's layout below.
constexpr uint64_t kFbSize = 24ull << 30;  // 0x6_0000_0000

// ---- What the real files hold, by offsets read with xxd / readelf ------------------------------------------------
// booter_load-535.113.01.bin (ad102, 55928 bytes): nvfw_bin_hdr data_offset 0x378; nvfw_hs_header_v2 at 0x18 with
// sig_prod_offset 0x3c, sig_prod_size 0x300, num_sig (u32 at 0x350) 2, patch_sig (u32 at 0x340) 0, patch_loc (u32
// at 0x33c) 0x7710, meta (u32s at 0x344) fuse_ver 1, engine_id 1, ucode_id 3; load header at 0x354: os_data_offset
// 0x7700, os_data_size 0x6000, app[0] 0x100 + 0x7600.
constexpr uint64_t kLoadPayload = 0x378;
constexpr uint64_t kLoadCodeOffset = 0x100, kLoadCodeSize = 0x7600;
constexpr uint64_t kLoadDataOffset = 0x7700, kLoadDataSize = 0x6000;
constexpr uint64_t kSignatures = 0x3c, kSignatureSize = 0x300 / 2;  // 384 bytes each (RSA-3072)
constexpr uint64_t kSignatureSlot = 0x7710 - 0x7700;                // DMEM 0x10 = BROM_PARAADDR(0)
// booter_unload-535.113.01.bin (ad102, 39800 bytes): the same header offsets; patch_loc 0x4910, os_data 0x4900 +
// 0x4e00, app[0] 0x100 + 0x4800, meta 1, 1, 3.
constexpr uint64_t kUnloadCodeOffset = 0x100, kUnloadCodeSize = 0x4800;
constexpr uint64_t kUnloadDataOffset = 0x4900, kUnloadDataSize = 0x4e00;
constexpr uint64_t kUnloadSignatureSlot = 0x4910 - 0x4900;
// gsp-535.113.01.bin (readelf -S): .fwimage at 0x40, 0x2448000 bytes; .fwsignature_ad10x at 0x244a04b, 0x1000.
constexpr uint64_t kFwImageOffset = 0x40, kFwImageSize = 0x2448000;
constexpr uint64_t kAd10xSignatureOffset = 0x244a04b, kAd10xSignatureSize = 0x1000;
// bootloader-535.113.01.bin (ad102): nvfw_bin_hdr data_offset 0x6c, data_size 0x8000; RM_RISCV_UCODE_DESC at 0x18:
// manifestOffset 0, monitorDataOffset 0x800, monitorCodeOffset 0x4800.
constexpr uint64_t kBootloaderPayload = 0x6c, kBootloaderSize = 0x8000;
constexpr uint64_t kMonitorCode = 0x4800, kMonitorData = 0x800, kManifest = 0;

// ---- The FB layout nouveau computes for 24 GiB (r535_gsp_oneinit, tu102_gsp_oneinit) -----------------------------
// VGA workspace: no display (tu102_gsp_vga_workspace_addr) -> fb - 1 MiB = 0x5_fff0_0000, size 0x10_0000.
constexpr uint64_t kVgaOffset = 0x5fff00000, kVgaSize = 0x100000;
// FRTS: ALIGN_DOWN(0x5_fff0_0000, 0x2_0000) - 0x10_0000 = 0x5_ffe0_0000, 1 MiB.
constexpr uint64_t kFrtsOffset = 0x5ffe00000, kFrtsSize = 0x100000;
// Boot binary: ALIGN_DOWN(0x5_ffe0_0000 - 0x8000, 0x1000) = 0x5_ffdf_8000.
constexpr uint64_t kBootBinOffset = 0x5ffdf8000;
// ELF: ALIGN_DOWN(0x5_ffdf_8000 - 0x244_8000, 0x1_0000) = 0x5_fd9b_0000.
constexpr uint64_t kGspFwOffset = 0x5fd9b0000;
// WPR heap: 20 MiB + 8 MiB + ALIGN(96 KiB * 24, 1 MiB) = 3 MiB + ALIGN(96 MiB, 1 MiB) = 127 MiB (0x7f0_0000, above
// the 84 MiB minimum); at ALIGN_DOWN(0x5_fd9b_0000 - 0x7f0_0000, 1 MiB) = 0x5_f5a0_0000, size ALIGN_DOWN(0x5_fd9b_0000
// - 0x5_f5a0_0000, 1 MiB) = 0x7f0_0000.
constexpr uint64_t kHeapOffset = 0x5f5a00000, kHeapSize = 0x7f00000;
// WPR2 start: ALIGN_DOWN(0x5_f5a0_0000 - 256, 1 MiB) = 0x5_f590_0000; the non-WPR heap is the 1 MiB below it.
constexpr uint64_t kWprStart = 0x5f5900000;
constexpr uint64_t kNonWprOffset = 0x5f5800000, kNonWprSize = 0x100000;
// gspFwWprEnd: ALIGN_DOWN(vga 0x5_fff0_0000, 0x2_0000) = 0x5_fff0_0000, FRTS's end.
constexpr uint64_t kWprEnd = 0x5fff00000;

// WPR2 registers (VAL = address >> 12 in bits 31:4): as FWSEC-FRTS leaves them, LO = 0x5_ffe0_0000 >> 12 << 4 and
// HI = 0x5_fff0_0000 >> 12 << 4; as the booter leaves them, LO = 0x5_f590_0000 >> 12 << 4.
constexpr uint32_t kWpr2Lo = 0x1fa824, kWpr2Hi = 0x1fa828;
constexpr uint32_t kFrtsLoRaw = 0x5ffe000, kFrtsHiRaw = 0x5fff000, kBootedLoRaw = 0x5f59000;
// The booter fuse the BROM reads: 0x824140 + (ucode_id 3 - 1) * 4 (known_registers.h, ga100_flcn_fw_signature).
constexpr uint32_t kBooterFuse = 0x824148;
// The GSP falcon's mailboxes (0x110000 + 0x40/0x44), where the driver put the LibOS arguments.
constexpr uint32_t kGspMailbox0 = 0x110040, kGspMailbox1 = 0x110044;
constexpr uint64_t kLibosArgs = 0x56789a000;

// System memory the test maps (bus addresses chosen; the meta above 4 GiB so that MAILBOX1 matters).
constexpr uint64_t kMetaBus = 0x123456000;
constexpr uint64_t kRadixBus = 0x20000000;  // level 0, level 1, then the 19 level-2 pages
constexpr uint64_t kImageBus = 0x40000000;  // the image's 0x2448 pages, stored last page first
constexpr uint64_t kBootloaderBus = 0x30000000;
constexpr uint64_t kSignatureBus = 0x31000000;
constexpr uint64_t kImagePages = kFwImageSize / 0x1000;  // 9288
constexpr uint64_t kLevel2Pages = 19;                    // ceil(9288 / 512)

struct RealFiles {
  std::string booter_load, booter_unload, gsp, bootloader;
};

const RealFiles& Files(const std::string& root) {
  static const RealFiles* files = [&] {
    auto* f = new RealFiles;
    f->booter_load = *base::ReadFile(root + "/nvidia/ad102/gsp/booter_load-535.113.01.bin");
    f->booter_unload = *base::ReadFile(root + "/nvidia/ad102/gsp/booter_unload-535.113.01.bin");
    f->gsp = *base::ReadFile(root + "/nvidia/ad102/gsp/gsp-535.113.01.bin");
    f->bootloader = *base::ReadFile(root + "/nvidia/ad102/gsp/bootloader-535.113.01.bin");
    return f;
  }();
  return *files;
}

void Put(std::vector<uint8_t>& to, uint64_t at, absl::string_view bytes) {
  ASSERT_LE(at + bytes.size(), to.size());
  std::memcpy(to.data() + at, bytes.data(), bytes.size());
}
void Put64(uint8_t* at, uint64_t value) { std::memcpy(at, &value, sizeof(value)); }

// A loaded falcon: IMEM, DMEM and the secure flags of IMEM's 256-byte blocks.
struct Falcon {
  std::vector<uint8_t> imem = std::vector<uint8_t>(0x10000);
  std::vector<uint8_t> dmem = std::vector<uint8_t>(0x10000);
  bool secure[0x10000 / 256] = {};
};

class BooterModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_NVIDIA_FIRMWARE(root);
    root_ = root;
    const RealFiles& f = Files(root_);
    ASSERT_EQ(f.booter_load.size(), 55928u);
    ASSERT_EQ(f.gsp.size(), 38061600u);
    auto model = BooterLoadModel::Create("ad102", kFbSize, {root_});
    ASSERT_TRUE(model.ok()) << model.status();
    load_ = std::move(*model);
    auto unload = BooterUnloadModel::Create("ad102", {root_});
    ASSERT_TRUE(unload.ok()) << unload.status();
    unload_ = std::move(*unload);

    LoadBooter(f.booter_load, kLoadCodeOffset, kLoadCodeSize, kLoadDataOffset, kLoadDataSize, kSignatureSlot,
               /*signature=*/0);
    inputs_.brom = {.paraaddr0 = kSignatureSlot, .engine_id_mask = 1, .ucode_id = 3, .mod_sel_algo = 1};
    inputs_.bootvec = kLoadCodeOffset;
    inputs_.falcon = "SEC2";
    inputs_.falcon_engine_bit = 1;  // SEC2's BROM engine bit (FalconIdentity of Ad102Sec2Falcon)
    inputs_.mailbox0 = static_cast<uint32_t>(kMetaBus);
    inputs_.mailbox1 = static_cast<uint32_t>(kMetaBus >> 32);
    inputs_.priv = &priv_;
    inputs_.memory = &memory_;

    priv_.Write32(kBooterFuse, kAd102BooterFuseValue);
    priv_.Write32(kWpr2Lo, kFrtsLoRaw);
    priv_.Write32(kWpr2Hi, kFrtsHiRaw);
    priv_.Write32(kGspMailbox0, static_cast<uint32_t>(kLibosArgs));
    priv_.Write32(kGspMailbox1, static_cast<uint32_t>(kLibosArgs >> 32));
    BuildSystemMemory();
  }

  // IMEM from 0 = the payload's app[0]; DMEM from 0 = the OS data with signature `signature` at the slot (or the
  // slot left as in the file when signature < 0).
  void LoadBooter(const std::string& file, uint64_t code_offset, uint64_t code_size, uint64_t data_offset,
                  uint64_t data_size, uint64_t slot, int signature) {
    falcon_ = Falcon{};
    Put(falcon_.imem, 0, absl::string_view(file).substr(kLoadPayload + code_offset, code_size));
    Put(falcon_.dmem, 0, absl::string_view(file).substr(kLoadPayload + data_offset, data_size));
    if (signature >= 0) {
      Put(falcon_.dmem, slot, absl::string_view(file).substr(kSignatures + signature * kSignatureSize, kSignatureSize));
    }
    for (uint64_t b = 0; b < (code_size + 255) / 256; ++b) falcon_.secure[b] = true;
    inputs_.imem = falcon_.imem;
    inputs_.dmem = falcon_.dmem;
    inputs_.imem_secure = falcon_.secure;
  }

  void BuildSystemMemory() {
    const RealFiles& f = Files(root_);
    const absl::string_view image = absl::string_view(f.gsp).substr(kFwImageOffset, kFwImageSize);
    // The image, page i at slot 9287 - i, so that only the table says where a page is.
    std::vector<uint8_t>& pages = memory_.Map(kImageBus, kFwImageSize);
    for (uint64_t i = 0; i < kImagePages; ++i) {
      std::memcpy(pages.data() + (kImagePages - 1 - i) * 0x1000, image.data() + i * 0x1000, 0x1000);
    }
    // radix3 (nvkm_gsp_radix3_sg): level 0's one entry -> level 1; level 1's 19 entries -> the level-2 pages;
    // level-2 entry i -> image page i.
    std::vector<uint8_t>& radix = memory_.Map(kRadixBus, (2 + kLevel2Pages) * 0x1000);
    Put64(radix.data(), kRadixBus + 0x1000);
    for (uint64_t j = 0; j < kLevel2Pages; ++j) Put64(radix.data() + 0x1000 + j * 8, kRadixBus + (2 + j) * 0x1000);
    for (uint64_t i = 0; i < kImagePages; ++i) Put64(radix.data() + 0x2000 + i * 8, ImagePageBus(i));
    Put(memory_.Map(kBootloaderBus, kBootloaderSize), 0,
        absl::string_view(f.bootloader).substr(kBootloaderPayload, kBootloaderSize));
    Put(memory_.Map(kSignatureBus, kAd10xSignatureSize), 0,
        absl::string_view(f.gsp).substr(kAd10xSignatureOffset, kAd10xSignatureSize));

    // r535_gsp_wpr_meta_init's fields, by hand.
    meta_ = {};
    meta_.magic = 0xdc3aae21371a60b3ull;  // GSP_FW_WPR_META_MAGIC
    meta_.revision = 1;                   // GSP_FW_WPR_META_REVISION
    meta_.sysmemAddrOfRadix3Elf = kRadixBus;
    meta_.sizeOfRadix3Elf = kFwImageSize;
    meta_.sysmemAddrOfBootloader = kBootloaderBus;
    meta_.sizeOfBootloader = kBootloaderSize;
    meta_.bootloaderCodeOffset = kMonitorCode;
    meta_.bootloaderDataOffset = kMonitorData;
    meta_.bootloaderManifestOffset = kManifest;
    meta_.sysmemAddrOfSignature = kSignatureBus;
    meta_.sizeOfSignature = kAd10xSignatureSize;  // ALIGN(0x1000, 256)
    meta_.gspFwRsvdStart = kNonWprOffset;
    meta_.nonWprHeapOffset = kNonWprOffset;
    meta_.nonWprHeapSize = kNonWprSize;
    meta_.gspFwWprStart = kWprStart;
    meta_.gspFwHeapOffset = kHeapOffset;
    meta_.gspFwHeapSize = kHeapSize;
    meta_.gspFwOffset = kGspFwOffset;
    meta_.bootBinOffset = kBootBinOffset;
    meta_.frtsOffset = kFrtsOffset;
    meta_.frtsSize = kFrtsSize;
    meta_.gspFwWprEnd = kWprEnd;
    meta_.fbSize = kFbSize;
    meta_.vgaWorkspaceOffset = kVgaOffset;
    meta_.vgaWorkspaceSize = kVgaSize;
    memory_.Map(kMetaBus, 0x1000);
    WriteMeta();
  }

  void WriteMeta() { std::memcpy(memory_.System(kMetaBus, sizeof(meta_)), &meta_, sizeof(meta_)); }
  static uint64_t ImagePageBus(uint64_t i) { return kImageBus + (kImagePages - 1 - i) * 0x1000; }
  uint8_t* Level2Entry(uint64_t i) { return memory_.System(kRadixBus + 0x2000 + i * 8, 8); }

  BooterOutcome Run() {
    auto out = load_->Execute(inputs_);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : BooterOutcome{};
  }
  // A refusal: SEC2 halts with `code` in MAILBOX0, the log names the check; nothing changed WPR2.
  void ExpectRefused(uint32_t code, const std::string& text) {
    BooterOutcome out = Run();
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.mailbox0, code) << out.log;
    EXPECT_THAT(out.log, HasSubstr(text));
    EXPECT_FALSE(out.riscv.has_value());
    EXPECT_NE(priv_.Read32(kWpr2Lo), kBootedLoRaw);
    EXPECT_EQ(priv_.Read32(0x110100), 0u);  // the GSP's CPUCTL: not started
  }

  std::string root_;
  std::unique_ptr<BooterLoadModel> load_;
  std::unique_ptr<BooterUnloadModel> unload_;
  FakePrivBus priv_;
  FakeDeviceMemory memory_{kFbSize};
  Falcon falcon_;
  HsUcodeContext inputs_;
  gsp::GspFwWprMeta meta_;
};

TEST_F(BooterModelTest, CorrectBootStartsGspRm) {
  const auto started = std::chrono::steady_clock::now();
  BooterOutcome out = Run();
  std::cout << "the real files were read, hashed and parsed once, in " << load_->firmware().load_seconds << " s\n";
  std::cout << "booter_load accepted the boot (38 MiB radix3 walk and compare, copies into FB) in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() << " s\n";
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_EQ(out.mailbox0, 0u);  // FLCN_OK: nouveau's mbox0_ok
  ASSERT_TRUE(out.riscv.has_value());
  EXPECT_EQ(out.riscv->libos_args, kLibosArgs);
  EXPECT_EQ(out.riscv->wpr_meta, 0x5f5900000u);
  EXPECT_EQ(out.riscv->gsp_fw, 0x5fd9b0000u);
  EXPECT_EQ(out.riscv->boot_bin, 0x5ffdf8000u);
  EXPECT_EQ(out.riscv->monitor_code, 0x5ffdfc800u);  // 0x5_ffdf_8000 + 0x4800
  EXPECT_EQ(out.riscv->monitor_data, 0x5ffdf8800u);  // + 0x800
  EXPECT_EQ(out.riscv->manifest, 0x5ffdf8000u);      // + 0
  EXPECT_EQ(out.riscv->wpr2_start, 0x5f5900000u);
  EXPECT_EQ(out.riscv->wpr2_end, 0x5fff00000u);
  // The GSP's core was started: CPUCTL.STARTCPU (0x2, what gm200_flcn_fw_boot writes) at 0x110000 + 0x100.
  EXPECT_EQ(priv_.Read32(0x110100), 0x2u);
  // WPR2 now covers gspFwWprStart..gspFwWprEnd.
  EXPECT_EQ(priv_.Read32(kWpr2Lo), kBootedLoRaw);
  EXPECT_EQ(priv_.Read32(kWpr2Hi), kFrtsHiRaw);
  // What the booter placed in FB.
  const RealFiles& f = Files(root_);
  EXPECT_TRUE(memory_.FbBytes(kGspFwOffset, kFwImageSize) ==
              absl::string_view(f.gsp).substr(kFwImageOffset, kFwImageSize));
  EXPECT_TRUE(memory_.FbBytes(kBootBinOffset, kBootloaderSize) ==
              absl::string_view(f.bootloader).substr(kBootloaderPayload, kBootloaderSize));
  gsp::GspFwWprMeta verified = meta_;
  verified.verified = 0xa0a0a0a0a0a0a0a0ull;  // GSP_FW_WPR_META_VERIFIED
  EXPECT_TRUE(memory_.FbBytes(kWprStart, sizeof(verified)) ==
              absl::string_view(reinterpret_cast<const char*>(&verified), sizeof(verified)));
}

TEST_F(BooterModelTest, RefusesWrongMagic) {
  meta_.magic ^= 1;
  WriteMeta();
  ExpectRefused(0xf9, "magic 0xdc3aae21371a60b2 revision 1; expected GSP_FW_WPR_META_MAGIC");
}

TEST_F(BooterModelTest, RefusesWrongRevision) {
  meta_.revision = 2;
  WriteMeta();
  ExpectRefused(0xf9, "revision 2; expected");
}

TEST_F(BooterModelTest, RefusesResumeAsNotModelled) {
  meta_.magic = 0x8a3bb9e6c6c39d93ull;  // GSP_FW_SR_META_MAGIC
  WriteMeta();
  ExpectRefused(0x01, "resume from suspend is not modelled");
}

TEST_F(BooterModelTest, RefusesWrongFbSize) {
  meta_.fbSize = 16ull << 30;
  WriteMeta();
  ExpectRefused(0x02, "fbSize 0x400000000; the chip has 0x600000000");
}

TEST_F(BooterModelTest, RefusesOffsetOutsideFb) {
  meta_.gspFwOffset = kFbSize + 0x10000;
  WriteMeta();
  ExpectRefused(0x2f, "the GSP-RM ELF (gspFwOffset, sizeOfRadix3Elf) [0x600010000, + 0x2448000) is outside FB");
}

TEST_F(BooterModelTest, RefusesHugeSizeWithoutOverflow) {
  meta_.vgaWorkspaceSize = ~0ull;  // start + size wraps
  WriteMeta();
  ExpectRefused(0x2f, "the VGA workspace (vgaWorkspaceOffset, vgaWorkspaceSize) [0x5fff00000, + 0xffffffffffffffff)");
}

TEST_F(BooterModelTest, RefusesOverlappingRegions) {
  meta_.gspFwHeapSize = kHeapSize + 0x100000;  // 0x5_f5a0_0000 + 0x800_0000 = 0x5_fda0_0000 > gspFwOffset
  WriteMeta();
  ExpectRefused(0x02,
                "the GSP-RM ELF (gspFwOffset, sizeOfRadix3Elf) [0x5fd9b0000, 0x5ffdf8000) overlaps the WPR heap "
                "(gspFwHeapOffset, gspFwHeapSize) [0x5f5a00000, 0x5fda00000)");
}

TEST_F(BooterModelTest, RefusesMisalignedWprStart) {
  meta_.gspFwWprStart = kWprStart + 0x1000;  // still below the heap, but not 128 KiB-aligned
  WriteMeta();
  ExpectRefused(0x02, "gspFwWprStart 0x5f5901000 is not 0x20000-aligned (gsp_fw_wpr_meta.h)");
}

TEST_F(BooterModelTest, RefusesWhenWpr2IsNotUp) {
  priv_.Write32(kWpr2Lo, 0);
  priv_.Write32(kWpr2Hi, 0);
  ExpectRefused(0x35, "WPR2 is not up (NV_PFB_PRI_MMU_WPR2_ADDR_HI = 0x0)");
}

TEST_F(BooterModelTest, RefusesFrtsOffsetOtherThanWpr2) {
  // FWSEC made a 2 MiB region [0x5_ffd0_0000, 0x5_fff0_0000): LO = 0x5ffd00 << 4.
  priv_.Write32(kWpr2Lo, 0x5ffd000);
  ExpectRefused(0x35,
                "WPR2 is [0x5ffd00000, 0x5fff00000) (NV_PFB_PRI_MMU_WPR2_ADDR_LO 0x5ffd000, _HI 0x5fff000), the "
                "region FWSEC-FRTS made; the meta's frtsOffset 0x5ffe00000 + frtsSize 0x100000");
}

TEST_F(BooterModelTest, RefusesFrtsRegionOtherThanWpr2) {
  // The meta's FRTS moved up by 512 KiB (still ending at gspFwWprEnd, still above the boot binary), WPR2 unchanged.
  meta_.frtsOffset = kFrtsOffset + 0x80000;
  meta_.frtsSize = kFrtsSize - 0x80000;
  WriteMeta();
  ExpectRefused(0x35,
                "the region FWSEC-FRTS made; the meta's frtsOffset 0x5ffe80000 + frtsSize 0x80000 is "
                "[0x5ffe80000, 0x5fff00000)");
}

TEST_F(BooterModelTest, RefusesRadixPageThatPointsAtTheWrongPage) {
  const uint64_t fifth = ImagePageBus(5), sixth = ImagePageBus(6);
  Put64(Level2Entry(5), sixth);
  Put64(Level2Entry(6), fifth);
  ExpectRefused(0xf8,
                absl::StrFormat("image page 5 at 0x%x (radix3 level-2 page 0 entry 5) differs from .fwimage", sixth));
}

TEST_F(BooterModelTest, RefusesOneFlippedByteInTheImage) {
  // Image page 1000, byte 0x123: image offset 1000 * 0x1000 + 0x123 = 0x3e8123; level-2 page 1, entry 1000 - 512.
  memory_.System(ImagePageBus(1000) + 0x123, 1)[0] ^= 0x40;
  ExpectRefused(0xf8, "image page 1000 at 0x");
  ExpectRefused(0xf8, "(radix3 level-2 page 1 entry 488) differs from .fwimage of " + root_ +
                          "/nvidia/ad102/gsp/gsp-535.113.01.bin at image offset 0x3e8123 (byte 0x123 of the page)");
}

TEST_F(BooterModelTest, RefusesUnreadableRadixPage) {
  Put64(Level2Entry(17), 0x7700000000);  // no buffer there
  ExpectRefused(0x17, "image page 17 at 0x7700000000 (radix3 level-2 page 0 entry 17) is not readable");
}

TEST_F(BooterModelTest, RefusesMisalignedRadixEntry) {
  Put64(Level2Entry(3), ImagePageBus(3) + 8);
  ExpectRefused(0xf8, "radix3 level-2 page 0 (0x20002000) entry 3 (image page 3)");
}

TEST_F(BooterModelTest, RefusesWrongImageSize) {
  meta_.sizeOfRadix3Elf = kFwImageSize - 0x1000;
  WriteMeta();
  ExpectRefused(0xf8, "sizeOfRadix3Elf 0x2447000 is not the size of .fwimage");
}

TEST_F(BooterModelTest, RefusesWrongBootloaderOffset) {
  meta_.bootloaderCodeOffset = 0x4000;
  WriteMeta();
  ExpectRefused(0xf8,
                "bootloaderCodeOffset 0x4000 is not the bootloader's RM_RISCV_UCODE_DESC.monitorCodeOffset 0x4800");
}

TEST_F(BooterModelTest, RefusesChangedBootloader) {
  memory_.System(kBootloaderBus + 0x4900, 1)[0] ^= 1;
  ExpectRefused(0xf8, "sysmemAddrOfBootloader: system memory 0x30004900 differs from");
}

TEST_F(BooterModelTest, RefusesUnreadableBootloaderAndRadixRoot) {
  meta_.sysmemAddrOfBootloader = 0x30004000;  // 0x4000 bytes before the mapped buffer's end: 0x8000 do not fit
  WriteMeta();
  ExpectRefused(0x17, "sysmemAddrOfBootloader: system memory 0x30004000 + 0x0 (0x8000 bytes) is not readable");
  meta_.sysmemAddrOfRadix3Elf = 0x50000000;
  WriteMeta();
  ExpectRefused(0x17, "radix3 level-0 entry 0 at 0x50000000 is not readable");
}

TEST_F(BooterModelTest, RefusesChangedSignature) {
  memory_.System(kSignatureBus + 0xfff, 1)[0] ^= 1;
  ExpectRefused(0xf8, "sysmemAddrOfSignature: system memory 0x31000fff differs from .fwsignature_ad10x");
}

TEST_F(BooterModelTest, RefusesMailboxOnUnmappedMemory) {
  inputs_.mailbox0 = 0xdead0000;
  inputs_.mailbox1 = 0;
  ExpectRefused(0x17, "MAILBOX1:MAILBOX0 = 0xdead0000: the GspFwWprMeta there (0x100 bytes) is not readable");
}

TEST_F(BooterModelTest, RefusesUnpatchedSignature) {
  LoadBooter(Files(root_).booter_load, kLoadCodeOffset, kLoadCodeSize, kLoadDataOffset, kLoadDataSize, kSignatureSlot,
             /*signature=*/-1);
  ExpectRefused(0xf7, "DMEM 0x10 (BROM_PARAADDR(0)) holds the file's unpatched signature slot");
}

TEST_F(BooterModelTest, RefusesTheSignatureTheFuseDoesNotSelect) {
  LoadBooter(Files(root_).booter_load, kLoadCodeOffset, kLoadCodeSize, kLoadDataOffset, kLoadDataSize, kSignatureSlot,
             /*signature=*/1);
  ExpectRefused(0xf7,
                "holds signature 1; the fuse FUSE_UCODE_VERSION_ENGINE_ID_BIT0 at 0x824148 reads 0x1, which "
                "selects signature 0 of 2");
}

TEST_F(BooterModelTest, UnfusedChipTakesTheLastSignature) {
  // ga100_flcn_fw_signature: a fuse reading 0 selects signature num_sig - 1 = 1.
  priv_.Write32(kBooterFuse, 0);
  ExpectRefused(0xf7,
                "holds signature 0; the fuse FUSE_UCODE_VERSION_ENGINE_ID_BIT0 at 0x824148 reads 0x0, which "
                "selects signature 1 of 2");
  LoadBooter(Files(root_).booter_load, kLoadCodeOffset, kLoadCodeSize, kLoadDataOffset, kLoadDataSize, kSignatureSlot,
             /*signature=*/1);
  EXPECT_TRUE(Run().ok);
}

TEST_F(BooterModelTest, RefusesARevokedBooter) {
  priv_.Write32(kBooterFuse, 2);  // fls(2) = 2 > the booter's fuse version 1
  ExpectRefused(0xa2, "reads 0x2 (version 2); booter_load is version 1 with 2 signatures: revoked");
}

TEST_F(BooterModelTest, RefusesChangedData) {
  falcon_.dmem[0x200] ^= 1;
  ExpectRefused(0xf7, "DMEM 0x200 differs from booter_load's data");
}

TEST_F(BooterModelTest, RefusesWrongBromParameters) {
  inputs_.brom.engine_id_mask = 0x400;
  ExpectRefused(0xb7, "NV_PFALCON2_FALCON_BROM_ENGIDMASK = 0x400; booter_load is signed for engine mask 0x1");
  inputs_.brom.engine_id_mask = 1;
  inputs_.falcon_engine_bit = 0x400;  // the GSP's
  ExpectRefused(0xb7, "booter_load is signed for engine mask 0x1 (SEC2) but runs on the falcon with engine bit 0x400");
  inputs_.falcon_engine_bit = 1;
  inputs_.brom.ucode_id = 4;
  ExpectRefused(0xa0, "NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID = 4; booter_load is ucode 3");
  inputs_.brom.ucode_id = 3;
  inputs_.brom.mod_sel_algo = 0;
  ExpectRefused(0xa0, "NV_PFALCON2_FALCON_MOD_SEL.ALGO = 0x0");
  inputs_.brom.mod_sel_algo = 1;
  inputs_.brom.paraaddr0 = 0x20;
  ExpectRefused(0xf7, "NV_PFALCON2_FALCON_BROM_PARAADDR(0) = 0x20; booter_load's signature slot is DMEM 0x10");
  inputs_.brom.paraaddr0 = 0x10;
  inputs_.bootvec = 0;
  ExpectRefused(0xa0, "NV_PFALCON_FALCON_BOOTVEC = 0x0; booter_load starts at its app[0] offset 0x100");
  inputs_.bootvec = 0x100;
  falcon_.secure[3] = false;
  ExpectRefused(0xa0, "IMEM block 3 (0x300) was not loaded secure");
}

TEST_F(BooterModelTest, OtherCodeIsNotTheBooter) {
  falcon_.imem[0x7000] ^= 1;
  absl::StatusOr<BooterOutcome> out = load_->Execute(inputs_);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(out.status().message(), HasSubstr("IMEM is not booter_load: it differs from the file's app[0]"));
  EXPECT_THAT(out.status().message(), HasSubstr("at IMEM 0x7000"));
  inputs_.priv = nullptr;
  EXPECT_EQ(load_->Execute(inputs_).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(BooterModelTest, TheSeamGetsTheMailboxesAndTheLog) {
  HsUcodeModel& seam = *load_;
  EXPECT_TRUE(seam.Recognise(inputs_).ok());
  inputs_.brom.ucode_id = 4;
  HsUcodeOutcome out = seam.Run(inputs_);
  EXPECT_EQ(out.mailbox0, 0xa0u);
  EXPECT_THAT(out.log, HasSubstr("BROM refused (MAILBOX0 = 0xa0): NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID = 4"));
  inputs_.brom.ucode_id = 3;
  out = seam.Run(inputs_);
  EXPECT_EQ(out.mailbox0, 0u) << out.log;
  EXPECT_THAT(out.log, HasSubstr("booter_load: GspFwWprMeta at 0x123456000 verified"));
  falcon_.imem[0] ^= 1;  // not the booter any more: refused like an image no model knows
  out = seam.Run(inputs_);
  EXPECT_EQ(out.mailbox0, 0xa0u);
  EXPECT_THAT(out.log, HasSubstr("IMEM is not booter_load"));
}

TEST_F(BooterModelTest, AnyMetaBytesGiveARefusal) {
  // Whatever the driver wrote (magic and revision right, so that every later check is reached), nothing crashes and
  // nothing boots.
  std::mt19937_64 random(22);
  uint64_t good[sizeof(meta_) / 8];
  std::memcpy(good, &meta_, sizeof(meta_));
  for (int i = 0; i < 300; ++i) {
    uint64_t words[sizeof(meta_) / 8];
    for (size_t w = 0; w < std::size(words); ++w) {
      const uint64_t value = random();
      // Every other meta near the real layout (low bits changed), the rest anything.
      words[w] = (i % 2) ? value : good[w] ^ (value & 0xfffff);
    }
    words[0] = meta_.magic;
    words[1] = meta_.revision;
    std::memcpy(memory_.System(kMetaBus, sizeof(words)), words, sizeof(words));
    BooterOutcome out = Run();
    EXPECT_FALSE(out.ok) << out.log;
    EXPECT_NE(out.mailbox0, 0u);
  }
}

// ---- booter_unload ----------------------------------------------------------------------------------------------

class BooterUnloadTest : public BooterModelTest {
 protected:
  void LoadUnload() {
    LoadBooter(Files(root_).booter_unload, kUnloadCodeOffset, kUnloadCodeSize, kUnloadDataOffset, kUnloadDataSize,
               kUnloadSignatureSlot, /*signature=*/0);
    inputs_.mailbox0 = 0xff;  // r535_gsp_fini outside suspend
    inputs_.mailbox1 = 0xff;
  }
};

TEST_F(BooterUnloadTest, TakesWpr2Down) {
  ASSERT_TRUE(Run().ok);
  ASSERT_EQ(priv_.Read32(kWpr2Hi), kFrtsHiRaw);
  LoadUnload();
  absl::StatusOr<BooterOutcome> out = unload_->Execute(inputs_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->ok) << out->log;
  EXPECT_EQ(out->mailbox0, 0u);
  EXPECT_THAT(out->log, HasSubstr("WPR2 [0x5f5900000, 0x5fff00000) taken down"));
  EXPECT_EQ(priv_.Read32(kWpr2Hi), 0u);  // what nouveau r535_gsp_booter_unload checks
  EXPECT_EQ(priv_.Read32(kWpr2Lo), 0u);
}

TEST_F(BooterUnloadTest, NothingToDoWithoutWpr2) {
  LoadUnload();
  priv_.Write32(kWpr2Lo, 0);
  priv_.Write32(kWpr2Hi, 0);
  absl::StatusOr<BooterOutcome> out = unload_->Execute(inputs_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->ok);
  EXPECT_THAT(out->log, HasSubstr("WPR2 was not up"));
}

TEST_F(BooterUnloadTest, RefusesSuspendAndBadSignatures) {
  LoadUnload();
  inputs_.mailbox0 = static_cast<uint32_t>(kMetaBus);
  inputs_.mailbox1 = static_cast<uint32_t>(kMetaBus >> 32);
  absl::StatusOr<BooterOutcome> out = unload_->Execute(inputs_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->mailbox0, 0x01u);
  EXPECT_THAT(out->log, HasSubstr("MAILBOX0/1 = 0x23456000/0x1: outside suspend nouveau passes 0xff/0xff"));
  EXPECT_EQ(priv_.Read32(kWpr2Hi), kFrtsHiRaw);

  LoadBooter(Files(root_).booter_unload, kUnloadCodeOffset, kUnloadCodeSize, kUnloadDataOffset, kUnloadDataSize,
             kUnloadSignatureSlot, /*signature=*/-1);
  inputs_.mailbox0 = inputs_.mailbox1 = 0xff;
  out = unload_->Execute(inputs_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->mailbox0, 0xf7u);
  EXPECT_THAT(out->log, HasSubstr("unpatched signature slot"));
  EXPECT_EQ(priv_.Read32(kWpr2Hi), kFrtsHiRaw);
}

TEST_F(BooterUnloadTest, EachModelKnowsOnlyItsOwnCode) {
  LoadUnload();
  EXPECT_EQ(load_->Execute(inputs_).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(unload_->Recognise(inputs_).ok());
}

// ---- On the virtual falcons --------------------------------------------------------------------------------------

// The priv bus of a chip with the two falcon models at their BAR0 windows (GSP 0x110000, SEC2 0x840000); every other
// register is a plain one of `rest`.
class FalconBus : public PrivBus {
 public:
  explicit FalconBus(PrivBus& rest) : rest_(rest) {}
  void Attach(FalconModel* gsp, FalconModel* sec2) {
    gsp_ = gsp;
    sec2_ = sec2;
  }
  uint32_t Read32(uint32_t address) override {
    uint32_t base = 0;
    if (FalconModel* f = At(address, &base)) return f->Read32(address - base);
    return rest_.Read32(address);
  }
  void Write32(uint32_t address, uint32_t value) override {
    uint32_t base = 0;
    if (FalconModel* f = At(address, &base)) return f->Write32(address - base, value);
    rest_.Write32(address, value);
  }

 private:
  FalconModel* At(uint32_t address, uint32_t* base) {
    for (FalconModel* f : {gsp_, sec2_}) {
      if (f != nullptr && address - f->identity().bases.falcon < kFalconWindowSize) {
        *base = f->identity().bases.falcon;
        return f;
      }
    }
    return nullptr;
  }
  PrivBus& rest_;
  FalconModel* gsp_ = nullptr;
  FalconModel* sec2_ = nullptr;
};

// The driver's side written out register by register from nouveau (raw offsets and values as nouveau writes them):
// r535_gsp_oneinit's GSP mailboxes, ga102_gsp_reset's BCR_CTRL, then nvkm_falcon_fw_boot of the booter on SEC2:
// ga102_flcn_fw_load (FBIF_CTL, DMACTL, FBIF_TRANSCFG(0), DMA of app[0] into IMEM with SEC and of the OS data into
// DMEM), ga102_flcn_fw_boot (BROM registers), gm200_flcn_fw_boot (mailboxes, BOOTVEC, STARTCPU, then the halt).
class BooterOnFalconsTest : public BooterModelTest {
 protected:
  static constexpr uint32_t kSec2 = 0x840000, kGsp = 0x110000;
  static constexpr uint64_t kImageBusAddress = 0x80000000;  // the signed booter image nouveau DMAs from

  void SetUp() override {
    BooterModelTest::SetUp();
    if (IsSkipped()) return;
    gsp_ = std::make_unique<FalconModel>(Ad102GspFalcon(), bus_, memory_);
    sec2_ = std::make_unique<FalconModel>(Ad102Sec2Falcon(), bus_, memory_);
    bus_.Attach(gsp_.get(), sec2_.get());
    auto load = BooterLoadModel::Create("ad102", kFbSize, {root_});
    auto unload = BooterUnloadModel::Create("ad102", {root_});
    ASSERT_TRUE(load.ok() && unload.ok());
    sec2_->AddHsUcodeModel(std::move(*load));
    sec2_->AddHsUcodeModel(std::move(*unload));
    gsp_->SetRiscvStartHandler([this] {
      ++gsp_rm_starts_;
      return true;
    });
    // r535_gsp_oneinit: the GSP's reset into RISC-V mode (ga102_gsp_reset: falcon + 0x1668 |= 0x111), the LibOS
    // arguments in its mailboxes (falcon + 0x040/0x044).
    bus_.Write32(kGsp + 0x1668, 0x111);
    bus_.Write32(kGsp + 0x040, static_cast<uint32_t>(kLibosArgs));
    bus_.Write32(kGsp + 0x044, static_cast<uint32_t>(kLibosArgs >> 32));
  }

  // nvkm_falcon_fw_boot of one booter: the file's payload with signature `signature` patched in (nvkm_falcon_fw_patch)
  // is DMA'd from system memory.
  std::pair<uint32_t, uint32_t> Boot(const std::string& file, uint64_t code_offset, uint64_t code_size,
                                     uint64_t data_offset, uint64_t data_size, uint64_t slot, int signature,
                                     uint32_t mbox0, uint32_t mbox1) {
    std::vector<uint8_t>& image = memory_.Map(kImageBusAddress, 0x10000);
    std::memcpy(image.data(), file.data() + kLoadPayload, file.size() - kLoadPayload);
    std::memcpy(image.data() + data_offset + slot, file.data() + kSignatures + signature * kSignatureSize,
                kSignatureSize);
    bus_.Write32(kSec2 + 0x624, bus_.Read32(kSec2 + 0x624) | 0x80);               // FBIF_CTL.ALLOW_PHYS_NO_CTX
    bus_.Write32(kSec2 + 0x10c, 0);                                               // DMACTL
    bus_.Write32(kSec2 + 0x600, (bus_.Read32(kSec2 + 0x600) & ~0x10007u) | 0x5);  // TRANSCFG(0): sysmem, physical
    // IMEM: base = image >> 8, FB offset = app[0].offset + i, IMEM offset i, cmd SIZE_256B | IMEM | SEC.
    bus_.Write32(kSec2 + 0x110, static_cast<uint32_t>(kImageBusAddress >> 8));
    bus_.Write32(kSec2 + 0x128, 0);
    for (uint64_t i = 0; i < code_size; i += 256) {
      bus_.Write32(kSec2 + 0x114, static_cast<uint32_t>(i));
      bus_.Write32(kSec2 + 0x11c, static_cast<uint32_t>(code_offset + i));
      bus_.Write32(kSec2 + 0x118, (6 << 8) | 0x10 | 0x4);
    }
    // DMEM: base = (image + os_data_offset) >> 8, offsets from 0, cmd SIZE_256B.
    bus_.Write32(kSec2 + 0x110, static_cast<uint32_t>((kImageBusAddress + data_offset) >> 8));
    for (uint64_t i = 0; i < data_size; i += 256) {
      bus_.Write32(kSec2 + 0x114, static_cast<uint32_t>(i));
      bus_.Write32(kSec2 + 0x11c, static_cast<uint32_t>(i));
      bus_.Write32(kSec2 + 0x118, 6 << 8);
    }
    bus_.Write32(kSec2 + 0x1210, static_cast<uint32_t>(slot));  // BROM_PARAADDR(0) = dmem_sign
    bus_.Write32(kSec2 + 0x119c, 1);                            // ENGIDMASK
    bus_.Write32(kSec2 + 0x1198, 3);                            // CURR_UCODE_ID
    bus_.Write32(kSec2 + 0x1180, 1);                            // MOD_SEL: RSA3K
    bus_.Write32(kSec2 + 0x040, mbox0);
    bus_.Write32(kSec2 + 0x044, mbox1);
    bus_.Write32(kSec2 + 0x104, static_cast<uint32_t>(code_offset));  // BOOTVEC = boot_addr
    bus_.Write32(kSec2 + 0x100, 0x2);                                 // CPUCTL.STARTCPU
    EXPECT_TRUE(bus_.Read32(kSec2 + 0x100) & 0x10) << "SEC2 did not halt";
    return {bus_.Read32(kSec2 + 0x040), bus_.Read32(kSec2 + 0x044)};
  }

  FalconBus bus_{priv_};
  std::unique_ptr<FalconModel> gsp_, sec2_;
  int gsp_rm_starts_ = 0;
};

TEST_F(BooterOnFalconsTest, NouveausSequenceStartsGspRmAndUnloadTakesWpr2Down) {
  const RealFiles& f = Files(root_);
  auto [mbox0, mbox1] = Boot(f.booter_load, kLoadCodeOffset, kLoadCodeSize, kLoadDataOffset, kLoadDataSize,
                             kSignatureSlot, 0, static_cast<uint32_t>(kMetaBus), static_cast<uint32_t>(kMetaBus >> 32));
  EXPECT_EQ(mbox0, 0u) << ::testing::PrintToString(sec2_->log());  // nouveau's mbox0_ok
  EXPECT_EQ(mbox1, 1u);
  EXPECT_EQ(gsp_rm_starts_, 1);
  // r535_gsp_booter_load's check: ga102_flcn_riscv_active, GSP falcon + 0x1000 + 0x388 bit 7.
  EXPECT_TRUE(bus_.Read32(kGsp + 0x1388) & 0x80);
  EXPECT_EQ(priv_.Read32(kWpr2Lo), kBootedLoRaw);
  EXPECT_EQ(priv_.Read32(kWpr2Hi), kFrtsHiRaw);

  // r535_gsp_fini (outside suspend): booter_unload with 0xff in both mailboxes; WPR2_ADDR_HI reads 0 after.
  std::tie(mbox0, mbox1) = Boot(f.booter_unload, kUnloadCodeOffset, kUnloadCodeSize, kUnloadDataOffset, kUnloadDataSize,
                                kUnloadSignatureSlot, 0, 0xff, 0xff);
  EXPECT_EQ(mbox0, 0u) << ::testing::PrintToString(sec2_->log());
  EXPECT_EQ(priv_.Read32(kWpr2Hi), 0u);
}

TEST_F(BooterOnFalconsTest, AWrongSignatureHaltsSec2WithTheBromsCode) {
  const RealFiles& f = Files(root_);
  auto [mbox0, mbox1] = Boot(f.booter_load, kLoadCodeOffset, kLoadCodeSize, kLoadDataOffset, kLoadDataSize,
                             kSignatureSlot, 1, static_cast<uint32_t>(kMetaBus), static_cast<uint32_t>(kMetaBus >> 32));
  EXPECT_EQ(mbox0, 0xf7u);
  EXPECT_EQ(gsp_rm_starts_, 0);
  EXPECT_FALSE(bus_.Read32(kGsp + 0x1388) & 0x80);
  EXPECT_THAT(::testing::PrintToString(sec2_->log()), HasSubstr("holds signature 1"));
}

// ---- The files ----------------------------------------------------------------------------------------------------

TEST(BooterFirmwareTest, RefusesAFileThatIsNotThePinnedOne) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string dir = ::testing::TempDir() + "/booter_firmware_test." + std::to_string(getpid());
  const std::string gsp_dir = dir + "/nvidia/ad102/gsp";
  std::filesystem::create_directories(gsp_dir);
  for (const char* name : {"gsp", "booter_unload", "bootloader"}) {
    const std::string file = std::string(name) + "-535.113.01.bin";
    std::filesystem::create_symlink(root + "/nvidia/ad102/gsp/" + file, gsp_dir + "/" + file);
  }
  std::string changed = *base::ReadFile(root + "/nvidia/ad102/gsp/booter_load-535.113.01.bin");
  changed[0x1000] ^= 1;
  {
    std::ofstream out(gsp_dir + "/booter_load-535.113.01.bin", std::ios::binary);
    out.write(changed.data(), static_cast<std::streamsize>(changed.size()));
    ASSERT_TRUE(out.good());
  }
  auto model = BooterLoadModel::Create("ad102", kFbSize, {dir});
  EXPECT_EQ(model.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(model.status().message(),
              HasSubstr("is not GSP-RM 535.113.01's ad102 booter_load "
                        "(7d4ef3258da016f5208cfb1b348a9a1d69aaa13c2f8d4ee8c05d66bd05b45cd6)"));
  std::filesystem::remove_all(dir);

  auto missing = BooterLoadModel::Create("ad102", kFbSize, {dir});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr(dir + "/nvidia/ad102/gsp/gsp-535.113.01.bin.xz"));
}

TEST(BooterFirmwareTest, Ga102BooterPassesTheBrom) {
  // ga102's booter_load (xxd): payload 0x378; app[0] 0x100 + 0x8300; os_data 0x8400 + 0x6200; patch_loc 0x8410.
  REQUIRE_NVIDIA_FIRMWARE(root);
  auto model = BooterLoadModel::Create("ga102", kFbSize, {root});
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string file = *base::ReadFile(root + "/nvidia/ga102/gsp/booter_load-535.113.01.bin");
  Falcon falcon;
  Put(falcon.imem, 0, absl::string_view(file).substr(0x378 + 0x100, 0x8300));
  Put(falcon.dmem, 0, absl::string_view(file).substr(0x378 + 0x8400, 0x6200));
  Put(falcon.dmem, 0x10, absl::string_view(file).substr(kSignatures, kSignatureSize));
  for (int b = 0; b < 0x8300 / 256; ++b) falcon.secure[b] = true;
  FakePrivBus priv;
  FakeDeviceMemory memory(kFbSize);
  priv.Write32(kBooterFuse, 1);
  HsUcodeContext in{.falcon = "SEC2",
                    .falcon_engine_bit = 1,
                    .imem = falcon.imem,
                    .dmem = falcon.dmem,
                    .imem_secure = falcon.secure,
                    .brom = {.paraaddr0 = 0x10, .engine_id_mask = 1, .ucode_id = 3, .mod_sel_algo = 1},
                    .bootvec = 0x100,
                    .mailbox0 = 0x1000,
                    .mailbox1 = 0,
                    .priv = &priv,
                    .memory = &memory};
  absl::StatusOr<BooterOutcome> out = (*model)->Execute(in);
  ASSERT_TRUE(out.ok()) << out.status();
  // Past the BROM: the booter itself finds no meta at 0x1000.
  EXPECT_EQ(out->mailbox0, 0x17u) << out->log;
  EXPECT_THAT(out->log, HasSubstr("booter_load refused"));
}

}  // namespace
}  // namespace nv::sim
