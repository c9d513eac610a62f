// libFuzzer target for the NVIDIA VBIOS parser (firmware/nv/vbios.h): every input is walked as a PCI expansion ROM and
// parsed as a VBIOS, and every region the parser reports (images, BIT token data, the FWSEC descriptor, signatures,
// ucode, APPIF, DMEMMAPPER, command buffer) is read in full, so AddressSanitizer catches any range it let through that
// is not inside the input; a range outside it traps. Built and run by `tools/fuzz.sh vbios`.
//
// Built with -DBAREGPU_VBIOS_SEEDGEN instead, it is the seed generator: `vbios_seedgen DIR` writes the virtual AD102
// VBIOS and mutated variants of it (tools/fuzz.sh vbios seeds).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "firmware/nv/vbios.h"
#include "firmware/nv/virtual_vbios.h"

#ifndef BAREGPU_VBIOS_SEEDGEN

namespace {

volatile uint8_t sink;

void Touch(absl::string_view input, uint64_t offset, uint64_t size) {
  if (offset > input.size() || size > input.size() - offset) __builtin_trap();
  uint8_t x = 0;
  for (char c : input.substr(offset, size)) x ^= static_cast<uint8_t>(c);
  sink = x;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  sink = firmware::nv::LooksLikeRom(input);
  absl::StatusOr<firmware::nv::Vbios> v = firmware::nv::ParseVbios("fuzz.rom", input);
  if (!v.ok()) {
    absl::StatusOr<std::vector<firmware::nv::RomImage>> images = firmware::nv::ParseRomImages("fuzz.rom", input);
    if (images.ok()) {
      for (const firmware::nv::RomImage& image : *images) Touch(input, image.offset, image.size);
    }
    return 0;
  }
  for (const firmware::nv::RomImage& image : v->images) {
    Touch(input, image.offset, image.size);
    Touch(input, image.pcir_offset, firmware::nv::kPcirMinSize);
    if (image.npde) Touch(input, image.npde->offset, firmware::nv::kNpdeMinSize);
  }
  Touch(input, v->bit.offset, firmware::nv::kBitHeaderSize);
  for (const firmware::nv::BitToken& t : v->tokens) {
    Touch(input, t.offset, firmware::nv::kBitTokenSize);
    if (t.id == firmware::nv::kBitTokenFalconData && t.data_offset) Touch(input, *t.data_offset, t.data_size);
  }
  if (v->ucode_table) {
    for (const firmware::nv::UcodeEntry& e : v->ucode_table->entries) Touch(input, e.offset, 6);
  }
  if (v->fwsec) {
    const firmware::nv::Fwsec& f = *v->fwsec;
    Touch(input, f.desc.offset, f.desc.size);
    Touch(input, f.desc.ucode_offset, f.desc.ucode_size);
    if (f.desc.version == 3) {
      Touch(input, f.desc.signatures_offset, uint64_t{f.desc.signature_count} * firmware::nv::kSignatureSize);
      Touch(input, f.desc.ucode_offset + f.desc.dmem_image_offset + f.desc.pkc_data_offset,
            firmware::nv::kSignatureSize);
      absl::StatusOr<uint32_t> index = firmware::nv::FwsecSignatureIndex(f.desc.signature_versions, size);
      if (index.ok() && *index >= f.desc.signature_count) __builtin_trap();
    }
    Touch(input, f.appif.offset, f.appif.header_size);
    Touch(input, f.dmem_mapper.offset, firmware::nv::kDmemMapperSize);
    Touch(input, f.dmem_mapper.cmd_in_buffer_file_offset, f.dmem_mapper.cmd_in_buffer_size);
    // The virtual GPU's check on what a driver would load from this FWSEC (unpatched: it must say why it rejects).
    const absl::string_view imem = input.substr(f.desc.ucode_offset, f.desc.imem_load_size);
    const absl::string_view dmem = input.substr(f.desc.ucode_offset + f.desc.dmem_image_offset, f.desc.dmem_load_size);
    absl::StatusOr<firmware::nv::VirtualFwsecRun> run = firmware::nv::CheckVirtualFwsec(
        "ad102", imem, dmem, f.desc.pkc_data_offset, f.desc.interface_offset, f.desc.signature_versions & 0xf);
    if (run.ok() && run->command.size() > dmem.size()) __builtin_trap();
  }
  // The same check on arbitrary bytes, as a driver could hand the virtual GPU anything: the first 8 bytes are the
  // PKC and interface offsets, the rest is IMEM (as long as the identity header's imem_size says, when it is there)
  // then DMEM. The fuse version is the low 4 bits of the first byte.
  if (size >= 8) {
    auto le32 = [&](size_t at) {
      return data[at] | data[at + 1] << 8 | data[at + 2] << 16 | static_cast<uint32_t>(data[at + 3]) << 24;
    };
    const absl::string_view rest = input.substr(8);
    const size_t split = rest.size() >= 32 ? std::min<size_t>(rest.size(), le32(8 + 20)) : rest.size() / 2;
    absl::StatusOr<firmware::nv::VirtualFwsecRun> run = firmware::nv::CheckVirtualFwsec(
        "ad102", rest.substr(0, split), rest.substr(split), le32(0), le32(4), data[0] & 0xf);
    sink = run.ok();
  }
  return 0;
}

#else  // BAREGPU_VBIOS_SEEDGEN

#include <cstdio>
#include <fstream>

namespace {

void Put(std::string& d, size_t at, int bytes, uint32_t v) {
  for (int i = 0; i < bytes && at + i < d.size(); ++i) d[at + i] = static_cast<char>(v >> (8 * i));
}

bool Write(const std::string& dir, const std::string& name, const std::string& data) {
  std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return out.good();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: vbios_seedgen DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  absl::StatusOr<std::string> rom = firmware::nv::BuildVirtualVbios("ad102");
  absl::StatusOr<std::string> v2 = firmware::nv::BuildVirtualVbios("ad102", {.desc_version = 2});
  if (!rom.ok() || !v2.ok()) return 1;
  absl::StatusOr<firmware::nv::Vbios> parsed = firmware::nv::ParseVbios("seed", *rom);
  if (!parsed.ok() || !parsed->fwsec) return 1;
  const firmware::nv::Fwsec& f = *parsed->fwsec;
  bool ok = Write(dir, "virtual_ad102.rom", *rom) && Write(dir, "virtual_ad102_desc_v2.rom", *v2);
  ok &= Write(dir, "virtual_ad102_prefixed.rom", std::string(1024, '\x5a') + *rom);
  // Mutated variants near each check, so the fuzzer starts beside the interesting branches.
  struct Mutation {
    const char* name;
    uint64_t at;
    int bytes;
    uint32_t value;
  };
  const Mutation mutations[] = {
      {"npde_zero_length", 0x400 + 0x60 + 0x08, 2, 0},
      {"pcir_pointer_far", 0x18, 2, 0xfff0},
      {"ext_not_last", parsed->images.back().offset + 0x60 + 0x0a, 1, 0},
      {"bit_token_far", parsed->tokens.back().offset + 4, 2, 0xfff0},
      {"ucode_table_count", parsed->ucode_table->offset + 3, 1, 0xff},
      {"desc_size_small", f.desc.offset, 4, (44 + 384) << 16 | 3 << 8 | 1},
      {"appif_version", f.appif.offset, 1, 2},
      {"dmemmapper_cmd_far", f.dmem_mapper.offset + 8, 4, 0xff0},
      {"signature_versions", f.desc.offset + 40, 2, 0x7},
  };
  for (const Mutation& m : mutations) {
    std::string variant = *rom;
    Put(variant, m.at, m.bytes, m.value);
    ok &= Write(dir, std::string("virtual_ad102_") + m.name + ".rom", variant);
  }
  ok &= Write(dir, "virtual_ad102_truncated.rom", rom->substr(0, rom->size() / 2));
  // A loaded FWSEC as the driver patches it (init_cmd FRTS, signature for fuse version 0 = the first byte's low bits),
  // in the layout the fuzzer's second path reads: PKC offset, interface offset, IMEM, DMEM.
  std::string dmem = rom->substr(f.desc.ucode_offset + f.desc.dmem_image_offset, f.desc.dmem_load_size);
  Put(dmem, f.dmem_mapper.dmem_offset + firmware::nv::kDmemMapperInitCmdOffset, 4, firmware::nv::kDmemMapperCmdFrts);
  dmem.replace(f.desc.pkc_data_offset, firmware::nv::kSignatureSize,
               rom->substr(f.desc.signatures_offset, firmware::nv::kSignatureSize));
  std::string loaded(8, '\0');
  Put(loaded, 0, 4, f.desc.pkc_data_offset);
  Put(loaded, 4, 4, f.desc.interface_offset);
  loaded += rom->substr(f.desc.ucode_offset, f.desc.imem_load_size) + dmem;
  ok &= Write(dir, "virtual_fwsec_loaded.bin", loaded);
  return ok ? 0 : 1;
}

#endif  // BAREGPU_VBIOS_SEEDGEN
