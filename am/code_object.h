// An AMDGPU HSA code object for gfx1100 (the ELF shared object ld.lld links from LLVM's AMDGPU output, or LLVM's
// relocatable object itself, as tinygrad's compiler hands it over, laid out and relocated here): the loadable image,
// each kernel's 64-byte kernel descriptor and entry point, and its arguments as the metadata note lists them (the
// hidden ones a launcher fills included). The file is untrusted input: every header, table, string and symbol is
// bounds-checked, and a malformed or foreign code object is an error that names the field, its file offset, the value
// found and what was expected.
//
// Sources: the ELF layout is the System V gABI's (/usr/include/elf.h); everything AMDGPU-specific (e_machine,
// OS ABI and ABI versions, EF_AMDGPU_MACH values, the kernel descriptor and its bits) is from LLVM 19's
// AMDGPUUsage ("ELF Header", "Note Records", "Code Object V3 to V6 Metadata", "Kernel Descriptor", "Initial
// Kernel Execution State"), Debian's llvm-19-doc:
// /usr/share/doc/llvm-19-doc/html/AMDGPUUsage.html.
#ifndef BAREGPU_AM_CODE_OBJECT_H_
#define BAREGPU_AM_CODE_OBJECT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace am {

// AMDGPUUsage, "AMDGPU ELF Header Enumeration Values" and "AMDGPU EF_AMDGPU_MACH Values".
inline constexpr uint8_t kElfOsAbiAmdgpuHsa = 64;              // ELFOSABI_AMDGPU_HSA
inline constexpr uint8_t kElfAbiVersionAmdgpuHsaV4 = 2;        // ELFABIVERSION_AMDGPU_HSA_V4
inline constexpr uint8_t kElfAbiVersionAmdgpuHsaV6 = 4;        // ELFABIVERSION_AMDGPU_HSA_V6
inline constexpr uint32_t kEfAmdgpuMachMask = 0x0ff;           // EF_AMDGPU_MACH
inline constexpr uint32_t kEfAmdgpuMachAmdgcnGfx1100 = 0x041;  // EF_AMDGPU_MACH_AMDGCN_GFX1100
// AMDGPUUsage "AMDGPU Code Object V3 and Above Supported Note Records": owner "AMDGPU", a MessagePack map.
inline constexpr uint32_t kNtAmdgpuMetadata = 32;  // NT_AMDGPU_METADATA
inline constexpr absl::string_view kNoteOwnerAmdgpu = "AMDGPU";
// AMDGPU relocation types: AMDGPUUsage "Relocation Records" (the calculation of each), numbered as in LLVM's
// llvm/BinaryFormat/ELFRelocs/AMDGPU.def (unchanged from LLVM 14, whose copy Debian installs as
// /usr/include/llvm-14/llvm/BinaryFormat/ELFRelocs/AMDGPU.def, to LLVM 19); glibc's elf.h has none. S is the
// symbol's address, A the addend, P the address of the relocated bytes; addresses are relative to the image.
inline constexpr uint32_t kRAmdgpuNone = 0;      // R_AMDGPU_NONE: nothing
inline constexpr uint32_t kRAmdgpuAbs32Lo = 1;   // R_AMDGPU_ABS32_LO, word32: (S + A) & 0xffffffff
inline constexpr uint32_t kRAmdgpuAbs32Hi = 2;   // R_AMDGPU_ABS32_HI, word32: (S + A) >> 32
inline constexpr uint32_t kRAmdgpuAbs64 = 3;     // R_AMDGPU_ABS64, word64: S + A
inline constexpr uint32_t kRAmdgpuRel32 = 4;     // R_AMDGPU_REL32, word32: S + A - P
inline constexpr uint32_t kRAmdgpuRel64 = 5;     // R_AMDGPU_REL64, word64: S + A - P (descriptor -> kernel code)
inline constexpr uint32_t kRAmdgpuRel32Lo = 10;  // R_AMDGPU_REL32_LO, word32: (S + A - P) & 0xffffffff
inline constexpr uint32_t kRAmdgpuRel32Hi = 11;  // R_AMDGPU_REL32_HI, word32: (S + A - P) >> 32
// The other types AMDGPU.def defines (refused: a kernel object's loadable sections do not use them).
inline constexpr uint32_t kRAmdgpuAbs32 = 6;         // R_AMDGPU_ABS32
inline constexpr uint32_t kRAmdgpuGotPcRel = 7;      // R_AMDGPU_GOTPCREL (needs a GOT: a linker's job)
inline constexpr uint32_t kRAmdgpuGotPcRel32Lo = 8;  // R_AMDGPU_GOTPCREL32_LO
inline constexpr uint32_t kRAmdgpuGotPcRel32Hi = 9;  // R_AMDGPU_GOTPCREL32_HI
inline constexpr uint32_t kRAmdgpuRelative64 = 13;   // R_AMDGPU_RELATIVE64 (a dynamic relocation)
inline constexpr uint32_t kRAmdgpuRel16 = 14;        // R_AMDGPU_REL16
// The name of an AMDGPU relocation type ("R_AMDGPU_REL64"), or "" for a number AMDGPU.def does not define.
absl::string_view AmdgpuRelocationName(uint32_t type);
// The processor name of an EF_AMDGPU_MACH value ("gfx1030"), or "" when the value is not an amdgcn processor.
absl::string_view AmdgpuMachName(uint32_t mach);

