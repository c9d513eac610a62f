// The PSP of the virtual Navi31, driven only through its MP0 registers and memory, the way Linux's psp_v13_0.c /
// amdgpu_psp.c and tinygrad's AM driver drive the real one, with the virtual firmware the build generated.
#include "am/sim/psp_model.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "am/regs/mmhub.h"
#include "am/regs/mp0.h"
#include "am/regs/mp1.h"
#include "am/regs/psp.h"
#include "am/regs/psp_driver_constants.h"
#include "am/regs/smu_constants.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "firmware/container.h"
#include "firmware/requirements.h"
#include "firmware/virtual_firmware.h"
#include "gtest/gtest.h"
#include "tests/am/sim/model_fixture.h"

namespace am::sim {
namespace {

namespace psp = regs::psp;
namespace mp0 = regs::mp0;
namespace gfx = firmware::gfx_fw_type;
namespace pspfw = firmware::psp_fw_type;
using firmware::LoadPath;

// amdgpu_psp.h: enum psp_bootloader_cmd.
constexpr uint32_t kLoadSysDrv = psp::PSP_BL__LOAD_SYSDRV, kLoadSos = psp::PSP_BL__LOAD_SOSDRV,
                   kLoadKdb = psp::PSP_BL__LOAD_KEY_DATABASE, kLoadSocDrv = psp::PSP_BL__LOAD_SOCDRV,
                   kLoadDbgDrv = psp::PSP_BL__LOAD_DBGDRV, kLoadIntfDrv = psp::PSP_BL__LOAD_INTFDRV,
                   kLoadRasDrv = psp::PSP_BL__LOAD_RASDRV, kLoadSpl = psp::PSP_BL__LOAD_TOS_SPL_TABLE,
                   kDramLongTrain = psp::PSP_BL__DRAM_LONG_TRAIN;
// psp_v13_0_wait_for_bootloader: ready is exactly bit 31.
constexpr uint32_t kReady = 0x80000000;
// As psp_v13_0_ring_create writes it.
constexpr uint32_t kCreateKmRing = psp::PSP_RING_TYPE__KM << 16;

// The driver's buffers, as MC addresses in the fixture's memory.
constexpr uint64_t kBootBuffer = 0x8000'0000;  // PSP_1_MEG, 1 MiB aligned: C2PMSG_36 takes the address >> 20
constexpr uint64_t kRing = 0x8010'0000;
constexpr uint32_t kRingBytes = 0x1000;  // psp_ring_init
constexpr uint32_t kRingDwords = kRingBytes / 4;
constexpr uint32_t kFrameDwords = sizeof(regs::psp::PspGfxRbFrame) / 4;
constexpr uint64_t kCommandBuffer = 0x8020'0000;
constexpr uint64_t kFence = 0x8030'0000;
constexpr uint64_t kFirmwareBuffer = 0x8040'0000;
constexpr uint32_t kFirmwareBufferBytes = 1 << 20;
constexpr uint64_t kTmr = 0x8200'0000;
constexpr uint64_t kUnmapped = 0xa000'0000;
// The MMHUB's frame-buffer window the fixture programs (16 MiB units): VRAM's MC addresses [2 GiB, 4 GiB), which
// holds every buffer above, at physical address MC - kFbBase (FB_OFFSET 0).
constexpr uint64_t kFbBase = 0x8000'0000, kFbTop = 0xffff'ffff;

// The build's virtual firmware, split the way a driver splits it.
struct VirtualFirmware {
  std::map<uint32_t, std::string> sos;  // psp_fw_type -> bootloader component
  std::optional<uint32_t> sos_version;  // the SOS descriptor's version
  std::string toc;
  std::map<uint32_t, std::string> ip;  // GFX_FW_TYPE_* -> the image LOAD_IP_FW takes for it
};

absl::StatusOr<VirtualFirmware> ReadVirtualFirmware() {
  const std::string dir = firmware::VirtualFirmwareDir() + "/amdgpu/";
  BAREGPU_ASSIGN_OR_RETURN(firmware::AsicProfile profile, firmware::FindAsicProfile("navi31"));
  BAREGPU_ASSIGN_OR_RETURN(std::vector<firmware::RequiredFile> files, firmware::RequiredFiles(profile.ip));
  VirtualFirmware fw;
  for (const firmware::RequiredFile& file : files) {
    BAREGPU_ASSIGN_OR_RETURN(std::string data, base::ReadFile(dir + file.name));
    BAREGPU_ASSIGN_OR_RETURN(firmware::Container container, firmware::ParseContainer(file.name, data));
    for (const firmware::Component& component : container.components) {
      const std::string bytes(firmware::ComponentBytes(data, component));
      for (uint32_t type : component.types) {
        if (component.load == LoadPath::kBootloader) fw.sos[type] = bytes;
        if (component.load == LoadPath::kBootloader && type == pspfw::kSos) fw.sos_version = component.version;
        if (component.load == LoadPath::kIpFirmware) fw.ip[type] = bytes;
      }
      if (component.load == LoadPath::kToc) fw.toc = bytes;
    }
  }
  return fw;
}

template <typename F>
bool Eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

psp::PspGfxCmdResp Command(uint32_t cmd_id) {
  psp::PspGfxCmdResp cmd{};
  cmd.cmd_id = cmd_id;
  return cmd;
}

class PspModelTest : public ::testing::Test {
 protected:
  PspModelTest()
      : smu_(fx_.registers(), fx_.bases()),
        mp0_(fx_.Regs<regs::Ip::kMp0>()),
        mp1_(fx_.Regs<regs::Ip::kMp1>()),
        boot_buffer_(fx_.memory().Place(kBootBuffer, 1 << 20)),
        ring_(fx_.memory().Place(kRing, kRingBytes)),
        command_buffer_(fx_.memory().Place(kCommandBuffer, 0x1000)),
        fence_(fx_.memory().Place(kFence, 0x1000)),
        firmware_buffer_(fx_.memory().Place(kFirmwareBuffer, kFirmwareBufferBytes)),
        tmr_(fx_.memory().Place(kTmr, PspModel::TocTmrSize())),
        psp_(std::make_unique<PspModel>(fx_.context(), smu_)) {
    auto mmhub = fx_.Regs<regs::Ip::kMmhub>();
    mmhub.Write(regs::mmhub::MMMC_VM_FB_LOCATION_BASE{}.fb_base(kFbBase >> PspModel::kFbUnitShift));
    mmhub.Write(regs::mmhub::MMMC_VM_FB_LOCATION_TOP{}.fb_top(kFbTop >> PspModel::kFbUnitShift));
  }

