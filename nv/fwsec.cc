#include "nv/fwsec.h"

#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "nv/regs/ad102.h"
#include "nv/regs/flcn_status.h"
#include "nv/regs/known_registers.h"

namespace nv {
namespace {

using namespace regs::ad102;  // NOLINT: the register names are long enough
namespace fw = firmware::nv;

static_assert(regs::known::FindKnownRegister("PROM_DATA") != nullptr);
static_assert(regs::known::FindKnownRegister("FUSE_UCODE_VERSION_ENGINE_ID_BIT10") != nullptr);
constexpr const regs::known::KnownRegister& kPromData = *regs::known::FindKnownRegister("PROM_DATA");
constexpr const regs::known::KnownRegister& kFwsecFuse =
    *regs::known::FindKnownRegister("FUSE_UCODE_VERSION_ENGINE_ID_BIT10");
// The engine id mask bit whose fuse bank ga102_gsp_fwsec_signature reads (subdev/gsp/ga102.c: engine_id & 0x400).
constexpr uint32_t kGspEngineIdBit = 0x400;
// NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI hold address >> 12 in VAL (tinygrad autogen nv_regs/dev_fb.py, tu102:
// NV_PFB_PRI_MMU_WPR2_ADDR_LO_ALIGNMENT 0xc).
constexpr uint32_t kWpr2AddressShift = 12;
constexpr uint64_t kFrtsUnit = uint64_t{1} << fw::kFrtsRegionUnitShift;

void PutLe32(std::string& bytes, size_t at, uint32_t value) { std::memcpy(bytes.data() + at, &value, sizeof(value)); }
void PutLe64(std::string& bytes, size_t at, uint64_t value) { std::memcpy(bytes.data() + at, &value, sizeof(value)); }

bool Within(uint64_t offset, uint64_t size, uint64_t limit) { return offset <= limit && size <= limit - offset; }

absl::string_view CommandName(uint32_t init_cmd) {
  return init_cmd == fw::kDmemMapperCmdFrts ? "FWSEC-FRTS" : init_cmd == fw::kDmemMapperCmdSb ? "FWSEC-SB" : "FWSEC";
}

// Places the image, resets the GSP falcon and runs FWSEC; an error unless it halted with MAILBOX0 = 0 (what nouveau's
// nvkm_gsp_fwsec passes as mbox0_ok).
absl::Status Run(Falcon& gsp, const FwsecImage& image, const FwsecPlacement& placement) {
  const absl::string_view what = CommandName(image.init_cmd);
  if (!placement.write) return absl::InvalidArgumentError(absl::StrFormat("%s: no way to place the image", what));
  BAREGPU_RETURN_IF_ERROR(placement.write(placement.address, image.bytes));
  BAREGPU_RETURN_IF_ERROR(gsp.Reset());
  const HsUcodeLoad load{
      .image_address = placement.address,
      .target = placement.target,
      .imem_image_offset = 0,
      .imem_base = image.imem_phys_base,
      .imem_size = image.imem_size,
      .dmem_image_offset = image.dmem_offset,
      .dmem_base = image.dmem_phys_base,
      .dmem_size = image.dmem_size,
      .boot_vector = image.imem_virt_base,
      .pkc_offset = image.pkc_offset,
      .engine_id_mask = image.engine_id_mask,
      .ucode_id = image.ucode_id,
      .mailboxes = {},
  };
  BAREGPU_ASSIGN_OR_RETURN(const FalconMailboxes mailboxes, gsp.ExecuteHs(load, what));
  if (mailboxes.mailbox0 != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s falcon: %s halted with MAILBOX0 = 0x%08x, %s, MAILBOX1 = 0x%08x: the BROM or FWSEC refused the image "
        "(check the signature picked for the fuse, signature %d, and the patched DMEMMAPPER command 0x%x)",
        gsp.name(), what, mailboxes.mailbox0, regs::flcn::FlcnStatusName(mailboxes.mailbox0), mailboxes.mailbox1,
        image.signature_index, image.init_cmd));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ReadVbiosFromProm(pci::Mmio bar0) {
  std::string rom(uint64_t{kPromData.count} * kPromData.stride, '\0');
  for (uint32_t i = 0; i < kPromData.count; ++i) PutLe32(rom, uint64_t{i} * 4, bar0.Read32(kPromData.offset + i * 4));
  return rom;
}

absl::StatusOr<uint32_t> ReadFwsecFuse(pci::Mmio bar0, uint32_t engine_id_mask, uint32_t ucode_id) {
  if ((engine_id_mask & kGspEngineIdBit) == 0 || ucode_id == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "FWSEC's descriptor has EngineIdMask 0x%x and UcodeId %d: FWSEC's signature fuse is known only for engine "
        "bit 0x%x and ucode ids from 1 (nouveau ga102_gsp_fwsec_signature)",
        engine_id_mask, ucode_id, kGspEngineIdBit));
  }
  return bar0.Read32(kFwsecFuse.offset + (ucode_id - 1) * kFwsecFuse.stride);
}

