#include "nv/gsp/boot_args.h"

#include <cstring>
#include <limits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace nv::gsp {
namespace {

absl::Status CheckPages(const DmaRegion& r, const char* name) {
  if (r.size == 0 || r.size % kGspPageSize != 0 || r.pa % kGspPageSize != 0 || r.pa == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "LibOS region %s at bus address 0x%x, 0x%x bytes: GSP-RM needs a non-empty, page-aligned buffer of whole "
        "4 KiB pages (nouveau allocates 0x%x bytes for a log buffer, 0x%x for RMARGS)",
        name, r.pa, r.size, kLibosLogBufferSize, kRmArgsSize));
  }
  return absl::OkStatus();
}

LibosMemoryRegionInitArgument Contiguous(absl::string_view name, const DmaRegion& r) {
  LibosMemoryRegionInitArgument a;
  std::memset(&a, 0, sizeof(a));  // the padding after loc too: the array is copied to the GSP byte for byte
  a.id8 = LibosId8(name);
  a.pa = r.pa;
  a.size = r.size;
  a.kind = regs::gsp::LIBOS_MEMORY_REGION_CONTIGUOUS;
  a.loc = regs::gsp::LIBOS_MEMORY_REGION_LOC_SYSMEM;
  return a;
}

template <typename T>
void Append(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

}  // namespace

uint64_t LibosId8(absl::string_view name) {
  uint64_t id = 0;
  for (size_t i = 0; i < sizeof(id) && i < name.size() && name[i] != '\0'; ++i) {
    id = (id << 8) | static_cast<uint8_t>(name[i]);
  }
  return id;
}

absl::StatusOr<std::vector<LibosMemoryRegionInitArgument>> BuildLibosArgs(const LibosRegions& regions) {
  BAREGPU_RETURN_IF_ERROR(CheckPages(regions.loginit, "LOGINIT"));
  BAREGPU_RETURN_IF_ERROR(CheckPages(regions.logintr, "LOGINTR"));
  BAREGPU_RETURN_IF_ERROR(CheckPages(regions.logrm, "LOGRM"));
  BAREGPU_RETURN_IF_ERROR(CheckPages(regions.rmargs, "RMARGS"));
  std::vector<LibosMemoryRegionInitArgument> args = {
      Contiguous("LOGINIT", regions.loginit),
      Contiguous("LOGINTR", regions.logintr),
      Contiguous("LOGRM", regions.logrm),
      Contiguous("RMARGS", regions.rmargs),
  };
  static_assert(4 * sizeof(LibosMemoryRegionInitArgument) <= kLibosArgsSize);
  return args;
}

absl::StatusOr<std::vector<uint64_t>> LogBufferPtes(const DmaRegion& buffer) {
  BAREGPU_RETURN_IF_ERROR(CheckPages(buffer, "log buffer"));
  const uint64_t pages = buffer.size / kGspPageSize;
  if (kLogBufferPteOffset + pages * sizeof(uint64_t) > buffer.size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "log buffer of 0x%x bytes cannot hold its own %d page addresses after the put pointer", buffer.size, pages));
  }
  std::vector<uint64_t> ptes(pages);
  for (uint64_t i = 0; i < pages; ++i) ptes[i] = buffer.pa + i * kGspPageSize;
  return ptes;
}

absl::StatusOr<GSP_ARGUMENTS_CACHED> BuildRmArgs(const MessageQueueGeometry& q, bool resume) {
  if (q.shared_mem_pa == 0 || q.shared_mem_pa % kGspPageSize != 0 || q.page_table_entry_count == 0 ||
      q.cmd_queue_offset % kGspPageSize != 0 || q.stat_queue_offset % kGspPageSize != 0 ||
      q.cmd_queue_offset < uint64_t{q.page_table_entry_count} * sizeof(uint64_t) ||
      q.stat_queue_offset <= q.cmd_queue_offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "RM arguments: message queues at bus address 0x%x with %d page-table entries, command queue at +0x%x, "
        "status queue at +0x%x: the shared memory must be page aligned, begin with the page table, and hold the "
        "command queue then the status queue at page-aligned offsets after it",
        q.shared_mem_pa, q.page_table_entry_count, q.cmd_queue_offset, q.stat_queue_offset));
  }
  GSP_ARGUMENTS_CACHED args;
  std::memset(&args, 0, sizeof(args));
  args.messageQueueInitArguments.sharedMemPhysAddr = q.shared_mem_pa;
  args.messageQueueInitArguments.pageTableEntryCount = q.page_table_entry_count;
  args.messageQueueInitArguments.cmdQueueOffset = q.cmd_queue_offset;
  args.messageQueueInitArguments.statQueueOffset = q.stat_queue_offset;
  if (resume) {
    args.srInitArguments.oldLevel = kGpuPowerStateLevel3;
    args.srInitArguments.flags = 0;
    args.srInitArguments.bInPMTransition = 1;
  }
  return args;
}