  void SetUp() override {
    absl::StatusOr<VirtualFirmware> fw = ReadVirtualFirmware();
    ASSERT_TRUE(fw.ok()) << fw.status() << " (the build generates the virtual firmware; rebuild)";
    fw_ = *std::move(fw);
  }

  template <typename R>
  uint32_t Read() {
    return mp0_.Read<R>().raw();
  }
  template <typename R>
  void Write(uint32_t value) {
    mp0_.Write(R{}.set_raw(value));
  }

  // --- Bootloader, as psp_v13_0_bootloader_load_component ----------------------------------------------------

  // Puts `image` in the bootloader buffer, writes its address and the command, and returns C2PMSG_35 once the
  // bootloader is no longer busy.
  std::optional<uint32_t> SendBootloaderCommand(uint32_t command, const std::string& image,
                                                uint64_t buffer = kBootBuffer) {
    std::fill(boot_buffer_.begin(), boot_buffer_.end(), 0);
    std::copy(image.begin(), image.begin() + std::min(image.size(), boot_buffer_.size()), boot_buffer_.begin());
    Write<mp0::MP0_SMN_C2PMSG_36>(static_cast<uint32_t>(buffer >> 20));
    Write<mp0::MP0_SMN_C2PMSG_35>(command);
    if (!Eventually([&] { return (Read<mp0::MP0_SMN_C2PMSG_35>() & kReady) != 0; })) return std::nullopt;
    return Read<mp0::MP0_SMN_C2PMSG_35>();
  }
  std::optional<uint32_t> LoadComponent(uint32_t command, uint32_t type) {
    return SendBootloaderCommand(command, fw_.sos.at(type));
  }
  void Boot() {
    const std::pair<uint32_t, uint32_t> order[] = {{kLoadKdb, pspfw::kKdb},         {kLoadSpl, pspfw::kSpl},
                                                   {kLoadSysDrv, pspfw::kSysDrv},   {kLoadSocDrv, pspfw::kSocDrv},
                                                   {kLoadIntfDrv, pspfw::kIntfDrv}, {kLoadDbgDrv, pspfw::kDbgDrv},
                                                   {kLoadRasDrv, pspfw::kRasDrv},   {kLoadSos, pspfw::kSos}};
    for (const auto& [command, type] : order) {
      if (command == kLoadSos) break;
      ASSERT_EQ(LoadComponent(command, type), kReady) << firmware::TypeName(LoadPath::kBootloader, type);
    }
    ASSERT_NO_FATAL_FAILURE(StartSos());
  }
  // psp_v13_0_bootloader_load_sos: no answer in C2PMSG_35 follows; the sOS's sign of life in C2PMSG_81 does.
  void StartSos() {
    std::fill(boot_buffer_.begin(), boot_buffer_.end(), 0);
    const std::string& sos = fw_.sos.at(pspfw::kSos);
    std::copy(sos.begin(), sos.end(), boot_buffer_.begin());
    Write<mp0::MP0_SMN_C2PMSG_36>(static_cast<uint32_t>(kBootBuffer >> 20));
    Write<mp0::MP0_SMN_C2PMSG_35>(kLoadSos);
    ASSERT_TRUE(Eventually([&] { return Read<mp0::MP0_SMN_C2PMSG_81>() != 0; })) << "sOS never came alive\n" << Log();
  }

  // --- Ring, as psp_v13_0_ring_create / ring_stop ---------------------------------------------------------------

  std::optional<uint32_t> RingControl(uint32_t command) {
    Write<mp0::MP0_SMN_C2PMSG_64>(command);
    if (!Eventually([&] { return (Read<mp0::MP0_SMN_C2PMSG_64>() & psp::GFX_FLAG_RESPONSE) != 0; })) {
      return std::nullopt;
    }
    return Read<mp0::MP0_SMN_C2PMSG_64>();
  }
  std::optional<uint32_t> CreateRing(uint64_t address = kRing, uint32_t size = kRingBytes) {
    Write<mp0::MP0_SMN_C2PMSG_69>(static_cast<uint32_t>(address));
    Write<mp0::MP0_SMN_C2PMSG_70>(static_cast<uint32_t>(address >> 32));
    Write<mp0::MP0_SMN_C2PMSG_71>(size);
    return RingControl(kCreateKmRing);
  }
  void BootWithRing() {
    ASSERT_NO_FATAL_FAILURE(Boot());
    ASSERT_EQ(CreateRing(), psp::GFX_FLAG_RESPONSE);
  }

  // --- KM ring, as psp_cmd_submit_buf / psp_ring_cmd_submit ------------------------------------------------------

