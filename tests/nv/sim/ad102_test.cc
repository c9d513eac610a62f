#include "nv/sim/ad102.h"

#include <linux/pci_regs.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "firmware/nv/vbios.h"
#include "firmware/nv/virtual_vbios.h"
#include "gtest/gtest.h"
#include "nv/regs/ad102.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "pci/virtual_registry.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/base/scoped_env.h"

namespace nv::sim {
namespace {

// Each test binary gets its own BAREGPU_SIM_DIR (and each test its own instance name below).
auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

namespace r = ::nv::regs::ad102;

// Register offsets written out from the sources, not taken from the code under test.
constexpr uint32_t kBoot0 = 0x000000;         // NV_PMC_BOOT_0 (dev_boot.ref.txt)
constexpr uint32_t kBoot42 = 0x000a00;        // NV_PMC_BOOT_42
constexpr uint32_t kFbSizeMib = 0x1183a4;     // nouveau ga102_fb_vidmem_size
constexpr uint32_t kGfwPlm = 0x118128;        // nouveau tu102_devinit_wait
constexpr uint32_t kGfwProgress = 0x118234;   // nouveau tu102_devinit_wait
constexpr uint32_t kBsiScratch14 = 0x1180f8;  // nouveau r535_gsp_run_sequencer "seq core resume"
constexpr uint32_t kWpr2Lo = 0x1fa824;        // nouveau nvkm_gsp_fwsec_frts
constexpr uint32_t kWpr2Hi = 0x1fa828;        // nouveau nvkm_gsp_fwsec_frts, r535_gsp_booter_unload
constexpr uint32_t kProm = 0x300000;          // nouveau nvbios_prom_read
constexpr uint32_t kPromBytes = 0x100000;     // ... "the 1MB PROM window"
constexpr uint32_t kConfigMirror = 0x088000;  // nouveau nv40_pci_rd32
// NVDEC0's falcon (nv/regs/ad102.h kNvdec0: 0x848000), which the model leaves unclaimed: no NVDEC model.
constexpr uint32_t kNvdecCpuctl = 0x848100;
constexpr uint32_t kFwsecFuse = 0x8241c0;       // ga102_gsp_fwsec_signature, ucode id 1
constexpr uint32_t kBooterFuse = 0x824148;      // ga100_flcn_fw_signature: 0x824140 + (ucode_id 3 - 1) * 4
constexpr uint32_t kPriDummyData = 0xbadf0200;  // gh100 pri_nv_xal_ep.h NV_XAL_EP_SCPM_PRI_DUMMY_DATA_PATTERN_INIT

using ::base::testing::ScopedEnv;

// A device powered on fresh: its earlier state (from an earlier run of the test) power-cycled away.
std::unique_ptr<pci::Device> OpenFresh(const std::string& name) {
  EXPECT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  auto device = pci::Open(name);
  EXPECT_TRUE(device.ok()) << device.status();
  return device.ok() ? std::move(*device) : nullptr;
}

Ad102& AsAd102(pci::Device& device) { return static_cast<Ad102&>(device); }

uint32_t Bar0Read(pci::Device& device, uint32_t offset) {
  auto mmio = device.MapMmio(0);
  EXPECT_TRUE(mmio.ok()) << mmio.status();
  return mmio.ok() ? mmio->Read32(offset) : 0;
}

void Bar0Write(pci::Device& device, uint32_t offset, uint32_t value) {
  auto mmio = device.MapMmio(0);
  ASSERT_TRUE(mmio.ok()) << mmio.status();
  mmio->Write32(offset, value);
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (absl::StrContains(line, text)) return true;
  }
  return false;
}

// A unit's registers for the routing tests: remembers what reached it.
class RecordingBlock : public Bar0Block {
 public:
  uint32_t Read32(uint32_t offset) override {
    last_read = offset;
    return 0x5eed0000 | offset;
  }
  void Write32(uint32_t offset, uint32_t value) override {
    last_write = offset;
    last_value = value;
  }
  void Reset() override { ++resets; }
  std::optional<uint32_t> last_read;
  std::optional<uint32_t> last_write;
  uint32_t last_value = 0;
  int resets = 0;
};

TEST(Ad102Test, IsRegisteredAsAKind) {
  bool found = false;
  for (const pci::VirtualDeviceKind* kind : pci::VirtualDeviceKinds()) {
    if (kind->kind != "ad102") continue;
    found = true;
    EXPECT_EQ(kind->description, "virtual NVIDIA GeForce RTX 4090 (AD102)");
    EXPECT_EQ(kind->vendor_id, 0x10de);
    EXPECT_EQ(kind->device_id, 0x2684);
  }
  EXPECT_TRUE(found);
}

TEST(Ad102Test, IdentityAndCapabilitiesAreAnRtx4090s) {
  auto device = OpenFresh("sim:ad102:identity");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->backend(), "virtual");
  // lspci of an RTX 4090 (geerlingguy/raspberry-pi-pcie-devices#504): 10de:2684 rev a1, VGA controller, subsystem
  // Gigabyte (1458) 40bf.
  EXPECT_EQ(*device->ReadConfig16(PCI_VENDOR_ID), 0x10de);
  EXPECT_EQ(*device->ReadConfig16(PCI_DEVICE_ID), 0x2684);
  EXPECT_EQ(*device->ReadConfig32(PCI_CLASS_REVISION), 0x030000a1u);
  EXPECT_EQ(*device->ReadConfig16(PCI_SUBSYSTEM_VENDOR_ID), 0x1458);
  EXPECT_EQ(*device->ReadConfig16(PCI_SUBSYSTEM_ID), 0x40bf);
  // Capabilities [60] Power Management version 3, [68] MSI 64-bit, [78] Express (v2) Legacy Endpoint with FLR.
  std::array<uint8_t, 256> config;
  ASSERT_TRUE(device->ReadConfig(0, config).ok());
  EXPECT_EQ(config[PCI_CAPABILITY_LIST], 0x60);
  EXPECT_EQ(config[0x60], PCI_CAP_ID_PM);
  EXPECT_EQ(config[0x62] & PCI_PM_CAP_VER_MASK, 3);
  EXPECT_EQ(config[0x61], 0x68);
  EXPECT_EQ(config[0x68], PCI_CAP_ID_MSI);
  EXPECT_NE(config[0x6a] & PCI_MSI_FLAGS_64BIT, 0);
  EXPECT_EQ(config[0x69], 0x78);
  EXPECT_EQ(config[0x78], PCI_CAP_ID_EXP);
  EXPECT_EQ((config[0x7a] & PCI_EXP_FLAGS_TYPE) >> 4, PCI_EXP_TYPE_LEG_END);
  uint32_t devcap;
  std::memcpy(&devcap, &config[0x78 + PCI_EXP_DEVCAP], 4);
  EXPECT_NE(devcap & PCI_EXP_DEVCAP_FLR, 0u);
  EXPECT_EQ(config[0x79], 0);  // the last one
}

