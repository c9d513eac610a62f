#include "firmware/nv/file_kind.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "firmware/byte_reader.h"
#include "firmware/nv/bin_header.h"
#include "firmware/nv/gsp_elf.h"
#include "firmware/nv/hs_header.h"
#include "firmware/nv/riscv_desc.h"

namespace firmware::nv {
namespace {

constexpr absl::string_view kNvidiaDir = "nvidia";
constexpr absl::string_view kBinSuffix = ".bin";

struct GspName {
  absl::string_view prefix;  // r535_gsp_load_fw: "gsp/%s-%s" with these names
  NvFileKind kind;
};
constexpr GspName kGspNames[] = {{"booter_load-", NvFileKind::kBooterLoad},
                                 {"booter_unload-", NvFileKind::kBooterUnload},
                                 {"bootloader-", NvFileKind::kBootloader},
                                 {"gsp-", NvFileKind::kGspRm}};

struct NamedKind {
  absl::string_view stem;  // the name without ".bin" and without a "-N" revision suffix (image-1.bin)
  NvFileKind kind;
};
// nouveau's names (see file_kind.h for the files that ask for them).
constexpr NamedKind kNames[] = {
    {"fecs_inst", NvFileKind::kFalconUcode},
    {"fecs_data", NvFileKind::kFalconUcode},
    {"gpccs_inst", NvFileKind::kFalconUcode},
    {"gpccs_data", NvFileKind::kFalconUcode},
    {"fecs_bl", NvFileKind::kFalconUcode},
    {"gpccs_bl", NvFileKind::kFalconUcode},
    {"bl", NvFileKind::kFalconUcode},
    {"unload_bl", NvFileKind::kFalconUcode},
    {"image", NvFileKind::kFalconUcode},
    {"ucode_load", NvFileKind::kFalconUcode},
    {"ucode_unload", NvFileKind::kFalconUcode},
    {"ucode_ahesasc", NvFileKind::kFalconUcode},
    {"ucode_asb", NvFileKind::kFalconUcode},
    {"scrubber", NvFileKind::kFalconUcode},
    {"fecs_sig", NvFileKind::kSignature},
    {"gpccs_sig", NvFileKind::kSignature},
    {"sig", NvFileKind::kSignature},
    {"hs_bl_sig", NvFileKind::kSignature},
    {"desc", NvFileKind::kDescriptor},
    {"NET_img", NvFileKind::kNetlist},
    {"sw_ctx", NvFileKind::kRegisterList},
    {"sw_nonctx", NvFileKind::kRegisterList},
    {"sw_bundle_init", NvFileKind::kRegisterList},
    {"sw_method_init", NvFileKind::kRegisterList},
    {"sw_veid_bundle_init", NvFileKind::kRegisterList},
};
constexpr absl::string_view kCcgPrefix = "ccg_";
constexpr absl::string_view kCyacdSuffix = ".cyacd";

// The file's name without its directory and without the suffix of a compressed copy (the kernel's loader and
// firmware::ReadFirmwareFile take NAME.zst and NAME.xz for NAME).
absl::string_view BaseName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  absl::string_view name = slash == absl::string_view::npos ? path : path.substr(slash + 1);
  if (!absl::ConsumeSuffix(&name, ".zst")) absl::ConsumeSuffix(&name, ".xz");
  return name;
}

bool UnderNvidiaDir(absl::string_view path) {
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == kNvidiaDir) return true;
  }
  return false;
}

// "image-1" -> "image"; "booter_load-535.113.01" is handled before this.
absl::string_view StripRevision(absl::string_view stem) {
  const size_t dash = stem.rfind('-');
  if (dash == absl::string_view::npos || dash + 1 == stem.size()) return stem;
  for (char c : stem.substr(dash + 1)) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return stem;
  }
  return stem.substr(0, dash);
}

void AddBinFields(const BinHeader& h, NvFileInfo& info) {
  info.fields.push_back({"nvfw_bin_hdr.bin_magic", h.bin_magic});
  info.fields.push_back({"nvfw_bin_hdr.bin_ver", h.bin_ver});
  info.fields.push_back({"nvfw_bin_hdr.bin_size", h.bin_size});
  info.fields.push_back({"nvfw_bin_hdr.header_offset", h.header_offset});
  info.fields.push_back({"nvfw_bin_hdr.data_offset", h.data_offset});
  info.fields.push_back({"nvfw_bin_hdr.data_size", h.data_size});
  info.regions.push_back({"payload", h.data_offset, h.data_size});
}