  uint32_t FenceValue() {
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(fence_.data())).load(std::memory_order_acquire);
  }
  void PutFrame(uint32_t wptr_dwords, uint64_t command_address, uint32_t fence_value) {
    psp::PspGfxRbFrame frame{};
    frame.cmd_buf_addr_lo = static_cast<uint32_t>(command_address);
    frame.cmd_buf_addr_hi = static_cast<uint32_t>(command_address >> 32);
    frame.fence_addr_lo = static_cast<uint32_t>(kFence);
    frame.fence_addr_hi = static_cast<uint32_t>(kFence >> 32);
    frame.fence_value = fence_value;
    std::memcpy(ring_.data() + (wptr_dwords % kRingDwords) * 4, &frame, sizeof(frame));
  }
  // Writes a frame for `command_address` at the write pointer and moves it; true once the fence arrived.
  bool SubmitFrame(uint64_t command_address) {
    const uint32_t wptr = Read<mp0::MP0_SMN_C2PMSG_67>();
    PutFrame(wptr, command_address, ++fence_value_);
    Write<mp0::MP0_SMN_C2PMSG_67>((wptr + kFrameDwords) % kRingDwords);
    return Eventually([&] { return FenceValue() == fence_value_; });
  }
  std::optional<psp::PspGfxResp> Submit(const psp::PspGfxCmdResp& command) {
    std::fill(command_buffer_.begin(), command_buffer_.end(), 0);
    std::memcpy(command_buffer_.data(), &command, sizeof(command));
    if (!SubmitFrame(kCommandBuffer)) return std::nullopt;
    psp::PspGfxCmdResp answered;
    std::memcpy(&answered, command_buffer_.data(), sizeof(answered));
    return answered.resp;
  }
  uint32_t Status(const psp::PspGfxCmdResp& command) {
    std::optional<psp::PspGfxResp> resp = Submit(command);
    EXPECT_TRUE(resp.has_value()) << "no fence for command " << command.cmd_id;
    return resp ? resp->status : 0xdeadbeef;
  }

  void PutImage(const std::string& image) {
    std::fill(firmware_buffer_.begin(), firmware_buffer_.end(), 0);
    std::copy(image.begin(), image.begin() + std::min<size_t>(image.size(), kFirmwareBufferBytes),
              firmware_buffer_.begin());
  }
  std::optional<psp::PspGfxResp> LoadToc() {
    PutImage(fw_.toc);
    psp::PspGfxCmdResp cmd = Command(psp::GFX_CMD_ID_LOAD_TOC);
    cmd.cmd.cmd_load_toc.toc_phy_addr_lo = static_cast<uint32_t>(kFirmwareBuffer);
    cmd.cmd.cmd_load_toc.toc_phy_addr_hi = static_cast<uint32_t>(kFirmwareBuffer >> 32);
    cmd.cmd.cmd_load_toc.toc_size = static_cast<uint32_t>(fw_.toc.size());
    return Submit(cmd);
  }
  uint32_t SetupTmr(uint64_t address, uint32_t size) {
    psp::PspGfxCmdResp cmd = Command(psp::GFX_CMD_ID_SETUP_TMR);
    cmd.cmd.cmd_setup_tmr.buf_phy_addr_lo = static_cast<uint32_t>(address);
    cmd.cmd.cmd_setup_tmr.buf_phy_addr_hi = static_cast<uint32_t>(address >> 32);
    cmd.cmd.cmd_setup_tmr.buf_size = size;
    cmd.cmd.cmd_setup_tmr.tmr_flags = psp::PspGfxCmdSetupTmr::kVirtPhyAddr;  // as psp_prep_tmr_cmd_buf sets it
    const uint64_t physical = address - kFbBase;
    cmd.cmd.cmd_setup_tmr.system_phy_addr_lo = static_cast<uint32_t>(physical);
    cmd.cmd.cmd_setup_tmr.system_phy_addr_hi = static_cast<uint32_t>(physical >> 32);
    return Status(cmd);
  }
  uint32_t LoadIpFirmware(uint32_t type, const std::string& image, std::optional<uint32_t> size = std::nullopt) {
    PutImage(image);
    psp::PspGfxCmdResp cmd = Command(psp::GFX_CMD_ID_LOAD_IP_FW);
    cmd.cmd.cmd_load_ip_fw.fw_phy_addr_lo = static_cast<uint32_t>(kFirmwareBuffer);
    cmd.cmd.cmd_load_ip_fw.fw_phy_addr_hi = static_cast<uint32_t>(kFirmwareBuffer >> 32);
    cmd.cmd.cmd_load_ip_fw.fw_size = size.value_or(static_cast<uint32_t>(image.size()));
    cmd.cmd.cmd_load_ip_fw.fw_type = type;
    return Status(cmd);
  }
  uint32_t LoadIpFirmware(uint32_t type) { return LoadIpFirmware(type, fw_.ip.at(type)); }
  // Ring, TOC, SMU firmware, TMR: psp_hw_start for MP0 13.0.0.
  void StartTmr() {
    ASSERT_NO_FATAL_FAILURE(BootWithRing());
    std::optional<psp::PspGfxResp> toc = LoadToc();
    ASSERT_TRUE(toc.has_value());
    ASSERT_EQ(toc->status, psp::TEE_SUCCESS);
    tmr_size_ = toc->tmr_size;
    ASSERT_EQ(LoadIpFirmware(gfx::kSmu), psp::TEE_SUCCESS);
    ASSERT_EQ(SetupTmr(kTmr, tmr_size_), psp::TEE_SUCCESS);
  }

