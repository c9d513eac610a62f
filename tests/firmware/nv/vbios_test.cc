// firmware/nv/vbios: the parser on the virtual AD102 VBIOS, two independent walkers written here from the two
// descriptions the parser was built from (nouveau's C and tinygrad's Python), a real option ROM, and bad inputs.
//
// Expected numbers come from the virtual image's documented layout (firmware/nv/virtual_vbios.h) and the structures'
// sizes in the sources: image 0 0x400 bytes at 0, EFI 0x400 at 0x400, extension at 0x800; the BIT at 0x1b0; the
// FWSEC_PROD descriptor 0x100 into the extension image (0x900), v3: 44 bytes + 2 signatures of 384 = 812 (0x32c);
// the ucode at 0x900 + 0x32c = 0xc2c, IMEM 0x2000 then DMEM 0x1000; DMEM at 0x2c2c, the APPIF at DMEM 0x100
// (0x2d2c), the DMEMMAPPER at DMEM 0x200 (0x2e2c), its command buffer at DMEM 0x400 (0x302c).
#include "firmware/nv/vbios.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "base/file.h"
#include "firmware/nv/virtual_vbios.h"
#include "gtest/gtest.h"

namespace firmware::nv {
namespace {

std::string VirtualRom() {
  absl::StatusOr<std::string> rom = BuildVirtualVbios("ad102");
  EXPECT_TRUE(rom.ok()) << rom.status();
  return rom.ok() ? *rom : std::string();
}

uint32_t Get(const std::string& d, uint64_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(d.at(at + i));
  return v;
}
void Set(std::string& d, uint64_t at, int bytes, uint32_t v) {
  for (int i = 0; i < bytes; ++i) d.at(at + i) = static_cast<char>(v >> (8 * i));
}

// The layout the virtual image documents (see the file comment).
constexpr uint64_t kExt = 0x800;
constexpr uint64_t kProdDesc = kExt + 0x100;
constexpr uint64_t kProdDescSize = 44 + 2 * 384;
constexpr uint64_t kProdUcode = kProdDesc + kProdDescSize;
constexpr uint64_t kProdDmem = kProdUcode + 0x2000;
constexpr uint64_t kProdDmemMapper = kProdDmem + 0x200;
constexpr uint64_t kProdCmdBuffer = kProdDmem + 0x400;

TEST(VbiosTest, ParsesTheVirtualImage) {
  const std::string rom = VirtualRom();
  absl::StatusOr<Vbios> v = ParseVbios("ad102.rom", rom);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->images.size(), 3u);
  EXPECT_EQ(v->images[0].offset, 0u);
  EXPECT_EQ(v->images[0].code_type, 0x00);
  EXPECT_EQ(v->images[0].size, 0x400u);
  EXPECT_EQ(v->images[0].vendor_id, 0x10de);
  EXPECT_EQ(v->images[0].device_id, 0x2684);
  EXPECT_EQ(v->images[0].class_code, 0x030000u);
  EXPECT_EQ(v->images[0].checksum_ok, true);
  EXPECT_EQ(v->images[1].offset, 0x400u);
  EXPECT_EQ(v->images[1].code_type, 0x03);
  EXPECT_TRUE(v->images[1].pcir_last);  // the PCI-visible chain ends here ...
  ASSERT_TRUE(v->images[1].npde.has_value());
  EXPECT_FALSE(v->images[1].last);  // ... NVIDIA's NPDE continues it
  EXPECT_EQ(v->images[2].offset, kExt);
  EXPECT_EQ(v->images[2].code_type, 0xe0);
  EXPECT_TRUE(v->images[2].last);
  EXPECT_EQ(v->images[2].offset + v->images[2].size, rom.size());
  EXPECT_EQ(v->image0_size, 0x400u);
  EXPECT_EQ(v->extension_offset, kExt);

  EXPECT_EQ(v->bit.offset, 0x1b0u);
  EXPECT_EQ(v->bit.bcd_version, 0x0100);
  EXPECT_EQ(v->bit.header_size, 12);
  EXPECT_EQ(v->bit.token_size, 6);
  ASSERT_EQ(v->tokens.size(), 3u);
  const BitToken* p = v->FindToken('p');
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->data_version, 2);
  EXPECT_EQ(p->data_size, 4);
  EXPECT_NE(v->FindToken('B'), nullptr);

  ASSERT_TRUE(v->ucode_table.has_value());
  const UcodeTable& t = *v->ucode_table;
  EXPECT_EQ(t.version, 1);
  EXPECT_EQ(t.header_size, 6);
  EXPECT_EQ(t.entry_size, 6);
  ASSERT_EQ(t.entries.size(), 2u);
  EXPECT_EQ(t.entries[0].application_id, 0x45);  // FWSEC_DBG
  EXPECT_EQ(t.entries[1].application_id, 0x85);  // FWSEC_PROD
  // The stored pointer is a ROM pointer past image 0: 0x400 + 0x100, rebased to the extension image's 0x100.
  EXPECT_EQ(t.entries[1].desc_pointer, 0x500u);
  EXPECT_EQ(t.entries[1].desc_offset, kProdDesc);
  // After both FWSECs, each 16-byte aligned: PROD at 0x100 + 0x32c + 0x3000 = 0x342c -> DBG at 0x3430, + 0x332c =
  // 0x675c -> the table at 0x6760 in the extension image.
  EXPECT_EQ(t.offset, kExt + 0x6760);
  EXPECT_EQ(t.pointer, 0x400u + 0x6760);