absl::StatusOr<FwsecImage> BuildFwsecImage(const fw::Vbios& vbios, absl::string_view rom, uint32_t init_cmd,
                                           const FrtsRegion& frts, uint32_t fuse_register) {
  if (init_cmd != fw::kDmemMapperCmdFrts && init_cmd != fw::kDmemMapperCmdSb) {
    return absl::InvalidArgumentError(absl::StrFormat("init_cmd 0x%x: FWSEC commands are FRTS (0x%x) and SB (0x%x)",
                                                      init_cmd, fw::kDmemMapperCmdFrts, fw::kDmemMapperCmdSb));
  }
  if (!vbios.fwsec) {
    return absl::NotFoundError("the VBIOS has no FWSEC_PROD entry in its falcon ucode table (BIT token 'p')");
  }
  const fw::Fwsec& fwsec = *vbios.fwsec;
  const fw::FwsecDescriptor& desc = fwsec.desc;
  if (desc.version != 3) {
    return absl::UnimplementedError(absl::StrFormat(
        "FWSEC descriptor version %d at ROM offset 0x%x: only version 3 (GA10x/AD10x) is supported; version 2 runs "
        "through nouveau's acr/bl bootloader, which is not loaded here",
        desc.version, desc.offset));
  }
  const uint64_t ucode_size = uint64_t{desc.imem_load_size} + desc.dmem_load_size;
  if (!Within(desc.ucode_offset, ucode_size, rom.size())) {
    return absl::DataLossError(absl::StrFormat("FWSEC ucode at ROM offset 0x%x, 0x%x bytes, runs past the ROM (0x%x)",
                                               desc.ucode_offset, ucode_size, rom.size()));
  }
  FwsecImage image;
  image.imem_size = desc.imem_load_size;
  image.imem_phys_base = desc.imem_phys_base;
  image.imem_virt_base = desc.imem_virt_base;
  image.dmem_offset = desc.imem_load_size;
  // fwsec.c nvkm_gsp_fwsec_v3: dmem_size = ALIGN(DMEMLoadSize, 256).
  image.dmem_size =
      (desc.dmem_load_size + fw::kFalconLoadAlignment - 1) / fw::kFalconLoadAlignment * fw::kFalconLoadAlignment;
  image.dmem_phys_base = desc.dmem_phys_base;
  image.pkc_offset = desc.pkc_data_offset;
  image.engine_id_mask = desc.engine_id_mask;
  image.ucode_id = desc.ucode_id;
  image.init_cmd = init_cmd;
  image.bytes = std::string(rom.substr(desc.ucode_offset, ucode_size));
  image.bytes.resize(uint64_t{image.dmem_offset} + image.dmem_size, '\0');
  const uint32_t dmem = image.dmem_offset;
  const uint32_t dmem_size = desc.dmem_load_size;

  // The DMEMMAPPER's init_cmd and the command buffer (fwsec.c nvkm_gsp_fwsec_patch).
  const fw::DmemMapper& mapper = fwsec.dmem_mapper;
  if (!Within(mapper.dmem_offset, uint64_t{fw::kDmemMapperInitCmdOffset} + 4, dmem_size)) {
    return absl::DataLossError(absl::StrFormat("FWSEC's DMEMMAPPER at DMEM 0x%x lies outside DMEM (0x%x bytes)",
                                               mapper.dmem_offset, dmem_size));
  }
  PutLe32(image.bytes, dmem + mapper.dmem_offset + fw::kDmemMapperInitCmdOffset, init_cmd);
  const uint32_t needed = init_cmd == fw::kDmemMapperCmdFrts ? fw::kFrtsCommandSize : fw::kFrtsReadVbiosSize;
  if (mapper.cmd_in_buffer_size < needed || !Within(mapper.cmd_in_buffer_offset, needed, dmem_size)) {
    return absl::DataLossError(absl::StrFormat(
        "FWSEC's command buffer (DMEM 0x%x, 0x%x bytes) cannot hold the %s command (0x%x bytes) inside DMEM (0x%x)",
        mapper.cmd_in_buffer_offset, mapper.cmd_in_buffer_size, CommandName(init_cmd), needed, dmem_size));
  }
  const uint32_t cmd = dmem + mapper.cmd_in_buffer_offset;
  PutLe32(image.bytes, cmd + 0, fw::kFwseclicDescVersion);  // FWSECLIC_READ_VBIOS_DESC
  PutLe32(image.bytes, cmd + 4, fw::kFrtsReadVbiosSize);
  PutLe64(image.bytes, cmd + 8, 0);   // gfwImageOffset
  PutLe32(image.bytes, cmd + 16, 0);  // gfwImageSize
  PutLe32(image.bytes, cmd + 20, fw::kFwseclicReadVbiosFlags);
  if (init_cmd == fw::kDmemMapperCmdFrts) {
    if (frts.offset % kFrtsUnit != 0 || frts.size % kFrtsUnit != 0 || frts.size == 0 ||
        (frts.offset >> fw::kFrtsRegionUnitShift) > std::numeric_limits<uint32_t>::max() ||
        (frts.size >> fw::kFrtsRegionUnitShift) > std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("FRTS region 0x%x + 0x%x: offset and size must be multiples of 4 KiB that fit FWSEC's 32-bit "
                          "4 KiB counts (the size must not be 0)",
                          frts.offset, frts.size));
    }
    const uint32_t region = cmd + fw::kFrtsReadVbiosSize;  // FWSECLIC_FRTS_REGION_DESC
    PutLe32(image.bytes, region + 0, fw::kFwseclicDescVersion);
    PutLe32(image.bytes, region + 4, fw::kFrtsRegionSize);
    PutLe32(image.bytes, region + 8, static_cast<uint32_t>(frts.offset >> fw::kFrtsRegionUnitShift));
    PutLe32(image.bytes, region + 12, static_cast<uint32_t>(frts.size >> fw::kFrtsRegionUnitShift));
    PutLe32(image.bytes, region + 16, fw::kFwseclicFrtsMediaFb);
  }

  // The signature the fuse selects, at the PKC offset (nvkm_falcon_fw_sign + ga102_gsp_fwsec_signature).
  BAREGPU_ASSIGN_OR_RETURN(image.signature_index, fw::FwsecSignatureIndex(desc.signature_versions, fuse_register));
  if (image.signature_index >= desc.signature_count ||
      !Within(desc.signatures_offset + uint64_t{image.signature_index} * fw::kSignatureSize, fw::kSignatureSize,
              rom.size())) {
    return absl::DataLossError(absl::StrFormat(
        "the fuse (0x%x) selects signature %d, but the descriptor at ROM 0x%x has %d (SignatureVersions 0x%x)",
        fuse_register, image.signature_index, desc.offset, desc.signature_count, desc.signature_versions));
  }
  if (!Within(desc.pkc_data_offset, fw::kSignatureSize, dmem_size)) {
    return absl::DataLossError(absl::StrFormat(
        "FWSEC's PKCDataOffset 0x%x leaves no room for a signature in DMEM (0x%x)", desc.pkc_data_offset, dmem_size));
  }
  const absl::string_view signature =
      rom.substr(desc.signatures_offset + uint64_t{image.signature_index} * fw::kSignatureSize, fw::kSignatureSize);
  image.bytes.replace(dmem + desc.pkc_data_offset, signature.size(), signature.data(), signature.size());
  return image;
}