  // The SMU mailbox (smu_cmn.c): 0 means no answer.
  uint32_t SmuVersionResponse() {
    mp1_.Write(regs::mp1::MP1_SMN_C2PMSG_90{}.set_raw(0));
    mp1_.Write(regs::mp1::MP1_SMN_C2PMSG_82{}.set_raw(0));
    mp1_.Write(regs::mp1::MP1_SMN_C2PMSG_66{}.set_raw(regs::smu::PPSMC_MSG_GetSmuVersion));
    return mp1_.Read<regs::mp1::MP1_SMN_C2PMSG_90>().raw();
  }

  bool Logged(absl::string_view a, absl::string_view b = "") {
    for (const DeviceError& e : fx_.errors().errors()) {
      if (e.model == "psp" && absl::StrContains(e.message, a) && absl::StrContains(e.message, b)) return true;
    }
    return false;
  }
  std::string Log() {
    std::vector<std::string> lines;
    for (const DeviceError& e : fx_.errors().errors()) lines.push_back(e.model + ": " + e.message);
    return absl::StrJoin(lines, "\n");
  }

  testing::ModelFixture fx_;
  SmuModel smu_;
  regs::IpRegisters<regs::Ip::kMp0, RegisterFile> mp0_;
  regs::IpRegisters<regs::Ip::kMp1, RegisterFile> mp1_;
  std::span<uint8_t> boot_buffer_, ring_, command_buffer_, fence_, firmware_buffer_, tmr_;
  std::unique_ptr<PspModel> psp_;
  VirtualFirmware fw_;
  uint32_t fence_value_ = 0;
  uint32_t tmr_size_ = 0;
};

// --- The whole protocol ------------------------------------------------------------------------------------------

TEST_F(PspModelTest, PowersOnWithTheBootloaderReadyAndNoSos) {
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_35>(), kReady);
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_81>(), 0u);
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_64>() & psp::GFX_FLAG_RESPONSE, 0u) << "no sOS, so not ready for a ring";
}

TEST_F(PspModelTest, BootsWithTheBuildsVirtualFirmware) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  // The sign of life is a heartbeat: psp_v13_0_bootloader_load_sos waits for it to change.
  const uint32_t beat = Read<mp0::MP0_SMN_C2PMSG_81>();
  EXPECT_NE(Read<mp0::MP0_SMN_C2PMSG_81>(), beat);
  ASSERT_TRUE(fw_.sos_version.has_value());
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_58>(), *fw_.sos_version) << "sOS version where psp_v13_0_init_sos_version reads";

  ASSERT_EQ(CreateRing(), psp::GFX_FLAG_RESPONSE);
  std::optional<psp::PspGfxResp> toc = LoadToc();
  ASSERT_TRUE(toc.has_value());
  ASSERT_EQ(toc->status, psp::TEE_SUCCESS);
  EXPECT_GT(toc->tmr_size, 0u);
  EXPECT_EQ(SmuVersionResponse(), 0u) << "the SMU is silent before its firmware";
  ASSERT_EQ(LoadIpFirmware(gfx::kSmu), psp::TEE_SUCCESS);
  ASSERT_EQ(SetupTmr(kTmr, toc->tmr_size), psp::TEE_SUCCESS);
  for (const auto& [type, image] : fw_.ip) {
    if (type == gfx::kSmu) continue;
    EXPECT_EQ(LoadIpFirmware(type, image), psp::TEE_SUCCESS) << firmware::TypeName(LoadPath::kIpFirmware, type);
  }
  EXPECT_EQ(Status(Command(psp::GFX_CMD_ID_AUTOLOAD_RLC)), psp::TEE_SUCCESS);

  EXPECT_TRUE(fx_.firmware().rlc_autoloaded());
  for (const auto& [type, image] : fw_.ip) {
    EXPECT_TRUE(fx_.firmware().Has(type)) << firmware::TypeName(LoadPath::kIpFirmware, type);
  }
  EXPECT_TRUE(smu_.alive());
  EXPECT_EQ(SmuVersionResponse(), regs::smu::PPSMC_Result_OK);
  EXPECT_TRUE(fx_.errors().errors().empty()) << Log();
}

TEST_F(PspModelTest, SkippedOptionalComponentsStillBootTheSos) {
  ASSERT_EQ(LoadComponent(kLoadSysDrv, pspfw::kSysDrv), kReady);
  ASSERT_NO_FATAL_FAILURE(StartSos());
}

TEST_F(PspModelTest, TheBootloaderHandsOverToTheSosAndAnswersNoMore) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  // What psp_v13_0_bootloader_load_sos waits for: C2PMSG_81 changing from a value read after the command.
  const uint32_t beat = Read<mp0::MP0_SMN_C2PMSG_81>();
  EXPECT_NE(Read<mp0::MP0_SMN_C2PMSG_81>(), beat);
  // What a driver waiting for the bootloader after LOAD_SOSDRV would wait for never comes.
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_35>() & kReady, 0u) << "C2PMSG_35 must not read ready once the sOS runs";
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_35>(), kLoadSos) << "it keeps the last command";
}

TEST_F(PspModelTest, IfwiInitialisationIsCompleteAtPowerOn) {
  // amdgpu_discovery_read_binary_from_mem waits for C2PMSG_33 bit 31 before it reads the discovery table.
  EXPECT_NE(Read<mp0::MP0_SMN_C2PMSG_33>() & kReady, 0u);
}