TEST(Ad102Test, BarsHaveTheBoardsSizesAndKinds) {
  auto device = OpenFresh("sim:ad102:bars");
  ASSERT_NE(device, nullptr);
  auto bar0 = device->GetBarInfo(0);
  auto bar1 = device->GetBarInfo(1);
  auto bar3 = device->GetBarInfo(3);
  ASSERT_TRUE(bar0.ok() && bar1.ok() && bar3.ok());
  EXPECT_EQ(bar0->size, uint64_t{16} << 20);
  EXPECT_FALSE(bar0->is_64bit);
  EXPECT_FALSE(bar0->prefetchable);
  EXPECT_EQ(bar1->size, uint64_t{32} << 30);  // resizable BAR at its largest: all 24 GiB visible
  EXPECT_TRUE(bar1->is_64bit);
  EXPECT_TRUE(bar1->prefetchable);
  EXPECT_EQ(bar3->size, uint64_t{32} << 20);
  EXPECT_TRUE(bar3->is_64bit);
  EXPECT_TRUE(bar3->prefetchable);
  for (int absent : {2, 4, 5}) EXPECT_FALSE(device->GetBarInfo(absent)->present()) << absent;
  // Sizing BAR0 through configuration space: all ones reads back the size mask (16 MiB: 0xff000000).
  const std::array<uint8_t, 4> ones = {0xff, 0xff, 0xff, 0xff};
  ASSERT_TRUE(device->WriteConfig(PCI_BASE_ADDRESS_0, ones).ok());
  EXPECT_EQ(*device->ReadConfig32(PCI_BASE_ADDRESS_0), 0xff000000u);
  // BAR1 maps all of VRAM.
  auto vram = device->MapMemory(1);
  ASSERT_TRUE(vram.ok()) << vram.status();
  EXPECT_EQ(vram->size(), uint64_t{24} << 30);
  // BAR3's MMU is not modelled: nothing is mapped there, and the access is counted.
  auto bar3_mmio = device->MapMmio(3);
  ASSERT_TRUE(bar3_mmio.ok()) << bar3_mmio.status();
  EXPECT_EQ(bar3_mmio->Read32(0x100), 0xffffffffu);
  EXPECT_EQ(AsAd102(*device).unclaimed_accesses(), 1u);
  // A debugger's live view of BAR1 is the VRAM state file.
  auto shared = device->ShareMemory(1);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_GE(shared->fd, 0);
  EXPECT_EQ(shared->size, uint64_t{24} << 30);
}