absl::StatusOr<Wpr2Registers> RunFwsecFrts(pci::Mmio bar0, Falcon& gsp, const FwsecImage& image,
                                           const FwsecPlacement& placement, const FrtsRegion& frts) {
  if (image.init_cmd != fw::kDmemMapperCmdFrts) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the image was built for init_cmd 0x%x, not FRTS", image.init_cmd));
  }
  BAREGPU_RETURN_IF_ERROR(Run(gsp, image, placement));
  const uint32_t scratch = bar0.Read32(NV_PBUS_SW_SCRATCH::address(fw::kFwseclicFrtsScratchIndex));
  const uint32_t error = scratch >> fw::kFwseclicFrtsErrorShift & fw::kFwseclicErrorMask;
  if (error != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "FWSEC-FRTS reported error code 0x%x (NV_PBUS_SW_SCRATCH(0x%x) = 0x%08x, bits 31:16) for the FRTS region FB "
        "0x%x + 0x%x: the region or the command was refused; WPR2 is not up",
        error, fw::kFwseclicFrtsScratchIndex, scratch, frts.offset, frts.size));
  }
  const auto lo = NV_PFB_PRI_MMU_WPR2_ADDR_LO::FromRaw(bar0.Read32(NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset));
  const auto hi = NV_PFB_PRI_MMU_WPR2_ADDR_HI::FromRaw(bar0.Read32(NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset));
  if (hi.val() == 0) {
    return absl::FailedPreconditionError(absl::StrFormat("FWSEC-FRTS reported no error but WPR2 is not up: %s, %s",
                                                         DescribeRegister(lo), DescribeRegister(hi)));
  }
  if (uint64_t{lo.val()} != frts.offset >> kWpr2AddressShift) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "FWSEC-FRTS put WPR2 at an unexpected place: %s (FB 0x%x), expected the FRTS offset 0x%x; %s",
        DescribeRegister(lo), uint64_t{lo.val()} << kWpr2AddressShift, frts.offset, DescribeRegister(hi)));
  }
  return Wpr2Registers{.lo = lo.raw(), .hi = hi.raw()};
}