  ASSERT_TRUE(v->fwsec.has_value());
  const Fwsec& f = *v->fwsec;
  EXPECT_EQ(f.entry_index, 1u);
  EXPECT_EQ(f.desc.offset, kProdDesc);
  EXPECT_EQ(f.desc.version, 3);
  EXPECT_EQ(f.desc.size, kProdDescSize);
  EXPECT_EQ(f.desc.signature_count, 2);
  EXPECT_EQ(f.desc.signature_versions, 0x3);
  EXPECT_EQ(f.desc.engine_id_mask, 0x0400);
  EXPECT_EQ(f.desc.imem_load_size, 0x2000u);
  EXPECT_EQ(f.desc.dmem_load_size, 0x1000u);
  EXPECT_EQ(f.desc.signatures_offset, kProdDesc + 44);
  EXPECT_EQ(f.desc.ucode_offset, kProdUcode);
  EXPECT_EQ(f.desc.ucode_size, 0x3000u);
  EXPECT_EQ(f.desc.pkc_data_offset, 0x800u);
  EXPECT_EQ(f.appif.offset, kProdDmem + 0x100);
  EXPECT_EQ(f.appif.version, 1);
  ASSERT_EQ(f.appif.entries.size(), 1u);
  EXPECT_EQ(f.appif.entries[0].id, 4u);
  EXPECT_EQ(f.dmem_mapper.offset, kProdDmemMapper);
  EXPECT_EQ(f.dmem_mapper.cmd_in_buffer_file_offset, kProdCmdBuffer);
  EXPECT_GE(f.dmem_mapper.cmd_in_buffer_size, 44u);  // nv.py FWSECLIC_FRTS_CMD SIZE 44
  EXPECT_EQ(f.dmem_mapper.init_cmd, 0u);             // the driver writes 0x15 (FRTS) or 0x19 (SB)
  EXPECT_EQ(f.dmem_mapper.init_cmd_file_offset, kProdDmemMapper + 44);
  // The one note: the EFI image's PCIR and NPDE disagree on "last", on purpose.
  ASSERT_EQ(v->notes.size(), 1u) << absl::StrJoin(v->notes, "\n");
  EXPECT_TRUE(absl::StrContains(v->notes[0], "NPDE says not last")) << v->notes[0];
}

TEST(VbiosTest, ParsesTheV2Descriptor) {
  absl::StatusOr<std::string> rom = BuildVirtualVbios("ad102", {.desc_version = 2});
  ASSERT_TRUE(rom.ok()) << rom.status();
  absl::StatusOr<Vbios> v = ParseVbios("ad102-v2.rom", *rom);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE(v->fwsec.has_value());
  const FwsecDescriptor& d = v->fwsec->desc;
  EXPECT_EQ(d.version, 2);
  EXPECT_EQ(d.size, 60u);  // 15 u32 fields (fwsec.c nvkm_falcon_ucode_desc_v2)
  EXPECT_EQ(d.ucode_offset, kProdDesc + 60);
  EXPECT_EQ(d.dmem_offset, 0x2000u);
  EXPECT_EQ(d.dmem_image_offset, 0x2000u);
  EXPECT_EQ(v->fwsec->dmem_mapper.offset, kProdDesc + 60 + 0x2000 + 0x200);
}

// ga102_gsp_fwsec_signature, by hand: BIT(fls(reg)) must be in SignatureVersions; the index counts the set bits
// below it.
TEST(VbiosTest, SignatureIndexFollowsTheFuseVersion) {
  EXPECT_EQ(*FwsecSignatureIndex(0x3, 0x0), 0u);                  // fls(0) = 0 -> bit 0 -> no bits below
  EXPECT_EQ(*FwsecSignatureIndex(0x3, 0x1), 1u);                  // fls(1) = 1 -> bit 1 -> bit 0 below
  EXPECT_EQ(*FwsecSignatureIndex(0x6, 0x3), 1u);                  // fls(3) = 2 -> bit 2 -> bit 1 below
  EXPECT_EQ(*FwsecSignatureIndex(0x6, 0x1), 0u);                  // fls(1) = 1 -> bit 1 -> nothing below among {1,2}
  absl::StatusOr<uint32_t> none = FwsecSignatureIndex(0x3, 0x7);  // fls(7) = 3 -> bit 3 not provided
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::StrContains(none.status().message(), "no signature for fuse version 3")) << none.status();
}

// ---- Walker 1: nouveau's (Linux 6.12 nvkm/subdev/bios/{base,image,pcir,npde,bit,pmu}.c, nvkm/subdev/gsp/fwsec.c,
// ga102.c), transcribed as behaviour: reads past the end give 0 like nvbios_rd*; pointers at or past image 0's size
// are rebased into the first 0xe0 image (nvbios_addr). ----
struct NouveauWalk {
  bool found = false;
  uint64_t desc = 0, ucode = 0, dmemmapper = 0, cmd_buffer = 0, signature = 0;
};

