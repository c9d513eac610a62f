// The virtual Navi31 booted by hand, through its BARs alone, with the protocol steps of Linux's amdgpu and
// tinygrad's AM spelled out with the real register names: NBIO doorbells, both hubs' system aperture and context 0,
// the IH ring, the PSP bootloader and KM ring loading every firmware, the SMU answering, a MEC compute queue
// running PM4 (RELEASE_MEM fence + end-of-pipe interrupt) and an SDMA copy. Then a DMA to a bus address the device
// was never given: it faults, and no byte of host memory moves.
//
// This test uses no driver code (am::Device and its blocks are tested in tests/am); it is the model's own proof
// that it can be brought up the way the hardware is.
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/mmhub.h"
#include "am/regs/mp0.h"
#include "am/regs/mp1.h"
#include "am/regs/mqd.h"
#include "am/regs/nbio.h"
#include "am/regs/osssys.h"
#include "am/regs/pm4_constants.h"
#include "am/regs/pm4_event_constants.h"
#include "am/regs/pm4_packets.h"
#include "am/regs/psp.h"
#include "am/regs/psp_constants.h"
#include "am/regs/psp_driver_constants.h"
#include "am/regs/register_space.h"
#include "am/regs/sdma_constants.h"
#include "am/regs/sdma_packets.h"
#include "am/regs/smu_constants.h"
#include "am/regs/vm.h"
#include "am/sim/navi31.h"
#include "firmware/container.h"
#include "firmware/requirements.h"
#include "firmware/store.h"
#include "firmware/virtual_firmware.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/bar5.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/am/sim/vm_context.h"

namespace am::sim {
namespace {

auto* const kStateDir = testing::RegisterSimStateDir();

namespace gc = regs::gc;
namespace mmhub = regs::mmhub;
namespace mp0 = regs::mp0;
namespace mp1 = regs::mp1;
namespace osssys = regs::osssys;
namespace pm4 = regs::pm4;
namespace psp = regs::psp;
namespace vm = regs::vm;
using testing::Bar5;

// Where the test puts things in VRAM (offsets) and in the GART range of context 0.
constexpr uint64_t kPspStaging = 0x0010'0000;  // 1 MiB aligned, as C2PMSG_36 takes address >> 20
constexpr uint64_t kPspRing = 0x0020'0000;
constexpr uint64_t kPspCommand = 0x0020'1000;
constexpr uint64_t kPspFence = 0x0020'2000;
constexpr uint64_t kTmr = 0x0100'0000;
constexpr uint64_t kIhRing = 0x0030'0000;
constexpr uint64_t kIhWptr = 0x0034'0000;
constexpr uint64_t kGartTable = 0x0040'0000;
constexpr uint64_t kMecRing = 0x0050'0000;
constexpr uint64_t kMecPointers = 0x0051'0000;  // rptr report at +0, wptr poll at +8
constexpr uint64_t kSdmaRing = 0x0052'0000;
constexpr uint64_t kSdmaRptr = 0x0053'0000;
constexpr uint64_t kFences = 0x0054'0000;
constexpr uint64_t kCopySource = 0x0060'0000;
constexpr uint64_t kCopyDestination = 0x0070'0000;
constexpr uint64_t kGartStart = 0x7fff'0000'0000;  // context 0's page-table range (GPU virtual)
constexpr uint32_t kMecDoorbell = 6;               // dword index of MEC ring 0's 64-bit doorbell
constexpr uint32_t kSdmaDoorbell = 0x100;

constexpr std::chrono::seconds kTimeout(5);

bool WaitUntil(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

class Navi31BringUpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:bringup").ok());
    auto device = pci::Open("sim:navi31:bringup");
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    ASSERT_TRUE(device_->SetBusMaster(true).ok());
    bar5_.emplace(*device_->MapMmio(5));
    doorbells_ = *device_->MapMmio(2);
    vram_ = *device_->MapMemory(0);
    auto msi = device_->EnableInterrupts(1);
    ASSERT_TRUE(msi.ok()) << msi.status();
    msi_ = (*msi)[0];
  }
  Navi31& navi31() { return static_cast<Navi31&>(*device_); }
  template <regs::Ip kIp>
  regs::IpRegisters<kIp, Bar5> Regs() {
    return *regs::IpRegisters<kIp, Bar5>::Create(*bar5_, Navi31Bases());
  }
  uint64_t Mc(uint64_t vram) const { return fb_start_ + vram; }
  uint32_t VramDword(uint64_t offset) {
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(vram_.data() + offset)).load();
  }
  void WriteVram(uint64_t offset, const void* data, size_t size) { std::memcpy(vram_.data() + offset, data, size); }