TEST_F(PspModelTest, SplCommandTakesTheKeyDatabaseAsLinuxSendsIt) {
  // psp_v13_0_bootloader_load_spl hands psp->kdb with PSP_BL__LOAD_TOS_SPL_TABLE.
  ASSERT_EQ(LoadComponent(kLoadKdb, pspfw::kKdb), kReady);
  EXPECT_EQ(LoadComponent(kLoadSpl, pspfw::kKdb), kReady) << Log();
}

// --- Bootloader errors -------------------------------------------------------------------------------------------

TEST_F(PspModelTest, ComponentOfAnotherTypeIsRefusedAndTheBootloaderStops) {
  std::optional<uint32_t> answer = LoadComponent(kLoadKdb, pspfw::kSysDrv);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(*answer, kReady | PspModel::kBootloaderBadComponent) << "Linux waits for exactly bit 31: this fails it";
  EXPECT_TRUE(Logged("KDB", "wrong firmware type")) << Log();
  // The failure is latched: the correct component is not taken either, and the sOS never starts.
  EXPECT_EQ(LoadComponent(kLoadKdb, pspfw::kKdb), kReady | PspModel::kBootloaderBadComponent);
  EXPECT_EQ(LoadComponent(kLoadSysDrv, pspfw::kSysDrv), kReady | PspModel::kBootloaderBadComponent);
  EXPECT_EQ(LoadComponent(kLoadSos, pspfw::kSos), kReady | PspModel::kBootloaderBadComponent);
  EXPECT_TRUE(Logged("ignored", "reset")) << Log();
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_81>(), 0u);
}

TEST_F(PspModelTest, CorruptedComponentIsRefused) {
  std::string sys = fw_.sos.at(pspfw::kSysDrv);
  sys[sys.size() / 2] ^= 0x40;
  EXPECT_EQ(SendBootloaderCommand(kLoadSysDrv, sys), kReady | PspModel::kBootloaderBadComponent);
  EXPECT_TRUE(Logged("SYS_DRV", "checksum")) << Log();
}

TEST_F(PspModelTest, RealMicrocodeIsRefused) {
  EXPECT_EQ(SendBootloaderCommand(kLoadSysDrv, std::string(4096, '\x5a')), kReady | PspModel::kBootloaderBadComponent);
  EXPECT_TRUE(Logged("SYS_DRV", "not virtual firmware")) << Log();
}

TEST_F(PspModelTest, ComponentClaimingMoreThanTheBufferIsRefused) {
  std::string sys = fw_.sos.at(pspfw::kSysDrv);
  const uint32_t claimed = 2 << 20;  // the payload's size field is at offset 20
  std::memcpy(sys.data() + 20, &claimed, sizeof(claimed));
  EXPECT_EQ(SendBootloaderCommand(kLoadSysDrv, sys), kReady | PspModel::kBootloaderBadComponent);
  EXPECT_TRUE(Logged("SYS_DRV", "bootloader buffer")) << Log();
}

TEST_F(PspModelTest, UnmappedBootloaderBufferIsRefused) {
  EXPECT_EQ(SendBootloaderCommand(kLoadKdb, fw_.sos.at(pspfw::kKdb), kUnmapped),
            kReady | PspModel::kBootloaderBadComponent);
  EXPECT_TRUE(Logged("KDB", "unreadable")) << Log();
}

TEST_F(PspModelTest, ComponentsOutOfOrderAreRefused) {
  ASSERT_EQ(LoadComponent(kLoadSysDrv, pspfw::kSysDrv), kReady);
  EXPECT_EQ(LoadComponent(kLoadKdb, pspfw::kKdb), kReady | PspModel::kBootloaderOutOfOrder);
  EXPECT_TRUE(Logged("KDB", "out of order")) << Log();
}

TEST_F(PspModelTest, RepeatedComponentIsRefused) {
  ASSERT_EQ(LoadComponent(kLoadSysDrv, pspfw::kSysDrv), kReady);
  EXPECT_EQ(LoadComponent(kLoadSysDrv, pspfw::kSysDrv), kReady | PspModel::kBootloaderOutOfOrder);
  EXPECT_TRUE(Logged("SYS_DRV", "already loaded")) << Log();
}

TEST_F(PspModelTest, SosBeforeSysDrvIsRefused) {
  ASSERT_EQ(LoadComponent(kLoadKdb, pspfw::kKdb), kReady);
  EXPECT_EQ(LoadComponent(kLoadSos, pspfw::kSos), kReady | PspModel::kBootloaderOutOfOrder);
  EXPECT_TRUE(Logged("SOS before SYS_DRV")) << Log();
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_81>(), 0u);
}

TEST_F(PspModelTest, NothingIsTakenAfterTheSos) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  EXPECT_EQ(LoadComponent(kLoadRasDrv, pspfw::kRasDrv), std::nullopt) << "the bootloader no longer answers";
  EXPECT_TRUE(Logged("C2PMSG_35 = 0x", "while the sOS runs")) << Log();
}

TEST_F(PspModelTest, UnknownBootloaderCommandIsRefused) {
  EXPECT_EQ(SendBootloaderCommand(kDramLongTrain, ""), kReady | PspModel::kBootloaderUnknownCommand);
  EXPECT_TRUE(Logged("unknown command 0x100000")) << Log();
}

// --- Ring control ------------------------------------------------------------------------------------------------

TEST_F(PspModelTest, RingControlBeforeTheSosIsNotAnswered) {
  Write<mp0::MP0_SMN_C2PMSG_64>(kCreateKmRing);
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_64>(), kCreateKmRing) << "no response flag: psp_v13_0_ring_create times out";
  EXPECT_TRUE(Logged("before the sOS is running")) << Log();
}