absl::Status DescribeBooter(absl::string_view path, absl::string_view data, NvFileInfo& info) {
  BAREGPU_ASSIGN_OR_RETURN(Booter b, ParseBooter(path, data));
  info.layout = "nvfw_bin_hdr + nvfw_hs_header_v2 + nvfw_hs_load_header_v2";
  AddBinFields(b.bin.header, info);
  const HsHeaderV2& hs = b.hs;
  for (const NvField& f : std::vector<NvField>{{"nvfw_hs_header_v2.sig_prod_offset", hs.sig_prod_offset},
                                               {"nvfw_hs_header_v2.sig_prod_size", hs.sig_prod_size},
                                               {"nvfw_hs_header_v2.patch_loc", hs.patch_loc},
                                               {"nvfw_hs_header_v2.patch_sig", hs.patch_sig},
                                               {"nvfw_hs_header_v2.meta_data_offset", hs.meta_data_offset},
                                               {"nvfw_hs_header_v2.meta_data_size", hs.meta_data_size},
                                               {"nvfw_hs_header_v2.num_sig", hs.num_sig},
                                               {"nvfw_hs_header_v2.header_offset", hs.header_offset},
                                               {"nvfw_hs_header_v2.header_size", hs.header_size},
                                               {"*patch_loc", b.patch_loc},
                                               {"*patch_sig", b.patch_sig},
                                               {"*num_sig", b.num_sig},
                                               {"signature_size", b.sig_size},
                                               {"meta.fuse_ver", b.fuse_ver},
                                               {"meta.engine_id", b.engine_id},
                                               {"meta.ucode_id", b.ucode_id},
                                               {"nvfw_hs_load_header_v2.os_code_offset", b.load.os_code_offset},
                                               {"nvfw_hs_load_header_v2.os_code_size", b.load.os_code_size},
                                               {"nvfw_hs_load_header_v2.os_data_offset", b.load.os_data_offset},
                                               {"nvfw_hs_load_header_v2.os_data_size", b.load.os_data_size},
                                               {"nvfw_hs_load_header_v2.num_apps", b.load.num_apps}}) {
    info.fields.push_back(f);
  }
  const uint64_t base = b.bin.header.data_offset;
  for (size_t i = 0; i < b.load.apps.size(); ++i) {
    info.fields.push_back({absl::StrCat("nvfw_hs_load_header_v2.app[", i, "].offset"), b.load.apps[i].offset});
    info.fields.push_back({absl::StrCat("nvfw_hs_load_header_v2.app[", i, "].size"), b.load.apps[i].size});
  }
  for (uint32_t i = 0; i < b.num_sig; ++i) {
    info.regions.push_back({absl::StrCat("signature[", i, "]"),
                            uint64_t{hs.sig_prod_offset} + b.patch_sig + uint64_t{i} * b.sig_size, b.sig_size});
  }
  info.regions.push_back({"os_code", base + b.load.os_code_offset, b.load.os_code_size});
  info.regions.push_back({"os_data", base + b.load.os_data_offset, b.load.os_data_size});
  for (size_t i = 0; i < b.load.apps.size(); ++i) {
    info.regions.push_back({absl::StrCat("app[", i, "]"), base + b.load.apps[i].offset, b.load.apps[i].size});
  }
  info.notes = b.notes;
  return absl::OkStatus();
}