  // NBIO: doorbells (nbio_v4_3_enable_doorbell_aperture) and their S2A routing to GC (ports 0 and 3) and SDMA
  // (port 2, this test's SDMA doorbell), as tinygrad's AM_SOC.doorbell_enable callers program it.
  void EnableDoorbells() {
    auto nbio = Regs<regs::Ip::kNbio>();
    nbio.Write(regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN{}.bif_doorbell_aper_en(1));
    WriteBeyondBar5<regs::nbio::S2A_DOORBELL_ENTRY_0_CTRL>(regs::nbio::S2A_DOORBELL_ENTRY_0_CTRL{}
                                                               .s2a_doorbell_port0_enable(1)
                                                               .s2a_doorbell_port0_awid(0x3)
                                                               .s2a_doorbell_port0_awaddr_31_28_value(0x3)
                                                               .raw());
    WriteBeyondBar5<regs::nbio::S2A_DOORBELL_ENTRY_3_CTRL>(regs::nbio::S2A_DOORBELL_ENTRY_3_CTRL{}
                                                               .s2a_doorbell_port3_enable(1)
                                                               .s2a_doorbell_port3_awid(0x6)
                                                               .s2a_doorbell_port3_awaddr_31_28_value(0x3)
                                                               .raw());
    WriteBeyondBar5<regs::nbio::S2A_DOORBELL_ENTRY_2_CTRL>(regs::nbio::S2A_DOORBELL_ENTRY_2_CTRL{}
                                                               .s2a_doorbell_port2_enable(1)
                                                               .s2a_doorbell_port2_awid(0xe)
                                                               .s2a_doorbell_port2_range_offset(kSdmaDoorbell)
                                                               .s2a_doorbell_port2_range_size(2)
                                                               .s2a_doorbell_port2_awaddr_31_28_value(0x3)
                                                               .raw());
  }
  // A register past BAR5's end, through the RSMU index/data pair (byte address in the index).
  template <typename R>
  void WriteBeyondBar5(uint32_t value) {
    auto nbio = Regs<regs::Ip::kNbio>();
    nbio.Write(regs::nbio::BIF_BX_PF0_RSMU_INDEX{}.set_raw(
        static_cast<uint32_t>(*Navi31Bases().Resolve(R::kIp, 0, R::kSegment, R::kOffset) * 4)));
    nbio.Write(regs::nbio::BIF_BX_PF0_RSMU_DATA{}.set_raw(value));
  }

  // The MMHUB: the system aperture over the FB (mmhub_v3_0_init_system_aperture_regs) and its invalidation through
  // engine 17 with the semaphore (gmc_v11_0_gart_enable, gmc_v11_0_flush_gpu_tlb).
  void SetUpMmhub() {
    auto mm = Regs<regs::Ip::kMmhub>();
    fb_start_ = uint64_t{mm.Read<mmhub::MMMC_VM_FB_LOCATION_BASE>().fb_base()} << 24;
    const uint64_t fb_end = (uint64_t{mm.Read<mmhub::MMMC_VM_FB_LOCATION_TOP>().fb_top()} << 24) | 0xffffff;
    mm.Write(mmhub::MMMC_VM_SYSTEM_APERTURE_LOW_ADDR{}.set_raw(static_cast<uint32_t>(fb_start_ >> 18)));
    mm.Write(mmhub::MMMC_VM_SYSTEM_APERTURE_HIGH_ADDR{}.set_raw(static_cast<uint32_t>(fb_end >> 18)));
    testing::EnableHubTlb(*bar5_, Hub::kMm);
    ASSERT_EQ(mm.Read<mmhub::MMVM_INVALIDATE_ENG17_SEM>().semaphore(), 1u);
    mm.Write(mmhub::MMVM_INVALIDATE_ENG17_REQ{}.per_vmid_invalidate_req(1).invalidate_l2_ptes(1).invalidate_l1_ptes(1));
    ASSERT_EQ(mm.Read<mmhub::MMVM_INVALIDATE_ENG17_ACK>().per_vmid_invalidate_ack() & 1, 1u);
    mm.Write(mmhub::MMVM_INVALIDATE_ENG17_SEM{}.semaphore(0));
  }
  // The GC hub once the RLC autoload powered GC (gfx_v11_0_gfxhub_enable): the system aperture, context 0 on a
  // one-level GART table (init_gart_aperture_regs, enable_system_domain), then an invalidation without semaphore.
  void SetUpGchub() {
    auto g = Regs<regs::Ip::kGc>();
    const uint64_t fb_end = (uint64_t{g.Read<gc::GCMC_VM_FB_LOCATION_TOP>().fb_top()} << 24) | 0xffffff;
    const uint64_t gart_end = kGartStart + 512 * 4096 - 1;
    g.Write(gc::GCMC_VM_SYSTEM_APERTURE_LOW_ADDR{}.set_raw(static_cast<uint32_t>(fb_start_ >> 18)));
    g.Write(gc::GCMC_VM_SYSTEM_APERTURE_HIGH_ADDR{}.set_raw(static_cast<uint32_t>(fb_end >> 18)));
    testing::EnableHubTlb(*bar5_, Hub::kGc);
    g.Write(gc::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32{}.set_raw(static_cast<uint32_t>(kGartTable | 1)));
    g.Write(gc::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32{}.set_raw(0));
    g.Write(gc::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32{}.set_raw(static_cast<uint32_t>(kGartStart >> 12)));
    g.Write(gc::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32{}.set_raw(static_cast<uint32_t>(kGartStart >> 44)));
    g.Write(gc::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32{}.set_raw(static_cast<uint32_t>(gart_end >> 12)));
    g.Write(gc::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32{}.set_raw(static_cast<uint32_t>(gart_end >> 44)));
    g.Write(gc::GCVM_CONTEXT0_CNTL{}.enable_context(1).page_table_depth(0).valid_protection_fault_enable_interrupt(1));
    g.Write(gc::GCVM_INVALIDATE_ENG17_REQ{}.per_vmid_invalidate_req(1).invalidate_l2_ptes(1).invalidate_l1_ptes(1));
    ASSERT_EQ(g.Read<gc::GCVM_INVALIDATE_ENG17_ACK>().per_vmid_invalidate_ack() & 1, 1u);
  }
  void SetGartPte(uint32_t index, uint64_t pte) { WriteVram(kGartTable + index * 8, &pte, 8); }