class Nouveau {
 public:
  explicit Nouveau(const std::string& rom) : d_(rom) {}

  NouveauWalk Walk(uint32_t fuse_register) {
    // nvkm_bios_new: image 0's size, then the first later image of type 0xe0.
    Image image;
    if (ImageN(0, image)) {
      image0_size_ = image.size;
      for (int idx = 1; ImageN(idx, image); ++idx) {
        if (image.type == 0xe0) {
          imaged_addr_ = image.base;
          break;
        }
      }
    }
    bit_offset_ = FindStr(
        "\xff\xb8"
        "BIT",
        5);
    NouveauWalk w;
    // nvkm_gsp_fwsec: the first falcon ucode table entry of type 0x85.
    uint32_t data = 0, flcn_data = 0;
    for (int idx = 0; (data = PmuEp(idx, flcn_data)) != 0; ++idx) {
      if (Rd08(data) == 0x85) break;
    }
    if (data == 0) return w;
    const uint32_t desc = Addr(flcn_data);  // nvbios_pointer
    const uint32_t hdr = Rd32(flcn_data);
    if (!(hdr & 1)) return w;
    const uint32_t size = hdr >> 16, vers = (hdr >> 8) & 0xff;
    if (vers != 3) return w;
    const uint32_t imem_load = Rd32(flcn_data + 20), dmem_load = Rd32(flcn_data + 32);
    const uint32_t interface = Rd32(flcn_data + 12), pkc = Rd32(flcn_data + 8);
    const uint16_t sig_versions = static_cast<uint16_t>(Rd16(flcn_data + 40));
    const uint8_t sig_count = Rd08(flcn_data + 39);
    // nvkm_gsp_fwsec_v3: the image starts at desc + size; DMEM at IMEMLoadSize; signatures at desc + 0x2c.
    const uint64_t img = desc + size;
    if (img + imem_load + dmem_load > d_.size()) return w;
    const uint64_t dmem = img + imem_load;
    // nvkm_gsp_fwsec_patch: the APPIF header (ver 1), entries at hdr + hdr.hdr + i * len; DMEMMAPPER id 4.
    const uint64_t appif = dmem + interface;
    if (Raw8(appif) != 1) return w;
    const uint8_t ahdr = Raw8(appif + 1), alen = Raw8(appif + 2), acnt = Raw8(appif + 3);
    int i = 0;
    for (; i < acnt; ++i) {
      const uint64_t app = appif + ahdr + uint64_t(i) * alen;
      if (Raw32(app) != 4) continue;
      w.dmemmapper = dmem + Raw32(app + 4);
      w.cmd_buffer = dmem + Raw32(w.dmemmapper + 8);  // cmd_in_buffer_offset
      break;
    }
    if (i == acnt) return w;
    // ga102_gsp_fwsec_signature: BIT(fls(fuse)) must be offered; idx counts the offered versions below it.
    uint32_t reg = 1u << std::bit_width(fuse_register), sig = sig_versions;
    if (!(reg & sig)) return w;
    int idx = 0;
    while (!(reg & sig & 1)) {
      idx += sig & 1;
      reg >>= 1;
      sig >>= 1;
    }
    if (idx >= sig_count) return w;
    (void)pkc;
    w.signature = desc + 0x2c + uint64_t(idx) * 96 * 4;
    w.desc = desc;
    w.ucode = img;
    w.found = true;
    return w;
  }

 private:
  struct Image {
    uint32_t base = 0, size = 0;
    uint8_t type = 0;
    bool last = false;
  };

