// The structures the host hands GSP-RM's boot, filled as Linux 6.12 nouveau's r535 code fills them
// (nvkm/subdev/gsp/r535.c): the LibOS memory-region arguments (r535_gsp_libos_init), the RM arguments page
// (r535_gsp_rmargs_init), the WPR metadata the booter reads (r535_gsp_wpr_meta_init), the system information RPC's
// payload (r535_gsp_rpc_set_system_info) and the registry RPC's payload (r535_gsp_rpc_set_registry, build_registry).
// Layouts: nv/gsp/layouts.h. Pure functions over numbers the caller has (bus addresses of DMA memory, the FB layout,
// the parsed firmware); nothing here touches a device.
#ifndef BAREGPU_NV_GSP_BOOT_ARGS_H_
#define BAREGPU_NV_GSP_BOOT_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/nv/gsp_elf.h"
#include "firmware/nv/riscv_desc.h"
#include "nv/gsp/fb_layout.h"
#include "nv/gsp/layouts.h"

namespace nv::gsp {

// --- LibOS memory regions (r535_gsp_libos_init) ---

// A region's name as a number: up to 8 characters, the first in the most significant byte used
// (r535_gsp_libos_id8; "LOGRM" is 0x4c4f47524d). tinygrad's int.from_bytes(name, 'big') gives the same for names
// of at most 8 characters.
uint64_t LibosId8(absl::string_view name);

// nouveau's sizes: each log buffer 0x10000 bytes, the RM arguments and the region array one page each.
inline constexpr uint64_t kLibosLogBufferSize = 0x10000;
inline constexpr uint64_t kLibosArgsSize = 0x1000;
inline constexpr uint64_t kRmArgsSize = 0x1000;
inline constexpr uint64_t kGspPageSize = regs::gsp::LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE;  // nouveau GSP_PAGE_SIZE

struct DmaRegion {
  uint64_t pa = 0;  // bus address
  uint64_t size = 0;
};

// The four regions nouveau describes, in its order: LOGINIT, LOGINTR, LOGRM (GSP-RM's log buffers) and RMARGS
// (the GSP_ARGUMENTS_CACHED page).
struct LibosRegions {
  DmaRegion loginit;
  DmaRegion logintr;
  DmaRegion logrm;
  DmaRegion rmargs;
};

// Four LibosMemoryRegionInitArgument, each CONTIGUOUS in SYSMEM. The array goes into a zeroed kLibosArgsSize page
// whose bus address goes to the GSP falcon's MAILBOX0/1. InvalidArgument for a region that is empty or not a whole
// number of 4 KiB pages at a page-aligned address (GSP-RM maps log buffers by page).
absl::StatusOr<std::vector<LibosMemoryRegionInitArgument>> BuildLibosArgs(const LibosRegions& regions);

// create_pte_array: what nouveau writes into a log buffer from its second u64 on (the first is GSP-RM's put
// pointer): the bus address of each of its 4 KiB pages. InvalidArgument when they would not fit in the buffer.
absl::StatusOr<std::vector<uint64_t>> LogBufferPtes(const DmaRegion& buffer);
// Byte offset of the first PTE inside the log buffer (after the u64 put pointer).
inline constexpr uint64_t kLogBufferPteOffset = sizeof(uint64_t);

// --- RM arguments (r535_gsp_rmargs_init) ---

// The message queues' shared memory as the queue code laid it out (r535_gsp_shared_init): its bus address, how
// many page-table entries precede the queues, and the queues' offsets from the start of the shared memory.
struct MessageQueueGeometry {
  uint64_t shared_mem_pa = 0;
  uint32_t page_table_entry_count = 0;
  uint64_t cmd_queue_offset = 0;
  uint64_t stat_queue_offset = 0;
};

// GSP_ARGUMENTS_CACHED for a first boot (srInitArguments zero) or a resume (oldLevel
// NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_3, bInPMTransition 1). The lockless queues, gpuInstance and
// profilerArgs stay 0 as nouveau leaves them. InvalidArgument when the queues do not follow the page table
// (offsets not page aligned, the status queue not after the command queue, no page-table entries).
absl::StatusOr<GSP_ARGUMENTS_CACHED> BuildRmArgs(const MessageQueueGeometry& queues, bool resume);
// ctrl2080gpu.h NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_3.
inline constexpr uint32_t kGpuPowerStateLevel3 = 3;

// --- WPR metadata (r535_gsp_wpr_meta_init) ---

// Where the boot's pieces are in system memory, and the bootloader's offsets.
struct WprMetaSources {
  uint64_t radix3_level0_pa = 0;        // sysmemAddrOfRadix3Elf: the radix3 table's level-0 page (nv/gsp/radix3.h)
  uint64_t bootloader_pa = 0;           // sysmemAddrOfBootloader: the bootloader's payload, copied whole
  uint64_t signature_pa = 0;            // sysmemAddrOfSignature: the chip's .fwsignature_* section, copied
  uint64_t signature_section_size = 0;  // that section's size; the meta gets it rounded up to 256
  // RM_RISCV_UCODE_DESC (the bootloader file's descriptor): monitorCodeOffset, monitorDataOffset, manifestOffset.
  uint64_t bootloader_code_offset = 0;
  uint64_t bootloader_data_offset = 0;
  uint64_t bootloader_manifest_offset = 0;
};

// r535_gsp_rm_boot_ctor's fields of the parsed bootloader (firmware/nv/riscv_desc.h).
void SetBootloaderOffsets(const firmware::nv::Bootloader& bootloader, WprMetaSources& sources);

// r535_gsp_oneinit's signature: the size of the chip's section of the GSP-RM ELF (ChipProfile::signature_section,
// ".fwsignature_ad10x" on AD102). NotFound, naming the sections the image has, when it lacks it.
absl::Status SetSignatureSection(const firmware::nv::GspImage& image, absl::string_view section,
                                 WprMetaSources& sources);

// r535_gsp_oneinit allocates the signature with ALIGN(size, 256) bytes; that allocation size is sizeOfSignature.
inline constexpr uint64_t kSignatureAlignment = 256;

// The GspFwWprMeta nouveau writes: magic and revision (GSP_FW_WPR_META_MAGIC/REVISION), the sysmem sources, the
// layout's offsets and sizes (sizeOfBootloader is the boot binary's, sizeOfRadix3Elf the image's), bootCount,
// partitionRpc*, verified and everything nouveau does not name 0. InvalidArgument when the layout is inconsistent
// (CheckFbLayout), a sysmem address is 0 or not page aligned, or an offset lies outside the bootloader.
absl::StatusOr<GspFwWprMeta> BuildWprMeta(const FbLayout& layout, const WprMetaSources& sources);

// --- System information (r535_gsp_rpc_set_system_info) ---

// NV_PCFG, PCI configuration space mirrored in BAR0 (open-gpu-doc manuals/ampere/ga102/dev_nv_xve3g_fn0.ref.txt:
// 0x00088FFF:0x00088000): nouveau's pciConfigMirrorBase 0x088000 and pciConfigMirrorSize 0x001000.
inline constexpr uint32_t kNvPcfgBase = 0x88000;
inline constexpr uint32_t kNvPcfgSize = 0x1000;
// nouveau sends TASK_SIZE as maxUserVa; on x86-64 with 4-level paging that is (1 << 47) - 4096 (Linux
// arch/x86/include/asm/page_64_types.h TASK_SIZE_MAX; tinygrad's rpc_set_gsp_system_info sends the same number).
inline constexpr uint64_t kX86_64TaskSize = (uint64_t{1} << 47) - 4096;

struct SystemInfoInputs {
  uint64_t bar0_address = 0;  // gpuPhysAddr: BAR0's bus address (registers)
  uint64_t bar1_address = 0;  // gpuPhysFbAddr: BAR1's (the FB aperture)
  uint64_t bar3_address = 0;  // gpuPhysInstAddr: PCI resource 3, the 64-bit BAR after BAR1 (instance memory)
  uint8_t bus = 0;            // the GPU's PCI bus, device and function
  uint8_t device = 0;
  uint8_t function = 0;
  uint64_t max_user_va = kX86_64TaskSize;
  uint32_t pci_config_mirror_base = kNvPcfgBase;
  uint32_t pci_config_mirror_size = kNvPcfgSize;
};

// GspSystemInfo as nouveau fills it: the three BAR addresses, nvDomainBusDeviceFunc = pci_dev_id (bus << 8 |
// device << 3 | function; no domain), maxUserVa, the config mirror; acpiMethodData zero (a host without ACPI
// methods; nouveau fills it on x86 with CONFIG_ACPI) and every other member 0. The 535.113.01 GspSystemInfo has no
// member for the GPU's own vendor/device/subsystem ids (570's, which tinygrad fills, adds PCIDeviceID & co).
// InvalidArgument for a device > 31 or function > 7, or a zero BAR0.
absl::StatusOr<GspSystemInfo> BuildSystemInfo(const SystemInfoInputs& in);

// --- Registry (r535_gsp_rpc_set_registry, build_registry) ---

// r535.c enum registry_type (tinygrad's autogen nv.py agrees: REGISTRY_TABLE_ENTRY_TYPE_*).
inline constexpr uint8_t kRegistryTypeDword = 1;
inline constexpr uint8_t kRegistryTypeBinary = 2;
inline constexpr uint8_t kRegistryTypeString = 3;
// r535.c REGISTRY_MAX_KEY_LENGTH: a key with its NUL.
inline constexpr size_t kRegistryMaxKeyLength = 64;

struct RegistryEntry {
  std::string key;
  uint8_t type = kRegistryTypeDword;
  uint32_t dword = 0;  // kRegistryTypeDword
  std::string value;   // kRegistryTypeString (without its NUL) or kRegistryTypeBinary
};

// nouveau's r535_registry_entries, in its order: RMSecBusResetEnable = 1, RMForcePcieConfigSave = 1.
std::vector<RegistryEntry> DefaultRegistryEntries();

// The PACKED_REGISTRY_TABLE payload: the header, one PACKED_REGISTRY_ENTRY per entry, then for each entry in order
// its NUL-terminated key and (strings, binaries) its value; nameOffset and a string's data are offsets from the
// table's start; size is the whole payload. InvalidArgument for an empty key, a key of kRegistryMaxKeyLength or more
// characters or with a NUL, an unknown type, a DWORD with a value string, or a payload past 4 GiB.
absl::StatusOr<std::string> BuildRegistryTable(const std::vector<RegistryEntry>& entries);

}  // namespace nv::gsp

#endif  // BAREGPU_NV_GSP_BOOT_ARGS_H_