absl::Status RunFwsecSb(pci::Mmio bar0, Falcon& gsp, const FwsecImage& image, const FwsecPlacement& placement) {
  if (image.init_cmd != fw::kDmemMapperCmdSb) {
    return absl::InvalidArgumentError(absl::StrFormat("the image was built for init_cmd 0x%x, not SB", image.init_cmd));
  }
  BAREGPU_RETURN_IF_ERROR(Run(gsp, image, placement));
  const uint32_t scratch = bar0.Read32(NV_PBUS_SW_SCRATCH::address(fw::kFwseclicSbScratchIndex));
  if ((scratch & fw::kFwseclicErrorMask) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("FWSEC-SB reported error code 0x%x (NV_PBUS_SW_SCRATCH(0x%x) = 0x%08x, bits 15:0)",
                        scratch & fw::kFwseclicErrorMask, fw::kFwseclicSbScratchIndex, scratch));
  }
  return absl::OkStatus();
}

namespace {

// FWSEC from the ROM read through the PROM window, patched for `init_cmd` (FRTS with `frts`).
absl::StatusOr<FwsecImage> FwsecImageFromProm(pci::Mmio bar0, uint32_t init_cmd, const FrtsRegion& frts) {
  const std::string rom = ReadVbiosFromProm(bar0);
  BAREGPU_ASSIGN_OR_RETURN(const fw::Vbios vbios, fw::ParseVbios("the VBIOS read through BAR0's PROM window", rom));
  if (!vbios.fwsec) return absl::NotFoundError("the GPU's VBIOS has no FWSEC_PROD ucode");
  BAREGPU_ASSIGN_OR_RETURN(const uint32_t fuse,
                           ReadFwsecFuse(bar0, vbios.fwsec->desc.engine_id_mask, vbios.fwsec->desc.ucode_id));
  return BuildFwsecImage(vbios, rom, init_cmd, frts, fuse);
}

}  // namespace

absl::Status FwsecSb(pci::Mmio bar0, Falcon& gsp, const FwsecPlacement& placement) {
  BAREGPU_ASSIGN_OR_RETURN(const FwsecImage image, FwsecImageFromProm(bar0, fw::kDmemMapperCmdSb, FrtsRegion{}));
  return RunFwsecSb(bar0, gsp, image, placement);
}

absl::StatusOr<Wpr2Registers> FwsecFrts(pci::Mmio bar0, Falcon& gsp, const FrtsRegion& frts,
                                        const FwsecPlacement& placement) {
  BAREGPU_ASSIGN_OR_RETURN(const FwsecImage image, FwsecImageFromProm(bar0, fw::kDmemMapperCmdFrts, frts));
  return RunFwsecFrts(bar0, gsp, image, placement, frts);
}

}  // namespace nv