TEST(Ad102Test, SmallBarDecodes256MiB) {
  ScopedEnv small("BAREGPU_SIM_SMALL_BAR", "1");
  auto device = OpenFresh("sim:ad102:small-bar");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->GetBarInfo(1)->size, uint64_t{256} << 20);
  EXPECT_EQ(device->MapMemory(1)->size(), uint64_t{256} << 20);
  // The FB size does not change with the aperture.
  EXPECT_EQ(Bar0Read(*device, kFbSizeMib), 24u * 1024);
}

TEST(Ad102Test, BootRegistersNameAd102) {
  auto device = OpenFresh("sim:ad102:boot");
  ASSERT_NE(device, nullptr);
  const uint32_t boot_0 = Bar0Read(*device, kBoot0);
  const uint32_t boot_42 = Bar0Read(*device, kBoot42);
  // Worked out from the fields: architecture 0x19 << 24 | implementation 2 << 20 | major revision 0xa << 4 | minor 1.
  EXPECT_EQ(boot_0, 0x192000a1u);
  // architecture 0x19 << 24 | implementation 2 << 20 | major revision 0xa << 16 | minor revision 1 << 12.
  EXPECT_EQ(boot_42, 0x192a1000u);
  // nouveau: chipset = (boot0 & 0x1ff00000) >> 20 = 0x192 (nv192_chipset "AD102"), chiprev = boot0 & 0xff.
  EXPECT_EQ((boot_0 & 0x1ff00000) >> 20, 0x192u);
  EXPECT_EQ(boot_0 & 0xff, 0xa1u);
  // tinygrad: BOOT_42's architecture 0x19 is "AD1", implementation 2 makes "AD102".
  const auto decoded = r::NV_PMC_BOOT_42{}.set_raw(boot_42);
  EXPECT_EQ(decoded.architecture(), 0x19u);
  EXPECT_EQ(decoded.implementation(), 0x2u);
  EXPECT_EQ(r::NV_PMC_BOOT_0{}.set_raw(boot_0).architecture(), 0x19u);
  // Identity registers are read-only.
  Bar0Write(*device, kBoot0, 0);
  EXPECT_EQ(Bar0Read(*device, kBoot0), 0x192000a1u);
}

TEST(Ad102Test, FbSizeIsVramInMiB) {
  auto device = OpenFresh("sim:ad102:fb");
  ASSERT_NE(device, nullptr);
  // 24 GiB / 1 MiB = 24576; nouveau shifts it left by 20, tinygrad too.
  EXPECT_EQ(Bar0Read(*device, kFbSizeMib), 24576u);
  EXPECT_EQ(uint64_t{Bar0Read(*device, kFbSizeMib)} << 20, uint64_t{24} << 30);
  Bar0Write(*device, kFbSizeMib, 1);  // a secure scratch: the host only reads it
  EXPECT_EQ(Bar0Read(*device, kFbSizeMib), 24576u);
}

TEST(Ad102Test, GfwBootIsDoneAtPowerOn) {
  auto device = OpenFresh("sim:ad102:gfw");
  ASSERT_NE(device, nullptr);
  // nouveau tu102_devinit_wait / tinygrad wait_for_reset.
  EXPECT_EQ(Bar0Read(*device, kGfwPlm) & 0x1, 0x1u);
  EXPECT_EQ(Bar0Read(*device, kGfwProgress) & 0xff, 0xffu);
  // SEC2's boot stage 3 handoff (bit 26) comes only in GSP-RM's resume sequence.
  EXPECT_EQ(Bar0Read(*device, kBsiScratch14) & 0x04000000, 0u);
}