  // IH ring 0 in VRAM, addressed through the MMHUB (ih_v6_0_enable_ring with MC_SPACE 4).
  void SetUpIh() {
    auto oss = Regs<regs::Ip::kOsssys>();
    oss.Write(osssys::IH_RB_BASE{}.set_raw(static_cast<uint32_t>(Mc(kIhRing) >> 8)));
    oss.Write(osssys::IH_RB_BASE_HI{}.set_raw(static_cast<uint32_t>(Mc(kIhRing) >> 40)));
    oss.Write(osssys::IH_RB_WPTR_ADDR_LO{}.set_raw(static_cast<uint32_t>(Mc(kIhWptr))));
    oss.Write(osssys::IH_RB_WPTR_ADDR_HI{}.set_raw(static_cast<uint32_t>(Mc(kIhWptr) >> 32)));
    oss.Write(osssys::IH_RB_CNTL{}
                  .rb_enable(1)
                  .rb_size(14)
                  .wptr_writeback_enable(1)
                  .wptr_overflow_enable(1)
                  .enable_intr(1)
                  .mc_space(4));
  }
  // The IH entries written so far (the wptr write-back says how many).
  std::vector<std::array<uint32_t, 8>> IhEntries() {
    std::vector<std::array<uint32_t, 8>> entries;
    const uint32_t end = osssys::IH_RB_WPTR::FromRaw(VramDword(kIhWptr)).offset() << 2;
    for (uint32_t at = 0; at < end; at += 32) {
      std::array<uint32_t, 8> e;
      std::memcpy(e.data(), vram_.data() + kIhRing + at, 32);
      entries.push_back(e);
    }
    return entries;
  }