  uint32_t Addr(uint32_t addr) const {
    if (addr >= image0_size_ && imaged_addr_) addr = addr - image0_size_ + imaged_addr_;
    return addr;
  }
  uint8_t Raw8(uint64_t a) const { return a < d_.size() ? static_cast<uint8_t>(d_[a]) : 0; }
  uint32_t Raw32(uint64_t a) const { return a + 4 <= d_.size() ? Get(d_, a, 4) : 0; }
  uint8_t Rd08(uint32_t a) const {
    a = Addr(a);
    return a + 1 <= d_.size() ? static_cast<uint8_t>(d_[a]) : 0;
  }
  uint16_t Rd16(uint32_t a) const {
    a = Addr(a);
    return a + 2 <= d_.size() ? static_cast<uint16_t>(Get(d_, a, 2)) : 0;
  }
  uint32_t Rd32(uint32_t a) const {
    a = Addr(a);
    return a + 4 <= d_.size() ? Get(d_, a, 4) : 0;
  }
  uint32_t FindStr(const char* s, int len) const {
    for (size_t i = 0; i + len <= d_.size(); ++i) {
      if (std::memcmp(d_.data() + i, s, len) == 0) return static_cast<uint32_t>(i);
    }
    return 0;
  }
  // pcir.c / npde.c / image.c. nvbios_image clears imaged_addr while it walks.
  bool ImageN(int idx, Image& image) {
    const uint32_t saved = imaged_addr_;
    imaged_addr_ = 0;
    image = Image{};
    bool ok = true;
    do {
      image.base += image.size;
      if (image.last || !ImageNext(image)) {
        ok = false;
        break;
      }
    } while (idx--);
    imaged_addr_ = saved;
    return ok;
  }
  bool ImageNext(Image& image) {
    const uint16_t sig = Rd16(image.base);
    if (sig != 0xaa55 && sig != 0xbb77 && sig != 0x4e56) return false;
    uint32_t pcir = Rd16(image.base + 0x18);
    if (!pcir) return false;
    pcir += image.base;
    const uint32_t psig = Rd32(pcir);
    if (psig != 0x52494350 && psig != 0x53494752 && psig != 0x5344504e) return false;
    const uint16_t hdr = Rd16(pcir + 0x0a);
    image.size = Rd16(pcir + 0x10) * 512;
    image.type = Rd08(pcir + 0x14);
    image.last = Rd08(pcir + 0x15) & 0x80;
    if (image.type != 0x70) {
      const uint32_t npde = (pcir + hdr + 0x0f) & ~0x0fu;
      if (Rd32(npde) == 0x4544504e) {
        image.size = Rd16(npde + 0x08) * 512;
        image.last = Rd08(npde + 0x0a) & 0x80;
      }
    } else {
      image.last = true;
    }
    return true;
  }
  // bit.c: entries from bit + 12, stride = the header's token size.
  bool BitEntry(uint8_t id, uint8_t& version, uint16_t& length, uint16_t& offset) const {
    if (!bit_offset_) return false;
    uint8_t entries = Rd08(bit_offset_ + 10);
    uint32_t entry = bit_offset_ + 12;
    while (entries--) {
      if (Rd08(entry) == id) {
        version = Rd08(entry + 1);
        length = Rd16(entry + 2);
        offset = Rd16(entry + 4);
        return true;
      }
      entry += Rd08(bit_offset_ + 9);
    }
    return false;
  }
  // pmu.c nvbios_pmuEp: returns the entry's address; `data` its descriptor pointer.
  uint32_t PmuEp(int idx, uint32_t& data) const {
    uint8_t version = 0;
    uint16_t length = 0, offset = 0;
    if (!BitEntry('p', version, length, offset) || version != 2 || length < 4) return 0;
    const uint32_t table = Rd32(offset);
    if (!table) return 0;
    const uint8_t hdr = Rd08(table + 1), len = Rd08(table + 2), cnt = Rd08(table + 3);
    if (idx >= cnt) return 0;
    const uint32_t entry = table + hdr + idx * len;
    data = Rd32(entry + 2);
    return entry;
  }

  const std::string& d_;
  uint32_t image0_size_ = 0, imaged_addr_ = 0, bit_offset_ = 0;
};

// ---- Walker 2: tinygrad's (runtime/support/nv/ip.py prep_ucode with runtime/autogen/nv.py's structures). It reads
// the PCIR of each image without checking signatures or NPDE, rebases with (first 0xe0 image - last base image's
// length), reads the BIT at 0x1b0 only, takes the last FWSEC_PROD entry and the last DMEMMAPPER entry, and patches
// the last 0x180 bytes of the signature block. Python slices past the end come back short; here they fail. ----
struct TinygradWalk {
  bool found = false;
  uint64_t desc = 0, ucode = 0, dmemmapper = 0, cmd_buffer = 0, signature = 0;
};

