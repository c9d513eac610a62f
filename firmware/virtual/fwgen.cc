// baregpu-fwgen ASIC OUTDIR: writes the virtual firmware files for an ASIC profile into OUTDIR (run by the build;
// see firmware/virtual/amdgpu/meson.build).
#include <cstdio>
#include <fstream>
#include <string>

#include "firmware/requirements.h"
#include "firmware/virtual_firmware.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: baregpu-fwgen ASIC OUTDIR\n");
    return 2;
  }
  auto profile = firmware::FindAsicProfile(argv[1]);
  if (!profile.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(profile.status().message()).c_str());
    return 1;
  }
  auto files = firmware::BuildVirtualFirmware(*profile);
  if (!files.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(files.status().message()).c_str());
    return 1;
  }
  for (const firmware::VirtualFirmwareFile& file : *files) {
    const std::string path = std::string(argv[2]) + "/" + file.name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(file.data.data(), static_cast<std::streamsize>(file.data.size()));
    if (!out.good()) {
      std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}