  // PSP: psp_v13_0_bootloader_load_component for each sOS component, then the KM ring and its commands.
  void BootPsp() {
    firmware::Store store = firmware::StoreForDevice(/*is_virtual=*/true);
    auto sos_file = store.Load("psp_13_0_0_sos.bin");
    ASSERT_TRUE(sos_file.ok()) << sos_file.status();
    auto sos = firmware::ParseContainer(sos_file->path, sos_file->data);
    ASSERT_TRUE(sos.ok()) << sos.status();
    auto mp = Regs<regs::Ip::kMp0>();
    const struct {
      const char* component;
      uint32_t command;
    } steps[] = {{"kdb", psp::PSP_BL__LOAD_KEY_DATABASE}, {"spl", psp::PSP_BL__LOAD_TOS_SPL_TABLE},
                 {"sys_drv", psp::PSP_BL__LOAD_SYSDRV},   {"soc_drv", psp::PSP_BL__LOAD_SOCDRV},
                 {"intf_drv", psp::PSP_BL__LOAD_INTFDRV}, {"dbg_drv", psp::PSP_BL__LOAD_DBGDRV},
                 {"ras_drv", psp::PSP_BL__LOAD_RASDRV},   {"sos", psp::PSP_BL__LOAD_SOSDRV}};
    auto bootloader_ready = [&] { return (mp.Read<mp0::MP0_SMN_C2PMSG_35>().raw() & 0x8000ffff) == 0x80000000; };
    for (const auto& step : steps) {
      const firmware::Component* component = sos->FindByName(step.component);
      ASSERT_NE(component, nullptr) << step.component;
      ASSERT_TRUE(WaitUntil(bootloader_ready)) << "before " << step.component;
      const absl::string_view bytes = firmware::ComponentBytes(sos_file->data, *component);
      WriteVram(kPspStaging, bytes.data(), bytes.size());
      mp.Write(mp0::MP0_SMN_C2PMSG_36{}.set_raw(static_cast<uint32_t>(Mc(kPspStaging) >> 20)));
      mp.Write(mp0::MP0_SMN_C2PMSG_35{}.set_raw(step.command));
      // psp_v13_0_bootloader_load_sos: the sOS answers by its sign of life in C2PMSG_81, the bootloader no more.
      if (step.command == psp::PSP_BL__LOAD_SOSDRV) break;
      ASSERT_TRUE(WaitUntil(bootloader_ready))
          << step.component << ": C2PMSG_35 " << mp.Read<mp0::MP0_SMN_C2PMSG_35>().raw();
    }
    ASSERT_TRUE(WaitUntil([&] { return mp.Read<mp0::MP0_SMN_C2PMSG_81>().raw() != 0; })) << "sOS sign of life";

    // psp_v13_0_ring_create (non-SR-IOV).
    ASSERT_TRUE(WaitUntil([&] { return (mp.Read<mp0::MP0_SMN_C2PMSG_64>().raw() & 0x80000000) != 0; }));
    mp.Write(mp0::MP0_SMN_C2PMSG_69{}.set_raw(static_cast<uint32_t>(Mc(kPspRing))));
    mp.Write(mp0::MP0_SMN_C2PMSG_70{}.set_raw(static_cast<uint32_t>(Mc(kPspRing) >> 32)));
    mp.Write(mp0::MP0_SMN_C2PMSG_71{}.set_raw(0x1000));
    mp.Write(mp0::MP0_SMN_C2PMSG_64{}.set_raw(psp::PSP_RING_TYPE__KM << 16));
    ASSERT_TRUE(WaitUntil([&] { return (mp.Read<mp0::MP0_SMN_C2PMSG_64>().raw() & 0x8000ffff) == 0x80000000; }));

    // LOAD_TOC, SETUP_TMR, LOAD_IP_FW of every IP firmware (SMU first), AUTOLOAD_RLC.
    const firmware::Component* toc = sos->FindByName("toc");
    ASSERT_NE(toc, nullptr);
    psp::PspGfxCmdResp load_toc{};
    load_toc.cmd_id = psp::GFX_CMD_ID_LOAD_TOC;
    Stage(firmware::ComponentBytes(sos_file->data, *toc));
    load_toc.cmd.cmd_load_toc = {static_cast<uint32_t>(Mc(kPspStaging)), static_cast<uint32_t>(Mc(kPspStaging) >> 32),
                                 static_cast<uint32_t>(toc->size)};
    const psp::PspGfxCmdResp toc_answer = PspCommand(load_toc);
    ASSERT_EQ(toc_answer.resp.status, psp::TEE_SUCCESS);
    ASSERT_GT(toc_answer.resp.tmr_size, 0u);
    // psp_tmr_load comes after the PMFW on MP0 13.0.0 (psp_hw_start): the MC address with virt_phy_addr and the
    // physical one (FB_OFFSET is 0 on the virtual board, so the VRAM offset).
    psp::PspGfxCmdResp setup_tmr{};
    setup_tmr.cmd_id = psp::GFX_CMD_ID_SETUP_TMR;
    setup_tmr.cmd.cmd_setup_tmr.buf_phy_addr_lo = static_cast<uint32_t>(Mc(kTmr));
    setup_tmr.cmd.cmd_setup_tmr.buf_phy_addr_hi = static_cast<uint32_t>(Mc(kTmr) >> 32);
    setup_tmr.cmd.cmd_setup_tmr.buf_size = toc_answer.resp.tmr_size;
    setup_tmr.cmd.cmd_setup_tmr.tmr_flags = psp::PspGfxCmdSetupTmr::kVirtPhyAddr;
    setup_tmr.cmd.cmd_setup_tmr.system_phy_addr_lo = static_cast<uint32_t>(kTmr);
    setup_tmr.cmd.cmd_setup_tmr.system_phy_addr_hi = static_cast<uint32_t>(kTmr >> 32);

    auto required = firmware::RequiredFiles(firmware::FindAsicProfile("navi31")->ip);
    ASSERT_TRUE(required.ok());
    for (bool smu_pass : {true, false}) {
      if (!smu_pass) {
        ASSERT_EQ(PspCommand(setup_tmr).resp.status, psp::TEE_SUCCESS);
      }
      for (const firmware::RequiredFile& file : *required) {
        if ((file.role.kind == firmware::FileKind::kSmc) != smu_pass) continue;
        auto loaded = store.Load(file.name);
        ASSERT_TRUE(loaded.ok()) << loaded.status();
        auto container = firmware::ParseContainer(loaded->path, loaded->data);
        ASSERT_TRUE(container.ok()) << container.status();
        for (const firmware::Component& component : container->components) {
          if (component.load != firmware::LoadPath::kIpFirmware) continue;
          for (uint32_t type : component.types) {
            Stage(firmware::ComponentBytes(loaded->data, component));
            psp::PspGfxCmdResp load{};
            load.cmd_id = psp::GFX_CMD_ID_LOAD_IP_FW;
            load.cmd.cmd_load_ip_fw = {static_cast<uint32_t>(Mc(kPspStaging)),
                                       static_cast<uint32_t>(Mc(kPspStaging) >> 32),
                                       static_cast<uint32_t>(component.size), type};
            ASSERT_EQ(PspCommand(load).resp.status, psp::TEE_SUCCESS) << file.name << " type " << type;
          }
        }
      }
    }
    psp::PspGfxCmdResp autoload{};
    autoload.cmd_id = psp::GFX_CMD_ID_AUTOLOAD_RLC;
    ASSERT_EQ(PspCommand(autoload).resp.status, psp::TEE_SUCCESS);
  }
  void Stage(absl::string_view bytes) { WriteVram(kPspStaging, bytes.data(), bytes.size()); }
  // One KM-ring frame (psp_cmd_submit): command buffer, fence, write pointer in C2PMSG_67 (dwords).
  psp::PspGfxCmdResp PspCommand(psp::PspGfxCmdResp command) {
    command.buf_size = sizeof(command);
    command.buf_version = psp::PSP_GFX_CMD_BUF_VERSION;
    WriteVram(kPspCommand, &command, sizeof(command));
    ++psp_fence_;
    psp::PspGfxRbFrame frame{};
    frame.cmd_buf_addr_lo = static_cast<uint32_t>(Mc(kPspCommand));
    frame.cmd_buf_addr_hi = static_cast<uint32_t>(Mc(kPspCommand) >> 32);
    frame.cmd_buf_size = sizeof(command);
    frame.fence_addr_lo = static_cast<uint32_t>(Mc(kPspFence));
    frame.fence_addr_hi = static_cast<uint32_t>(Mc(kPspFence) >> 32);
    frame.fence_value = psp_fence_;
    WriteVram(kPspRing + psp_wptr_ * 4, &frame, sizeof(frame));
    psp_wptr_ = (psp_wptr_ + sizeof(frame) / 4) % (0x1000 / 4);
    Regs<regs::Ip::kMp0>().Write(mp0::MP0_SMN_C2PMSG_67{}.set_raw(psp_wptr_));
    EXPECT_TRUE(WaitUntil([&] { return VramDword(kPspFence) == psp_fence_; })) << "fence " << psp_fence_;
    psp::PspGfxCmdResp answer;
    std::memcpy(&answer, vram_.data() + kPspCommand, sizeof(answer));
    return answer;
  }

