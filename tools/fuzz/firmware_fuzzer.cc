// libFuzzer target for the firmware parser, the virtual firmware validator and the real PSP image check: every input is
// parsed as each kind of file (the kind only decides which layouts apply), and every component the parser reports is
// read in full, so AddressSanitizer catches any range the parser let through that is not inside the input. Built and
// run by tools/fuzz.sh (clang-19 -fsanitize=fuzzer,address).
#include <cstddef>
#include <cstdint>

#include "firmware/container.h"
#include "firmware/psp_image.h"
#include "firmware/virtual_firmware.h"

namespace {

constexpr int kFileKinds = static_cast<int>(firmware::FileKind::kUmschMm) + 1;  // the last FileKind

volatile uint8_t sink;

void Touch(absl::string_view bytes) {
  uint8_t x = 0;
  for (char c : bytes) x ^= static_cast<uint8_t>(c);
  sink = x;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  for (int kind = 0; kind < kFileKinds; ++kind) {
    absl::StatusOr<firmware::Container> c =
        firmware::ParseContainer("fuzz.bin", input, {static_cast<firmware::FileKind>(kind), kind % 8});
    if (!c.ok()) continue;
    for (const firmware::Component& component : c->components) {
      // The parser promises every component lies inside the input.
      if (component.offset + component.size > size) __builtin_trap();
      Touch(absl::string_view(input.data() + component.offset, component.size));
    }
  }
  firmware::VirtualFirmwareVerdict verdict = firmware::ValidateVirtualFirmware(
      input, {"navi31", {11, 0, 0}, firmware::LoadPath::kIpFirmware, firmware::gfx_fw_type::kRs64Mec});
  sink = static_cast<uint8_t>(verdict.check);
  // The real image check, as the virtual PSP runs it on whatever the driver handed over.
  for (firmware::LoadPath load : {firmware::LoadPath::kIpFirmware, firmware::LoadPath::kToc}) {
    const uint32_t type =
        load == firmware::LoadPath::kToc ? firmware::psp_fw_type::kToc : firmware::gfx_fw_type::kRs64Mec;
    const firmware::RealImageVerdict real = firmware::ValidateRealImage(input, load, type);
    if (real.ok()) {
      // Accepted means the image, as its header sizes it, was entirely inside what was handed over.
      absl::StatusOr<firmware::PspImageHeader> header = firmware::ParsePspImageHeader("fuzz", input);
      if (!header.ok() || header->rom_size > size) __builtin_trap();
    }
  }
  return 0;
}