TEST(Ad102Test, SignatureFusesReadTheirModelledValues) {
  auto device = OpenFresh("sim:ad102:fuses");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(Bar0Read(*device, kFwsecFuse), firmware::nv::kVirtualAd102FwsecFuseRegister);
  EXPECT_EQ(Bar0Read(*device, kBooterFuse), 1u);
}

TEST(Ad102Test, PromWindowServesTheVirtualVbios) {
  auto device = OpenFresh("sim:ad102:prom");
  ASSERT_NE(device, nullptr);
  auto expected = firmware::nv::BuildVirtualVbios("ad102");
  ASSERT_TRUE(expected.ok()) << expected.status();
  // As tinygrad's prep_ucode reads it: 1 MiB of dwords.
  std::string rom(kPromBytes, '\0');
  for (uint32_t offset = 0; offset < kPromBytes; offset += 4) {
    const uint32_t word = Bar0Read(*device, kProm + offset);
    std::memcpy(&rom[offset], &word, 4);
  }
  EXPECT_EQ(rom.substr(0, expected->size()), *expected);
  EXPECT_EQ(rom.substr(expected->size()), std::string(kPromBytes - expected->size(), '\xff'));
  auto vbios = firmware::nv::ParseVbios("sim:ad102 PROM", rom);
  ASSERT_TRUE(vbios.ok()) << vbios.status();
  EXPECT_TRUE(vbios->fwsec.has_value());
  // The flash is read-only.
  Bar0Write(*device, kProm, 0);
  EXPECT_EQ(Bar0Read(*device, kProm) & 0xffff, 0xaa55u);
  EXPECT_EQ(AsAd102(*device).refused_writes(), 1u);
}