  // SMU: one message through the mailbox (smu_cmn_send_smc_msg_with_param).
  std::pair<uint32_t, uint32_t> SmuMessage(uint32_t message, uint32_t argument = 0) {
    auto mp = Regs<regs::Ip::kMp1>();
    mp.Write(mp1::MP1_SMN_C2PMSG_90{}.set_raw(0));
    mp.Write(mp1::MP1_SMN_C2PMSG_82{}.set_raw(argument));
    mp.Write(mp1::MP1_SMN_C2PMSG_66{}.set_raw(message));
    EXPECT_TRUE(WaitUntil([&] { return mp.Read<mp1::MP1_SMN_C2PMSG_90>().raw() != 0; }));
    return {mp.Read<mp1::MP1_SMN_C2PMSG_90>().raw(), mp.Read<mp1::MP1_SMN_C2PMSG_82>().raw()};
  }

  // MEC1 pipe 0 queue 0 programmed through its HQD registers (tinygrad AM_GFX.setup_ring / Linux
  // gfx_v11_0_kiq_init_register), ring and pointers in VRAM at MC addresses.
  void SetUpMecQueue() {
    auto g = Regs<regs::Ip::kGc>();
    ASSERT_TRUE(WaitUntil([&] { return g.Read<gc::RLC_RLCS_BOOTLOAD_STATUS>().bootload_complete() != 0; }));
    ASSERT_TRUE(WaitUntil([&] { return g.Read<gc::CP_STAT>().raw() == 0; }));
    // gfx_v11_0_config_gfx_rs64: pipe 0's start address from the (virtual) MEC firmware, latched by a reset pulse.
    const uint64_t start = firmware::VirtualUcodeStartAddress(firmware::FileKind::kMec);
    g.Write(gc::GRBM_GFX_CNTL{}.meid(1).pipeid(0).queueid(0));
    g.Write(gc::CP_MEC_RS64_PRGRM_CNTR_START{}.ip_start(static_cast<uint32_t>(start >> 2)));
    g.Write(gc::CP_MEC_RS64_PRGRM_CNTR_START_HI{}.ip_start(static_cast<uint32_t>(start >> 34)));
    g.Write(gc::GRBM_GFX_CNTL{}.set_raw(0));
    g.Modify<gc::CP_MEC_RS64_CNTL>([](auto& r) { r.mec_pipe0_reset(1); });
    g.Modify<gc::CP_MEC_RS64_CNTL>([](auto& r) { r.mec_pipe0_reset(0); });
    g.Write(gc::CP_MEC_DOORBELL_RANGE_LOWER{}.doorbell_range_lower(0));
    g.Write(gc::CP_MEC_DOORBELL_RANGE_UPPER{}.doorbell_range_upper(0xf8 >> 2));
    g.Write(gc::CP_ME1_PIPE0_INT_CNTL{}.time_stamp_int_enable(1));
    g.Write(gc::CP_MEC_RS64_CNTL{}.mec_pipe0_active(1).mec_halt(0));
    g.Write(gc::GRBM_GFX_CNTL{}.meid(1).pipeid(0).queueid(0));
    g.Write(gc::CP_HQD_PQ_BASE{}.set_raw(static_cast<uint32_t>(Mc(kMecRing) >> 8)));
    g.Write(gc::CP_HQD_PQ_BASE_HI{}.set_raw(static_cast<uint32_t>(Mc(kMecRing) >> 40)));
    g.Write(gc::CP_HQD_PQ_RPTR_REPORT_ADDR{}.set_raw(static_cast<uint32_t>(Mc(kMecPointers))));
    g.Write(gc::CP_HQD_PQ_RPTR_REPORT_ADDR_HI{}.set_raw(static_cast<uint32_t>(Mc(kMecPointers) >> 32)));
    g.Write(gc::CP_HQD_PQ_WPTR_POLL_ADDR{}.set_raw(static_cast<uint32_t>(Mc(kMecPointers + 8))));
    g.Write(gc::CP_HQD_PQ_WPTR_POLL_ADDR_HI{}.set_raw(static_cast<uint32_t>(Mc(kMecPointers + 8) >> 32)));
    g.Write(gc::CP_HQD_PQ_DOORBELL_CONTROL{}.doorbell_offset(kMecDoorbell).doorbell_en(1));
    g.Write(gc::CP_HQD_PQ_CONTROL{}.queue_size(9).rptr_block_size(5));  // 2^(9+1) dwords
    g.Write(gc::CP_HQD_VMID{}.set_raw(0));
    g.Write(gc::CP_HQD_ACTIVE{}.active(1));
    g.Write(gc::GRBM_GFX_CNTL{}.set_raw(0));
  }
  // SDMA0 queue 0 (sdma_v6_0_gfx_resume_instance / tinygrad AM_SDMA.setup_ring), ring and rptr in VRAM.
  void SetUpSdma() {
    auto g = Regs<regs::Ip::kGc>();
    g.Modify<gc::SDMA0_F32_CNTL>([](auto& r) { r.halt(0).th1_reset(0); });
    g.Write(gc::SDMA0_CNTL{}.trap_enable(1));
    g.Write(gc::SDMA0_QUEUE0_RB_BASE{}.set_raw(static_cast<uint32_t>(Mc(kSdmaRing) >> 8)));
    g.Write(gc::SDMA0_QUEUE0_RB_BASE_HI{}.set_raw(static_cast<uint32_t>(Mc(kSdmaRing) >> 40)));
    g.Write(gc::SDMA0_QUEUE0_RB_RPTR_ADDR_LO{}.set_raw(static_cast<uint32_t>(Mc(kSdmaRptr))));
    g.Write(gc::SDMA0_QUEUE0_RB_RPTR_ADDR_HI{}.set_raw(static_cast<uint32_t>(Mc(kSdmaRptr) >> 32)));
    g.Write(gc::SDMA0_QUEUE0_DOORBELL_OFFSET{}.offset(kSdmaDoorbell));
    g.Write(gc::SDMA0_QUEUE0_DOORBELL{}.enable(1));
    g.Write(gc::SDMA0_QUEUE0_IB_CNTL{}.ib_enable(1));
    g.Write(gc::SDMA0_QUEUE0_RB_CNTL{}.rb_size(10).rptr_writeback_enable(1).rb_enable(1));  // 2^10 dwords
  }
  void SubmitSdma(const void* packet, size_t bytes) {
    WriteVram(kSdmaRing + sdma_wptr_ % 4096, packet, bytes);
    sdma_wptr_ += bytes;
    doorbells_.Write32(kSdmaDoorbell * 4, static_cast<uint32_t>(sdma_wptr_));
    doorbells_.Write32((kSdmaDoorbell + 1) * 4, static_cast<uint32_t>(sdma_wptr_ >> 32));
  }

