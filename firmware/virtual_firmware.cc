#include "firmware/virtual_firmware.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "firmware/layout.h"

namespace firmware {
namespace {

constexpr uint32_t kChecksumOffset = 64;
constexpr uint32_t kUcodeArrayOffset = 256;  // sizeof(union amdgpu_firmware_header), as real files place it
constexpr uint32_t kAlign = 256;
constexpr uint32_t kVirtualUcodeVersion = 1;

void PutU32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}
void PutU16(std::string& s, size_t at, uint16_t v) {
  s[at] = static_cast<char>(v);
  s[at + 1] = static_cast<char>(v >> 8);
}
uint32_t GetU32(absl::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}

std::string PayloadChecksum(absl::string_view payload) {
  base::Sha256 sha;
  sha.Update(payload.substr(0, kChecksumOffset));
  sha.Update(std::string(32, '\0'));
  sha.Update(payload.substr(kChecksumOffset + 32));
  const base::Sha256::Digest digest = sha.Finish();
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

std::string TypesText(LoadPath load, const std::vector<uint32_t>& types) {
  std::vector<std::string> names;
  for (uint32_t t : types) names.push_back(absl::StrFormat("%s (%d)", TypeName(load, t), t));
  return absl::StrJoin(names, ", ");
}

// Lays out one container: the common header and the family header's fields (in the parser's own field order,
// so writer and parser cannot drift apart), a raw table after them, and 256-byte aligned images from offset 256.
class ContainerWriter {
 public:
  static absl::StatusOr<ContainerWriter> For(const RequiredFile& file) {
    for (const layout::Layout& l : layout::AllLayouts()) {
      bool kind_ok = l.kinds.empty() && l.family == FamilyOf(file.role.kind);
      for (FileKind k : l.kinds) kind_ok |= k == file.role.kind;
      if (kind_ok && l.major == file.header_major && (l.minor < 0 || l.minor == file.header_minor)) {
        return ContainerWriter(file, l);
      }
    }
    return absl::InternalError(
        absl::StrFormat("no layout %d.%d for %s", file.header_major, file.header_minor, file.name));
  }

  void Set(const std::string& field, uint32_t value) { values_[field] = value; }
  void SetTable(std::string table) { table_ = std::move(table); }
  // Appends an image; returns its offset from the start of the file.
  uint32_t Append(absl::string_view image) {
    const uint32_t offset = kUcodeArrayOffset + static_cast<uint32_t>(body_.size());
    body_.append(image.data(), image.size());
    body_.resize((body_.size() + kAlign - 1) / kAlign * kAlign, '\0');
    return offset;
  }
  uint32_t body_size() const { return static_cast<uint32_t>(body_.size()); }
  // Where SetTable's table lands: right after the family header's fields.
  uint32_t table_offset() const { return kCommonHeaderSize + 4 * static_cast<uint32_t>(layout_.fields.size()); }

  absl::StatusOr<std::string> Finish(uint32_t ucode_size) const {
    const uint32_t header_size =
        kCommonHeaderSize + 4 * static_cast<uint32_t>(layout_.fields.size()) + static_cast<uint32_t>(table_.size());
    if (header_size > kUcodeArrayOffset) return absl::InternalError(file_.name + ": header overflows 256 bytes");
    for (const auto& [name, value] : values_) {
      if (std::find(layout_.fields.begin(), layout_.fields.end(), name) == layout_.fields.end()) {
        return absl::InternalError(absl::StrCat(file_.name, ": ", layout_.struct_name, " has no field ", name));
      }
    }
    std::string out(kUcodeArrayOffset, '\0');
    out += body_;
    PutU32(out, 0, static_cast<uint32_t>(out.size()));
    PutU32(out, 4, header_size);
    PutU16(out, 8, file_.header_major);
    PutU16(out, 10, file_.header_minor);
    PutU16(out, 12, static_cast<uint16_t>(file_.ip.major));
    PutU16(out, 14, static_cast<uint16_t>(file_.ip.minor));
    PutU32(out, 16, kVirtualUcodeVersion);
    PutU32(out, 20, ucode_size);
    PutU32(out, 24, kUcodeArrayOffset);
    for (size_t i = 0; i < layout_.fields.size(); ++i) {
      auto it = values_.find(layout_.fields[i]);
      PutU32(out, kCommonHeaderSize + 4 * i, it == values_.end() ? 0 : it->second);
    }
    out.replace(kCommonHeaderSize + 4 * layout_.fields.size(), table_.size(), table_);
    return out;
  }

 private:
  ContainerWriter(const RequiredFile& file, const layout::Layout& l) : file_(file), layout_(l) {}
  RequiredFile file_;
  layout::Layout layout_;
  std::map<std::string, uint32_t> values_;
  std::string table_;
  std::string body_;
};

// Payload sizes: small, 256-byte multiples (the IMU data image must directly follow the instruction image).
constexpr uint32_t kCodeSize = 8192;
constexpr uint32_t kDataSize = 2048;
// amdgpu_ucode.h struct smc_soft_pptable_entry: id, ppt_offset_bytes, ppt_size_bytes.
constexpr uint32_t kPptableEntryBytes = 12;
constexpr uint32_t kVirtualPptableId = 0;

absl::StatusOr<std::string> BuildFile(const AsicProfile& profile, const RequiredFile& file) {
  BAREGPU_ASSIGN_OR_RETURN(ContainerWriter w, ContainerWriter::For(file));
  auto payload = [&](LoadPath load, std::vector<uint32_t> types, uint32_t size) {
    return BuildVirtualPayload({profile.name, file.ip, load, std::move(types), size});
  };
  auto ip_types = [&](size_t from, size_t to) {
    std::vector<uint32_t> types;
    for (size_t i = from; i < to && i < file.provides.size(); ++i) types.push_back(file.provides[i].type);
    return types;
  };
  switch (file.role.kind) {
    case FileKind::kSos:
    case FileKind::kTa: {
      // Typed descriptors (psp_fw_bin_desc): type, version, offset from the ucode array, size.
      std::string table(4 * file.provides.size() * 4, '\0');
      for (size_t i = 0; i < file.provides.size(); ++i) {
        const ProvidedType& p = file.provides[i];
        const std::string image = payload(p.load, {p.type}, 4096);
        const uint32_t at = w.Append(image);
        // The descriptor names the component in psp_fw_type numbering; the register list is loaded as
        // GFX_FW_TYPE_REG_LIST but described as PSP_FW_TYPE_PSP_RL.
        const bool register_list = p.load == LoadPath::kIpFirmware && p.type == gfx_fw_type::kRegList;
        PutU32(table, 16 * i, register_list ? psp_fw_type::kRl : p.type);
        PutU32(table, 16 * i + 4, kVirtualUcodeVersion);
        PutU32(table, 16 * i + 8, at - kUcodeArrayOffset);
        PutU32(table, 16 * i + 12, static_cast<uint32_t>(image.size()));
      }
      w.Set(file.role.kind == FileKind::kSos ? "psp_fw_bin_count" : "ta_fw_bin_count",
            static_cast<uint32_t>(file.provides.size()));
      w.SetTable(std::move(table));
      return w.Finish(w.body_size());
    }
    case FileKind::kToc:
      w.Set("sos.fw_version", kVirtualUcodeVersion);
      w.Append(payload(LoadPath::kToc, {psp_fw_type::kToc}, kDataSize));
      return w.Finish(kDataSize);
    case FileKind::kSmc: {
      // smc_firmware_header_v2_1: the PMFW, then one soft power-play table (smc_soft_pptable_entry: id, offset,
      // size) as the real file carries several. Only a driver reads the tables (none does on 13.0.0), so the
      // virtual one is zeros; its id is not the P2S table's, which the PSP would load.
      w.Append(payload(LoadPath::kIpFirmware, ip_types(0, 1), kCodeSize));
      const uint32_t pptable = w.Append(std::string(kDataSize, '\0'));
      std::string entries(kPptableEntryBytes, '\0');
      PutU32(entries, 0, kVirtualPptableId);
      PutU32(entries, 4, pptable);
      PutU32(entries, 8, kDataSize);
      w.Set("pptable_count", 1);
      w.Set("pptable_entry_offset", w.table_offset());
      w.SetTable(std::move(entries));
      return w.Finish(kCodeSize);
    }
    case FileKind::kSdma: {
      w.Append(payload(LoadPath::kIpFirmware, ip_types(0, 1), kCodeSize));
      const uint32_t ctl = w.Append(payload(LoadPath::kIpFirmware, ip_types(1, 2), kCodeSize));
      w.Set("ucode_feature_version", kVirtualUcodeVersion);
      w.Set("ctx_ucode_size_bytes", kCodeSize);
      w.Set("ctl_ucode_offset", ctl);
      w.Set("ctl_ucode_size_bytes", kCodeSize);
      return w.Finish(w.body_size());
    }
    case FileKind::kPfp:
    case FileKind::kMe:
    case FileKind::kMec: {
      w.Append(payload(LoadPath::kIpFirmware, ip_types(0, 1), kCodeSize));
      const uint32_t stack = w.Append(payload(LoadPath::kIpFirmware, ip_types(1, file.provides.size()), kDataSize));
      w.Set("ucode_feature_version", kVirtualUcodeVersion);
      w.Set("ucode_size_bytes", kCodeSize);
      w.Set("ucode_offset_bytes", kUcodeArrayOffset);
      w.Set("data_size_bytes", kDataSize);
      w.Set("data_offset_bytes", stack);
      // A recognisable, engine-specific start address the virtual CP can check the driver programs.
      w.Set("ucode_start_addr_lo", static_cast<uint32_t>(VirtualUcodeStartAddress(file.role.kind)));
      w.Set("ucode_start_addr_hi", static_cast<uint32_t>(VirtualUcodeStartAddress(file.role.kind) >> 32));
      return w.Finish(kCodeSize);
    }
    case FileKind::kRlc: {
      // RLC_G is the ucode array; the others are placed by their offset/size fields.
      static const std::map<uint32_t, std::string> kFieldPrefix = {
          {gfx_fw_type::kRlcRestoreListSrmCntl, "save_restore_list_cntl"},
          {gfx_fw_type::kRlcRestoreListGpmMem, "save_restore_list_gpm"},
          {gfx_fw_type::kRlcRestoreListSrmMem, "save_restore_list_srm"},
          {gfx_fw_type::kRlcIram, "rlc_iram_ucode"},
          {gfx_fw_type::kRlcDramBoot, "rlc_dram_ucode"},
          {gfx_fw_type::kRlcP, "rlcp_ucode"},
          {gfx_fw_type::kRlcV, "rlcv_ucode"}};
      w.Append(payload(LoadPath::kIpFirmware, {gfx_fw_type::kRlcG}, kCodeSize));
      w.Set("ucode_feature_version", kVirtualUcodeVersion);
      for (const ProvidedType& p : file.provides) {
        auto it = kFieldPrefix.find(p.type);
        if (it == kFieldPrefix.end()) continue;
        const uint32_t at = w.Append(payload(LoadPath::kIpFirmware, {p.type}, kDataSize));
        w.Set(it->second + "_offset_bytes", at);
        w.Set(it->second + "_size_bytes", kDataSize);
      }
      w.Set("rlcp_ucode_version", kVirtualUcodeVersion);
      w.Set("rlcv_ucode_version", kVirtualUcodeVersion);
      return w.Finish(kCodeSize);
    }
    case FileKind::kImu: {
      const uint32_t iram = w.Append(payload(LoadPath::kIpFirmware, ip_types(0, 1), kCodeSize));
      const uint32_t dram = w.Append(payload(LoadPath::kIpFirmware, ip_types(1, 2), kDataSize));
      if (dram != iram + kCodeSize) return absl::InternalError("IMU data image must follow the instruction image");
      w.Set("imu_iram_ucode_size_bytes", kCodeSize);
      w.Set("imu_iram_ucode_offset_bytes", iram);
      w.Set("imu_dram_ucode_size_bytes", kDataSize);
      w.Set("imu_dram_ucode_offset_bytes", dram);
      return w.Finish(w.body_size());
    }
    case FileKind::kMes:
    case FileKind::kMesKiq: {
      const uint32_t code = w.Append(payload(LoadPath::kIpFirmware, ip_types(0, 1), kCodeSize));
      const uint32_t data = w.Append(payload(LoadPath::kIpFirmware, ip_types(1, 2), kDataSize));
      w.Set("mes_ucode_version", kVirtualUcodeVersion);
      w.Set("mes_ucode_size_bytes", kCodeSize);
      w.Set("mes_ucode_offset_bytes", code);
      w.Set("mes_ucode_data_version", kVirtualUcodeVersion);
      w.Set("mes_ucode_data_size_bytes", kDataSize);
      w.Set("mes_ucode_data_offset_bytes", data);
      return w.Finish(w.body_size());
    }
    default:
      return absl::UnimplementedError(absl::StrCat("no virtual firmware builder for ", file.name));
  }
}

}  // namespace

std::string BuildVirtualPayload(const VirtualPayloadSpec& spec) {
  const uint32_t size = std::max(spec.size, kVirtualPayloadHeaderSize);
  std::string p(size, '\0');
  std::memcpy(p.data(), kVirtualPayloadMagic, sizeof(kVirtualPayloadMagic));
  PutU32(p, 16, kVirtualPayloadFormat);
  PutU32(p, 20, size);
  std::memcpy(p.data() + 24, spec.asic.data(), std::min<size_t>(spec.asic.size(), 15));
  p[40] = static_cast<char>(spec.ip.major);
  p[41] = static_cast<char>(spec.ip.minor);
  p[42] = static_cast<char>(spec.ip.rev);
  p[43] = static_cast<char>(spec.load);
  const size_t count = std::min(spec.types.size(), kVirtualPayloadMaxTypes);
  PutU32(p, 44, static_cast<uint32_t>(count));
  for (size_t i = 0; i < count; ++i) PutU32(p, 48 + 4 * i, spec.types[i]);
  const std::string text =
      absl::StrFormat("baregpu virtual firmware, not AMD microcode: %s IP %s, %s %s\n", spec.asic, spec.ip.ToString(),
                      LoadPathName(spec.load), TypesText(spec.load, spec.types));
  p.replace(kVirtualPayloadHeaderSize, std::min<size_t>(text.size(), size - kVirtualPayloadHeaderSize), text);
  // Deterministic filler so that payloads of different types differ everywhere.
  uint32_t state = 0x9e3779b9u ^ (count > 0 ? spec.types[0] : 0) ^ (static_cast<uint32_t>(spec.load) << 24);
  for (size_t i = kVirtualPayloadHeaderSize + text.size(); i < size; ++i) {
    state = state * 1664525u + 1013904223u;
    p[i] = static_cast<char>(state >> 24);
  }
  p.replace(kChecksumOffset, 32, PayloadChecksum(p));
  return p;
}

absl::string_view VirtualFirmwareCheckName(VirtualFirmwareCheck check) {
  switch (check) {
    case VirtualFirmwareCheck::kOk:
      return "ok";
    case VirtualFirmwareCheck::kTooSmall:
      return "too small";
    case VirtualFirmwareCheck::kBadMagic:
      return "not virtual firmware";
    case VirtualFirmwareCheck::kBadFormat:
      return "unknown payload format";
    case VirtualFirmwareCheck::kSizeMismatch:
      return "size mismatch";
    case VirtualFirmwareCheck::kBadChecksum:
      return "checksum mismatch";
    case VirtualFirmwareCheck::kWrongAsic:
      return "wrong ASIC";
    case VirtualFirmwareCheck::kWrongIpVersion:
      return "wrong IP version";
    case VirtualFirmwareCheck::kWrongLoadPath:
      return "wrong load path";
    case VirtualFirmwareCheck::kWrongType:
      return "wrong firmware type";
  }
  return "?";
}

VirtualFirmwareVerdict ValidateVirtualFirmware(absl::string_view image, const VirtualFirmwareExpectation& expected) {
  using C = VirtualFirmwareCheck;
  auto fail = [](C check, std::string detail) { return VirtualFirmwareVerdict{check, std::move(detail)}; };
  if (image.size() < kVirtualPayloadHeaderSize) {
    return fail(C::kTooSmall, absl::StrFormat("image is %d bytes, shorter than the %d-byte virtual payload header",
                                              image.size(), kVirtualPayloadHeaderSize));
  }
  if (image.substr(0, sizeof(kVirtualPayloadMagic)) !=
      absl::string_view(kVirtualPayloadMagic, sizeof(kVirtualPayloadMagic))) {
    return fail(C::kBadMagic,
                "image starts with neither the virtual firmware marker nor, at offset 0x10, the \"$PS1\" "
                "marker of a real PSP image");
  }
  if (const uint32_t format = GetU32(image, 16); format != kVirtualPayloadFormat) {
    return fail(C::kBadFormat, absl::StrFormat("payload format %d, expected %d", format, kVirtualPayloadFormat));
  }
  if (const uint32_t size = GetU32(image, 20); size != image.size()) {
    return fail(C::kSizeMismatch,
                absl::StrFormat("payload says %d bytes but %d bytes were handed over", size, image.size()));
  }
  if (image.substr(kChecksumOffset, 32) != PayloadChecksum(image)) {
    return fail(C::kBadChecksum, "SHA-256 of the payload does not match its checksum field (corrupted)");
  }
  const absl::string_view asic_field = image.substr(24, 16);
  const absl::string_view asic = asic_field.substr(0, std::min(asic_field.find('\0'), asic_field.size()));
  if (asic != expected.asic) {
    return fail(C::kWrongAsic, absl::StrFormat("built for %s, expected %s", asic, expected.asic));
  }
  const IpVersion ip{static_cast<uint8_t>(image[40]), static_cast<uint8_t>(image[41]), static_cast<uint8_t>(image[42])};
  if (!(ip == expected.ip)) {
    return fail(C::kWrongIpVersion,
                absl::StrFormat("built for IP %s, expected %s", ip.ToString(), expected.ip.ToString()));
  }
  const auto load = static_cast<LoadPath>(static_cast<uint8_t>(image[43]));
  if (load != expected.load) {
    return fail(C::kWrongLoadPath, absl::StrFormat("built for %s, handed over through %s", LoadPathName(load),
                                                   LoadPathName(expected.load)));
  }
  const uint32_t count = std::min<uint32_t>(GetU32(image, 44), kVirtualPayloadMaxTypes);
  std::vector<uint32_t> types;
  for (uint32_t i = 0; i < count; ++i) types.push_back(GetU32(image, 48 + 4 * i));
  if (std::find(types.begin(), types.end(), expected.type) == types.end()) {
    return fail(C::kWrongType, absl::StrFormat("image is %s, expected %s (%d)", TypesText(load, types),
                                               TypeName(expected.load, expected.type), expected.type));
  }
  return {};
}

absl::StatusOr<std::vector<VirtualFirmwareFile>> BuildVirtualFirmware(const AsicProfile& profile) {
  BAREGPU_ASSIGN_OR_RETURN(std::vector<RequiredFile> required, RequiredFiles(profile.ip));
  std::vector<VirtualFirmwareFile> files;
  for (const RequiredFile& file : required) {
    BAREGPU_ASSIGN_OR_RETURN(std::string data, BuildFile(profile, file));
    files.push_back({file.name, std::move(data)});
  }
  return files;
}

}  // namespace firmware