absl::Status DescribeBootloader(absl::string_view path, absl::string_view data, NvFileInfo& info) {
  BAREGPU_ASSIGN_OR_RETURN(Bootloader b, ParseBootloader(path, data));
  info.layout = "nvfw_bin_hdr + RM_RISCV_UCODE_DESC";
  AddBinFields(b.bin.header, info);
  const RiscvUcodeDesc& d = b.desc;
  for (const NvField& f : std::vector<NvField>{{"RM_RISCV_UCODE_DESC.version", d.version},
                                               {"RM_RISCV_UCODE_DESC.bootloaderOffset", d.bootloader_offset},
                                               {"RM_RISCV_UCODE_DESC.bootloaderSize", d.bootloader_size},
                                               {"RM_RISCV_UCODE_DESC.bootloaderParamOffset", d.bootloader_param_offset},
                                               {"RM_RISCV_UCODE_DESC.bootloaderParamSize", d.bootloader_param_size},
                                               {"RM_RISCV_UCODE_DESC.riscvElfOffset", d.riscv_elf_offset},
                                               {"RM_RISCV_UCODE_DESC.riscvElfSize", d.riscv_elf_size},
                                               {"RM_RISCV_UCODE_DESC.appVersion", d.app_version},
                                               {"RM_RISCV_UCODE_DESC.manifestOffset", d.manifest_offset},
                                               {"RM_RISCV_UCODE_DESC.manifestSize", d.manifest_size},
                                               {"RM_RISCV_UCODE_DESC.monitorDataOffset", d.monitor_data_offset},
                                               {"RM_RISCV_UCODE_DESC.monitorDataSize", d.monitor_data_size},
                                               {"RM_RISCV_UCODE_DESC.monitorCodeOffset", d.monitor_code_offset},
                                               {"RM_RISCV_UCODE_DESC.monitorCodeSize", d.monitor_code_size},
                                               {"RM_RISCV_UCODE_DESC.bIsMonitorEnabled", d.is_monitor_enabled},
                                               {"RM_RISCV_UCODE_DESC.swbromCodeOffset", d.swbrom_code_offset},
                                               {"RM_RISCV_UCODE_DESC.swbromCodeSize", d.swbrom_code_size},
                                               {"RM_RISCV_UCODE_DESC.swbromDataOffset", d.swbrom_data_offset},
                                               {"RM_RISCV_UCODE_DESC.swbromDataSize", d.swbrom_data_size}}) {
    info.fields.push_back(f);
  }
  if (d.fb_reserved_size) info.fields.push_back({"RM_RISCV_UCODE_DESC.fbReservedSize", *d.fb_reserved_size});
  if (d.signed_as_code) info.fields.push_back({"RM_RISCV_UCODE_DESC.bSignedAsCode", *d.signed_as_code});
  const uint64_t base = b.bin.header.data_offset;
  info.regions.push_back({"bootloader", base + d.bootloader_offset, d.bootloader_size});
  info.regions.push_back({"bootloaderParam", base + d.bootloader_param_offset, d.bootloader_param_size});
  if (d.manifest_size != 0) info.regions.push_back({"manifest", base + d.manifest_offset, d.manifest_size});
  if (d.monitor_data_size != 0) {
    info.regions.push_back({"monitorData", base + d.monitor_data_offset, d.monitor_data_size});
  }
  if (d.monitor_code_size != 0) {
    info.regions.push_back({"monitorCode", base + d.monitor_code_offset, d.monitor_code_size});
  }
  info.notes = b.notes;
  if (d.app_version == 0 && !info.version.empty()) {
    info.notes.push_back(absl::StrFormat(
        "appVersion is 0: the file carries no version of its own; only its name says %s", info.version));
  }
  return absl::OkStatus();
}

