#include "nv/sim/booter_firmware.h"

#include <chrono>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/mutex.h"
#include "base/printable.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "firmware/nv/gsp_elf.h"
#include "firmware/nv/requirements.h"
#include "firmware/store.h"

namespace nv::sim {
namespace {

namespace fw = firmware::nv;

// sha256sum of the files Debian's firmware-nvidia-graphics 20250410-2~bpo12+1 unpacks (tools/fetch_firmware.sh), as
// read on 2026-12-05 (nvidia/CHIP/gsp/NAME-535.113.01.bin; ad102's gsp-*.bin is a link to ga102's, hence one hash).
// The decompressed content is hashed, so a .zst or .xz of the same file matches too.
struct Pin {
  const char* chip;
  const char* file;
  const char* sha256;
};
constexpr Pin kPins[] = {
    {"ad102", "booter_load", "7d4ef3258da016f5208cfb1b348a9a1d69aaa13c2f8d4ee8c05d66bd05b45cd6"},
    {"ad102", "booter_unload", "d036dfee0545c36e2194bc555cb268a5e11a6f13b5f66a7dec40838efc6ad87e"},
    {"ad102", "bootloader", "044d3a21eff73eb12f22840e5f145d685727f40165b3f2d265cf664753e9ff9c"},
    {"ad102", "gsp", "e30231ec0d317021770e16c81ae2c0553f728d0344248827582f78132c9447d4"},
    {"ga102", "booter_load", "3ab46bf4c70d72e8fc89d98e6bdc9b83a61954a586629d26b8b5653a620237e0"},
    {"ga102", "booter_unload", "09240c83595856a0fe70d2ab3ec7325455cd8adfc48ec7b47f6fced1e5431beb"},
    {"ga102", "bootloader", "076d2a0675131ad8a8de215c611ce4271289adcc03e2cf39995f9b29079e2136"},
    {"ga102", "gsp", "e30231ec0d317021770e16c81ae2c0553f728d0344248827582f78132c9447d4"},
};

struct ReadFile {
  std::string path;
  std::string data;
  std::string sha256;
};

// Locates `relative` under the roots, reads (decompressing by suffix) and checks it against its pin.
absl::StatusOr<ReadFile> ReadPinned(const std::vector<std::string>& roots, absl::string_view chip,
                                    absl::string_view file, absl::string_view relative) {
  const firmware::Location location = fw::Locate(roots, relative);
  if (!location.path) {
    return absl::NotFoundError(absl::StrFormat("%s's %s (%s) is in no firmware root; tried: %s", chip, file, relative,
                                               base::Printable(absl::StrJoin(location.tried, ", "))));
  }
  ReadFile out;
  out.path = *location.path;
  BAREGPU_ASSIGN_OR_RETURN(out.data, firmware::ReadFirmwareFile(out.path));
  out.sha256 = base::Sha256::HexHash(out.data);
  const absl::string_view pinned = PinnedSha256(chip, file);
  if (out.sha256 != pinned) {
    return absl::DataLossError(
        absl::StrFormat("%s: sha256 %s is not GSP-RM %s's %s %s (%s): the virtual booter knows that release only",
                        base::Printable(out.path), out.sha256, fw::kGspRmVersion, chip, file, pinned));
  }
  return out;
}

absl::StatusOr<std::string> Slice(const std::string& bytes, uint64_t offset, uint64_t size, absl::string_view what,
                                  absl::string_view path) {
  if (offset > bytes.size() || size > bytes.size() - offset) {
    return absl::DataLossError(absl::StrFormat("%s: %s [0x%x, +0x%x) is outside its 0x%x bytes", base::Printable(path),
                                               what, offset, size, bytes.size()));
  }
  return bytes.substr(offset, size);
}

absl::StatusOr<BooterUcodeFile> ParseUcode(ReadFile file) {
  BooterUcodeFile u;
  u.path = std::move(file.path);
  u.sha256 = std::move(file.sha256);
  BAREGPU_ASSIGN_OR_RETURN(u.header, fw::ParseBooter(u.path, file.data));
  const fw::Booter& b = u.header;
  BAREGPU_ASSIGN_OR_RETURN(const std::string payload,
                           Slice(file.data, b.bin.header.data_offset, b.bin.header.data_size, "the payload", u.path));
  if (b.load.apps.empty()) return absl::DataLossError(absl::StrCat(base::Printable(u.path), ": no app"));
  BAREGPU_ASSIGN_OR_RETURN(u.code, Slice(payload, b.load.apps[0].offset, b.load.apps[0].size, "app[0] (IMEM)", u.path));
  BAREGPU_ASSIGN_OR_RETURN(u.data,
                           Slice(payload, b.load.os_data_offset, b.load.os_data_size, "the OS data (DMEM)", u.path));
  if (b.patch_loc < b.load.os_data_offset) {
    return absl::DataLossError(absl::StrCat(base::Printable(u.path), ": patch location before the OS data"));
  }
  u.signature_offset = b.patch_loc - b.load.os_data_offset;
  // nvkm_falcon_fw_sign: num_sig signatures of sig_size bytes from sig_prod_offset + *patch_sig.
  for (uint32_t i = 0; i < b.num_sig; ++i) {
    BAREGPU_ASSIGN_OR_RETURN(std::string sig,
                             Slice(file.data, uint64_t{b.hs.sig_prod_offset} + b.patch_sig + uint64_t{i} * b.sig_size,
                                   b.sig_size, absl::StrFormat("signature %d", i), u.path));
    u.signatures.push_back(std::move(sig));
  }
  return u;
}

absl::StatusOr<std::shared_ptr<const BooterFirmware>> Load(absl::string_view chip,
                                                           const std::vector<std::string>& roots) {
  const auto start = std::chrono::steady_clock::now();
  BAREGPU_ASSIGN_OR_RETURN(const fw::ChipProfile profile, fw::FindChipProfile(chip));
  auto out = std::make_shared<BooterFirmware>();
  out->chip = std::string(chip);
  for (const fw::RequiredFile& required : fw::RequiredFiles(profile)) {
    absl::string_view file;
    switch (required.kind) {
      case fw::NvFileKind::kBooterLoad:
        file = "booter_load";
        break;
      case fw::NvFileKind::kBooterUnload:
        file = "booter_unload";
        break;
      case fw::NvFileKind::kBootloader:
        file = "bootloader";
        break;
      case fw::NvFileKind::kGspRm:
        file = "gsp";
        break;
      default:
        return absl::InternalError(absl::StrCat("unexpected required file ", required.name));
    }
    if (PinnedSha256(chip, file).empty()) {
      return absl::NotFoundError(absl::StrFormat("the virtual booter knows no %s for %s", file, chip));
    }
    BAREGPU_ASSIGN_OR_RETURN(ReadFile read, ReadPinned(roots, chip, file, required.relative_path));
    switch (required.kind) {
      case fw::NvFileKind::kBooterLoad: {
        BAREGPU_ASSIGN_OR_RETURN(out->load, ParseUcode(std::move(read)));
        break;
      }
      case fw::NvFileKind::kBooterUnload: {
        BAREGPU_ASSIGN_OR_RETURN(out->unload, ParseUcode(std::move(read)));
        break;
      }
      case fw::NvFileKind::kBootloader: {
        BAREGPU_ASSIGN_OR_RETURN(const fw::Bootloader bl, fw::ParseBootloader(read.path, read.data));
        BAREGPU_ASSIGN_OR_RETURN(out->bootloader, Slice(read.data, bl.bin.header.data_offset, bl.bin.header.data_size,
                                                        "the payload", read.path));
        out->bootloader_desc = bl.desc;
        out->bootloader_path = std::move(read.path);
        out->bootloader_sha256 = std::move(read.sha256);
        break;
      }
      default: {  // kGspRm
        BAREGPU_ASSIGN_OR_RETURN(const fw::GspImage image, fw::ParseGspImage(read.path, read.data));
        const fw::ElfSection* fwimage = image.Find(fw::kFwImageSection);
        const fw::ElfSection* signature = image.Find(profile.signature_section);
        if (fwimage == nullptr || signature == nullptr) {
          return absl::DataLossError(absl::StrFormat("%s: no %s or %s section", base::Printable(read.path),
                                                     fw::kFwImageSection, profile.signature_section));
        }
        BAREGPU_ASSIGN_OR_RETURN(out->fwimage,
                                 Slice(read.data, fwimage->offset, fwimage->size, fwimage->name, read.path));
        BAREGPU_ASSIGN_OR_RETURN(out->signature,
                                 Slice(read.data, signature->offset, signature->size, signature->name, read.path));
        out->signature_section = profile.signature_section;
        out->gsp_path = std::move(read.path);
        out->gsp_sha256 = std::move(read.sha256);
        break;
      }
    }
  }
  out->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::shared_ptr<const BooterFirmware>(std::move(out));
}

}  // namespace

absl::string_view PinnedSha256(absl::string_view chip, absl::string_view file) {
  for (const Pin& pin : kPins) {
    if (chip == pin.chip && file == pin.file) return pin.sha256;
  }
  return "";
}

absl::StatusOr<std::shared_ptr<const BooterFirmware>> LoadBooterFirmware(absl::string_view chip,
                                                                         const std::vector<std::string>& roots) {
  // One entry per chip and search path: the files a root holds do not change while a process runs (a test that
  // builds its own root uses a fresh directory). Loading happens under the lock, so two models created at once
  // read the 38 MiB once.
  static base::Mutex mu;
  static auto* cache = new std::map<std::string, std::shared_ptr<const BooterFirmware>>();  // never freed: a cache
  const std::string key = absl::StrCat(chip, "\n", absl::StrJoin(roots, "\n"));
  base::MutexLock lock(&mu);
  auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  BAREGPU_ASSIGN_OR_RETURN(std::shared_ptr<const BooterFirmware> loaded, Load(chip, roots));
  cache->emplace(key, loaded);
  return loaded;
}

}  // namespace nv::sim