TinygradWalk WalkLikeTinygrad(const std::string& d) {
  TinygradWalk w;
  auto in = [&](uint64_t at, uint64_t n) { return at <= d.size() && n <= d.size() - at; };
  uint64_t off = 0, block_size = 0;
  std::optional<uint64_t> expansion_rom_off;
  // `while True` with a guard the Python does not have: a chain without an 0xe0 image would run off the end.
  while (in(off, 0x1a)) {
    const uint64_t pci_blck = Get(d, off + 0x18, 2);
    if (!in(off + pci_blck, 0x18)) return w;
    const uint64_t imglen = Get(d, off + pci_blck + 0x10, 2) * 512ull;
    const uint8_t code_type = static_cast<uint8_t>(d[off + pci_blck + 0x14]);
    if (code_type == 0x00) block_size = imglen;
    if (code_type == 0xe0) {
      expansion_rom_off = off - block_size;
      break;
    }
    if (imglen == 0) return w;
    off += imglen;
  }
  if (!expansion_rom_off) return w;
  const uint64_t bit_addr = 0x1b0;
  if (!in(bit_addr, 12) || Get(d, bit_addr + 2, 4) != 0x00544942) return w;
  const uint8_t header_size = static_cast<uint8_t>(d[bit_addr + 8]), token_size = static_cast<uint8_t>(d[bit_addr + 9]),
                entries = static_cast<uint8_t>(d[bit_addr + 10]);
  std::optional<uint64_t> desc_off;
  uint32_t desc_size = 0;
  for (int i = 0; i < entries; ++i) {
    const uint64_t t = bit_addr + header_size + uint64_t(i) * token_size;
    if (!in(t, 8)) return w;  // BIT_TOKEN_V1_00 is 8 bytes in nv.py
    if (static_cast<uint8_t>(d[t]) != 0x70 || d[t + 1] != 2 || Get(d, t + 2, 2) < 4) continue;
    const uint64_t falcon_data = Get(d, t + 4, 4) & 0xffff;
    if (!in(falcon_data, 4)) return w;
    const uint64_t table_ptr = *expansion_rom_off + Get(d, falcon_data, 4);
    if (!in(table_ptr, 6)) return w;
    const uint8_t hsize = static_cast<uint8_t>(d[table_ptr + 1]), esize = static_cast<uint8_t>(d[table_ptr + 2]),
                  count = static_cast<uint8_t>(d[table_ptr + 3]);
    for (int j = 0; j < count; ++j) {
      const uint64_t e = table_ptr + hsize + uint64_t(j) * esize;
      if (!in(e, 6)) return w;
      if (static_cast<uint8_t>(d[e]) != 0x85) continue;
      desc_off = *expansion_rom_off + Get(d, e + 2, 4);  // no break: the last FWSEC_PROD wins
      if (!in(*desc_off, 4)) return w;
      desc_size = Get(d, *desc_off, 4) >> 16;
    }
  }
  if (!desc_off || !in(*desc_off, 44)) return w;
  const uint64_t desc = *desc_off;
  const uint32_t stored = Get(d, desc + 4, 4), pkc = Get(d, desc + 8, 4), interface = Get(d, desc + 12, 4),
                 imem_load = Get(d, desc + 20, 4);
  if (desc_size < 44 + 0x180) return w;
  const uint64_t image = desc + desc_size;
  const uint64_t image_len = (uint64_t(stored) + 255) / 256 * 256;
  if (!in(image, image_len)) return w;
  const uint64_t app_hdr = image + imem_load + interface;
  if (!in(app_hdr, 4)) return w;
  const uint8_t count = static_cast<uint8_t>(d[app_hdr + 3]);
  uint64_t dmem_offset = 0;
  for (int i = 0; i < count; ++i) {
    const uint64_t e = app_hdr + 4 + uint64_t(i) * 8;  // sizeof(header), sizeof(entry): the sizes are not read
    if (!in(e, 8)) return w;
    if (Get(d, e, 4) == 4) dmem_offset = Get(d, e + 4, 4);  // the last DMEMMAPPER wins
  }
  const uint64_t mapper = image + imem_load + dmem_offset;
  if (!in(mapper, 64)) return w;
  w.dmemmapper = mapper;
  w.cmd_buffer = image + imem_load + Get(d, mapper + 8, 4);
  w.signature = desc + desc_size - 0x180;  // signature[-0x180:], the block being desc[44:size]
  (void)pkc;
  w.desc = desc;
  w.ucode = image;
  w.found = true;
  return w;
}

TEST(VbiosWalkersTest, NouveauWalkFindsFwsecWhereTheParserDoes) {
  const std::string rom = VirtualRom();
  const NouveauWalk w = Nouveau(rom).Walk(kVirtualAd102FwsecFuseRegister);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(w.desc, kProdDesc);
  EXPECT_EQ(w.ucode, kProdUcode);
  EXPECT_EQ(w.dmemmapper, kProdDmemMapper);
  EXPECT_EQ(w.cmd_buffer, kProdCmdBuffer);
  // Fuse register 1: version bit 1, the second of the two signatures.
  EXPECT_EQ(w.signature, kProdDesc + 44 + 384);
  absl::StatusOr<Vbios> v = ParseVbios("ad102.rom", rom);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(w.desc, v->fwsec->desc.offset);
  EXPECT_EQ(w.ucode, v->fwsec->desc.ucode_offset);
  EXPECT_EQ(w.dmemmapper, v->fwsec->dmem_mapper.offset);
  EXPECT_EQ(w.cmd_buffer, v->fwsec->dmem_mapper.cmd_in_buffer_file_offset);
  absl::StatusOr<uint32_t> index =
      FwsecSignatureIndex(v->fwsec->desc.signature_versions, kVirtualAd102FwsecFuseRegister);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(w.signature, v->fwsec->desc.signatures_offset + *index * kSignatureSize);
}

TEST(VbiosWalkersTest, TinygradWalkFindsFwsecWhereTheParserDoes) {
  const std::string rom = VirtualRom();
  const TinygradWalk w = WalkLikeTinygrad(rom);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(w.desc, kProdDesc);
  EXPECT_EQ(w.ucode, kProdUcode);
  EXPECT_EQ(w.dmemmapper, kProdDmemMapper);
  EXPECT_EQ(w.cmd_buffer, kProdCmdBuffer);
  EXPECT_EQ(w.signature, kProdDesc + 44 + 384);  // the last one, which the modelled fuse also selects
  absl::StatusOr<Vbios> v = ParseVbios("ad102.rom", rom);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(w.desc, v->fwsec->desc.offset);
  EXPECT_EQ(w.dmemmapper, v->fwsec->dmem_mapper.offset);
  EXPECT_EQ(w.cmd_buffer, v->fwsec->dmem_mapper.cmd_in_buffer_file_offset);
}

