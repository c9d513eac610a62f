// Hand-written: GA102/AD102 registers that no header available to the project defines (neither the vendored
// open-gpu-kernel-modules 535.113.01 or 580.142 swref trees, nor open-gpu-doc, nor tinygrad's autogen), known only
// from where Linux 6.12's nouveau reads them. Each entry cites nouveau's file (under drivers/gpu/drm/nouveau/) and
// function. NVIDIA's names for these registers are in headers that are not available here (dev_fuse.h,
// dev_ext_devices.h), so the names below are descriptive, not NVIDIA's. nv/regs/database.h lists them with the
// generated registers (`baregpu regs find FUSE --chip=ga102`), their source being "nv/regs/known_registers.h: ...".
//
// kNouveauUses holds the offsets nouveau's code uses for registers the generated tables do have; the database test
// checks that both agree, which is what justifies taking tu102's dev_fb.h (tinygrad's autogen) for GA102 and AD102.
#ifndef BAREGPU_NV_REGS_KNOWN_REGISTERS_H_
#define BAREGPU_NV_REGS_KNOWN_REGISTERS_H_

#include <cstdint>
#include <string_view>

namespace nv::regs::known {

inline constexpr uint8_t kGa102 = 1 << 0;
inline constexpr uint8_t kAd102 = 1 << 1;

struct KnownRegister {
  const char* name;
  uint32_t offset;  // BAR0 byte offset
  uint32_t stride;  // bytes between elements (0: a single register)
  uint32_t count;   // elements (0: not known)
  uint8_t chips;    // kGa102 | kAd102
  const char* source;
  const char* note;
};

inline constexpr KnownRegister kRegisters[] = {
    // The fuse with the ucode revision a signed (HS) falcon ucode must at least have, one per ucode id: the
    // signature selection reads element ucode_id - 1 of the bank the ucode's engine_id bit selects, and picks the
    // signature from the highest set bit. GA102's booter (falcon/ga102.c ga102_flcn_fw uses this function) and
    // AD102's (subdev/gsp/ad102.c: ga102_gsp_booter_ctor) go through it.
    {"FUSE_UCODE_VERSION_ENGINE_ID_BIT0", 0x824140, 4, 0, kGa102 | kAd102, "falcon/ga100.c ga100_flcn_fw_signature",
     "ucode with engine_id bit 0x1; element ucode_id - 1"},
    {"FUSE_UCODE_VERSION_ENGINE_ID_BIT2", 0x824100, 4, 0, kGa102 | kAd102, "falcon/ga100.c ga100_flcn_fw_signature",
     "ucode with engine_id bit 0x4; element ucode_id - 1"},
    // Also the only bank ga102_gsp_fwsec_signature (subdev/gsp/ga102.c) reads, for FWSEC, which nouveau runs on the
    // GSP falcon; ad102.c uses ga102_gsp_fwsec too.
    {"FUSE_UCODE_VERSION_ENGINE_ID_BIT10", 0x8241c0, 4, 0, kGa102 | kAd102,
     "falcon/ga100.c ga100_flcn_fw_signature, subdev/gsp/ga102.c ga102_gsp_fwsec_signature",
     "ucode with engine_id bit 0x400; element ucode_id - 1"},
    // The PROM (VBIOS flash) window: nvbios_prom_read reads 32-bit words at 0x300000 + offset and refuses reads past
    // 1 MiB (0x00100000), so 0x40000 words. nvbios_prom_init reads the IFR header's first words here (0x300000,
    // 0x300004, 0x300008) before the PCI ROM image. RM calls the window NV_PROM_DATA (dev_ext_devices.h, not
    // available here).
    {"PROM_DATA", 0x300000, 4, 0x40000, kGa102 | kAd102, "subdev/bios/shadowrom.c nvbios_prom_read, nvbios_prom_init",
     "the VBIOS flash, read as 32-bit words"},
};

struct NouveauUse {
  const char* name;  // the generated register nouveau's offset is checked against
  uint32_t offset;
  uint8_t chips;
  const char* source;
};

inline constexpr NouveauUse kNouveauUses[] = {
    // FWSEC-FRTS leaves WPR2's bounds here; both are read after it ran. Every r535 chip runs it (r535.c
    // r535_gsp_oneinit calls nvkm_gsp_fwsec_frts), GA102's and AD102's included.
    {"NV_PFB_PRI_MMU_WPR2_ADDR_LO", 0x1fa824, kGa102 | kAd102, "subdev/gsp/fwsec.c nvkm_gsp_fwsec_frts"},
    {"NV_PFB_PRI_MMU_WPR2_ADDR_HI", 0x1fa828, kGa102 | kAd102,
     "subdev/gsp/fwsec.c nvkm_gsp_fwsec_frts, subdev/gsp/r535.c r535_gsp_booter_unload"},
    // Video memory size in MiB (shifted left by 20): ga102_fb_new, which nouveau's GA102 and AD102 chipsets use
    // (engine/device/base.c).
    {"NV_USABLE_FB_SIZE_IN_MB", 0x1183a4, kGa102 | kAd102, "subdev/fb/ga102.c ga102_fb_vidmem_size"},
    // Written all ones at init, 0x600 masked per device: GA102 only (ga100_mc_new; nouveau's AD102 has no mc and
    // ga100_mc_new refuses under GSP-RM).
    {"NV_PMC_ENABLE", 0x200, kGa102, "subdev/mc/ga100.c ga100_mc_init"},
    {"NV_PMC_DEVICE_ENABLE", 0x600, kGa102, "subdev/mc/ga100.c ga100_mc_init, ga100_mc_device_enable"},
};

// The entry of kRegisters named `name`; nullptr when there is none (usable in constant expressions, so callers can
// static_assert that a name exists).
constexpr const KnownRegister* FindKnownRegister(std::string_view name) {
  for (const KnownRegister& reg : kRegisters) {
    if (name == reg.name) return &reg;
  }
  return nullptr;
}

// Ada's architecture number in NV_PMC_BOOT_0/42 (dev_boot.ref.txt's ARCHITECTURE values stop at GA100, 0x17):
// nouveau's nvkm_device_ctor maps chipset 0x190..0x19f (BOOT_0 bits 28:20) to AD100 and 0x192 to nv192_chipset
// "AD102"; tinygrad's NVDev._early_ip_init maps BOOT_42's architecture 0x19 to "AD1".
inline constexpr uint32_t kBootArchitectureAd100 = 0x19;

}  // namespace nv::regs::known

#endif  // BAREGPU_NV_REGS_KNOWN_REGISTERS_H_