TEST(Ad102Test, ConfigMirrorIsTheFunctionsConfigurationSpace) {
  auto device = OpenFresh("sim:ad102:mirror");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(Bar0Read(*device, kConfigMirror + PCI_VENDOR_ID), 0x268410deu);
  EXPECT_EQ(Bar0Read(*device, kConfigMirror + PCI_CLASS_REVISION), 0x030000a1u);
  EXPECT_EQ(Bar0Read(*device, kConfigMirror + PCI_SUBSYSTEM_VENDOR_ID), 0x40bf1458u);
  // nouveau's nvkm_pci_rom_shadow: read-modify-write of bit 0 at config 0x50 through the mirror.
  Bar0Write(*device, kConfigMirror + 0x50, Bar0Read(*device, kConfigMirror + 0x50) | 1);
  EXPECT_EQ(*device->ReadConfig32(0x50) & 1, 1u);
  // A command-register write through the mirror is one of the function's.
  Bar0Write(*device, kConfigMirror + PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
  EXPECT_EQ(*device->ReadConfig16(PCI_COMMAND), PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
  EXPECT_TRUE(AsAd102(*device).dma_space().bus_master());
}

TEST(Ad102Test, UnclaimedPrivSpaceReadsAsAPriError) {
  auto device = OpenFresh("sim:ad102:unclaimed");
  ASSERT_NE(device, nullptr);
  // NVDEC0's falcon, which no model claims.
  const uint32_t value = Bar0Read(*device, kNvdecCpuctl);
  EXPECT_EQ(value, kPriDummyData);
  // RM's test for a failed BAR0 priv read (flcnretval.h FLCN_BAR0_PRIV_PRI_ERROR_MASK / _CODE).
  EXPECT_EQ(value & 0xfff00000, 0xbad00000u);
  Bar0Write(*device, kNvdecCpuctl, 2);
  EXPECT_EQ(Bar0Read(*device, kNvdecCpuctl), kPriDummyData);
  EXPECT_EQ(AsAd102(*device).unclaimed_accesses(), 3u);
  const std::vector<std::string> notes = device->TakeDiagnostics();
  EXPECT_TRUE(AnyContains(notes, "unclaimed BAR0 register 0x848100")) << notes.size();
  EXPECT_TRUE(device->TakeDiagnostics().empty());  // taken once
}

TEST(Ad102Test, OnlyThePrivBusSetsWpr2) {
  auto device = OpenFresh("sim:ad102:wpr2");
  ASSERT_NE(device, nullptr);
  Ad102& ad102 = AsAd102(*device);
  EXPECT_EQ(Bar0Read(*device, kWpr2Lo), 0u);  // down at power-on
  EXPECT_EQ(Bar0Read(*device, kWpr2Hi), 0u);
  Bar0Write(*device, kWpr2Hi, 0x12340);
  EXPECT_EQ(Bar0Read(*device, kWpr2Hi), 0u);
  EXPECT_EQ(ad102.refused_writes(), 1u);
  EXPECT_TRUE(AnyContains(device->TakeDiagnostics(), "NV_PFB_PRI_MMU_WPR2_ADDR_HI"));
  // FWSEC's writes, over the priv bus.
  ad102.priv_bus().Write32(kWpr2Lo, 0x5ff000);
  ad102.priv_bus().Write32(kWpr2Hi, 0x5ff800);
  EXPECT_EQ(Bar0Read(*device, kWpr2Lo), 0x5ff000u);
  EXPECT_EQ(Bar0Read(*device, kWpr2Hi), 0x5ff800u);
  EXPECT_EQ(ad102.priv_bus().Read32(kBoot0), 0x192000a1u);  // the same registers from both sides
}

TEST(Ad102Test, AWarmOpenFindsTheDeviceAsTheLastProcessLeftIt) {
  const std::string name = "sim:ad102:warm";
  {
    auto device = OpenFresh(name);
    ASSERT_NE(device, nullptr);
    EXPECT_TRUE(AsAd102(*device).cold());
    AsAd102(*device).priv_bus().Write32(kWpr2Hi, 0x5ff800);
    ASSERT_TRUE(device->WriteConfig(PCI_COMMAND, std::array<uint8_t, 2>{PCI_COMMAND_MASTER, 0}).ok());
    auto vram = device->MapMemory(1);
    ASSERT_TRUE(vram.ok());
    (*vram)[0x1234] = 0x5a;
  }
  auto device = pci::Open(name);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_FALSE(AsAd102(**device).cold());
  EXPECT_EQ(Bar0Read(**device, kWpr2Hi), 0x5ff800u);  // WPR2 still up, as tinygrad's open checks
  EXPECT_EQ(*(*device)->ReadConfig16(PCI_COMMAND) & PCI_COMMAND_MASTER, PCI_COMMAND_MASTER);
  EXPECT_EQ((*(*device)->MapMemory(1))[0x1234], 0x5a);
  EXPECT_EQ(Bar0Read(**device, kGfwProgress) & 0xff, 0xffu);
}

TEST(Ad102Test, OneProcessHoldsTheDeviceAtATime) {
  auto first = OpenFresh("sim:ad102:busy");
  ASSERT_NE(first, nullptr);
  auto second = pci::Open("sim:ad102:busy");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(second.status().message(), "in use by process")) << second.status();
}

TEST(Ad102Test, SimResetPowersTheDeviceOff) {
  const std::string name = "sim:ad102:cycle";
  {
    auto device = OpenFresh(name);
    ASSERT_NE(device, nullptr);
    AsAd102(*device).priv_bus().Write32(kWpr2Hi, 0x5ff800);
    EXPECT_FALSE(pci::sim::PersistentState::PowerCycle(name).ok());  // not under its holder
  }
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());  // what `baregpu sim reset` calls
  auto device = pci::Open(name);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_TRUE(AsAd102(**device).cold());
  EXPECT_EQ(Bar0Read(**device, kWpr2Hi), 0u);
}

TEST(Ad102Test, UntouchedRegistersReadTheirHeaderResetValues) {
  auto device = OpenFresh("sim:ad102:scratch");
  ASSERT_NE(device, nullptr);
  // NV_PBUS_SW_SCRATCH(i) at 0x1400 + 4 * i, 64 of them, init 0 (dev_bus.h "RWI": NV_PBUS_SW_SCRATCH_FIELD_INIT).
  EXPECT_EQ(Bar0Read(*device, 0x1400), 0u);
  EXPECT_EQ(Bar0Read(*device, 0x1400 + 4 * 63), 0u);
  Bar0Write(*device, 0x1400 + 4 * 63, 0xfeedface);
  EXPECT_EQ(Bar0Read(*device, 0x1400 + 4 * 63), 0xfeedfaceu);
  EXPECT_EQ(Bar0Read(*device, 0x1400 + 4 * 64), kPriDummyData);  // past the array
}