  void SubmitMec(std::span<const uint32_t> packet) {
    for (uint32_t dword : packet) {
      WriteVram(kMecRing + (mec_wptr_ % 1024) * 4, &dword, 4);
      ++mec_wptr_;
    }
    WriteVram(kMecPointers + 8, &mec_wptr_, 8);
    doorbells_.Write32(kMecDoorbell * 4, static_cast<uint32_t>(mec_wptr_));
    doorbells_.Write32((kMecDoorbell + 1) * 4, static_cast<uint32_t>(mec_wptr_ >> 32));
  }

  std::unique_ptr<pci::Device> device_;
  std::optional<Bar5> bar5_;
  pci::Mmio doorbells_;
  std::span<uint8_t> vram_;
  int msi_ = -1;
  uint64_t fb_start_ = 0;
  uint32_t psp_fence_ = 0;
  uint32_t psp_wptr_ = 0;
  uint64_t mec_wptr_ = 0;
  uint64_t sdma_wptr_ = 0;
};

TEST_F(Navi31BringUpTest, BootsThroughRegistersAndRunsWork) {
  EnableDoorbells();
  ASSERT_NO_FATAL_FAILURE(SetUpMmhub());
  SetUpIh();
  ASSERT_NO_FATAL_FAILURE(BootPsp());
  ASSERT_NO_FATAL_FAILURE(SetUpGchub());
  EXPECT_TRUE(navi31().firmware().rlc_autoloaded());

  // The SMU came alive with the firmware the PSP loaded.
  auto [result, version] = SmuMessage(regs::smu::PPSMC_MSG_GetSmuVersion);
  EXPECT_EQ(result, regs::smu::PPSMC_Result_OK);
  EXPECT_NE(version, 0u);

  // A compute queue: RELEASE_MEM writes a 64-bit fence at end of pipe and raises the EOP interrupt.
  ASSERT_NO_FATAL_FAILURE(SetUpMecQueue());
  const uint64_t fence_value = 0x1122'3344'5566'7788;
  SubmitMec(pm4::ReleaseMem::Encode(Mc(kFences), pm4::ReleaseData::k64, fence_value,
                                    pm4::ReleaseInterrupt::kAfterWriteConfirm));
  ASSERT_TRUE(WaitUntil([&] { return VramDword(kFences) == static_cast<uint32_t>(fence_value); }))
      << "MEC fence; device errors: "
      << (navi31().errors().errors().empty() ? "" : navi31().errors().errors()[0].message);
  EXPECT_EQ(VramDword(kFences + 4), static_cast<uint32_t>(fence_value >> 32));
  ASSERT_TRUE(WaitUntil([&] { return !IhEntries().empty(); }));
  const std::array<uint32_t, 8> eop = IhEntries().back();
  EXPECT_EQ(eop[0] & 0xff, regs::ih::SOC21_IH_CLIENTID_GRBM_CP);
  EXPECT_EQ((eop[0] >> 8) & 0xff, regs::ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT);
  pollfd pfd{msi_, POLLIN, 0};
  EXPECT_EQ(::poll(&pfd, 1, 5000), 1) << "MSI for the EOP interrupt";

  // SDMA: COPY_LINEAR of 1 MiB inside VRAM, then a FENCE.
  ASSERT_NO_FATAL_FAILURE(SetUpSdma());
  for (uint32_t i = 0; i < (1 << 20) / 4; ++i) WriteVram(kCopySource + i * 4, &i, 4);
  namespace sdma = regs::sdma;
  const sdma::CopyLinear copy{sdma::Header(sdma::SDMA_OP_COPY, sdma::SDMA_SUBOP_COPY_LINEAR),
                              (1 << 20) - 1,
                              0,
                              static_cast<uint32_t>(Mc(kCopySource)),
                              static_cast<uint32_t>(Mc(kCopySource) >> 32),
                              static_cast<uint32_t>(Mc(kCopyDestination)),
                              static_cast<uint32_t>(Mc(kCopyDestination) >> 32)};
  const sdma::Fence fence{sdma::Header(sdma::SDMA_OP_FENCE), static_cast<uint32_t>(Mc(kFences + 64)),
                          static_cast<uint32_t>(Mc(kFences + 64) >> 32), 0x5d4a};
  SubmitSdma(&copy, sizeof(copy));
  SubmitSdma(&fence, sizeof(fence));
  ASSERT_TRUE(WaitUntil([&] { return VramDword(kFences + 64) == 0x5d4a; })) << "SDMA fence";
  EXPECT_EQ(std::memcmp(vram_.data() + kCopySource, vram_.data() + kCopyDestination, 1 << 20), 0);
  EXPECT_TRUE(navi31().errors().errors().empty());
}