// Where the walks differ, shown on variants of the virtual image.
TEST(VbiosWalkersTest, OnlyNouveauFindsABitHeaderThatMoved) {
  std::string rom = VirtualRom();
  // Move the BIT header and its three tokens from 0x1b0 to 0x150 (both inside image 0's free space), then repair the
  // PC-AT checksum.
  const std::string bit = rom.substr(0x1b0, 12 + 3 * 6);
  rom.replace(0x1b0, bit.size(), std::string(bit.size(), '\0'));
  rom.replace(0x150, bit.size(), bit);
  EXPECT_TRUE(Nouveau(rom).Walk(kVirtualAd102FwsecFuseRegister).found);
  EXPECT_FALSE(WalkLikeTinygrad(rom).found);
  absl::StatusOr<Vbios> v = ParseVbios("moved-bit.rom", rom);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->bit.offset, 0x150u);
  bool noted = false;
  for (const std::string& n : v->notes) noted |= absl::StrContains(n, "not 0x1b0 where tinygrad reads it");
  EXPECT_TRUE(noted);
}

TEST(VbiosWalkersTest, TwoFwsecProdEntriesNouveauTakesTheFirstTinygradTheLast) {
  std::string rom = VirtualRom();
  // Turn the FWSEC_DBG entry (the table's first, at 0x6f66) into a second FWSEC_PROD. Its descriptor: 16-byte aligned
  // after PROD's descriptor and ucode, 0x3430 into the extension image (0x3c30).
  constexpr uint64_t kDbgDesc = kExt + 0x3430;
  ASSERT_EQ(static_cast<uint8_t>(rom[kExt + 0x6760 + 6]), 0x45);
  rom[kExt + 0x6760 + 6] = static_cast<char>(0x85);
  EXPECT_EQ(Nouveau(rom).Walk(kVirtualAd102FwsecFuseRegister).desc, kDbgDesc);
  EXPECT_EQ(WalkLikeTinygrad(rom).desc, kProdDesc);
  absl::StatusOr<Vbios> v = ParseVbios("two-prod.rom", rom);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->fwsec->desc.offset, kDbgDesc);  // the parser follows nouveau, and says so
  bool noted = false;
  for (const std::string& n : v->notes) noted |= absl::StrContains(n, "nouveau uses the first, tinygrad the last");
  EXPECT_TRUE(noted);
}

TEST(VbiosWalkersTest, APciOnlyWalkStopsBeforeTheExtensionImage) {
  const std::string rom = VirtualRom();
  // The PCI Firmware Specification's walk: PCIR length and last-image bit only.
  uint64_t off = 0;
  int images = 0;
  bool saw_extension = false;
  for (;;) {
    const uint64_t pcir = off + Get(rom, off + 0x18, 2);
    ++images;
    saw_extension |= static_cast<uint8_t>(rom[pcir + 0x14]) == 0xe0;
    if (static_cast<uint8_t>(rom[pcir + 0x15]) & 0x80) break;
    off += Get(rom, pcir + 0x10, 2) * 512ull;
  }
  EXPECT_EQ(images, 2);
  EXPECT_FALSE(saw_extension);
}

// ---- A real PCI expansion ROM: Debian's ipxe-qemu efi-e1000.rom (Intel 8086:100e; a PC-AT image then an EFI
// image). Expected values read with a Python one-liner over the file (PCIR at 0x1c, lengths 147 and 341 blocks). ----
TEST(VbiosTest, WalksARealOptionRom) {
  const char* path = "/usr/lib/ipxe/qemu/efi-e1000.rom";
  absl::StatusOr<std::string> data = base::ReadFile(path);
  if (!data.ok()) GTEST_SKIP() << path << " is absent (Debian package ipxe-qemu)";
  absl::StatusOr<std::vector<RomImage>> images = ParseRomImages(path, *data);
  ASSERT_TRUE(images.ok()) << images.status();
  ASSERT_EQ(images->size(), 2u);
  EXPECT_EQ((*images)[0].pcir_offset, 0x1cu);
  EXPECT_EQ((*images)[0].vendor_id, 0x8086);
  EXPECT_EQ((*images)[0].device_id, 0x100e);
  EXPECT_EQ((*images)[0].size, 75264u);
  EXPECT_EQ((*images)[0].code_type, 0x00);
  EXPECT_EQ((*images)[0].checksum_ok, true);
  EXPECT_FALSE((*images)[0].npde.has_value());
  EXPECT_EQ((*images)[1].offset, 0x12600u);
  EXPECT_EQ((*images)[1].size, 174592u);
  EXPECT_EQ((*images)[1].code_type, 0x03);
  EXPECT_TRUE((*images)[1].last);
  EXPECT_EQ((*images)[1].offset + (*images)[1].size, data->size());
  // Not a VBIOS: no BIT.
  absl::StatusOr<Vbios> v = ParseVbios(path, *data);
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(absl::StrContains(v.status().message(), "no BIT header")) << v.status();
}

TEST(VbiosTest, FindsTheRomAfterAPrefix) {
  // [BIT]: a .ROM file may carry data before the expansion ROM, which then starts on a 512-byte boundary.
  const std::string rom = std::string(1024, '\x11') + VirtualRom();
  absl::StatusOr<Vbios> v = ParseVbios("prefixed.rom", rom);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->rom_offset, 1024u);
  EXPECT_EQ(v->fwsec->desc.offset, 1024 + kProdDesc);
  EXPECT_EQ(v->fwsec->dmem_mapper.offset, 1024 + kProdDmemMapper);
}