// A process killed inside a reset (registers cleared, power-on values not yet back) leaves a device whose next open
// completes the reset, as the chip would without its driver.
TEST(Ad102Test, AResetThatAKilledProcessLeftHalfDoneIsCompletedByTheNextOpen) {
  const std::string name = "sim:ad102:half-reset";
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  { ASSERT_TRUE(pci::Open(name).ok()); }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto state = pci::sim::PersistentState::Open(name, Ad102::StateRegions(Ad102Config::FromEnvironment()));
    if (!state.ok()) ::_exit(1);
    (*state)->BeginPowerTransition();
    if (!(*state)->Clear(Ad102::kRegisterRegion).ok()) ::_exit(2);
    ::_exit(0);  // killed here: no clean close, no end of the transition
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  auto device = pci::Open(name);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_TRUE(AnyContains((*device)->TakeDiagnostics(), "its holder died during a power-on or reset"));
  EXPECT_EQ(Bar0Read(**device, kBoot0), 0x192000a1u);
  EXPECT_EQ(Bar0Read(**device, kGfwProgress) & 0xff, 0xffu);
  EXPECT_EQ(Bar0Read(**device, kFbSizeMib), 24576u);
}

TEST(Ad102Test, FunctionResetReturnsTheChipToPowerOn) {
  auto device = OpenFresh("sim:ad102:reset");
  ASSERT_NE(device, nullptr);
  Ad102& ad102 = AsAd102(*device);
  RecordingBlock gsp;
  ASSERT_TRUE(ad102.Attach(r::kNvdec0.falcon, 0x1000, &gsp).ok());
  ad102.priv_bus().Write32(kWpr2Hi, 0x5ff800);
  ad102.model_state()[0] = 1;
  ASSERT_TRUE(device->WriteConfig(PCI_COMMAND, std::array<uint8_t, 2>{PCI_COMMAND_MASTER, 0}).ok());
  auto vram = device->MapMemory(1);
  ASSERT_TRUE(vram.ok());
  (*vram)[0x40] = 0x77;

  ASSERT_TRUE(device->ResetFunction().ok());
  EXPECT_EQ(Bar0Read(*device, kWpr2Hi), 0u);
  EXPECT_EQ(gsp.resets, 1);
  EXPECT_EQ(ad102.model_state()[0], 0);
  EXPECT_EQ(*device->ReadConfig16(PCI_COMMAND), 0);
  EXPECT_EQ(Bar0Read(*device, kGfwPlm) & 0x1, 0x1u);  // GFW boot done again
  EXPECT_EQ(Bar0Read(*device, kGfwProgress) & 0xff, 0xffu);
  EXPECT_EQ(Bar0Read(*device, kBoot0), 0x192000a1u);
  EXPECT_EQ((*vram)[0x40], 0x77);  // VRAM kept
}

TEST(Ad102Test, AnAttachedBlockGetsItsRangeFromBar0AndThePrivBus) {
  auto device = OpenFresh("sim:ad102:attach");
  ASSERT_NE(device, nullptr);
  Ad102& ad102 = AsAd102(*device);
  RecordingBlock nvdec;
  ASSERT_TRUE(ad102.Attach(r::kNvdec0.falcon, 0x1000, &nvdec).ok());
  EXPECT_EQ(Bar0Read(*device, kNvdecCpuctl), 0x5eed0100u);
  EXPECT_EQ(nvdec.last_read, 0x100u);
  Bar0Write(*device, kNvdecCpuctl, 2);
  EXPECT_EQ(nvdec.last_write, 0x100u);
  EXPECT_EQ(nvdec.last_value, 2u);
  EXPECT_EQ(ad102.priv_bus().Read32(r::kNvdec0.falcon + 0x40), 0x5eed0040u);  // MAILBOX0 from a falcon
  EXPECT_EQ(nvdec.last_read, 0x40u);
  EXPECT_EQ(Bar0Read(*device, r::kNvdec0.falcon + 0x1000), kPriDummyData);  // just past it
  EXPECT_EQ(ad102.unclaimed_accesses(), 1u);
}