void SetBootloaderOffsets(const firmware::nv::Bootloader& bootloader, WprMetaSources& sources) {
  sources.bootloader_code_offset = bootloader.desc.monitor_code_offset;
  sources.bootloader_data_offset = bootloader.desc.monitor_data_offset;
  sources.bootloader_manifest_offset = bootloader.desc.manifest_offset;
}

absl::Status SetSignatureSection(const firmware::nv::GspImage& image, absl::string_view section,
                                 WprMetaSources& sources) {
  const firmware::nv::ElfSection* found = image.Find(section);
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrFormat(
        "GSP-RM image has no section %s (it signs for: %s); use the GSP-RM file for this chip (r535_gsp_elf_section)",
        section, absl::StrJoin(image.signature_families, ", ")));
  }
  sources.signature_section_size = found->size;
  return absl::OkStatus();
}

absl::StatusOr<GspFwWprMeta> BuildWprMeta(const FbLayout& layout, const WprMetaSources& s) {
  if (absl::Status st = CheckFbLayout(layout); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("GspFwWprMeta: ", st.message()));
  }
  const struct {
    const char* name;
    uint64_t pa;
  } addresses[] = {{"sysmemAddrOfRadix3Elf (radix3 level 0)", s.radix3_level0_pa},
                   {"sysmemAddrOfBootloader", s.bootloader_pa},
                   {"sysmemAddrOfSignature", s.signature_pa}};
  for (const auto& a : addresses) {
    if (a.pa == 0 || a.pa % kGspPageSize != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "GspFwWprMeta: %s = 0x%x; the booter DMAs from a page-aligned system memory buffer", a.name, a.pa));
    }
  }
  if (s.signature_section_size == 0) {
    return absl::InvalidArgumentError(
        "GspFwWprMeta: the signature section is empty (the GSP-RM ELF's .fwsignature_* for this chip)");
  }
  const struct {
    const char* name;
    uint64_t offset;
  } offsets[] = {{"bootloaderCodeOffset (monitorCodeOffset)", s.bootloader_code_offset},
                 {"bootloaderDataOffset (monitorDataOffset)", s.bootloader_data_offset},
                 {"bootloaderManifestOffset (manifestOffset)", s.bootloader_manifest_offset}};
  for (const auto& o : offsets) {
    if (o.offset >= layout.bootBinSize) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "GspFwWprMeta: %s 0x%x lies outside the 0x%x-byte bootloader image (RM_RISCV_UCODE_DESC of the "
          "bootloader file)",
          o.name, o.offset, layout.bootBinSize));
    }
  }
  GspFwWprMeta m;
  std::memset(&m, 0, sizeof(m));
  m.magic = regs::gsp::GSP_FW_WPR_META_MAGIC;
  m.revision = regs::gsp::GSP_FW_WPR_META_REVISION;
  m.sysmemAddrOfRadix3Elf = s.radix3_level0_pa;
  m.sizeOfRadix3Elf = layout.gspFwSize;
  m.sysmemAddrOfBootloader = s.bootloader_pa;
  m.sizeOfBootloader = layout.bootBinSize;
  m.bootloaderCodeOffset = s.bootloader_code_offset;
  m.bootloaderDataOffset = s.bootloader_data_offset;
  m.bootloaderManifestOffset = s.bootloader_manifest_offset;
  m.sysmemAddrOfSignature = s.signature_pa;
  m.sizeOfSignature = (s.signature_section_size + kSignatureAlignment - 1) / kSignatureAlignment * kSignatureAlignment;
  m.gspFwRsvdStart = layout.gspFwRsvdStart;
  m.nonWprHeapOffset = layout.nonWprHeapOffset;
  m.nonWprHeapSize = layout.nonWprHeapSize;
  m.gspFwWprStart = layout.gspFwWprStart;
  m.gspFwHeapOffset = layout.gspFwHeapOffset;
  m.gspFwHeapSize = layout.gspFwHeapSize;
  m.gspFwOffset = layout.gspFwOffset;
  m.bootBinOffset = layout.bootBinOffset;
  m.frtsOffset = layout.frtsOffset;
  m.frtsSize = layout.frtsSize;
  m.gspFwWprEnd = layout.gspFwWprEnd;
  m.fbSize = layout.fbSize;
  m.vgaWorkspaceOffset = layout.vgaWorkspaceOffset;
  m.vgaWorkspaceSize = layout.vgaWorkspaceSize;
  m.bootCount = 0;
  m.partitionRpcAddr = 0;
  m.partitionRpcRequestOffset = 0;
  m.partitionRpcReplyOffset = 0;
  m.verified = 0;
  return m;
}

