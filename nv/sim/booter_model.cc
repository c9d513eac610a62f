#include "nv/sim/booter_model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "nv/gsp/layouts.h"
#include "nv/regs/ad102.h"
#include "nv/regs/gsp_constants.h"
#include "nv/regs/known_registers.h"
#include "nv/sim/flcn_status.h"

namespace nv::sim {
namespace {

using namespace regs::ad102;  // NOLINT: the register names are long enough
using gsp::GspFwWprMeta;

// A falcon's IMEM is tagged and secured per 256-byte block (nouveau nvkm_falcon_dma_wr moves 256-byte blocks;
// ga102_flcn_dma_init writes the DMA base >> 8), which is what HsUcodeContext::imem_secure counts in.
constexpr uint64_t kFalconBlockSize = 256;

// NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI hold address >> 12 in VAL: NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI_ALIGNMENT 0xc (tinygrad
// autogen nv_regs/dev_fb.py, tu102). HI is read as the exclusive end, as the virtual FWSEC writes it (nv/sim
// fwsec_model.cc explains the choice: RM's kbusCarveoutWprs_GB100 reads Blackwell's copy as [LO << 12, HI << 12)).
constexpr uint32_t kWpr2Shift = 12;
constexpr uint64_t kWpr2MaxPage = 0xfffffff;  // VAL is bits 31:4: 28 bits of page number

// Alignments. gsp_fw_wpr_meta.h's picture: gspFwWprStart and gspFwWprEnd "128K aligned", fbSize "1M aligned".
// Where the header says nothing, the alignment nouveau's r535_gsp_oneinit gives the region and tinygrad's
// init_wpr_meta gives it too: the ELF ALIGN_DOWN 0x10000 / round_down 0x10000, the WPR heap ALIGN_DOWN 0x100000 /
// round_down 0x100000; the boot binary: nouveau ALIGN_DOWN 0x1000 (tinygrad's frtsOffset - size is 4 KiB-aligned for
// the 535.113.01 bootloaders, 0x8000 and 0x5000 bytes); FRTS: FWSEC takes it in 4 KiB units (nouveau fwsec.c
// frts_region.addr = addr >> 12).
constexpr uint64_t kWprBoundAlignment = 0x20000;
constexpr uint64_t kFbSizeAlignment = 0x100000;
constexpr uint64_t kGspFwAlignment = 0x10000;
constexpr uint64_t kHeapAlignment = 0x100000;
constexpr uint64_t kBootBinAlignment = 0x1000;
constexpr uint64_t kFrtsAlignment = 0x1000;

// nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_sr_meta.h (nouveau's 535.113.01 copy): what the mailboxes point at when
// nouveau resumes (r535_gsp_init) or suspends (r535_gsp_fini) instead.
constexpr uint64_t kGspFwSrMetaMagic = 0x8a3bb9e6c6c39d93ull;
// r535_gsp_fini: mbox0 = mbox1 = 0xff unless suspending.
constexpr uint32_t kUnloadNoSuspendMailbox = 0xff;

// LibOS radix3 (libos_init_args.h): pages of LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE holding 64-bit addresses.
constexpr uint64_t kRadixPage = regs::gsp::LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE;
static_assert(kRadixPage == uint64_t{1} << regs::gsp::LIBOS_MEMORY_REGION_RADIX_PAGE_LOG2);
constexpr uint64_t kRadixEntries = kRadixPage / sizeof(uint64_t);

// How much system memory is compared per DMA read.
constexpr uint64_t kCompareChunk = 0x10000;

absl::string_view View(std::span<const uint8_t> bytes) {
  return absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

uint64_t Le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Offset of the first byte where a and b differ (the shorter's size when one is a prefix of the other).
uint64_t FirstDifference(absl::string_view a, absl::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  return static_cast<uint64_t>(std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin());
}

BooterOutcome Refuse(const HsUcodeContext& in, absl::string_view who, uint32_t code, absl::string_view why) {
  BooterOutcome out;
  out.ok = false;
  out.mailbox0 = code;
  out.mailbox1 = in.mailbox1;  // what the booter leaves in MAILBOX1 on failure is in no source: left as written
  out.log = absl::StrFormat("%s refused (MAILBOX0 = 0x%x): %s", who, code, why);
  return out;
}

absl::Status CheckSeams(const HsUcodeContext& in, absl::string_view name) {
  if (in.priv == nullptr || in.memory == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the inputs lack the priv bus or device memory"));
  }
  return absl::OkStatus();
}

absl::Status RecogniseCode(const BooterUcodeFile& file, absl::string_view name, const HsUcodeContext& in) {
  const absl::string_view imem = View(in.imem);
  if (imem.size() < file.code.size()) {
    return absl::NotFoundError(absl::StrFormat("IMEM holds 0x%x bytes, fewer than %s's 0x%x bytes of code (%s)",
                                               imem.size(), name, file.code.size(), file.path));
  }
  const uint64_t at = FirstDifference(imem.substr(0, file.code.size()), file.code);
  if (at < file.code.size()) {
    return absl::NotFoundError(absl::StrFormat(
        "IMEM is not %s: it differs from the file's app[0] (%s, payload 0x%x + 0x%x bytes) at IMEM 0x%x", name,
        file.path, file.header.load.apps[0].offset, file.code.size(), at));
  }
  return absl::OkStatus();
}

// The fuse bank ga100_flcn_fw_signature reads for a ucode's engine_id bit, from nv/regs/known_registers.h.
const regs::known::KnownRegister* FuseBank(uint32_t engine_id) {
  absl::string_view name;
  if (engine_id & 0x1) {
    name = "FUSE_UCODE_VERSION_ENGINE_ID_BIT0";
  } else if (engine_id & 0x4) {
    name = "FUSE_UCODE_VERSION_ENGINE_ID_BIT2";
  } else if (engine_id & 0x400) {
    name = "FUSE_UCODE_VERSION_ENGINE_ID_BIT10";
  } else {
    return nullptr;
  }
  for (const regs::known::KnownRegister& r : regs::known::kRegisters) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

// The BROM's checks before the booter runs; nullopt when it may run.
std::optional<BooterOutcome> CheckBrom(const BooterUcodeFile& file, absl::string_view name, const HsUcodeContext& in) {
  const firmware::nv::Booter& h = file.header;
  const BromRegisters& brom = in.brom;
  auto refuse = [&](uint32_t code, absl::string_view why) { return Refuse(in, "BROM", code, why); };
  if (brom.mod_sel_algo != NV_PFALCON2_FALCON_MOD_SEL::ALGO_RSA3K) {
    return refuse(flcn::kErrHsChkInvalidInput,
                  absl::StrFormat("NV_PFALCON2_FALCON_MOD_SEL.ALGO = 0x%x; %s's signatures are RSA-3072 (ALGO_RSA3K "
                                  "0x%x, what nouveau ga102_flcn_fw_boot writes)",
                                  brom.mod_sel_algo, name, NV_PFALCON2_FALCON_MOD_SEL::ALGO_RSA3K));
  }
  if (brom.ucode_id != h.ucode_id) {
    return refuse(flcn::kErrHsChkInvalidInput,
                  absl::StrFormat("NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID = %d; %s is ucode %d (its HS header's meta "
                                  "ucode_id, nouveau ga102_gsp_booter_ctor fw->ucode_id)",
                                  brom.ucode_id, name, h.ucode_id));
  }
  if (brom.engine_id_mask != h.engine_id) {
    return refuse(flcn::kErrHsChkEngidMismatch,
                  absl::StrFormat("NV_PFALCON2_FALCON_BROM_ENGIDMASK = 0x%x; %s is signed for engine mask 0x%x (its "
                                  "HS header's meta engine_id: SEC2)",
                                  brom.engine_id_mask, name, h.engine_id));
  }
  if (in.falcon_engine_bit != h.engine_id) {
    return refuse(flcn::kErrHsChkEngidMismatch,
                  absl::StrFormat("%s is signed for engine mask 0x%x (SEC2) but runs on the falcon with engine bit "
                                  "0x%x (nouveau runs the booters on SEC2, r535_gsp_oneinit)",
                                  name, h.engine_id, in.falcon_engine_bit));
  }
  const uint32_t entry = h.load.apps[0].offset;
  if (in.bootvec != entry) {
    return refuse(flcn::kErrHsChkInvalidInput,
                  absl::StrFormat("NV_PFALCON_FALCON_BOOTVEC = 0x%x; %s starts at its app[0] offset 0x%x (nouveau "
                                  "fw->boot_addr, tinygrad execute_hs imemVa)",
                                  in.bootvec, name, entry));
  }
  const uint64_t blocks = (file.code.size() + kFalconBlockSize - 1) / kFalconBlockSize;
  for (uint64_t b = 0; b < blocks; ++b) {
    if (b >= in.imem_secure.size() || !in.imem_secure[b]) {
      return refuse(flcn::kErrHsChkInvalidInput,
                    absl::StrFormat("IMEM block %d (0x%x) was not loaded secure; heavy-secure code must be "
                                    "(nouveau ga102_flcn_fw_load loads IMEM with sec = true)",
                                    b, b * kFalconBlockSize));
    }
  }
  // The signature the chip's fuse selects (ga100_flcn_fw_signature).
  const regs::known::KnownRegister* bank = FuseBank(h.engine_id);
  if (bank == nullptr || h.ucode_id == 0) {
    return refuse(flcn::kErrHsChkInvalidInput,
                  absl::StrFormat("%s's engine_id 0x%x / ucode_id %d name no fuse", name, h.engine_id, h.ucode_id));
  }
  const uint32_t fuse_address = bank->offset + (h.ucode_id - 1) * bank->stride;
  const uint32_t fuse = in.priv->Read32(fuse_address);
  uint32_t index = 0;
  if (fuse != 0) {
    const uint32_t fused = static_cast<uint32_t>(std::bit_width(fuse));  // fls()
    if (h.fuse_ver < fused || h.fuse_ver - fused >= h.num_sig) {
      return refuse(flcn::kErrHsChkUcodeRevoked,
                    absl::StrFormat("the fuse %s at 0x%x reads 0x%x (version %d); %s is version %d with %d "
                                    "signatures: revoked",
                                    bank->name, fuse_address, fuse, fused, name, h.fuse_ver, h.num_sig));
    }
    index = h.fuse_ver - fused;
  } else {
    index = h.num_sig - 1;
  }
  if (brom.paraaddr0 != file.signature_offset) {
    return refuse(flcn::kErrBromSignFail,
                  absl::StrFormat("NV_PFALCON2_FALCON_BROM_PARAADDR(0) = 0x%x; %s's signature slot is DMEM 0x%x "
                                  "(patch_loc 0x%x - os_data_offset 0x%x, nouveau fw->dmem_sign)",
                                  brom.paraaddr0, name, file.signature_offset, h.patch_loc, h.load.os_data_offset));
  }
  const absl::string_view dmem = View(in.dmem);
  if (dmem.size() < file.data.size()) {
    return refuse(flcn::kErrBromSignFail, absl::StrFormat("DMEM holds 0x%x bytes, fewer than %s's 0x%x bytes of data",
                                                          dmem.size(), name, file.data.size()));
  }
  const uint64_t slot = file.signature_offset, slot_end = slot + h.sig_size;
  const absl::string_view expected = file.data;
  for (const auto& [from, to] : {std::pair{uint64_t{0}, slot}, std::pair{slot_end, uint64_t{expected.size()}}}) {
    const uint64_t at = from + FirstDifference(dmem.substr(from, to - from), expected.substr(from, to - from));
    if (at < to) {
      return refuse(flcn::kErrBromSignFail,
                    absl::StrFormat("DMEM 0x%x differs from %s's data (%s, payload 0x%x + 0x%x): the signature "
                                    "covers it",
                                    at, name, file.path, h.load.os_data_offset, at));
    }
  }
  const absl::string_view patched = dmem.substr(slot, h.sig_size);
  if (patched != file.signatures[index]) {
    std::string holds = "bytes that are none of the file's signatures";
    if (patched == expected.substr(slot, h.sig_size)) {
      holds = "the file's unpatched signature slot (no signature was patched in)";
    } else {
      for (size_t i = 0; i < file.signatures.size(); ++i) {
        if (patched == file.signatures[i]) holds = absl::StrFormat("signature %d", i);
      }
    }
    return refuse(flcn::kErrBromSignFail,
                  absl::StrFormat("DMEM 0x%x (BROM_PARAADDR(0)) holds %s; the fuse %s at 0x%x reads 0x%x, which "
                                  "selects signature %d of %d (ga100_flcn_fw_signature)",
                                  slot, holds, bank->name, fuse_address, fuse, index, h.num_sig));
  }
  return std::nullopt;
}

// A region of FB the meta describes.
struct Region {
  const char* name;
  uint64_t start;
  uint64_t size;
};

// Reads `expected.size()` bytes of system memory at `address` in chunks and compares them. Returns "" when equal;
// otherwise fills `code` and says what went wrong (`what` names the source of `address`).
std::string CompareSystem(DeviceMemory& memory, uint64_t address, absl::string_view expected, absl::string_view what,
                          absl::string_view reference, uint32_t* code) {
  std::vector<uint8_t> buffer(std::min<uint64_t>(kCompareChunk, expected.size()));
  for (uint64_t done = 0; done < expected.size();) {
    const uint64_t n = std::min<uint64_t>(kCompareChunk, expected.size() - done);
    const std::span<uint8_t> chunk(buffer.data(), n);
    if (address + done < address || !memory.ReadSystem(address + done, chunk)) {
      *code = flcn::kErrDmaNack;
      return absl::StrFormat("%s: system memory 0x%x + 0x%x (0x%x bytes) is not readable", what, address, done, n);
    }
    const uint64_t at = FirstDifference(View(chunk), expected.substr(done, n));
    if (at < n) {
      *code = flcn::kErrAuthGspRmHandoffFailed;
      return absl::StrFormat("%s: system memory 0x%x differs from %s at byte 0x%x", what, address + done + at,
                             reference, done + at);
    }
    done += n;
  }
  return "";
}

// Walks the radix3 table at `root` to the image's pages and compares them with `image`. Returns "" when every page
// holds the image; otherwise fills `code` and says which entry led where.
std::string CheckRadix3(DeviceMemory& memory, uint64_t root, absl::string_view image, absl::string_view reference,
                        uint32_t* code) {
  auto unreadable = [&](std::string what) {
    *code = flcn::kErrDmaNack;
    return what;
  };
  auto misaligned = [&](absl::string_view what, uint64_t address) {
    *code = flcn::kErrAuthGspRmHandoffFailed;
    return absl::StrFormat("%s 0x%x is not a %d-byte page (LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE)", what, address,
                           kRadixPage);
  };
  if (root % kRadixPage != 0) return misaligned("sysmemAddrOfRadix3Elf (the radix3 level-0 page)", root);
  std::array<uint8_t, kRadixPage> level1{}, level2{}, data{};
  uint64_t level1_index = UINT64_MAX, level2_index = UINT64_MAX, level1_address = 0, level2_address = 0;
  const uint64_t pages = (image.size() + kRadixPage - 1) / kRadixPage;
  for (uint64_t page = 0; page < pages; ++page) {
    // Page p is entry p % 512 of level-2 page p / 512, which is entry (p / 512) % 512 of level-1 page p / 512^2,
    // which is entry p / 512^2 of the level-0 page (nouveau nvkm_gsp_radix3_sg; tinygrad init_gsp_image).
    const uint64_t l1 = page / (kRadixEntries * kRadixEntries), l2 = page / kRadixEntries;
    if (l1 != level1_index) {
      uint8_t entry[sizeof(uint64_t)];
      if (!memory.ReadSystem(root + l1 * sizeof(uint64_t), entry)) {
        return unreadable(absl::StrFormat("radix3 level-0 entry %d at 0x%x is not readable", l1, root + l1 * 8));
      }
      level1_address = Le64(entry);
      if (level1_address % kRadixPage != 0) {
        return misaligned(absl::StrFormat("radix3 level-0 entry %d (level-1 page)", l1), level1_address);
      }
      if (!memory.ReadSystem(level1_address, level1)) {
        return unreadable(absl::StrFormat("radix3 level-1 page %d at 0x%x (level-0 entry %d) is not readable", l1,
                                          level1_address, l1));
      }
      level1_index = l1;
    }
    if (l2 != level2_index) {
      const uint64_t entry = l2 % kRadixEntries;
      level2_address = Le64(&level1[entry * sizeof(uint64_t)]);
      if (level2_address % kRadixPage != 0) {
        return misaligned(
            absl::StrFormat("radix3 level-1 page 0x%x entry %d (level-2 page %d)", level1_address, entry, l2),
            level2_address);
      }
      if (!memory.ReadSystem(level2_address, level2)) {
        return unreadable(absl::StrFormat("radix3 level-2 page %d at 0x%x (level-1 page 0x%x entry %d) is not readable",
                                          l2, level2_address, level1_address, entry));
      }
      level2_index = l2;
    }
    const uint64_t entry = page % kRadixEntries;
    const uint64_t address = Le64(&level2[entry * sizeof(uint64_t)]);
    if (address % kRadixPage != 0) {
      return misaligned(
          absl::StrFormat("radix3 level-2 page %d (0x%x) entry %d (image page %d)", l2, level2_address, entry, page),
          address);
    }
    const uint64_t offset = page * kRadixPage, n = std::min<uint64_t>(kRadixPage, image.size() - offset);
    const std::span<uint8_t> bytes(data.data(), n);
    if (!memory.ReadSystem(address, bytes)) {
      return unreadable(absl::StrFormat("image page %d at 0x%x (radix3 level-2 page %d entry %d) is not readable", page,
                                        address, l2, entry));
    }
    const uint64_t at = FirstDifference(View(bytes), image.substr(offset, n));
    if (at < n) {
      *code = flcn::kErrAuthGspRmHandoffFailed;
      return absl::StrFormat(
          "image page %d at 0x%x (radix3 level-2 page %d entry %d) differs from %s at image offset 0x%x (byte 0x%x "
          "of the page)",
          page, address, l2, entry, reference, offset + at, at);
    }
  }
  return "";
}

// Writes `bytes` to FB at `address` in chunks; false when FB does not take them.
bool WriteFb(DeviceMemory& memory, uint64_t address, absl::string_view bytes) {
  for (uint64_t done = 0; done < bytes.size(); done += kCompareChunk) {
    const uint64_t n = std::min<uint64_t>(kCompareChunk, bytes.size() - done);
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data() + done);
    if (!memory.WriteFb(address + done, std::span<const uint8_t>(p, n))) return false;
  }
  return true;
}

// The seam's view of an outcome. A context the model cannot judge at all (no priv bus or memory, not this image:
// the falcon asks Recognise first) halts with HS_CHK_INVALID_INPUT, as the falcon does for an image no model knows.
HsUcodeOutcome ToSeam(absl::StatusOr<BooterOutcome> out) {
  if (!out.ok())
    return HsUcodeOutcome{
        .mailbox0 = flcn::kErrHsChkInvalidInput, .mailbox1 = 0, .log = std::string(out.status().message())};
  return HsUcodeOutcome{.mailbox0 = out->mailbox0, .mailbox1 = out->mailbox1, .log = std::move(out->log)};
}

// flcn_status.h and the seam's FLCN_STATUS constants name the same codes.
static_assert(flcn::kOk == kFlcnOk && flcn::kErrHsChkInvalidInput == kFlcnErrHsChkInvalidInput &&
              flcn::kErrHsChkUcodeRevoked == kFlcnErrHsChkUcodeRevoked &&
              flcn::kErrHsChkEngidMismatch == kFlcnErrHsChkEngidMismatch &&
              flcn::kErrBromSignFail == kFlcnErrBromSignatureFailed);

}  // namespace

// ---- booter_load ------------------------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<BooterLoadModel>> BooterLoadModel::Create(absl::string_view chip, uint64_t fb_size,
                                                                         const std::vector<std::string>& roots) {
  BAREGPU_ASSIGN_OR_RETURN(std::shared_ptr<const BooterFirmware> firmware, LoadBooterFirmware(chip, roots));
  return std::unique_ptr<BooterLoadModel>(new BooterLoadModel(std::move(firmware), fb_size));
}

absl::Status BooterLoadModel::Recognise(const HsUcodeContext& context) const {
  return RecogniseCode(firmware_->load, name(), context);
}

HsUcodeOutcome BooterLoadModel::Run(HsUcodeContext& context) { return ToSeam(Execute(context)); }

absl::StatusOr<BooterOutcome> BooterLoadModel::Execute(const HsUcodeContext& in) const {
  BAREGPU_RETURN_IF_ERROR(CheckSeams(in, name()));
  BAREGPU_RETURN_IF_ERROR(Recognise(in));
  if (std::optional<BooterOutcome> refused = CheckBrom(firmware_->load, name(), in)) return *std::move(refused);
  const BooterFirmware& fw = *firmware_;
  auto refuse = [&](uint32_t code, absl::string_view why) { return Refuse(in, "booter_load", code, why); };

  // The WPR meta, in system memory at MAILBOX1:MAILBOX0.
  const uint64_t meta_address = uint64_t{in.mailbox1} << 32 | in.mailbox0;
  GspFwWprMeta meta;
  std::array<uint8_t, sizeof(GspFwWprMeta)> raw{};
  if (!in.memory->ReadSystem(meta_address, raw)) {
    return refuse(flcn::kErrDmaNack,
                  absl::StrFormat("MAILBOX1:MAILBOX0 = 0x%x: the GspFwWprMeta there (0x%x bytes) is not readable "
                                  "system memory (nouveau passes the meta's bus address, r535_gsp_init)",
                                  meta_address, sizeof(GspFwWprMeta)));
  }
  std::memcpy(&meta, raw.data(), sizeof(meta));
  if (meta.magic == kGspFwSrMetaMagic) {
    return refuse(flcn::kErrNotSupported,
                  absl::StrFormat("the mailboxes point at a GspFwSRMeta (magic 0x%x, gsp_fw_sr_meta.h): resume from "
                                  "suspend is not modelled",
                                  meta.magic));
  }
  if (meta.magic != regs::gsp::GSP_FW_WPR_META_MAGIC || meta.revision != regs::gsp::GSP_FW_WPR_META_REVISION) {
    return refuse(flcn::kErrInvalidWprMetaMagicOrRevision,
                  absl::StrFormat("GspFwWprMeta at 0x%x: magic 0x%x revision %d; expected GSP_FW_WPR_META_MAGIC "
                                  "0x%x revision GSP_FW_WPR_META_REVISION %d (gsp_fw_wpr_meta.h)",
                                  meta_address, meta.magic, meta.revision, regs::gsp::GSP_FW_WPR_META_MAGIC,
                                  regs::gsp::GSP_FW_WPR_META_REVISION));
  }

  // The FB layout (gsp_fw_wpr_meta.h's picture, bottom to top).
  if (meta.fbSize != fb_size_ || meta.fbSize % kFbSizeAlignment != 0) {
    return refuse(flcn::kErrInvalidArgument,
                  absl::StrFormat("fbSize 0x%x; the chip has 0x%x bytes of FB (1 MiB-aligned: gsp_fw_wpr_meta.h)",
                                  meta.fbSize, fb_size_));
  }
  const Region regions[] = {
      {"the non-WPR heap (nonWprHeapOffset, nonWprHeapSize)", meta.nonWprHeapOffset, meta.nonWprHeapSize},
      {"the GspFwWprMeta the booter places (gspFwWprStart, sizeof(GspFwWprMeta))", meta.gspFwWprStart,
       sizeof(GspFwWprMeta)},
      {"the WPR heap (gspFwHeapOffset, gspFwHeapSize)", meta.gspFwHeapOffset, meta.gspFwHeapSize},
      {"the GSP-RM ELF (gspFwOffset, sizeOfRadix3Elf)", meta.gspFwOffset, meta.sizeOfRadix3Elf},
      {"the boot binary (bootBinOffset, sizeOfBootloader)", meta.bootBinOffset, meta.sizeOfBootloader},
      {"FRTS (frtsOffset, frtsSize)", meta.frtsOffset, meta.frtsSize},
      {"the VGA workspace (vgaWorkspaceOffset, vgaWorkspaceSize)", meta.vgaWorkspaceOffset, meta.vgaWorkspaceSize},
  };
  for (const Region& r : regions) {
    if (r.size == 0) {
      return refuse(flcn::kErrInvalidArgument, absl::StrFormat("%s is empty (at 0x%x)", r.name, r.start));
    }
    if (r.start >= meta.fbSize || r.size > meta.fbSize - r.start) {
      return refuse(flcn::kErrOutOfRange, absl::StrFormat("%s [0x%x, + 0x%x) is outside FB (fbSize 0x%x)", r.name,
                                                          r.start, r.size, meta.fbSize));
    }
  }
  for (size_t i = 1; i < std::size(regions); ++i) {
    const Region& below = regions[i - 1];
    const Region& r = regions[i];
    const uint64_t below_end = below.start + below.size;
    if (r.start < below_end) {
      const bool overlap = r.start + r.size > below.start;
      return refuse(
          flcn::kErrInvalidArgument,
          absl::StrFormat("%s [0x%x, 0x%x) %s %s [0x%x, 0x%x); gsp_fw_wpr_meta.h places it above", r.name, r.start,
                          r.start + r.size, overlap ? "overlaps" : "lies below", below.name, below.start, below_end));
    }
  }
  if (meta.gspFwRsvdStart != meta.nonWprHeapOffset) {
    return refuse(flcn::kErrInvalidArgument,
                  absl::StrFormat("gspFwRsvdStart 0x%x is not nonWprHeapOffset 0x%x (gsp_fw_wpr_meta.h: both mark "
                                  "the bottom of GSP-RM's reserved FB)",
                                  meta.gspFwRsvdStart, meta.nonWprHeapOffset));
  }
  const uint64_t frts_end = meta.frtsOffset + meta.frtsSize;
  if (meta.gspFwWprEnd != frts_end || meta.gspFwWprEnd > meta.vgaWorkspaceOffset) {
    return refuse(flcn::kErrInvalidArgument,
                  absl::StrFormat("gspFwWprEnd 0x%x: WPR2 ends where FRTS ends (0x%x), at or below the VGA workspace "
                                  "(0x%x) (gsp_fw_wpr_meta.h)",
                                  meta.gspFwWprEnd, frts_end, meta.vgaWorkspaceOffset));
  }
  if (meta.vgaWorkspaceOffset + meta.vgaWorkspaceSize != meta.fbSize) {
    return refuse(flcn::kErrInvalidArgument,
                  absl::StrFormat("the VGA workspace [0x%x, + 0x%x) does not end at fbSize 0x%x (gsp_fw_wpr_meta.h)",
                                  meta.vgaWorkspaceOffset, meta.vgaWorkspaceSize, meta.fbSize));
  }
  const struct {
    const char* name;
    uint64_t value;
    uint64_t alignment;
    const char* source;
  } alignments[] = {
      {"gspFwWprStart", meta.gspFwWprStart, kWprBoundAlignment, "gsp_fw_wpr_meta.h"},
      {"gspFwWprEnd", meta.gspFwWprEnd, kWprBoundAlignment, "gsp_fw_wpr_meta.h"},
      {"gspFwHeapOffset", meta.gspFwHeapOffset, kHeapAlignment, "nouveau r535_gsp_oneinit, tinygrad init_wpr_meta"},
      {"gspFwOffset", meta.gspFwOffset, kGspFwAlignment, "nouveau r535_gsp_oneinit, tinygrad init_wpr_meta"},
      {"bootBinOffset", meta.bootBinOffset, kBootBinAlignment, "nouveau r535_gsp_oneinit"},
      {"frtsOffset", meta.frtsOffset, kFrtsAlignment, "FWSEC's 4 KiB units, nouveau fwsec.c"},
  };
  for (const auto& a : alignments) {
    if (a.value % a.alignment != 0) {
      return refuse(flcn::kErrInvalidArgument,
                    absl::StrFormat("%s 0x%x is not 0x%x-aligned (%s)", a.name, a.value, a.alignment, a.source));
    }
  }

  // WPR2 as FWSEC-FRTS left it: exactly the FRTS region.
  const auto lo = NV_PFB_PRI_MMU_WPR2_ADDR_LO::FromRaw(in.priv->Read32(NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset));
  const auto hi = NV_PFB_PRI_MMU_WPR2_ADDR_HI::FromRaw(in.priv->Read32(NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset));
  if (hi.val() == 0) {
    return refuse(flcn::kErrInvalidState,
                  absl::StrFormat("WPR2 is not up (NV_PFB_PRI_MMU_WPR2_ADDR_HI = 0x%x): FWSEC-FRTS must have made the "
                                  "FRTS region [0x%x, 0x%x) first (nouveau r535_gsp_oneinit, tinygrad init_hw)",
                                  hi.raw(), meta.frtsOffset, frts_end));
  }
  const uint64_t wpr2_start = uint64_t{lo.val()} << kWpr2Shift, wpr2_end = uint64_t{hi.val()} << kWpr2Shift;
  if (wpr2_start != meta.frtsOffset || wpr2_end != frts_end) {
    return refuse(flcn::kErrInvalidState,
                  absl::StrFormat("WPR2 is [0x%x, 0x%x) (NV_PFB_PRI_MMU_WPR2_ADDR_LO 0x%x, _HI 0x%x), the region "
                                  "FWSEC-FRTS made; the meta's frtsOffset 0x%x + frtsSize 0x%x is [0x%x, 0x%x)",
                                  wpr2_start, wpr2_end, lo.raw(), hi.raw(), meta.frtsOffset, meta.frtsSize,
                                  meta.frtsOffset, frts_end));
  }
  if ((meta.gspFwWprEnd >> kWpr2Shift) > kWpr2MaxPage) {
    return refuse(
        flcn::kErrOutOfRange,
        absl::StrFormat("gspFwWprEnd 0x%x is beyond what NV_PFB_PRI_MMU_WPR2_ADDR_HI.VAL can hold", meta.gspFwWprEnd));
  }

  // What is in system memory: the real GSP-RM image, bootloader and signature.
  uint32_t code = 0;
  if (meta.sizeOfRadix3Elf != fw.fwimage.size()) {
    return refuse(flcn::kErrAuthGspRmHandoffFailed,
                  absl::StrFormat("sizeOfRadix3Elf 0x%x is not the size of .fwimage in %s (0x%x)", meta.sizeOfRadix3Elf,
                                  fw.gsp_path, fw.fwimage.size()));
  }
  std::string why =
      CheckRadix3(*in.memory, meta.sysmemAddrOfRadix3Elf, fw.fwimage, absl::StrCat(".fwimage of ", fw.gsp_path), &code);
  if (!why.empty()) return refuse(code, why);

  if (meta.sizeOfBootloader != fw.bootloader.size()) {
    return refuse(flcn::kErrAuthGspRmHandoffFailed,
                  absl::StrFormat("sizeOfBootloader 0x%x is not the size of %s's payload (0x%x)", meta.sizeOfBootloader,
                                  fw.bootloader_path, fw.bootloader.size()));
  }
  const struct {
    const char* name;
    uint64_t value;
    uint32_t expected;
    const char* desc_name;
  } offsets[] = {
      {"bootloaderCodeOffset", meta.bootloaderCodeOffset, fw.bootloader_desc.monitor_code_offset, "monitorCodeOffset"},
      {"bootloaderDataOffset", meta.bootloaderDataOffset, fw.bootloader_desc.monitor_data_offset, "monitorDataOffset"},
      {"bootloaderManifestOffset", meta.bootloaderManifestOffset, fw.bootloader_desc.manifest_offset, "manifestOffset"},
  };
  for (const auto& o : offsets) {
    if (o.value != o.expected) {
      return refuse(flcn::kErrAuthGspRmHandoffFailed,
                    absl::StrFormat("%s 0x%x is not the bootloader's RM_RISCV_UCODE_DESC.%s 0x%x (%s; nouveau "
                                    "r535_gsp_rm_boot_ctor)",
                                    o.name, o.value, o.desc_name, o.expected, fw.bootloader_path));
    }
  }
  why = CompareSystem(*in.memory, meta.sysmemAddrOfBootloader, fw.bootloader, "sysmemAddrOfBootloader",
                      absl::StrCat(fw.bootloader_path, "'s payload"), &code);
  if (!why.empty()) return refuse(code, why);

  if (meta.sizeOfSignature != fw.signature.size()) {
    return refuse(flcn::kErrAuthGspRmHandoffFailed,
                  absl::StrFormat("sizeOfSignature 0x%x is not the size of %s in %s (0x%x)", meta.sizeOfSignature,
                                  fw.signature_section, fw.gsp_path, fw.signature.size()));
  }
  why = CompareSystem(*in.memory, meta.sysmemAddrOfSignature, fw.signature, "sysmemAddrOfSignature",
                      absl::StrCat(fw.signature_section, " of ", fw.gsp_path), &code);
  if (!why.empty()) return refuse(code, why);

  // Accepted: lock WPR2 over [gspFwWprStart, gspFwWprEnd) and place what the header says the booter places there.
  in.priv->Write32(NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset,
                   NV_PFB_PRI_MMU_WPR2_ADDR_LO{}.val(static_cast<uint32_t>(meta.gspFwWprStart >> kWpr2Shift)).raw());
  in.priv->Write32(NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset,
                   NV_PFB_PRI_MMU_WPR2_ADDR_HI{}.val(static_cast<uint32_t>(meta.gspFwWprEnd >> kWpr2Shift)).raw());
  GspFwWprMeta placed = meta;
  placed.verified = regs::gsp::GSP_FW_WPR_META_VERIFIED;
  const absl::string_view placed_bytes(reinterpret_cast<const char*>(&placed), sizeof(placed));
  const struct {
    const char* name;
    uint64_t address;
    absl::string_view bytes;
  } copies[] = {
      {"the GSP-RM ELF (gspFwOffset)", meta.gspFwOffset, fw.fwimage},
      {"the boot binary (bootBinOffset)", meta.bootBinOffset, fw.bootloader},
      {"the verified GspFwWprMeta (gspFwWprStart)", meta.gspFwWprStart, placed_bytes},
  };
  for (const auto& c : copies) {
    if (!WriteFb(*in.memory, c.address, c.bytes)) {
      return refuse(flcn::kErrDmaNack,
                    absl::StrFormat("FB [0x%x, + 0x%x) for %s is not writable", c.address, c.bytes.size(), c.name));
    }
  }

  // Start GSP-RM on the GSP's core, which the driver pointed at RISC-V through BCR_CTRL before (nouveau
  // ga102_gsp_reset, tinygrad reset(riscv=True)). How the real booter starts it is in no source: nouveau only checks
  // afterwards that the GSP's RISC-V is active (r535_gsp_booter_load, ga102_flcn_riscv_active). The model starts it
  // the way tinygrad's NV_FLCN.start_cpu starts a falcon: CPUCTL_ALIAS when CPUCTL.ALIAS_EN is set, else CPUCTL.
  const uint32_t gsp_cpuctl = kGsp.AddressOf<NV_PFALCON_FALCON_CPUCTL>();
  if (NV_PFALCON_FALCON_CPUCTL::FromRaw(in.priv->Read32(gsp_cpuctl)).alias_en() ==
      NV_PFALCON_FALCON_CPUCTL::ALIAS_EN_TRUE) {
    in.priv->Write32(kGsp.AddressOf<NV_PFALCON_FALCON_CPUCTL_ALIAS>(),
                     NV_PFALCON_FALCON_CPUCTL_ALIAS{}.startcpu(NV_PFALCON_FALCON_CPUCTL_ALIAS::STARTCPU_TRUE).raw());
  } else {
    in.priv->Write32(gsp_cpuctl, NV_PFALCON_FALCON_CPUCTL{}.startcpu(NV_PFALCON_FALCON_CPUCTL::STARTCPU_TRUE).raw());
  }

  GspRiscvStart start;
  start.libos_args = uint64_t{in.priv->Read32(NV_PGSP_FALCON_MAILBOX1::kOffset)} << 32 |
                     in.priv->Read32(NV_PGSP_FALCON_MAILBOX0::kOffset);
  start.wpr_meta = meta.gspFwWprStart;
  start.boot_bin = meta.bootBinOffset;
  start.monitor_code = meta.bootBinOffset + meta.bootloaderCodeOffset;
  start.monitor_data = meta.bootBinOffset + meta.bootloaderDataOffset;
  start.manifest = meta.bootBinOffset + meta.bootloaderManifestOffset;
  start.gsp_fw = meta.gspFwOffset;
  start.wpr2_start = meta.gspFwWprStart;
  start.wpr2_end = meta.gspFwWprEnd;

  BooterOutcome out;
  out.ok = true;
  out.mailbox0 = flcn::kOk;
  out.mailbox1 = in.mailbox1;
  out.log = absl::StrFormat(
      "booter_load: GspFwWprMeta at 0x%x verified; WPR2 [0x%x, 0x%x); GSP-RM ELF at FB 0x%x, boot binary at FB "
      "0x%x; GSP RISC-V started with LibOS arguments at 0x%x",
      meta_address, meta.gspFwWprStart, meta.gspFwWprEnd, meta.gspFwOffset, meta.bootBinOffset, start.libos_args);
  out.riscv = start;
  return out;
}

// ---- booter_unload ----------------------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<BooterUnloadModel>> BooterUnloadModel::Create(absl::string_view chip,
                                                                             const std::vector<std::string>& roots) {
  BAREGPU_ASSIGN_OR_RETURN(std::shared_ptr<const BooterFirmware> firmware, LoadBooterFirmware(chip, roots));
  return std::unique_ptr<BooterUnloadModel>(new BooterUnloadModel(std::move(firmware)));
}

absl::Status BooterUnloadModel::Recognise(const HsUcodeContext& context) const {
  return RecogniseCode(firmware_->unload, name(), context);
}

HsUcodeOutcome BooterUnloadModel::Run(HsUcodeContext& context) { return ToSeam(Execute(context)); }

absl::StatusOr<BooterOutcome> BooterUnloadModel::Execute(const HsUcodeContext& in) const {
  BAREGPU_RETURN_IF_ERROR(CheckSeams(in, name()));
  BAREGPU_RETURN_IF_ERROR(Recognise(in));
  if (std::optional<BooterOutcome> refused = CheckBrom(firmware_->unload, name(), in)) return *std::move(refused);
  if (in.mailbox0 != kUnloadNoSuspendMailbox || in.mailbox1 != kUnloadNoSuspendMailbox) {
    return Refuse(in, "booter_unload", flcn::kErrNotSupported,
                  absl::StrFormat("MAILBOX0/1 = 0x%x/0x%x: outside suspend nouveau passes 0x%x/0x%x "
                                  "(r535_gsp_fini); a GspFwSRMeta address (suspend) is not modelled",
                                  in.mailbox0, in.mailbox1, kUnloadNoSuspendMailbox, kUnloadNoSuspendMailbox));
  }
  BooterOutcome out;
  out.ok = true;
  out.mailbox0 = flcn::kOk;
  out.mailbox1 = in.mailbox1;
  const auto hi = NV_PFB_PRI_MMU_WPR2_ADDR_HI::FromRaw(in.priv->Read32(NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset));
  if (hi.val() == 0) {
    // nouveau never runs the unload then (r535_gsp_booter_unload); what the ucode would do is in no source: it is
    // taken to have nothing to take down.
    out.log = "booter_unload: WPR2 was not up; nothing to take down";
    return out;
  }
  const auto lo = NV_PFB_PRI_MMU_WPR2_ADDR_LO::FromRaw(in.priv->Read32(NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset));
  // nouveau checks only that WPR2_ADDR_HI reads 0 afterwards; LO goes back to 0 too, the value it has before
  // FWSEC-FRTS on the virtual chip (the registers' reset values are in no header here).
  in.priv->Write32(NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset, 0);
  in.priv->Write32(NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset, 0);
  out.log = absl::StrFormat("booter_unload: WPR2 [0x%x, 0x%x) taken down", uint64_t{lo.val()} << kWpr2Shift,
                            uint64_t{hi.val()} << kWpr2Shift);
  return out;
}

}  // namespace nv::sim