TEST_F(PspModelTest, RingIsCreatedOnceUntilDestroyed) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  ASSERT_TRUE(LoadToc().has_value());
  ASSERT_NE(Read<mp0::MP0_SMN_C2PMSG_67>(), 0u);
  std::optional<uint32_t> again = CreateRing();
  ASSERT_TRUE(again.has_value());
  EXPECT_NE(*again & psp::GFX_CMD_STATUS_MASK, 0u) << "psp_v13_0_ring_create waits for status 0: this fails it";
  EXPECT_TRUE(Logged("exists", "DESTROY_RINGS")) << Log();
  EXPECT_EQ(RingControl(psp::GFX_CTRL_CMD_ID_DESTROY_RINGS), psp::GFX_FLAG_RESPONSE);
  EXPECT_EQ(CreateRing(), psp::GFX_FLAG_RESPONSE);
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_67>(), 0u) << "a new ring starts at its first frame";
  EXPECT_TRUE(LoadToc().has_value());
}

TEST_F(PspModelTest, RingOfABadSizeOrUnmappedIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  std::optional<uint32_t> odd = CreateRing(kRing, 100);
  ASSERT_TRUE(odd.has_value());
  EXPECT_NE(*odd & psp::GFX_CMD_STATUS_MASK, 0u);
  EXPECT_TRUE(Logged("size", "100 bytes")) << Log();
  std::optional<uint32_t> unmapped = CreateRing(kUnmapped);
  ASSERT_TRUE(unmapped.has_value());
  EXPECT_NE(*unmapped & psp::GFX_CMD_STATUS_MASK, 0u);
  EXPECT_TRUE(Logged("not readable")) << Log();
  EXPECT_EQ(CreateRing(), psp::GFX_FLAG_RESPONSE);
}

TEST_F(PspModelTest, UnknownRingControlCommandIsAnsweredUnknown) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  EXPECT_EQ(RingControl(0xe0000), psp::GFX_FLAG_RESPONSE | psp::PSP_ERR_UNKNOWN_COMMAND);
  EXPECT_TRUE(Logged("unknown command 0xe0000")) << Log();
}

TEST_F(PspModelTest, WritePointerBeforeTheRingIsIgnored) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  Write<mp0::MP0_SMN_C2PMSG_67>(16);
  EXPECT_TRUE(Logged("before a ring was created")) << Log();
}

TEST_F(PspModelTest, RingWrapsAround) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  const uint32_t frames = kRingBytes / sizeof(psp::PspGfxRbFrame);
  for (uint32_t i = 0; i < frames + 6; ++i) {
    std::optional<psp::PspGfxResp> toc = LoadToc();
    ASSERT_TRUE(toc.has_value()) << "command " << i;
    EXPECT_EQ(toc->status, psp::TEE_SUCCESS);
  }
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_67>(), 6 * kFrameDwords);
}

TEST_F(PspModelTest, UnreadableCommandBufferGetsNoAnswerAndTheNextFrameIsServed) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  // Two frames at once: the first points at no memory, the second at a LOAD_TOC.
  PutImage(fw_.toc);
  psp::PspGfxCmdResp cmd = Command(psp::GFX_CMD_ID_LOAD_TOC);
  cmd.cmd.cmd_load_toc.toc_phy_addr_lo = static_cast<uint32_t>(kFirmwareBuffer);
  cmd.cmd.cmd_load_toc.toc_size = static_cast<uint32_t>(fw_.toc.size());
  std::memcpy(command_buffer_.data(), &cmd, sizeof(cmd));
  PutFrame(0, kUnmapped, 100);
  PutFrame(kFrameDwords, kCommandBuffer, 101);
  Write<mp0::MP0_SMN_C2PMSG_67>(2 * kFrameDwords);
  ASSERT_TRUE(Eventually([&] { return FenceValue() == 101; }));
  EXPECT_TRUE(Logged("command buffer", "unreadable")) << Log();
  psp::PspGfxCmdResp answered;
  std::memcpy(&answered, command_buffer_.data(), sizeof(answered));
  EXPECT_EQ(answered.resp.status, psp::TEE_SUCCESS);
}

// --- KM commands out of order or refused -------------------------------------------------------------------------

TEST_F(PspModelTest, SetupTmrNeedsTheToc) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  EXPECT_EQ(SetupTmr(kTmr, PspModel::TocTmrSize()), psp::TEE_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Logged("SETUP_TMR before LOAD_TOC")) << Log();
}

TEST_F(PspModelTest, IpFirmwareNeedsTheTmrAndSmuFirmwareTheToc) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  EXPECT_EQ(LoadIpFirmware(gfx::kSmu), psp::TEE_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Logged("GFX_FW_TYPE_SMU before LOAD_TOC")) << Log();
  ASSERT_TRUE(LoadToc().has_value());
  EXPECT_EQ(LoadIpFirmware(gfx::kRlcG), psp::TEE_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Logged("GFX_FW_TYPE_RLC_G before SETUP_TMR")) << Log();
  EXPECT_FALSE(fx_.firmware().Has(gfx::kRlcG));
  EXPECT_EQ(LoadIpFirmware(gfx::kSmu), psp::TEE_SUCCESS) << "PMFW goes before the TMR on MP0 13.0.0";
}

TEST_F(PspModelTest, TmrIsSetUpOnlyOnceThePmfwRuns) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  std::optional<psp::PspGfxResp> toc = LoadToc();
  ASSERT_TRUE(toc.has_value());
  // baregpu's order before issue 16 (TOC, TMR, SMU): refused on MP0 13.0.0.
  EXPECT_EQ(SetupTmr(kTmr, toc->tmr_size), psp::TEE_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Logged("SETUP_TMR before the PMFW")) << Log();
  ASSERT_EQ(LoadIpFirmware(gfx::kSmu), psp::TEE_SUCCESS);
  EXPECT_EQ(SetupTmr(kTmr, toc->tmr_size), psp::TEE_SUCCESS) << Log();
}

