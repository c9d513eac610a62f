// libFuzzer target for the NVIDIA firmware parsers (firmware/nv): every input is parsed as an nvfw_bin_hdr
// container, a booter, a bootloader, a GSP-RM ELF image and through DescribeNvFile as every kind, and every byte
// range a parser reports is read in full, so AddressSanitizer catches a range it let through outside the input.
// Built and run by tools/fuzz.sh nv_firmware (clang-19 -fsanitize=fuzzer,address,undefined).
#include <cstddef>
#include <cstdint>

#include "firmware/byte_reader.h"
#include "firmware/nv/bin_header.h"
#include "firmware/nv/file_kind.h"
#include "firmware/nv/gsp_elf.h"
#include "firmware/nv/hs_header.h"
#include "firmware/nv/riscv_desc.h"

namespace {

constexpr int kNvFileKinds = static_cast<int>(firmware::nv::NvFileKind::kUsbcFirmware) + 1;  // the last kind

volatile uint8_t sink;

void Touch(absl::string_view input, uint64_t offset, uint64_t size) {
  if (size == 0) return;  // an absent region (a descriptor's riscvElf) may carry any offset
  // The parsers promise every range lies inside the input.
  if (offset > input.size() || size > input.size() - offset) __builtin_trap();
  uint8_t x = 0;
  for (char c : input.substr(offset, size)) x ^= static_cast<uint8_t>(c);
  sink = x;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  if (absl::StatusOr<firmware::nv::BinFile> bin = firmware::nv::ParseBinFile(firmware::ByteReader("f", input));
      bin.ok()) {
    Touch(input, bin->header.data_offset, bin->header.data_size);
  }
  if (absl::StatusOr<firmware::nv::Booter> b = firmware::nv::ParseBooter("f", input); b.ok()) {
    const uint64_t base = b->bin.header.data_offset;
    Touch(input, uint64_t{b->hs.sig_prod_offset} + b->patch_sig, b->hs.sig_prod_size);
    Touch(input, base + b->load.os_code_offset, b->load.os_code_size);
    Touch(input, base + b->load.os_data_offset, b->load.os_data_size);
    Touch(input, base + b->patch_loc, b->sig_size);
    for (const firmware::nv::HsApp& app : b->load.apps) Touch(input, base + app.offset, app.size);
  }
  if (absl::StatusOr<firmware::nv::Bootloader> b = firmware::nv::ParseBootloader("f", input); b.ok()) {
    const uint64_t base = b->bin.header.data_offset;
    Touch(input, base + b->desc.monitor_code_offset, b->desc.monitor_code_size);
    Touch(input, base + b->desc.monitor_data_offset, b->desc.monitor_data_size);
    Touch(input, base + b->desc.manifest_offset, b->desc.manifest_size);
    Touch(input, base + b->desc.bootloader_offset, b->desc.bootloader_size);
  }
  if (absl::StatusOr<firmware::nv::GspImage> g = firmware::nv::ParseGspImage("f", input); g.ok()) {
    for (const firmware::nv::ElfSection& s : g->sections) {
      if (s.type != firmware::nv::kShtNobits) Touch(input, s.offset, s.size);
    }
  }
  for (int kind = 0; kind < kNvFileKinds; ++kind) {
    absl::StatusOr<firmware::nv::NvFileInfo> info = firmware::nv::DescribeNvFile(
        "nvidia/ad102/gsp/gsp-535.113.01.bin", input, static_cast<firmware::nv::NvFileKind>(kind));
    if (!info.ok()) continue;
    for (const firmware::nv::NvRegion& r : info->regions) Touch(input, r.offset, r.size);
  }
  sink = firmware::nv::DetectNvFile("nvidia/gp102/acr/ucode_load.bin", input).has_value();
  return 0;
}
