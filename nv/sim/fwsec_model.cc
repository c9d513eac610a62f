#include "nv/sim/fwsec_model.h"

#include <bit>
#include <cstring>

#include "absl/strings/str_format.h"
#include "firmware/nv/vbios.h"
#include "firmware/nv/virtual_vbios.h"
#include "nv/regs/ad102.h"
#include "nv/regs/known_registers.h"

namespace nv::sim {
namespace {

using namespace regs::ad102;  // NOLINT: the register names are long enough
namespace fw = firmware::nv;

// The fuse bank FWSEC's signature version is read from (nouveau subdev/gsp/ga102.c ga102_gsp_fwsec_signature:
// 0x8241c0 + (ucode_id - 1) * 4 for engine id bit 0x400), taken from nv/regs/known_registers.h by name.
constexpr const regs::known::KnownRegister& FwsecFuse() {
  for (const regs::known::KnownRegister& r : regs::known::kRegisters) {
    if (absl::string_view(r.name) == "FUSE_UCODE_VERSION_ENGINE_ID_BIT10") return r;
  }
  return regs::known::kRegisters[0];  // not reached: the entry exists (checked below)
}
static_assert(absl::string_view(FwsecFuse().name) == "FUSE_UCODE_VERSION_ENGINE_ID_BIT10");

// The WPR2 address registers hold address >> 12 in their VAL field: NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI_ALIGNMENT 0xc
// (tinygrad autogen nv_regs/dev_fb.py, tu102; NVIDIA kernel_gsp_frts_tu102.c compares LO's VAL with
// frtsOffset >> NV_PFB_PRI_MMU_WPR2_ADDR_LO_ALIGNMENT).
constexpr uint32_t kWpr2AddressShift = 12;

uint32_t Le32(absl::string_view bytes, size_t at) {
  uint32_t value = 0;
  if (at + sizeof(value) <= bytes.size()) std::memcpy(&value, bytes.data() + at, sizeof(value));
  return value;
}

absl::string_view View(std::span<const uint8_t> bytes) {
  return absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

HsUcodeOutcome Refuse(uint32_t code, const std::string& why) {
  return HsUcodeOutcome{.mailbox0 = code,
                        .mailbox1 = 0,
                        .log = absl::StrFormat("BROM refused the image (MAILBOX0 = 0x%x): %s", code, why)};
}

// Writes `code` into the error field of NV_PBUS_SW_SCRATCH(index) selected by `mask` << `shift`, keeping the rest.
void WriteScratchError(PrivBus& priv, uint32_t index, uint32_t shift, uint32_t mask, FwsecError code) {
  const uint32_t address = NV_PBUS_SW_SCRATCH::address(index);
  const uint32_t old = priv.Read32(address);
  priv.Write32(address, (old & ~(mask << shift)) | ((static_cast<uint32_t>(code) & mask) << shift));
}

// The READ_VBIOS part both commands carry (nouveau fwsec.c nvkm_gsp_fwsec_patch writes it for FRTS and SB).
std::string CheckReadVbios(const std::string& command) {
  const uint32_t version = Le32(command, 0), size = Le32(command, 4), flags = Le32(command, 20);
  if (version != fw::kFwseclicDescVersion || size != fw::kFrtsReadVbiosSize || flags != fw::kFwseclicReadVbiosFlags) {
    return absl::StrFormat(
        "READ_VBIOS descriptor version %d size %d flags 0x%x; FWSEC expects version %d size %d "
        "flags 0x%x",
        version, size, flags, fw::kFwseclicDescVersion, fw::kFrtsReadVbiosSize, fw::kFwseclicReadVbiosFlags);
  }
  return "";
}

}  // namespace

absl::Status FwsecModel::Recognise(const HsUcodeContext& context) const {
  const absl::string_view magic(fw::kVirtualFwsecMagic, sizeof(fw::kVirtualFwsecMagic));
  if (View(context.imem).substr(0, magic.size()) != magic) {
    return absl::FailedPreconditionError(
        "IMEM does not start with the virtual FWSEC header \"BAREGPU_VFWSEC\": not the virtual FWSEC (a real FWSEC "
        "image cannot run on the virtual GPU; the virtual VBIOS carries the virtual one)");
  }
  return absl::OkStatus();
}

HsUcodeOutcome FwsecModel::Run(HsUcodeContext& context) {
  const BromRegisters& brom = context.brom;
  if (brom.mod_sel_algo != NV_PFALCON2_FALCON_MOD_SEL::ALGO_RSA3K) {
    return Refuse(kFlcnErrHsChkInvalidInput,
                  absl::StrFormat("MOD_SEL.ALGO is %d; FWSEC is signed with RSA3K (ALGO_RSA3K = %d)", brom.mod_sel_algo,
                                  NV_PFALCON2_FALCON_MOD_SEL::ALGO_RSA3K));
  }
  if (brom.ucode_id != fw::kVirtualFwsecUcodeId) {
    return Refuse(kFlcnErrHsChkInvalidInput,
                  absl::StrFormat("BROM_CURR_UCODE_ID is %d; FWSEC's descriptor says UcodeId %d", brom.ucode_id,
                                  fw::kVirtualFwsecUcodeId));
  }
  if (brom.engine_id_mask != fw::kVirtualFwsecEngineIdMask ||
      context.falcon_engine_bit != fw::kVirtualFwsecEngineIdMask) {
    return Refuse(
        kFlcnErrHsChkEngidMismatch,
        absl::StrFormat("BROM_ENGIDMASK is 0x%x on the %s falcon (engine bit 0x%x); FWSEC's EngineIdMask is "
                        "0x%x and it runs on the GSP",
                        brom.engine_id_mask, context.falcon, context.falcon_engine_bit, fw::kVirtualFwsecEngineIdMask));
  }
  const uint32_t imem_size = Le32(View(context.imem), 20), dmem_size = Le32(View(context.imem), 24);
  if (imem_size > context.imem.size() || dmem_size > context.dmem.size() || imem_size % fw::kFalconLoadAlignment != 0) {
    return Refuse(kFlcnErrHsChkInvalidInput,
                  absl::StrFormat("the ucode's IMEM 0x%x / DMEM 0x%x bytes do not fit this falcon's 0x%x / 0x%x",
                                  imem_size, dmem_size, context.imem.size(), context.dmem.size()));
  }
  for (uint32_t block = 0; block < imem_size / fw::kFalconLoadAlignment; ++block) {
    if (block >= context.imem_secure.size() || !context.imem_secure[block]) {
      return Refuse(kFlcnErrHsChkInvalidInput,
                    absl::StrFormat("IMEM block %d (0x%x) was not loaded secure (DMATRFCMD.SEC / IMEMC.SECURE): HS "
                                    "code must come from secure IMEM",
                                    block, block * fw::kFalconLoadAlignment));
    }
  }
  if (context.bootvec != 0) {
    return Refuse(kFlcnErrHsChkInvalidInput,
                  absl::StrFormat("BOOTVEC 0x%x is not FWSEC's entry (IMEMVirtBase 0x0)", context.bootvec));
  }
  const regs::known::KnownRegister& fuse = FwsecFuse();
  const uint32_t fuse_value = context.priv->Read32(fuse.offset + (brom.ucode_id - 1) * fuse.stride);
  const uint32_t fuse_version = static_cast<uint32_t>(std::bit_width(fuse_value));  // ga102.c: fls()
  if (fuse_version >= 16 || (fw::kVirtualFwsecSignatureVersions >> fuse_version & 1) == 0) {
    return Refuse(kFlcnErrHsChkUcodeRevoked,
                  absl::StrFormat("the fuse (0x%x at 0x%x) selects version %d, for which FWSEC has no signature "
                                  "(SignatureVersions 0x%x)",
                                  fuse_value, fuse.offset, fuse_version, fw::kVirtualFwsecSignatureVersions));
  }
  const absl::string_view imem = View(context.imem).substr(0, imem_size);
  const absl::string_view dmem = View(context.dmem).substr(0, dmem_size);
  if (brom.paraaddr0 > dmem.size() || fw::kSignatureSize > dmem.size() - brom.paraaddr0) {
    return Refuse(kFlcnErrHsChkInvalidInput,
                  absl::StrFormat("BROM_PARAADDR(0) 0x%x leaves no room for a 0x%x-byte signature in DMEM (0x%x)",
                                  brom.paraaddr0, fw::kSignatureSize, dmem.size()));
  }
  const absl::string_view claimed_hash = imem.substr(fw::kVirtualFwsecHashOffset, 32);
  const absl::string_view slot = dmem.substr(brom.paraaddr0, fw::kSignatureSize);
  if (slot != fw::VirtualFwsecSignature(fuse_version, claimed_hash)) {
    std::string which = "no signature of this ucode";
    for (uint32_t v = 0; v < 16; ++v) {
      if ((fw::kVirtualFwsecSignatureVersions >> v & 1) != 0 && slot == fw::VirtualFwsecSignature(v, claimed_hash)) {
        which = absl::StrFormat("the signature for fuse version %d", v);
      }
    }
    return Refuse(kFlcnErrBromSignatureFailed,
                  absl::StrFormat("DMEM 0x%x (BROM_PARAADDR(0)) holds %s; the fuse selects version %d", brom.paraaddr0,
                                  which, fuse_version));
  }
  absl::StatusOr<fw::VirtualFwsecRun> run =
      fw::CheckVirtualFwsec("ad102", imem, dmem, brom.paraaddr0, fw::kVirtualFwsecInterfaceOffset, fuse_version);
  if (!run.ok()) return Refuse(kFlcnErrHsChkInvalidInput, std::string(run.status().message()));

  switch (run->init_cmd) {
    case fw::kDmemMapperCmdFrts:
      return Frts(context, run->command);
    case fw::kDmemMapperCmdSb:
      return Sb(context, run->command);
    default:
      // CheckVirtualFwsec accepts only the commands of the ucode's mask, which are these two.
      return Refuse(kFlcnErrHsChkInvalidInput, absl::StrFormat("init_cmd 0x%x has no model", run->init_cmd));
  }
}

HsUcodeOutcome FwsecModel::Frts(HsUcodeContext& context, const std::string& command) {
  PrivBus& priv = *context.priv;
  auto fail = [&](FwsecError code, const std::string& why) {
    WriteScratchError(priv, fw::kFwseclicFrtsScratchIndex, fw::kFwseclicFrtsErrorShift, fw::kFwseclicErrorMask, code);
    return HsUcodeOutcome{
        .mailbox0 = kFlcnOk,
        .mailbox1 = 0,
        .log = absl::StrFormat("FRTS failed with error code %d in NV_PBUS_SW_SCRATCH(0x%x) bits 31:16: %s",
                               static_cast<int>(code), fw::kFwseclicFrtsScratchIndex, why)};
  };
  if (std::string why = CheckReadVbios(command); !why.empty()) return fail(FwsecError::kReadVbiosDesc, why);
  const uint32_t r = fw::kFrtsReadVbiosSize;  // FWSECLIC_FRTS_REGION_DESC follows READ_VBIOS
  const uint32_t version = Le32(command, r), size = Le32(command, r + 4), offset_4k = Le32(command, r + 8);
  const uint32_t size_4k = Le32(command, r + 12), media = Le32(command, r + 16);
  if (version != fw::kFwseclicDescVersion || size != fw::kFrtsRegionSize) {
    return fail(FwsecError::kFrtsRegionDesc,
                absl::StrFormat("FRTS region descriptor version %d size %d; FWSEC expects version %d size %d", version,
                                size, fw::kFwseclicDescVersion, fw::kFrtsRegionSize));
  }
  if (media != fw::kFwseclicFrtsMediaFb) {
    return fail(FwsecError::kFrtsMediaType,
                absl::StrFormat("FRTS media type %d; only FB (%d) exists", media, fw::kFwseclicFrtsMediaFb));
  }
  constexpr uint32_t kFrtsSize4k = NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0::WPR_SIZE_1MB_IN_4K;
  if (size_4k != kFrtsSize4k) {
    return fail(FwsecError::kFrtsRegionSize,
                absl::StrFormat("FRTS region size 0x%x (4 KiB units); FRTS is 1 MiB (0x%x)", size_4k, kFrtsSize4k));
  }
  const uint64_t start = uint64_t{offset_4k} << fw::kFrtsRegionUnitShift;
  const uint64_t end = start + (uint64_t{size_4k} << fw::kFrtsRegionUnitShift);
  if (offset_4k == 0 || end > fb_size_) {
    return fail(FwsecError::kFrtsOutsideFb,
                absl::StrFormat("FRTS region 0x%x-0x%x does not lie inside FB (0x%x bytes) above offset 0", start, end,
                                fb_size_));
  }
  if (NV_PFB_PRI_MMU_WPR2_ADDR_HI::FromRaw(priv.Read32(NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset)).val() != 0) {
    return fail(FwsecError::kWpr2AlreadyUp, "WPR2 is already up (NV_PFB_PRI_MMU_WPR2_ADDR_HI.VAL != 0)");
  }
  // LO = the region's first 4 KiB page; HI = its end >> 12. Whether HI holds the end or the last page is in no source
  // for AD102: NVIDIA's kgspExecuteFwsecFrts_TU102 checks only LO == frtsOffset >> 12 and HI != 0; RM's
  // kbusCarveoutWprs_GB100 reads Blackwell's HUBMMU copy of these registers as [LO << 12, (HI << 12) - 1], so the
  // exclusive end is chosen.
  priv.Write32(NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset,
               NV_PFB_PRI_MMU_WPR2_ADDR_LO{}.val(static_cast<uint32_t>(start >> kWpr2AddressShift)).raw());
  priv.Write32(NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset,
               NV_PFB_PRI_MMU_WPR2_ADDR_HI{}.val(static_cast<uint32_t>(end >> kWpr2AddressShift)).raw());
  WriteScratchError(priv, fw::kFwseclicFrtsScratchIndex, fw::kFwseclicFrtsErrorShift, fw::kFwseclicErrorMask,
                    FwsecError::kNone);
  return HsUcodeOutcome{
      .mailbox0 = kFlcnOk, .mailbox1 = 0, .log = absl::StrFormat("FRTS: WPR2 up at FB 0x%x-0x%x", start, end)};
}

HsUcodeOutcome FwsecModel::Sb(HsUcodeContext& context, const std::string& command) {
  const std::string why = CheckReadVbios(command);
  const FwsecError code = why.empty() ? FwsecError::kNone : FwsecError::kReadVbiosDesc;
  WriteScratchError(*context.priv, fw::kFwseclicSbScratchIndex, 0, fw::kFwseclicErrorMask, code);
  return HsUcodeOutcome{.mailbox0 = kFlcnOk,
                        .mailbox1 = 0,
                        .log = why.empty()
                                   ? std::string("SB: done")
                                   : absl::StrFormat("SB failed with error code %d: %s", static_cast<int>(code), why)};
}

}  // namespace nv::sim
