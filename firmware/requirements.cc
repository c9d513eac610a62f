#include "firmware/requirements.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/printable.h"

namespace firmware {
namespace {

using namespace gfx_fw_type;

constexpr absl::string_view kVirtualPrefix = "sim:";

ProvidedType Ip(uint32_t type) { return {LoadPath::kIpFirmware, type}; }
ProvidedType OptionalIp(uint32_t type) { return {LoadPath::kIpFirmware, type, /*optional=*/true}; }

// The sOS package's components: psp_hw_start loads each only if is_psp_fw_valid; the sOS cannot run without its
// system driver and itself (the virtual PSP refuses SOS before SYS_DRV), so those two are required. Debian's
// psp_13_0_0_sos.bin (20230210, 20250410) has no SOC_DRV, INTF_DRV, DBG_DRV or RAS_DRV.
std::vector<ProvidedType> Boot(std::initializer_list<uint32_t> types) {
  std::vector<ProvidedType> out;
  for (uint32_t t : types) {
    out.push_back({LoadPath::kBootloader, t, /*optional=*/t != psp_fw_type::kSysDrv && t != psp_fw_type::kSos});
  }
  return out;
}

// Trusted applications: none is needed to boot (psp_init_ta_microcode takes what the file has; tinygrad loads
// none). Debian's psp_13_0_0_ta.bin has no RAP or SECUREDISPLAY.
std::vector<ProvidedType> Ta(std::initializer_list<uint32_t> types) {
  std::vector<ProvidedType> out;
  for (uint32_t t : types) out.push_back({LoadPath::kTrustedApp, t, /*optional=*/true});
  return out;
}

absl::Status Unsupported(absl::string_view block, const IpVersion& v, absl::string_view supported) {
  return absl::UnimplementedError(
      absl::StrFormat("no firmware table for %s %s; baregpu knows %s (add the generation to firmware/requirements.cc)",
                      block, v.ToString(), supported));
}

// psp_v13_0.c psp_v13_0_init_microcode: which MP0 13.0.x load an sOS package and which only a TOC.
bool PspHasSos(const IpVersion& v) { return v.rev == 0 || v.rev == 6 || v.rev == 7 || v.rev == 10 || v.rev == 14; }
bool PspHasToc(const IpVersion& v) { return v.rev == 1 || v.rev == 3 || v.rev == 5 || v.rev == 8 || v.rev == 11; }

}  // namespace

std::string IpVersion::ToString() const { return absl::StrFormat("%d.%d.%d", major, minor, rev); }
std::string IpVersion::Underscored() const { return absl::StrFormat("%d_%d_%d", major, minor, rev); }

const std::vector<AsicProfile>& AsicProfiles() {
  // Navi31 (Radeon RX 7900 XTX): GC 11.0.0, MP0 13.0.0, MP1 13.0.0, SDMA 6.0.0, as its IP discovery table reports
  // (amdgpu_discovery.c; tinygrad's AM driver targets the same versions).
  static const auto* profiles = new std::vector<AsicProfile>{
      {"navi31", "Navi31 (Radeon RX 7900 XTX/XT, gfx1100)", {{11, 0, 0}, {13, 0, 0}, {13, 0, 0}, {6, 0, 0}}},
  };
  return *profiles;
}

absl::StatusOr<AsicProfile> FindAsicProfile(absl::string_view name) {
  std::vector<std::string> known;
  for (const AsicProfile& profile : AsicProfiles()) {
    if (absl::EqualsIgnoreCase(profile.name, name)) return profile;
    known.push_back(profile.name);
  }
  return absl::NotFoundError(absl::StrCat("unknown ASIC profile '", name, "' (known: ", absl::StrJoin(known, ", "),
                                          "; virtual devices: sim:", absl::StrJoin(known, ", sim:"), ")"));
}

absl::StatusOr<DeviceFirmwareTarget> ResolveDeviceName(absl::string_view device) {
  absl::string_view rest = device;
  const bool is_virtual = absl::ConsumePrefix(&rest, kVirtualPrefix);
  // "sim:navi31:test" names an instance of the virtual kind; firmware depends on the kind only.
  rest = rest.substr(0, rest.find(':'));
  absl::StatusOr<AsicProfile> profile = FindAsicProfile(rest);
  if (!profile.ok()) {
    return absl::NotFoundError(
        absl::StrCat("'", device, "': ", profile.status().message(),
                     ". Until IP discovery exists, name an ASIC profile rather than a PCI address"));
  }
  return DeviceFirmwareTarget{*std::move(profile), is_virtual};
}

absl::StatusOr<std::vector<RequiredFile>> RequiredFiles(const IpVersions& ip) {
  std::vector<RequiredFile> files;
  // PSP (MP0): psp_v13_0.c.
  if (ip.mp0.major != 13 || ip.mp0.minor != 0 || !(PspHasSos(ip.mp0) || PspHasToc(ip.mp0))) {
    return Unsupported("MP0 (PSP)", ip.mp0, "13.0.{0,1,3,5,6,7,8,10,11,14}");
  }
  const std::string psp = "psp_" + ip.mp0.Underscored();
  const std::string psp_block = "PSP (MP0 " + ip.mp0.ToString() + ")";
  if (PspHasSos(ip.mp0)) {
    files.push_back({psp + "_sos.bin",
                     {},
                     psp_block,
                     ip.mp0,
                     {FileKind::kSos},
                     2,
                     0,
                     Boot({psp_fw_type::kKdb, psp_fw_type::kSpl, psp_fw_type::kSysDrv, psp_fw_type::kSocDrv,
                           psp_fw_type::kIntfDrv, psp_fw_type::kDbgDrv, psp_fw_type::kRasDrv, psp_fw_type::kSos}),
                     "psp_v13_0.c psp_v13_0_init_microcode; amdgpu_psp.c psp_init_sos_microcode (v2 descriptors)"});
    files.back().provides.push_back({LoadPath::kToc, psp_fw_type::kToc});  // sizes the TMR (psp_tmr_init)
    // The register list, loaded after the RLC autoload when the package has one (psp_rl_load; Debian's has).
    files.back().provides.push_back(OptionalIp(gfx_fw_type::kRegList));
  } else {
    files.push_back({psp + "_toc.bin",
                     {},
                     psp_block,
                     ip.mp0,
                     {FileKind::kToc},
                     1,
                     0,
                     {{LoadPath::kToc, psp_fw_type::kToc}},
                     "psp_v13_0.c psp_v13_0_init_microcode; amdgpu_psp.c psp_init_toc_microcode"});
  }
  files.push_back({psp + "_ta.bin",
                   {},
                   psp_block,
                   ip.mp0,
                   {FileKind::kTa},
                   2,
                   0,
                   Ta({ta_fw_type::kAsd, ta_fw_type::kRas, ta_fw_type::kHdcp, ta_fw_type::kDtm, ta_fw_type::kRap,
                       ta_fw_type::kSecureDisplay}),
                   "psp_v13_0.c; amdgpu_psp.c psp_init_ta_microcode (v2 descriptors)"});

  // SMU (MP1): smu_v13_0.c smu_v13_0_init_microcode reads the common smc_firmware_header_v1_0 part; the file is a
  // v2.1 container with a table of soft power-play tables (Debian's firmware-amd-graphics 20250410 smu_13_0_0.bin:
  // header 2.1, six tables), which 13.0.0 does not load (smu_v13_0_init_pptable_microcode returns early: the PMFW
  // has its own).
  if (ip.mp1.major != 13 || ip.mp1.minor != 0) return Unsupported("MP1 (SMU)", ip.mp1, "13.0.x");
  files.push_back({"smu_" + ip.mp1.Underscored() + ".bin",
                   {},
                   "SMU (MP1 " + ip.mp1.ToString() + ")",
                   ip.mp1,
                   {FileKind::kSmc},
                   2,
                   1,
                   {Ip(kSmu)},
                   "smu_v13_0.c smu_v13_0_init_microcode"});

  // SDMA: sdma_v6_0.c requests sdma_X_Y_Z.bin once for all engines; amdgpu_sdma.c loads a v2.0 header as the
  // context (TH0) and control (TH1) thread images.
  if (ip.sdma.major != 6) return Unsupported("SDMA", ip.sdma, "6.x.y");
  files.push_back({"sdma_" + ip.sdma.Underscored() + ".bin",
                   {},
                   "SDMA " + ip.sdma.ToString(),
                   ip.sdma,
                   {FileKind::kSdma},
                   2,
                   0,
                   {Ip(kSdmaUcodeTh0), Ip(kSdmaUcodeTh1)},
                   "sdma_v6_0.c sdma_v6_0_init_microcode; amdgpu_sdma.c amdgpu_sdma_init_microcode"});

  // GC 11: gfx_v11_0.c (RS64 CP when the PFP header is v2.0), imu_v11_0.c, amdgpu_mes.c (mes_2 = scheduler pipe,
  // falling back to mes.bin; mes1 = KIQ pipe). RLC v2.3 as tinygrad's AM driver expects for gfx11.
  if (ip.gc.major != 11) return Unsupported("GC", ip.gc, "11.x.y");
  const std::string gc = "gc_" + ip.gc.Underscored();
  const std::string gc_block = "GC " + ip.gc.ToString();
  const IpVersion& g = ip.gc;
  files.push_back({gc + "_pfp.bin",
                   {},
                   gc_block + " CP",
                   g,
                   {FileKind::kPfp},
                   2,
                   0,
                   {Ip(kRs64Pfp), Ip(kRs64PfpP0Stack), Ip(kRs64PfpP1Stack)},
                   "gfx_v11_0.c gfx_v11_0_init_microcode"});
  files.push_back({gc + "_me.bin",
                   {},
                   gc_block + " CP",
                   g,
                   {FileKind::kMe},
                   2,
                   0,
                   {Ip(kRs64Me), Ip(kRs64MeP0Stack), Ip(kRs64MeP1Stack)},
                   "gfx_v11_0.c gfx_v11_0_init_microcode"});
  files.push_back({gc + "_mec.bin",
                   {},
                   gc_block + " CP",
                   g,
                   {FileKind::kMec},
                   2,
                   0,
                   {Ip(kRs64Mec), Ip(kRs64MecP0Stack), Ip(kRs64MecP1Stack), Ip(kRs64MecP2Stack), Ip(kRs64MecP3Stack)},
                   "gfx_v11_0.c gfx_v11_0_init_microcode"});
  files.push_back(
      {gc + "_rlc.bin",
       {},
       gc_block + " RLC",
       g,
       {FileKind::kRlc},
       2,
       3,
       // RLC_G and the RLX6 images AUTOLOAD_RLC needs; the lists and RLC_P/V only when present
       // (Debian's gc_11_0_0_rlc.bin has no SRM_CNTL list).
       {Ip(kRlcG), OptionalIp(kRlcRestoreListSrmCntl), OptionalIp(kRlcRestoreListGpmMem),
        OptionalIp(kRlcRestoreListSrmMem), Ip(kRlcIram), Ip(kRlcDramBoot), OptionalIp(kRlcP), OptionalIp(kRlcV)},
       "gfx_v11_0.c gfx_v11_0_init_microcode; amdgpu_rlc.c; tinygrad amdev.py"});
  files.push_back({gc + "_imu.bin",
                   {},
                   gc_block + " IMU",
                   g,
                   {FileKind::kImu},
                   1,
                   0,
                   {Ip(kImuI), Ip(kImuD)},
                   "imu_v11_0.c imu_v11_0_init_microcode"});
  files.push_back({gc + "_mes_2.bin",
                   {gc + "_mes.bin"},
                   gc_block + " MES",
                   g,
                   {FileKind::kMes},
                   1,
                   0,
                   {Ip(kCpMes), Ip(kMesStack)},
                   "amdgpu_mes.c amdgpu_mes_init_microcode (scheduler pipe)"});
  files.push_back({gc + "_mes1.bin",
                   {},
                   gc_block + " MES",
                   g,
                   {FileKind::kMesKiq},
                   1,
                   0,
                   {Ip(kCpMesKiq), Ip(kMesKiqStack)},
                   "amdgpu_mes.c amdgpu_mes_init_microcode (KIQ pipe)"});
  return files;
}

absl::Status CheckProvides(const RequiredFile& required, const Container& container) {
  const CommonHeader& h = container.header;
  if (h.header_version_major != required.header_major || h.header_version_minor != required.header_minor) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: header version %d.%d, but %s expects %d.%d for %s (%s); the file is for another generation",
        base::Printable(container.file), h.header_version_major, h.header_version_minor, "the driver",
        required.header_major, required.header_minor, required.block, required.source));
  }
  std::vector<std::string> missing;
  for (const ProvidedType& p : required.provides) {
    if (!p.optional && container.Find(p.load, p.type) == nullptr) missing.push_back(TypeName(p.load, p.type));
  }
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: lacks %s, which %s needs", base::Printable(container.file), absl::StrJoin(missing, ", "), required.block));
  }
  return absl::OkStatus();
}

}  // namespace firmware