absl::StatusOr<GspSystemInfo> BuildSystemInfo(const SystemInfoInputs& in) {
  // include/linux/pci.h PCI_DEVFN: 5 bits of device, 3 of function.
  constexpr uint8_t kMaxDevice = 31;
  constexpr uint8_t kMaxFunction = 7;
  if (in.device > kMaxDevice || in.function > kMaxFunction) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GspSystemInfo: PCI address %02x:%02x.%x: a device is 0..31 and a function 0..7", in.bus,
                        in.device, in.function));
  }
  if (in.bar0_address == 0) {
    return absl::InvalidArgumentError("GspSystemInfo: BAR0's bus address is 0; read it from the PCI device's BAR0");
  }
  GspSystemInfo info;
  std::memset(&info, 0, sizeof(info));
  info.gpuPhysAddr = in.bar0_address;
  info.gpuPhysFbAddr = in.bar1_address;
  info.gpuPhysInstAddr = in.bar3_address;
  // pci_dev_id: PCI_DEVID(bus, devfn) = bus << 8 | devfn, devfn = device << 3 | function.
  info.nvDomainBusDeviceFunc = (uint64_t{in.bus} << 8) | (uint64_t{in.device} << 3) | in.function;
  info.maxUserVa = in.max_user_va;
  info.pciConfigMirrorBase = in.pci_config_mirror_base;
  info.pciConfigMirrorSize = in.pci_config_mirror_size;
  return info;
}

std::vector<RegistryEntry> DefaultRegistryEntries() {
  // r535_registry_entries: PCI secondary bus reset on, and GSP-RM keeps PCI config registers over a reset.
  return {
      {"RMSecBusResetEnable", kRegistryTypeDword, 1, ""},
      {"RMForcePcieConfigSave", kRegistryTypeDword, 1, ""},
  };
}

absl::StatusOr<std::string> BuildRegistryTable(const std::vector<RegistryEntry>& entries) {
  // build_registry: the strings start after the entry array; each entry's key (with NUL), then its value.
  uint64_t size = sizeof(PACKED_REGISTRY_TABLE) + entries.size() * sizeof(PACKED_REGISTRY_ENTRY);
  for (const RegistryEntry& e : entries) {
    if (e.key.empty() || e.key.size() >= kRegistryMaxKeyLength || e.key.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "registry key \"%s\": a key is 1..%d characters without NUL (r535.c REGISTRY_MAX_KEY_LENGTH %d counts the "
          "NUL)",
          absl::CHexEscape(e.key), kRegistryMaxKeyLength - 1, kRegistryMaxKeyLength));
    }
    switch (e.type) {
      case kRegistryTypeDword:
        if (!e.value.empty()) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "registry key %s is a DWORD (value %d) but carries a %d-byte value string; use kRegistryTypeString "
              "for strings",
              e.key, e.dword, e.value.size()));
        }
        size += e.key.size() + 1;
        break;
      case kRegistryTypeString:
        if (e.value.find('\0') != std::string::npos) {
          return absl::InvalidArgumentError(
              absl::StrFormat("registry key %s: a string value holds a NUL; use kRegistryTypeBinary for bytes", e.key));
        }
        size += e.key.size() + 1 + e.value.size() + 1;
        break;
      case kRegistryTypeBinary:
        size += e.key.size() + 1 + e.value.size();
        break;
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "registry key %s has type %d; r535.c knows DWORD (1), BINARY (2) and STRING (3)", e.key, e.type));
    }
  }
  if (size > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("registry table of %d bytes does not fit PACKED_REGISTRY_TABLE.size (32 bits)", size));
  }
  PACKED_REGISTRY_TABLE header;
  std::memset(&header, 0, sizeof(header));
  header.size = static_cast<uint32_t>(size);
  header.numEntries = static_cast<uint32_t>(entries.size());
  std::string table;
  Append(table, header);
  std::string strings;
  uint32_t offset =
      static_cast<uint32_t>(sizeof(PACKED_REGISTRY_TABLE) + entries.size() * sizeof(PACKED_REGISTRY_ENTRY));
  for (const RegistryEntry& e : entries) {
    PACKED_REGISTRY_ENTRY entry;
    std::memset(&entry, 0, sizeof(entry));  // the three bytes after type go out as zeros
    entry.type = e.type;
    entry.nameOffset = offset + static_cast<uint32_t>(strings.size());
    strings.append(e.key);
    strings.push_back('\0');
    if (e.type == kRegistryTypeDword) {
      entry.data = e.dword;
      entry.length = sizeof(uint32_t);
    } else {
      entry.data = offset + static_cast<uint32_t>(strings.size());
      strings.append(e.value);
      if (e.type == kRegistryTypeString) strings.push_back('\0');
      entry.length = static_cast<uint32_t>(e.value.size() + (e.type == kRegistryTypeString ? 1 : 0));
    }
    Append(table, entry);
  }
  table.append(strings);
  if (table.size() != size) {
    return absl::InternalError(absl::StrFormat("registry table: built %d bytes, sized %d", table.size(), size));
  }
  return table;
}

}  // namespace nv::gsp