TEST_F(PspModelTest, TmrNeedsItsMcAndPhysicalAddresses) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  std::optional<psp::PspGfxResp> toc = LoadToc();
  ASSERT_TRUE(toc.has_value());
  ASSERT_EQ(LoadIpFirmware(gfx::kSmu), psp::TEE_SUCCESS);
  auto setup = [&](uint64_t mc, uint32_t flags, uint64_t physical) {
    psp::PspGfxCmdResp cmd = Command(psp::GFX_CMD_ID_SETUP_TMR);
    cmd.cmd.cmd_setup_tmr = {
        static_cast<uint32_t>(mc),       static_cast<uint32_t>(mc >> 32),      toc->tmr_size, flags,
        static_cast<uint32_t>(physical), static_cast<uint32_t>(physical >> 32)};
    return Status(cmd);
  };
  // baregpu's SETUP_TMR before issue 16: the MC address alone, no flags.
  EXPECT_EQ(setup(kTmr, 0, 0), psp::TEE_ERROR_CANCEL);
  EXPECT_TRUE(Logged("lack virt_phy_addr")) << Log();
  EXPECT_EQ(setup(kTmr, psp::PspGfxCmdSetupTmr::kVirtPhyAddr, kTmr), psp::TEE_ERROR_CANCEL) << "MC as physical";
  EXPECT_TRUE(Logged("system_phy_addr 0x82000000 is not the physical address", "0x2000000")) << Log();
  EXPECT_EQ(setup(0x4000'0000, psp::PspGfxCmdSetupTmr::kVirtPhyAddr, 0), psp::TEE_ERROR_CANCEL) << "below VRAM";
  EXPECT_TRUE(Logged("not inside VRAM's MC window")) << Log();
  EXPECT_FALSE(fx_.firmware().Has(gfx::kRlcG));
  EXPECT_EQ(setup(kTmr, psp::PspGfxCmdSetupTmr::kVirtPhyAddr, kTmr - kFbBase), psp::TEE_SUCCESS) << Log();
}

TEST_F(PspModelTest, AutoloadNeedsTheRlcAndComputeFirmware) {
  ASSERT_NO_FATAL_FAILURE(StartTmr());
  EXPECT_EQ(Status(Command(psp::GFX_CMD_ID_AUTOLOAD_RLC)), psp::TEE_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Logged("AUTOLOAD_RLC", "GFX_FW_TYPE_RS64_MEC")) << Log();
  EXPECT_FALSE(fx_.firmware().rlc_autoloaded());
  for (uint32_t type : {gfx::kRlcG, gfx::kRlcIram, gfx::kRlcDramBoot, gfx::kRs64Mec, gfx::kRs64MecP0Stack}) {
    ASSERT_EQ(LoadIpFirmware(type), psp::TEE_SUCCESS) << firmware::TypeName(LoadPath::kIpFirmware, type);
  }
  EXPECT_EQ(Status(Command(psp::GFX_CMD_ID_AUTOLOAD_RLC)), psp::TEE_SUCCESS) << Log();
  EXPECT_TRUE(fx_.firmware().rlc_autoloaded());
}

TEST_F(PspModelTest, UnknownCommandIdIsAnsweredUnknown) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  EXPECT_EQ(Status(Command(0x99)), psp::PSP_ERR_UNKNOWN_COMMAND);
  EXPECT_TRUE(Logged("unknown command id 0x99")) << Log();
  EXPECT_EQ(Status(Command(psp::GFX_CMD_ID_SETUP_VMR)), psp::TEE_ERROR_NOT_SUPPORTED);
}

TEST_F(PspModelTest, FirmwareTypeThisAsicDoesNotTakeIsRefused) {
  ASSERT_NO_FATAL_FAILURE(StartTmr());
  EXPECT_EQ(LoadIpFirmware(gfx::kCpMec, fw_.ip.at(gfx::kRs64Mec)), psp::TEE_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Logged("GFX_FW_TYPE_CP_MEC", "navi31")) << Log();
}

TEST_F(PspModelTest, ImageOfAnotherTypeOrSizeIsRefused) {
  ASSERT_NO_FATAL_FAILURE(StartTmr());
  EXPECT_EQ(LoadIpFirmware(gfx::kRlcG, fw_.ip.at(gfx::kRs64Mec)), psp::TEE_ERROR_CANCEL);
  EXPECT_TRUE(Logged("GFX_FW_TYPE_RLC_G", "wrong firmware type")) << Log();
  const std::string& rlc = fw_.ip.at(gfx::kRlcG);
  EXPECT_EQ(LoadIpFirmware(gfx::kRlcG, rlc, rlc.size() + 256), psp::TEE_ERROR_CANCEL) << "a page-rounded size";
  EXPECT_TRUE(Logged("GFX_FW_TYPE_RLC_G", "size mismatch")) << Log();
  EXPECT_EQ(LoadIpFirmware(gfx::kRlcG, rlc, 0), psp::TEE_ERROR_CANCEL);
  EXPECT_FALSE(fx_.firmware().Has(gfx::kRlcG));
  EXPECT_EQ(LoadIpFirmware(gfx::kRlcG), psp::TEE_SUCCESS);
}