TEST(Ad102Test, AttachRefusesRangesItCannotRoute) {
  auto device = OpenFresh("sim:ad102:attach-bad");
  ASSERT_NE(device, nullptr);
  Ad102& ad102 = AsAd102(*device);
  RecordingBlock a;
  RecordingBlock b;
  ASSERT_TRUE(ad102.Attach(r::kNvdec0.falcon, 0x1000, &a).ok());
  absl::Status overlap = ad102.Attach(r::kNvdec0.falcon + 0x800, 0x1000, &b);
  EXPECT_EQ(overlap.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(overlap.message(), "overlaps the block attached at [0x848000, 0x849000)")) << overlap;
  // The device's own falcon models hold the GSP's and SEC2's windows.
  absl::Status gsp = ad102.Attach(r::kGsp.falcon, 0x1000, &b);
  EXPECT_TRUE(absl::StrContains(gsp.message(), "overlaps the block attached at [0x110000, 0x114000)")) << gsp;
  absl::Status prom = ad102.Attach(kProm, 0x100, &b);
  EXPECT_TRUE(absl::StrContains(prom.message(), "PROM window")) << prom;
  absl::Status mirror = ad102.Attach(kConfigMirror, 4, &b);
  EXPECT_TRUE(absl::StrContains(mirror.message(), "configuration mirror")) << mirror;
  absl::Status outside = ad102.Attach(0xfff000, 0x2000, &b);
  EXPECT_TRUE(absl::StrContains(outside.message(), "inside the 0x1000000-byte BAR0")) << outside;
  absl::Status unaligned = ad102.Attach(0x100002, 4, &b);
  EXPECT_TRUE(absl::StrContains(unaligned.message(), "whole dwords")) << unaligned;
  EXPECT_EQ(ad102.Attach(0x100000, 4, nullptr).code(), absl::StatusCode::kInvalidArgument);
}

// The GSP and SEC2 falcons answer at their bases (nv/sim/falcon_model): out of a function reset each is scrubbing
// (HWCFG2.MEM_SCRUBBING, dev_falcon_v4.h), and the GSP has its RISC-V core (HWCFG2.RISCV).
TEST(Ad102Test, TheGspAndSec2FalconsAreAttached) {
  auto device = OpenFresh("sim:ad102:falcons");
  ASSERT_NE(device, nullptr);
  Ad102& ad102 = AsAd102(*device);
  ASSERT_TRUE(device->ResetFunction().ok());
  const uint32_t gsp_hwcfg2 = Bar0Read(*device, r::kGsp.AddressOf<r::NV_PFALCON_FALCON_HWCFG2>());
  EXPECT_EQ(r::NV_PFALCON_FALCON_HWCFG2::FromRaw(gsp_hwcfg2).riscv(), 1u);
  EXPECT_EQ(r::NV_PFALCON_FALCON_HWCFG2::FromRaw(gsp_hwcfg2).mem_scrubbing(), 1u);
  const uint32_t sec2_hwcfg2 = Bar0Read(*device, r::kSec2.AddressOf<r::NV_PFALCON_FALCON_HWCFG2>());
  EXPECT_EQ(r::NV_PFALCON_FALCON_HWCFG2::FromRaw(sec2_hwcfg2).riscv(), 0u);
  EXPECT_EQ(ad102.unclaimed_accesses(), 0u);
  EXPECT_EQ(ad102.gsp().identity().bases.falcon, r::kGsp.falcon);
  EXPECT_EQ(ad102.sec2().identity().bases.falcon, r::kSec2.falcon);
}