absl::Status DescribeGsp(absl::string_view path, absl::string_view data, NvFileInfo& info) {
  BAREGPU_ASSIGN_OR_RETURN(GspImage g, ParseGspImage(path, data));
  info.layout = "ELF64 (Elf64_Ehdr, Elf64_Shdr)";
  info.fields.push_back({"Elf64_Ehdr.e_type", g.elf_type});
  info.fields.push_back({"Elf64_Ehdr.e_machine", g.machine});
  info.fields.push_back({"Elf64_Ehdr.e_shoff", g.section_header_offset});
  info.fields.push_back({"Elf64_Ehdr.e_shnum", g.section_count});
  info.fields.push_back({"Elf64_Ehdr.e_shstrndx", g.string_table_index});
  for (const ElfSection& s : g.sections) {
    // SHT_NOBITS sections occupy no file bytes: their sh_offset may point anywhere (the fuzzer found one past the
    // end), so they are no region of the file.
    if (!s.name.empty() && s.type != kShtNobits) info.regions.push_back({s.name, s.offset, s.size});
  }
  info.fw_version = g.fw_version;
  info.notes = g.notes;
  if (!info.version.empty() && info.version != g.fw_version) {
    info.notes.push_back(
        absl::StrFormat("the file name says version %s but .fwversion says '%s'", info.version, g.fw_version));
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view NvFileKindName(NvFileKind kind) {
  switch (kind) {
    case NvFileKind::kBooterLoad:
      return "booter_load";
    case NvFileKind::kBooterUnload:
      return "booter_unload";
    case NvFileKind::kBootloader:
      return "bootloader";
    case NvFileKind::kGspRm:
      return "gsp";
    case NvFileKind::kBinContainer:
      return "bin_container";
    case NvFileKind::kFalconUcode:
      return "falcon_ucode";
    case NvFileKind::kSignature:
      return "signature";
    case NvFileKind::kDescriptor:
      return "descriptor";
    case NvFileKind::kNetlist:
      return "netlist";
    case NvFileKind::kRegisterList:
      return "register_list";
    case NvFileKind::kUsbcFirmware:
      return "usbc_firmware";
  }
  return "?";
}

std::optional<NvFileKind> NvFileKindFromName(absl::string_view name) {
  for (NvFileKind kind : {NvFileKind::kBooterLoad, NvFileKind::kBooterUnload, NvFileKind::kBootloader,
                          NvFileKind::kGspRm, NvFileKind::kBinContainer}) {
    if (name == NvFileKindName(kind)) return kind;
  }
  return std::nullopt;
}

std::optional<NvFileKind> NvKindFromPath(absl::string_view path) {
  const absl::string_view name = BaseName(path);
  for (const GspName& g : kGspNames) {
    if (absl::StartsWith(name, g.prefix) && absl::EndsWith(name, kBinSuffix) &&
        name.size() > g.prefix.size() + kBinSuffix.size()) {
      return g.kind;
    }
  }
  if (!UnderNvidiaDir(path)) return std::nullopt;
  if (absl::StartsWith(name, kCcgPrefix) && absl::EndsWith(name, kCyacdSuffix)) return NvFileKind::kUsbcFirmware;
  absl::string_view stem = name;
  if (!absl::ConsumeSuffix(&stem, kBinSuffix)) return std::nullopt;
  stem = StripRevision(stem);
  for (const NamedKind& n : kNames) {
    if (stem == n.stem) return n.kind;
  }
  return std::nullopt;
}

std::optional<NvFileKind> DetectNvFile(absl::string_view path, absl::string_view data) {
  std::optional<NvFileKind> kind = NvKindFromPath(path);
  if (!kind) return std::nullopt;
  if ((*kind == NvFileKind::kFalconUcode || *kind == NvFileKind::kSignature) && HasBinMagic(data)) {
    return NvFileKind::kBinContainer;
  }
  return kind;
}

std::string ChipFromPath(absl::string_view path) {
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] == kNvidiaDir && i + 2 < parts.size()) return std::string(parts[i + 1]);
  }
  return "";
}

std::string VersionFromPath(absl::string_view path) {
  absl::string_view name = BaseName(path);
  for (const GspName& g : kGspNames) {
    if (absl::ConsumePrefix(&name, g.prefix) && absl::ConsumeSuffix(&name, kBinSuffix)) return std::string(name);
  }
  return "";
}

absl::StatusOr<NvFileInfo> DescribeNvFile(absl::string_view path, absl::string_view data, NvFileKind kind) {
  NvFileInfo info;
  info.file = std::string(path);
  info.kind = kind;
  info.chip = ChipFromPath(path);
  info.version = VersionFromPath(path);
  info.file_size = data.size();
  switch (kind) {
    case NvFileKind::kBooterLoad:
    case NvFileKind::kBooterUnload:
      BAREGPU_RETURN_IF_ERROR(DescribeBooter(path, data, info));
      break;
    case NvFileKind::kBootloader:
      BAREGPU_RETURN_IF_ERROR(DescribeBootloader(path, data, info));
      break;
    case NvFileKind::kGspRm:
      BAREGPU_RETURN_IF_ERROR(DescribeGsp(path, data, info));
      break;
    case NvFileKind::kBinContainer: {
      const ByteReader r(path, data);
      BAREGPU_ASSIGN_OR_RETURN(BinFile bin, ParseBinFile(r));
      info.layout = "nvfw_bin_hdr";
      AddBinFields(bin.header, info);
      info.notes = bin.notes;
      info.notes.push_back(
          "the header at nvfw_bin_hdr.header_offset (ACR/HS layouts other than GSP-RM's) is not "
          "decoded");
      break;
    }
    default: {
      // Formats without a container header: nothing to check but that the file has bytes.
      info.parsed = false;
      info.layout = "none (classified by name)";
      if (data.empty()) {
        return ByteReader(path, data)
            .Malformed(absl::StrFormat("is empty; a %s file has contents (reinstall firmware-nvidia-graphics)",
                                       NvFileKindName(kind)));
      }
      break;
    }
  }
  return info;
}

}  // namespace firmware::nv