// The IOMMU's guarantee: a PTE naming a bus address the driver never allocated. The engine's write faults in
// DmaSpace, the queue stops with a device error, and the DMA buffer next to that address is untouched.
TEST_F(Navi31BringUpTest, DmaToAnAddressTheDeviceWasNotGivenFaultsWithoutTouchingMemory) {
  EnableDoorbells();
  ASSERT_NO_FATAL_FAILURE(SetUpMmhub());
  SetUpIh();
  ASSERT_NO_FATAL_FAILURE(BootPsp());
  ASSERT_NO_FATAL_FAILURE(SetUpGchub());
  ASSERT_NO_FATAL_FAILURE(SetUpMecQueue());

  auto buffer = device_->AllocDma(4096);
  ASSERT_TRUE(buffer.ok());
  std::memset((*buffer)->cpu(), 0xab, 4096);
  const uint64_t given = (*buffer)->device_address(0);
  const uint64_t never_given = given + (uint64_t{1} << 30);  // far past every allocation of this test
  constexpr uint64_t kPte = vm::AMDGPU_PTE_VALID | vm::AMDGPU_PTE_SYSTEM | vm::AMDGPU_PTE_READABLE |
                            vm::AMDGPU_PTE_WRITEABLE | vm::AMDGPU_PTE_SNOOPED;
  SetGartPte(0, given | kPte);
  SetGartPte(1, never_given | kPte);
  auto write_data = [](uint64_t address, uint32_t value) -> std::vector<uint32_t> {
    const auto header = pm4::WriteData::Header(pm4::WriteData::kDstMemory, address, 1);
    std::vector<uint32_t> packet(header.begin(), header.end());
    packet.push_back(value);
    return packet;
  };
  auto submit = [&](const std::vector<uint32_t>& packet) {
    for (uint32_t dword : packet) {
      WriteVram(kMecRing + (mec_wptr_ % 1024) * 4, &dword, 4);
      ++mec_wptr_;
    }
    WriteVram(kMecPointers + 8, &mec_wptr_, 8);
    doorbells_.Write32(kMecDoorbell * 4, static_cast<uint32_t>(mec_wptr_));
    doorbells_.Write32((kMecDoorbell + 1) * 4, static_cast<uint32_t>(mec_wptr_ >> 32));
  };

  submit(write_data(kGartStart + 16, 0x600d));  // through PTE 0: lands in the buffer
  ASSERT_TRUE(WaitUntil(
      [&] { return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>((*buffer)->cpu() + 16)).load() == 0x600d; }));
  const uint64_t faults = navi31().dma_space().fault_count();
  submit(write_data(kGartStart + 4096 + 16, 0xbad));  // through PTE 1: nowhere the device may go
  ASSERT_TRUE(WaitUntil([&] { return navi31().dma_space().fault_count() > faults; }));
  EXPECT_EQ(navi31().dma_space().last_fault()->address, never_given + 16);
  EXPECT_TRUE(navi31().dma_space().last_fault()->write);
  ASSERT_TRUE(WaitUntil([&] { return !navi31().errors().errors().empty(); }));
  // Every byte of the buffer but the one dword written through PTE 0 still holds its canary.
  for (size_t i = 0; i < 4096; ++i) {
    if (i >= 16 && i < 20) continue;
    ASSERT_EQ((*buffer)->cpu()[i], 0xab) << "byte " << i;
  }
}

}  // namespace
}  // namespace am::sim