// ---- Bad inputs: each fails with the error for what is wrong. ----
std::string ErrorOf(const std::string& rom) {
  absl::StatusOr<Vbios> v = ParseVbios("bad.rom", rom);
  return v.ok() ? std::string("(parsed)") : std::string(v.status().message());
}

// Where the virtual image puts each image's NPDE: image + 0x60 (its PCIR is at image + 0x40).
constexpr uint64_t kNpde = 0x60;

TEST(VbiosBadInputTest, Empty) { EXPECT_TRUE(absl::StrContains(ErrorOf(""), "no PCI expansion ROM")); }

TEST(VbiosBadInputTest, TruncatedInTheExtensionImage) {
  const std::string e = ErrorOf(VirtualRom().substr(0, 0x5000));
  EXPECT_TRUE(absl::StrContains(e,
                                "image 2 at 0x800: its NPDE subimage length (NPDE 0x08) says 0x6800 bytes, "
                                "running to 0x7000 past the end of the image (0x5000 bytes)"))
      << e;
}

TEST(VbiosBadInputTest, TruncatedInsideTheRomHeader) {
  const std::string e = ErrorOf(VirtualRom().substr(0, 0x10));
  EXPECT_TRUE(absl::StrContains(e, "image 0 at 0x0: the chain continues here")) << e;
}

TEST(VbiosBadInputTest, PcirPointerOutsideTheFile) {
  std::string rom = VirtualRom();
  Set(rom, 0x18, 2, 0xfff0);
  const std::string e = ErrorOf(rom);
  EXPECT_TRUE(absl::StrContains(e,
                                "image 0 at 0x0: the PCI data structure pointer 0xfff0 (ROM header 0x18) leads "
                                "to 0xfff0"))
      << e;
}

TEST(VbiosBadInputTest, PcirPointerToSomethingElse) {
  std::string rom = VirtualRom();
  Set(rom, kExt + 0x18, 2, 0x100);  // into the FWSEC descriptor
  const std::string e = ErrorOf(rom);
  EXPECT_TRUE(absl::StrContains(e, "image 2 at 0x800: the PCI data structure at 0x900 (pointer 0x100) has signature"))
      << e;
}

TEST(VbiosBadInputTest, ImageLengthZeroWouldLoop) {
  std::string rom = VirtualRom();
  Set(rom, 0x400 + kNpde + 0x08, 2, 0);  // the EFI image's NPDE subimage length
  const std::string e = ErrorOf(rom);
  EXPECT_TRUE(absl::StrContains(e, "image 1 at 0x400: its NPDE subimage length (NPDE 0x08) is 0")) << e;
  EXPECT_TRUE(absl::StrContains(e, "would loop")) << e;
}

TEST(VbiosBadInputTest, ImageLengthOverflowing) {
  std::string rom = VirtualRom();
  Set(rom, kNpde + 0x08, 2, 0xffff);  // 0xffff * 512 = 0x1fffe00
  const std::string e = ErrorOf(rom);
  EXPECT_TRUE(absl::StrContains(e, "image 0 at 0x0: its NPDE subimage length (NPDE 0x08) says 0x1fffe00 bytes")) << e;
}

TEST(VbiosBadInputTest, ChainWithoutALastImage) {
  std::string rom = VirtualRom();
  Set(rom, kExt + kNpde + 0x0a, 1, 0);  // the extension image's NPDE: not last
  const std::string e = ErrorOf(rom);
  EXPECT_TRUE(absl::StrContains(e, "image 3 at 0x7000: the chain continues here")) << e;
}

TEST(VbiosBadInputTest, ChainRunsIntoGarbage) {
  std::string rom = VirtualRom();
  Set(rom, 0x400 + kNpde + 0x08, 2, 1);  // EFI image 512 bytes: the next "image" starts inside it
  const std::string e = ErrorOf(rom);
  EXPECT_TRUE(absl::StrContains(e, "image 2 at 0x600: ROM signature 0x0000 is not 0xAA55")) << e;
}

TEST(VbiosBadInputTest, NoBitHeader) {
  std::string rom = VirtualRom();
  rom[0x1b0 + 2] = 'X';  // "XIT"
  EXPECT_TRUE(absl::StrContains(ErrorOf(rom), "no BIT header")) << ErrorOf(rom);
}

TEST(VbiosBadInputTest, BitTokenPointingPastTheEnd) {
  std::string rom = VirtualRom();
  Set(rom, 0x1b0 + 12 + 2 * 6 + 4, 2, 0xfff0);  // the third token ('p')'s data pointer
  const std::string e = ErrorOf(rom);
  // 0xfff0 is past image 0 (0x400), so it is rebased: 0xfff0 - 0x400 + 0x800 = 0x103f0.
  EXPECT_TRUE(absl::StrContains(e,
                                "BIT token 'p' (0x70) at 0x1c8: its data (pointer 0xfff0 -> 0x103f0, 0x4 bytes) "
                                "lies past the end of the image (0x7000 bytes)"))
      << e;
}