// The kernel descriptor, AMDGPUUsage "Code Object V3 Kernel Descriptor" (the layout code objects V3 to V6 use for
// GFX6-GFX12), with the GFX10-GFX11 meaning of each field. The CP reads it; here it is read from the image.
struct KernelDescriptor {
  uint32_t group_segment_fixed_size;    // LDS bytes per workgroup (without dynamic LDS)
  uint32_t private_segment_fixed_size;  // scratch bytes per work-item
  uint32_t kernarg_size;                // bytes of kernel arguments, hidden ones included
  uint8_t reserved0[4];
  int64_t kernel_code_entry_byte_offset;  // from the descriptor's own address to the first instruction
  uint8_t reserved1[20];
  uint32_t compute_pgm_rsrc3;
  uint32_t compute_pgm_rsrc1;
  uint32_t compute_pgm_rsrc2;
  uint16_t kernel_code_properties;  // the enable_sgpr_* bits, wavefront size, dynamic stack
  uint16_t kernarg_preload;         // KERNARG_PRELOAD_SPEC_LENGTH 6:0, _OFFSET 15:7 (GFX90A/GFX940 only)
  uint8_t reserved2[4];

  // kernel_code_properties bits (descriptor bits 448.. in AMDGPUUsage).
  static constexpr uint16_t kEnableSgprPrivateSegmentBuffer = 1 << 0;
  static constexpr uint16_t kEnableSgprDispatchPtr = 1 << 1;
  static constexpr uint16_t kEnableSgprQueuePtr = 1 << 2;
  static constexpr uint16_t kEnableSgprKernargSegmentPtr = 1 << 3;
  static constexpr uint16_t kEnableSgprDispatchId = 1 << 4;
  static constexpr uint16_t kEnableSgprFlatScratchInit = 1 << 5;
  static constexpr uint16_t kEnableSgprPrivateSegmentSize = 1 << 6;
  static constexpr uint16_t kEnableWavefrontSize32 = 1 << 10;
  static constexpr uint16_t kUsesDynamicStack = 1 << 11;
  static constexpr uint16_t kReservedPropertyBits = 0xf380;  // 9:7 and 15:12 must be 0

  bool has(uint16_t property) const { return (kernel_code_properties & property) != 0; }
  bool wave32() const { return has(kEnableWavefrontSize32); }
  // User SGPRs the enable bits ask for, in the order the CP loads them (AMDGPUUsage "SGPR Register Set Up Order").
  uint32_t enabled_user_sgprs() const;
  // compute_pgm_rsrc2 fields (AMDGPUUsage "compute_pgm_rsrc2 for GFX6-GFX12").
  bool enable_private_segment() const { return compute_pgm_rsrc2 & 1; }
  uint32_t user_sgpr_count() const { return (compute_pgm_rsrc2 >> 1) & 0x1f; }
  uint32_t vgpr_workitem_id() const { return (compute_pgm_rsrc2 >> 11) & 3; }  // 0: x, 1: x y, 2: x y z
};
static_assert(sizeof(KernelDescriptor) == 64);
static_assert(offsetof(KernelDescriptor, group_segment_fixed_size) == 0);
static_assert(offsetof(KernelDescriptor, private_segment_fixed_size) == 4);
static_assert(offsetof(KernelDescriptor, kernarg_size) == 8);
static_assert(offsetof(KernelDescriptor, kernel_code_entry_byte_offset) == 16);
static_assert(offsetof(KernelDescriptor, compute_pgm_rsrc3) == 44);
static_assert(offsetof(KernelDescriptor, compute_pgm_rsrc1) == 48);
static_assert(offsetof(KernelDescriptor, compute_pgm_rsrc2) == 52);
static_assert(offsetof(KernelDescriptor, kernel_code_properties) == 56);
static_assert(offsetof(KernelDescriptor, kernarg_preload) == 58);