TEST_F(PspModelTest, TmrMustBeAlignedLargeEnoughAndMapped) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  std::optional<psp::PspGfxResp> toc = LoadToc();
  ASSERT_TRUE(toc.has_value());
  ASSERT_EQ(LoadIpFirmware(gfx::kSmu), psp::TEE_SUCCESS);
  EXPECT_EQ(SetupTmr(kTmr + 0x1000, toc->tmr_size - 0x100000), psp::TEE_ERROR_CANCEL);
  EXPECT_EQ(SetupTmr(kTmr, toc->tmr_size - 0x100000), psp::TEE_ERROR_CANCEL);
  EXPECT_EQ(SetupTmr(kUnmapped, toc->tmr_size), psp::TEE_ERROR_CANCEL);
  EXPECT_TRUE(Logged("SETUP_TMR", "not writable")) << Log();
  EXPECT_EQ(SetupTmr(kTmr, toc->tmr_size), psp::TEE_SUCCESS);
  EXPECT_EQ(SetupTmr(kTmr, toc->tmr_size), psp::TEE_SUCCESS) << "the same TMR again";
  fx_.memory().Place(kUnmapped, toc->tmr_size);
  EXPECT_EQ(SetupTmr(kUnmapped, toc->tmr_size), psp::TEE_ERROR_NOT_SUPPORTED) << "the TMR cannot move";
  EXPECT_EQ(Status(Command(psp::GFX_CMD_ID_DESTROY_TMR)), psp::TEE_SUCCESS);
  EXPECT_EQ(SetupTmr(kUnmapped, toc->tmr_size), psp::TEE_SUCCESS);
}

// --- Persistence -------------------------------------------------------------------------------------------------

TEST_F(PspModelTest, ASecondModelFindsTheSosBootedAndItsRing) {
  ASSERT_NO_FATAL_FAILURE(StartTmr());
  // The process ends; the next one builds its SMU and PSP on the same registers and model state.
  psp_.reset();
  SmuModel next_smu(fx_.registers(), fx_.bases());
  psp_ = std::make_unique<PspModel>(fx_.context(), next_smu);
  EXPECT_NE(Read<mp0::MP0_SMN_C2PMSG_81>(), 0u) << "psp_v13_0_is_sos_alive";
  EXPECT_EQ(SmuVersionResponse(), regs::smu::PPSMC_Result_OK) << "the PMFW the first process loaded still runs";
  EXPECT_EQ(LoadComponent(kLoadKdb, pspfw::kKdb), std::nullopt) << "the bootloader handed over for good";
  // The ring and the TMR are where the first process left them.
  EXPECT_EQ(LoadIpFirmware(gfx::kRlcG), psp::TEE_SUCCESS) << Log();
  std::optional<uint32_t> again = CreateRing();
  ASSERT_TRUE(again.has_value());
  EXPECT_NE(*again & psp::GFX_CMD_STATUS_MASK, 0u) << "the ring still exists";
  psp_.reset();  // before next_smu goes
}

TEST_F(PspModelTest, ResetReturnsToPowerOn) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  psp_->Reset();
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_81>(), 0u);
  EXPECT_EQ(Read<mp0::MP0_SMN_C2PMSG_35>(), kReady);
  ASSERT_NO_FATAL_FAILURE(Boot());
}

// --- Fault injection ---------------------------------------------------------------------------------------------

TEST_F(PspModelTest, InjectedCommandFailureAnswersTheStatusAndDoesNothing) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  psp_->InjectCommandFailure(psp::GFX_CMD_ID_LOAD_TOC, psp::TEE_ERROR_CANCEL);
  std::optional<psp::PspGfxResp> toc = LoadToc();
  ASSERT_TRUE(toc.has_value());
  EXPECT_EQ(toc->status, psp::TEE_ERROR_CANCEL);
  EXPECT_EQ(toc->tmr_size, 0u);
  EXPECT_TRUE(Logged("LOAD_TOC", "injected")) << Log();
  EXPECT_EQ(SetupTmr(kTmr, PspModel::TocTmrSize()), psp::TEE_ERROR_NOT_SUPPORTED) << "the TOC was not loaded";
  psp_->InjectCommandFailure(psp::GFX_CMD_ID_LOAD_TOC, psp::TEE_SUCCESS);
  toc = LoadToc();
  ASSERT_TRUE(toc.has_value());
  EXPECT_EQ(toc->status, psp::TEE_SUCCESS);
}

TEST_F(PspModelTest, RejectedFirmwareTypeLeavesTheSmuSilent) {
  psp_->RejectFirmwareType(gfx::kSmu);
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  ASSERT_TRUE(LoadToc().has_value());
  EXPECT_EQ(LoadIpFirmware(gfx::kSmu), psp::TEE_ERROR_CANCEL);
  EXPECT_TRUE(Logged("GFX_FW_TYPE_SMU", "injected")) << Log();
  EXPECT_FALSE(fx_.firmware().Has(gfx::kSmu));
  EXPECT_FALSE(smu_.alive());
  EXPECT_EQ(SmuVersionResponse(), 0u);
}

TEST_F(PspModelTest, SmuComesAliveWithItsFirmware) {
  ASSERT_NO_FATAL_FAILURE(BootWithRing());
  ASSERT_TRUE(LoadToc().has_value());
  EXPECT_EQ(SmuVersionResponse(), 0u);
  ASSERT_EQ(LoadIpFirmware(gfx::kSmu), psp::TEE_SUCCESS);
  EXPECT_EQ(SmuVersionResponse(), regs::smu::PPSMC_Result_OK);
  EXPECT_TRUE(fx_.firmware().Has(gfx::kSmu));
}

}  // namespace
}  // namespace am::sim