TEST(VbiosBadInputTest, UcodeTableEntryCountHuge) {
  std::string rom = VirtualRom();
  absl::StatusOr<Vbios> v = ParseVbios("ad102.rom", rom);
  ASSERT_TRUE(v.ok()) << v.status();
  const uint64_t table = v->ucode_table->offset;
  rom[table + 3] = static_cast<char>(0xff);
  const std::string e = ErrorOf(rom);
  EXPECT_TRUE(absl::StrContains(e, "255 entries of 6 bytes run to")) << e;
  EXPECT_TRUE(absl::StrContains(e, "the entry count (table byte 3) is corrupt")) << e;
}

TEST(VbiosBadInputTest, DescriptorSizeSmallerThanItsSignatures) {
  std::string rom = VirtualRom();
  // vDesc size 44 + 384: room for one signature while SignatureCount says 2.
  Set(rom, kProdDesc, 4, (44 + 384) << 16 | 3 << 8 | 1);
  const std::string e = ErrorOf(rom);
  EXPECT_TRUE(absl::StrContains(e,
                                "2 signatures of 384 bytes need 44 + 768 = 812 bytes, but the descriptor header "
                                "says 428"))
      << e;
}

TEST(VbiosBadInputTest, DescriptorSizeSmallerThanTheDescriptor) {
  std::string rom = VirtualRom();
  Set(rom, kProdDesc, 4, 40 << 16 | 3 << 8 | 1);
  const std::string e = ErrorOf(rom);
  EXPECT_TRUE(absl::StrContains(e, "its header says 40 bytes, smaller than the v3 descriptor (44 bytes)")) << e;
}

TEST(VbiosBadInputTest, DescriptorWithoutTheVersionFlag) {
  std::string rom = VirtualRom();
  Set(rom, kProdDesc, 1, 0);  // clears bit 0 of vDesc
  EXPECT_TRUE(absl::StrContains(ErrorOf(rom), "lacks the version-available flag")) << ErrorOf(rom);
}

TEST(VbiosBadInputTest, DescriptorVersionUnknown) {
  std::string rom = VirtualRom();
  Set(rom, kProdDesc + 1, 1, 4);
  EXPECT_TRUE(absl::StrContains(ErrorOf(rom), "descriptor version 4")) << ErrorOf(rom);
}

TEST(VbiosBadInputTest, SignatureCountDisagreesWithTheVersions) {
  std::string rom = VirtualRom();
  Set(rom, kProdDesc + 40, 2, 0x7);  // three fuse versions, two signatures
  EXPECT_TRUE(absl::StrContains(ErrorOf(rom), "SignatureCount 2 but SignatureVersions 0x0007")) << ErrorOf(rom);
}

TEST(VbiosBadInputTest, UcodePastTheEnd) {
  std::string rom = VirtualRom();
  Set(rom, kProdDesc + 20, 4, 0x100000);  // IMEMLoadSize 1 MiB
  EXPECT_TRUE(absl::StrContains(ErrorOf(rom), "FWSEC ucode (descriptor 0x900 + size 812; IMEMLoadSize 0x100000"))
      << ErrorOf(rom);
}

TEST(VbiosBadInputTest, SignatureSlotOutsideDmem) {
  std::string rom = VirtualRom();
  Set(rom, kProdDesc + 8, 4, 0x1000 - 100);  // PKCDataOffset near DMEM's end
  EXPECT_TRUE(absl::StrContains(ErrorOf(rom), "signature patch would land outside DMEM")) << ErrorOf(rom);
}

TEST(VbiosBadInputTest, InterfaceVersionWrong) {
  std::string rom = VirtualRom();
  rom[kProdDmem + 0x100] = 2;
  EXPECT_TRUE(absl::StrContains(ErrorOf(rom), "version 2; nouveau's fwsec.c accepts only version 1")) << ErrorOf(rom);
}

TEST(VbiosBadInputTest, NoDmemMapper) {
  std::string rom = VirtualRom();
  Set(rom, kProdDmem + 0x100 + 4, 4, 5);  // the one APPIF entry's id
  EXPECT_TRUE(absl::StrContains(ErrorOf(rom), "no DMEMMAPPER entry (id 4)")) << ErrorOf(rom);
}

TEST(VbiosBadInputTest, CommandBufferOutsideDmem) {
  std::string rom = VirtualRom();
  Set(rom, kProdDmemMapper + 8, 4, 0xff0);  // cmd_in_buffer_offset: 0xff0 + 0x100 > 0x1000
  EXPECT_TRUE(absl::StrContains(ErrorOf(rom), "command buffer 0xff0 + 0x100 runs past DMEM")) << ErrorOf(rom);
}

TEST(VbiosBadInputTest, SmallCommandBufferIsANote) {
  std::string rom = VirtualRom();
  Set(rom, kProdDmemMapper + 12, 4, 40);  // below the FRTS command's 44 bytes
  absl::StatusOr<Vbios> v = ParseVbios("small.rom", rom);
  ASSERT_TRUE(v.ok()) << v.status();
  bool noted = false;
  for (const std::string& n : v->notes) noted |= absl::StrContains(n, "smaller than the FRTS command (44)");
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace firmware::nv