// COMPUTE_PGM_RSRC2.LDS_SIZE for `bytes` of LDS: GFX7-GFX11 count it in 512-byte granules (AMDGPUUsage,
// GRANULATED_LDS_SIZE). The CP takes it from the dispatch, not from the descriptor, which leaves it 0.
inline constexpr uint32_t LdsSizeGranules(uint32_t bytes) { return (bytes + 511) / 512; }
// The most LDS one gfx11 workgroup can have.
inline constexpr uint32_t kMaxLdsBytes = 64 << 10;
// The most work-items one workgroup can have (AMDGPUUsage: .max_flat_workgroup_size defaults to and is at most 1024).
inline constexpr uint32_t kMaxWorkgroupSize = 1024;

class CodeObject {
 public:
  struct Kernel {
    std::string name;
    uint64_t descriptor_offset = 0;  // image offset of NAME.kd
    uint64_t entry_offset = 0;       // image offset of the first instruction
    uint64_t code_size = 0;          // NAME's symbol size (0 when the symbol is absent)
    KernelDescriptor descriptor{};
    // One entry of the metadata's .args, in order (AMDGPUUsage "Code Object V3 to V6 Metadata", kernel argument
    // metadata map): explicit arguments, then the hidden ones (".value_kind" hidden_block_count_x, ...).
    struct Argument {
      std::string value_kind;  // "global_buffer", "by_value", "hidden_group_size_x", ...
      uint32_t offset = 0;     // in the kernarg segment
      uint32_t size = 0;
    };
    std::vector<Argument> arguments;  // empty when the code object has no metadata for the kernel
    bool has_metadata = false;        // amdhsa.kernels describes it
    // The metadata's .reqd_workgroup_size (OpenCL's reqd_work_group_size: the only workgroup size the kernel runs
    // correctly with); 0, 0, 0 when it has none.
    std::array<uint32_t, 3> required_workgroup_size{};

    uint32_t kernarg_size() const { return descriptor.kernarg_size; }
    uint32_t lds_size() const { return descriptor.group_segment_fixed_size; }
    uint32_t scratch_size() const { return descriptor.private_segment_fixed_size; }  // per work-item
    bool wave32() const { return descriptor.wave32(); }
    uint32_t wave_size() const { return wave32() ? 32 : 64; }
  };

  // A relocation whose value depends on where the image is loaded (R_AMDGPU_ABS64, _ABS32_LO, _ABS32_HI of a
  // relocatable object): ImageAt writes `type`'s bytes of load address + `value` at image offset `offset`.
  struct AbsoluteRelocation {
    uint64_t offset = 0;
    uint32_t type = 0;
    uint64_t value = 0;  // S + A, relative to the image
  };

  // Parses and checks `elf`. `source` names it in error messages (a path, or "code object").
  static absl::StatusOr<CodeObject> Parse(std::span<const uint8_t> elf, absl::string_view source = "code object");

  // The loadable image from address 0, the space between and after the file bytes zeroed. A shared object (ET_DYN):
  // its PT_LOAD segments at their virtual addresses. A relocatable object (ET_REL): its SHF_ALLOC sections in
  // section order, each at the next multiple of its sh_addralign (SHT_NOBITS ones zero-filled), with the
  // relocations of SHT_RELA sections applied (absolute ones as if loaded at address 0). Load it at an address
  // aligned to image_alignment(); kernel offsets are relative to it.
  const std::vector<uint8_t>& image() const { return image_; }
  uint64_t image_alignment() const { return alignment_; }
  // The image as it must be at `load_address`: image() with absolute_relocations() resolved against the address
  // (image() itself when there are none, which is the case for every linked code object and for LLVM's kernels).
  std::vector<uint8_t> ImageAt(uint64_t load_address) const;
  const std::vector<AbsoluteRelocation>& absolute_relocations() const { return absolute_relocations_; }
  // Whether the file was a relocatable object (ET_REL) rather than a linked shared object (ET_DYN).
  bool relocatable() const { return relocatable_; }
  // The target, from e_flags: "gfx1100".
  absl::string_view target() const { return AmdgpuMachName(mach_); }
  uint8_t abi_version() const { return abi_version_; }  // ELFABIVERSION_AMDGPU_HSA_V4..V6
  const std::vector<Kernel>& kernels() const { return kernels_; }
  // The kernel called `name`; the error lists the kernels the code object has.
  absl::StatusOr<const Kernel*> FindKernel(absl::string_view name) const;

 private:
  CodeObject() = default;

  std::string source_;
  std::vector<uint8_t> image_;
  uint64_t alignment_ = 1;
  std::vector<AbsoluteRelocation> absolute_relocations_;
  bool relocatable_ = false;
  uint32_t mach_ = 0;
  uint8_t abi_version_ = 0;
  std::vector<Kernel> kernels_;
};

}  // namespace am

#endif  // BAREGPU_AM_CODE_OBJECT_H_