// The expansion ROM BAR (lspci of an RTX 4090: "[disabled] [size=512K]"): disabled at address 0 after reset, sized
// like a BAR (address bits below 512 KiB read back 0: ~(0x80000 - 1) & PCI_ROM_ADDRESS_MASK = 0xfff80000), the enable
// bit kept; its contents are the VBIOS the PROM window serves.
TEST(Ad102Test, TheExpansionRomBarServesTheVbios) {
  auto device = OpenFresh("sim:ad102:rom");
  ASSERT_NE(device, nullptr);
  ASSERT_TRUE(device->ResetFunction().ok());
  EXPECT_EQ(*device->ReadConfig32(PCI_ROM_ADDRESS), 0u);
  ASSERT_TRUE(device->WriteConfig32(PCI_ROM_ADDRESS, 0xfffff800).ok());
  EXPECT_EQ(*device->ReadConfig32(PCI_ROM_ADDRESS), 0xfff80000u);
  ASSERT_TRUE(device->WriteConfig32(PCI_ROM_ADDRESS, 0xe0000000 | PCI_ROM_ADDRESS_ENABLE).ok());
  EXPECT_EQ(*device->ReadConfig32(PCI_ROM_ADDRESS), 0xe0000001u);
  absl::StatusOr<std::string> rom = device->ReadExpansionRom();
  ASSERT_TRUE(rom.ok()) << rom.status();
  absl::StatusOr<std::string> vbios = firmware::nv::BuildVirtualVbios();
  ASSERT_TRUE(vbios.ok());
  EXPECT_EQ(*rom, *vbios);
  ASSERT_TRUE(device->ResetFunction().ok());
  EXPECT_EQ(*device->ReadConfig32(PCI_ROM_ADDRESS), 0u) << "a reset disables it again";
}

TEST(Ad102Test, DeviceMemoryReachesOnlyFbAndMappedBuffersWithBusMastering) {
  auto device = OpenFresh("sim:ad102:memory");
  ASSERT_NE(device, nullptr);
  Ad102& ad102 = AsAd102(*device);
  DeviceMemory& memory = ad102.memory();
  const uint64_t fb = uint64_t{24} << 30;
  std::array<uint8_t, 4> bytes = {1, 2, 3, 4};
  EXPECT_TRUE(memory.WriteFb(fb - 4, bytes));
  std::array<uint8_t, 4> back{};
  EXPECT_TRUE(memory.ReadFb(fb - 4, back));
  EXPECT_EQ(back, bytes);
  EXPECT_FALSE(memory.ReadFb(fb - 2, back));            // crosses the end
  EXPECT_FALSE(memory.WriteFb(UINT64_MAX - 1, bytes));  // would wrap
  EXPECT_FALSE(memory.ReadFb(fb, back));

  // System memory: an address no buffer holds is refused, and recorded as the IOMMU would.
  EXPECT_FALSE(memory.ReadSystem(0x1000, back));
  EXPECT_EQ(ad102.dma_space().fault_count(), 1u);
  auto buffer = device->AllocDma(4096);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  std::memcpy((*buffer)->cpu(), bytes.data(), 4);
  // A mapped buffer, but no bus mastering yet.
  EXPECT_FALSE(memory.ReadSystem((*buffer)->device_address(), back));
  ASSERT_TRUE(ad102.dma_space().last_fault().has_value());
  EXPECT_TRUE(ad102.dma_space().last_fault()->bus_master_disabled);
  ASSERT_TRUE(device->WriteConfig(PCI_COMMAND, std::array<uint8_t, 2>{PCI_COMMAND_MASTER, 0}).ok());
  back = {};
  EXPECT_TRUE(memory.ReadSystem((*buffer)->device_address(), back));
  EXPECT_EQ(back, bytes);
  EXPECT_TRUE(memory.WriteSystem((*buffer)->device_address(8), bytes));
  EXPECT_EQ((*buffer)->cpu()[8], 1);
  EXPECT_FALSE(memory.WriteSystem((*buffer)->device_address(4094), bytes));  // past the buffer's end
}

TEST(Ad102Test, BadConfigurationsAreRefused) {
  auto odd = Ad102::Open("sim:ad102:odd", {.vram_size = (uint64_t{24} << 30) + 1});
  ASSERT_FALSE(odd.ok());
  EXPECT_TRUE(absl::StrContains(odd.status().message(), "VRAM whole MiB")) << odd.status();
  auto bar = Ad102::Open("sim:ad102:odd", {.bar1_size = uint64_t{24} << 30});
  ASSERT_FALSE(bar.ok());
  EXPECT_TRUE(absl::StrContains(bar.status().message(), "BAR1 must be a power of two")) << bar.status();
}

}  // namespace
}  // namespace nv::sim
