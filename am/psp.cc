#include "am/psp.h"

#include <atomic>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "am/device.h"
#include "am/poll_backoff.h"
#include "am/regs/mp0.h"
#include "am/regs/psp_constants.h"
#include "am/regs/psp_driver_constants.h"
#include "am/soc.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace mp0 = regs::mp0;
namespace psp = regs::psp;

// psp_v13_0_wait_for_bootloader / psp_v13_0_ring_create: bit 31 is the "ready / done" flag; a response is good
// when the low 16 bits are 0.
constexpr uint32_t kReadyBit = 0x80000000;
constexpr uint32_t kResponseMask = 0x8000ffff;
constexpr uint32_t kStatusMask = 0x0000ffff;
constexpr int kMcAddressShift = 20;  // C2PMSG_36 takes the staging buffer's MC address >> 20
// psp_v13_0_bootloader_load_sos, _ring_create and _ring_stop wait this long after their command before polling
// ("there might be handshake issue with hardware which needs delay": mdelay(20)).
constexpr absl::Duration kHandshakeDelay = absl::Milliseconds(20);

struct BootloaderStep {
  const char* component;  // the sOS package's component, as firmware/ names it
  uint32_t command;
};
// The order psp_hw_start's bootloader sequence uses on PSP 13.0.0 (psp_v13_0_bootloader_load_*).
constexpr BootloaderStep kBootloaderSteps[] = {
    {"kdb", psp::PSP_BL__LOAD_KEY_DATABASE}, {"spl", psp::PSP_BL__LOAD_TOS_SPL_TABLE},
    {"sys_drv", psp::PSP_BL__LOAD_SYSDRV},   {"soc_drv", psp::PSP_BL__LOAD_SOCDRV},
    {"intf_drv", psp::PSP_BL__LOAD_INTFDRV}, {"dbg_drv", psp::PSP_BL__LOAD_DBGDRV},
    {"ras_drv", psp::PSP_BL__LOAD_RASDRV},   {"sos", psp::PSP_BL__LOAD_SOSDRV},
};

std::string CommandName(uint32_t id) {
  switch (id) {
    case psp::GFX_CMD_ID_LOAD_TOC:
      return "LOAD_TOC";
    case psp::GFX_CMD_ID_SETUP_TMR:
      return "SETUP_TMR";
    case psp::GFX_CMD_ID_LOAD_IP_FW:
      return "LOAD_IP_FW";
    case psp::GFX_CMD_ID_AUTOLOAD_RLC:
      return "AUTOLOAD_RLC";
    case psp::GFX_CMD_ID_DESTROY_TMR:
      return "DESTROY_TMR";
    default:
      return absl::StrFormat("command %#x", id);
  }
}

}  // namespace

std::string PspStatusName(uint32_t status) {
  const char* name = nullptr;
  switch (status) {
    case psp::TEE_SUCCESS:
      name = "TEE_SUCCESS";
      break;
    case psp::TEE_ERROR_CANCEL:
      name = "TEE_ERROR_CANCEL";
      break;
    case psp::TEE_ERROR_NOT_SUPPORTED:
      name = "TEE_ERROR_NOT_SUPPORTED";
      break;
    case psp::PSP_ERR_UNKNOWN_COMMAND:
      name = "PSP_ERR_UNKNOWN_COMMAND";
      break;
  }
  return name != nullptr ? absl::StrFormat("%s (%#x)", name, status) : absl::StrFormat("status %#x", status);
}

absl::Status Psp::InitSw() {
  // Buffers only: the firmware files are read when the PSP is booted (a partial boot never needs them).
  MemoryManager& memory = device_.memory();
  BAREGPU_ASSIGN_OR_RETURN(staging_, memory.AllocBoot(kStagingBytes, kStagingBytes));
  BAREGPU_ASSIGN_OR_RETURN(ring_, memory.AllocBoot(kRingBytes, kPageBytes));
  BAREGPU_ASSIGN_OR_RETURN(command_, memory.AllocBoot(kPageBytes, kPageBytes));
  BAREGPU_ASSIGN_OR_RETURN(fence_, memory.AllocBoot(kPageBytes, kPageBytes));
  return absl::OkStatus();
}

const Psp::File* Psp::FindRole(firmware::FileKind kind) const {
  for (const File& file : files_) {
    if (file.required.role.kind == kind) return &file;
  }
  return nullptr;
}

bool Psp::sos_alive() { return device_.Regs<regs::Ip::kMp0>().Read<mp0::MP0_SMN_C2PMSG_81>().raw() != 0; }

uint32_t Psp::sos_version() { return device_.Regs<regs::Ip::kMp0>().Read<mp0::MP0_SMN_C2PMSG_58>().raw(); }

absl::Status Psp::Stage(absl::string_view bytes) {
  if (bytes.size() > kStagingBytes) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("image of %d bytes does not fit the %d-byte staging buffer", bytes.size(), kStagingBytes));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> staging, device_.memory().CpuView(staging_, kStagingBytes));
  std::memcpy(staging.data(), bytes.data(), bytes.size());
  device_.soc().FlushHdp();
  return absl::OkStatus();
}

bool Psp::bootloader_stopped() {
  const uint32_t status = device_.Regs<regs::Ip::kMp0>().Read<mp0::MP0_SMN_C2PMSG_35>().raw();
  return (status & kReadyBit) != 0 && (status & kStatusMask) != 0;
}

absl::Status Psp::WaitForBootloader(absl::string_view what) {
  // Linux polls for the ready bit with a zero status and times out on anything else; a status beside the ready bit
  // is final (the bootloader takes no command until a reset), so it fails now and says so.
  RegisterIo& io = device_.io();
  const uint64_t c2pmsg_35 = *device_.Regs<regs::Ip::kMp0>().AddressOf<mp0::MP0_SMN_C2PMSG_35>();
  BAREGPU_RETURN_IF_ERROR(io.WaitFor(c2pmsg_35, kReadyBit, kReadyBit, kTimeout, what));
  if (const uint32_t status = io.ReadDword(c2pmsg_35); (status & kStatusMask) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("waiting for %s: the bootloader answered status %#x (C2PMSG_35 = %#x) and takes no command "
                        "until the chip is reset",
                        what, status & kStatusMask, status));
  }
  return absl::OkStatus();
}

absl::Status Psp::RunBootloader() {
  const File* sos = FindRole(firmware::FileKind::kSos);
  if (sos == nullptr) return absl::NotFoundError("no sOS package among the required firmware");
  RegisterIo& io = device_.io();
  auto mp0 = device_.Regs<regs::Ip::kMp0>();
  const uint64_t c2pmsg_81 = *mp0.AddressOf<mp0::MP0_SMN_C2PMSG_81>();
  int loaded = 0;
  for (const BootloaderStep& step : kBootloaderSteps) {
    const firmware::Component* component = sos->container.FindByName(step.component);
    if (component == nullptr) continue;  // an optional component this package lacks
    BAREGPU_RETURN_IF_ERROR(WaitForBootloader("the PSP bootloader to be ready"));
    BAREGPU_RETURN_IF_ERROR(Stage(firmware::ComponentBytes(sos->loaded.data, *component)));
    mp0.Write(mp0::MP0_SMN_C2PMSG_36{}.set_raw(static_cast<uint32_t>(device_.McAddress(staging_) >> kMcAddressShift)));
    mp0.Write(mp0::MP0_SMN_C2PMSG_35{}.set_raw(step.command));
    absl::Status done;
    if (step.command == psp::PSP_BL__LOAD_SOSDRV) {
      // psp_v13_0_bootloader_load_sos: the bootloader hands over to the sOS and answers no more in C2PMSG_35; the
      // sOS shows it runs by changing C2PMSG_81 (psp_v13_0_is_sos_alive), from the value read after the delay.
      absl::SleepFor(kHandshakeDelay);
      done = io.WaitForChange(c2pmsg_81, io.ReadDword(c2pmsg_81), kTimeout, "the sOS to show a sign of life");
    } else {
      done = WaitForBootloader(absl::StrCat("the PSP bootloader to take ", step.component));
    }
    if (!done.ok()) {
      return absl::Status(done.code(),
                          absl::StrFormat("%s from %s: %s", step.component, sos->loaded.path, done.message()));
    }
    ++loaded;
  }
  if (!sos_alive()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("the sOS package %s has no SOS component: the bootloader never started an sOS (C2PMSG_81 "
                        "stays 0)",
                        sos->loaded.path));
  }
  log_.push_back(
      absl::StrFormat("bootloader: %d components of %s, sOS version %#x", loaded, sos->loaded.path, sos_version()));
  return absl::OkStatus();
}

absl::Status Psp::CreateRing() {
  RegisterIo& io = device_.io();
  auto mp0 = device_.Regs<regs::Ip::kMp0>();
  const uint64_t c2pmsg_64 = *mp0.AddressOf<mp0::MP0_SMN_C2PMSG_64>();
  BAREGPU_RETURN_IF_ERROR(io.WaitFor(c2pmsg_64, kReadyBit, kReadyBit, kTimeout, "the sOS to be ready for a ring"));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  std::memset(ring.data(), 0, ring.size());
  const uint64_t ring_mc = device_.McAddress(ring_);
  mp0.Write(mp0::MP0_SMN_C2PMSG_69{}.set_raw(static_cast<uint32_t>(ring_mc)));
  mp0.Write(mp0::MP0_SMN_C2PMSG_70{}.set_raw(static_cast<uint32_t>(ring_mc >> 32)));
  mp0.Write(mp0::MP0_SMN_C2PMSG_71{}.set_raw(kRingBytes));
  mp0.Write(mp0::MP0_SMN_C2PMSG_64{}.set_raw(psp::PSP_RING_TYPE__KM << 16));
  absl::SleepFor(kHandshakeDelay);
  BAREGPU_RETURN_IF_ERROR(io.WaitFor(c2pmsg_64, kResponseMask, kReadyBit, kTimeout, "the sOS to create the KM ring"));
  ring_wptr_ = 0;
  return absl::OkStatus();
}

absl::Status Psp::Submit(psp::PspGfxCmdResp& command, absl::string_view what) {
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> buffer, device_.memory().CpuView(command_, sizeof(command)));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> fence, device_.memory().CpuView(fence_, sizeof(uint32_t)));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  command.buf_size = sizeof(command);
  command.buf_version = psp::PSP_GFX_CMD_BUF_VERSION;
  std::memcpy(buffer.data(), &command, sizeof(command));
  // The fence word lives in the boot region, so it still holds the last value of an earlier session, which this
  // session's counter (from 1 again) will reach: a stale match would end the wait before the PSP answered.
  std::atomic_ref<uint32_t> fence_word(*reinterpret_cast<uint32_t*>(fence.data()));
  fence_word.store(0, std::memory_order_relaxed);
  const uint32_t value = ++fence_value_;
  psp::PspGfxRbFrame frame{};
  const uint64_t command_mc = device_.McAddress(command_), fence_mc = device_.McAddress(fence_);
  frame.cmd_buf_addr_lo = static_cast<uint32_t>(command_mc);
  frame.cmd_buf_addr_hi = static_cast<uint32_t>(command_mc >> 32);
  frame.cmd_buf_size = sizeof(command);
  frame.fence_addr_lo = static_cast<uint32_t>(fence_mc);
  frame.fence_addr_hi = static_cast<uint32_t>(fence_mc >> 32);
  frame.fence_value = value;
  const uint32_t frame_dwords = sizeof(frame) / 4;
  std::memcpy(ring.data() + ring_wptr_ * 4, &frame, sizeof(frame));
  ring_wptr_ = (ring_wptr_ + frame_dwords) % (kRingBytes / 4);
  device_.soc().FlushHdp();
  device_.Regs<regs::Ip::kMp0>().Write(mp0::MP0_SMN_C2PMSG_67{}.set_raw(ring_wptr_));

  PollBackoff backoff(absl::Now() + kTimeout);
  while (fence_word.load(std::memory_order_acquire) != value) {
    if (!backoff.Wait()) {
      return absl::DeadlineExceededError(absl::StrFormat("%s: the PSP did not fence %s within %s (fence %#x, want %#x)",
                                                         what, CommandName(command.cmd_id),
                                                         absl::FormatDuration(kTimeout), fence_word.load(), value));
    }
  }
  std::memcpy(&command, buffer.data(), sizeof(command));
  if (command.resp.status != psp::TEE_SUCCESS) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the PSP answered %s with %s", what, CommandName(command.cmd_id), PspStatusName(command.resp.status)));
  }
  return absl::OkStatus();
}

absl::Status Psp::InitTmr() {
  const File* sos = FindRole(firmware::FileKind::kSos);
  const firmware::Component* toc = sos == nullptr ? nullptr : sos->container.FindByName("toc");
  if (toc == nullptr) return absl::NotFoundError("the sOS package has no TOC component");
  BAREGPU_RETURN_IF_ERROR(Stage(firmware::ComponentBytes(sos->loaded.data, *toc)));
  psp::PspGfxCmdResp load_toc{};
  load_toc.cmd_id = psp::GFX_CMD_ID_LOAD_TOC;
  const uint64_t staging_mc = device_.McAddress(staging_);
  load_toc.cmd.cmd_load_toc = {static_cast<uint32_t>(staging_mc), static_cast<uint32_t>(staging_mc >> 32),
                               static_cast<uint32_t>(toc->size)};
  BAREGPU_RETURN_IF_ERROR(Submit(load_toc, absl::StrCat("TOC of ", sos->loaded.path)));
  tmr_size_ = load_toc.resp.tmr_size;
  if (tmr_size_ == 0) return absl::FailedPreconditionError("LOAD_TOC answered a TMR size of 0");
  BAREGPU_ASSIGN_OR_RETURN(tmr_, device_.memory().AllocVram(tmr_size_, kTmrAlignment));
  return absl::OkStatus();
}

absl::Status Psp::LoadTmr() {
  psp::PspGfxCmdResp setup{};
  setup.cmd_id = psp::GFX_CMD_ID_SETUP_TMR;
  psp::PspGfxCmdSetupTmr& tmr = setup.cmd.cmd_setup_tmr;
  const uint64_t tmr_mc = device_.McAddress(tmr_), tmr_pa = device_.VramPhysicalAddress(tmr_);
  tmr.buf_phy_addr_lo = static_cast<uint32_t>(tmr_mc);
  tmr.buf_phy_addr_hi = static_cast<uint32_t>(tmr_mc >> 32);
  tmr.buf_size = tmr_size_;
  tmr.tmr_flags = psp::PspGfxCmdSetupTmr::kVirtPhyAddr;
  tmr.system_phy_addr_lo = static_cast<uint32_t>(tmr_pa);
  tmr.system_phy_addr_hi = static_cast<uint32_t>(tmr_pa >> 32);
  BAREGPU_RETURN_IF_ERROR(Submit(setup, "TMR"));
  log_.push_back(absl::StrFormat("TMR: %#x bytes at VRAM %#x", tmr_size_, tmr_));
  return absl::OkStatus();
}

absl::Status Psp::LoadIpFirmware(const File& file) {
  for (const firmware::Component& component : file.container.components) {
    if (component.load != firmware::LoadPath::kIpFirmware) continue;
    for (uint32_t type : component.types) BAREGPU_RETURN_IF_ERROR(LoadIpFirmware(file, component, type));
  }
  return absl::OkStatus();
}

absl::Status Psp::LoadIpFirmware(const File& file, const firmware::Component& component, uint32_t type) {
  BAREGPU_RETURN_IF_ERROR(Stage(firmware::ComponentBytes(file.loaded.data, component)));
  psp::PspGfxCmdResp load{};
  load.cmd_id = psp::GFX_CMD_ID_LOAD_IP_FW;
  const uint64_t staging_mc = device_.McAddress(staging_);
  load.cmd.cmd_load_ip_fw = {static_cast<uint32_t>(staging_mc), static_cast<uint32_t>(staging_mc >> 32),
                             static_cast<uint32_t>(component.size), type};
  BAREGPU_RETURN_IF_ERROR(Submit(load, absl::StrFormat("%s (%s, type %s)", file.loaded.path, component.name,
                                                       firmware::TypeName(firmware::LoadPath::kIpFirmware, type))));
  log_.push_back(absl::StrFormat("LOAD_IP_FW %s from %s", firmware::TypeName(firmware::LoadPath::kIpFirmware, type),
                                 file.required.name));
  return absl::OkStatus();
}

absl::Status Psp::LoadFiles() {
  BAREGPU_ASSIGN_OR_RETURN(std::vector<firmware::RequiredFile> required, device_.RequiredFirmware());
  files_.clear();
  for (firmware::RequiredFile& req : required) {
    absl::StatusOr<firmware::LoadedFile> loaded = store_.Load(req.name, req.fallbacks);
    BAREGPU_RETURN_IF_ERROR(loaded.status());
    BAREGPU_ASSIGN_OR_RETURN(firmware::Container container, firmware::ParseContainer(loaded->path, loaded->data));
    BAREGPU_RETURN_IF_ERROR(firmware::CheckProvides(req, container));
    files_.push_back({std::move(req), std::move(*loaded), std::move(container)});
  }
  return absl::OkStatus();
}

absl::Status Psp::InitHw() {
  log_.clear();
  BAREGPU_RETURN_IF_ERROR(LoadFiles());
  if (!sos_alive()) {
    BAREGPU_RETURN_IF_ERROR(RunBootloader());
  } else {
    // A driver before us left the sOS running, maybe with its ring: stop that ring first (psp_v13_0_ring_stop).
    log_.push_back(absl::StrFormat("sOS already alive (version %#x): bootloader skipped", sos_version()));
    BAREGPU_RETURN_IF_ERROR(FiniHw());
  }
  BAREGPU_RETURN_IF_ERROR(CreateRing());
  // psp_hw_start for MP0 13.0.0, which centralises DF C-state management in the PMFW
  // (psp_check_pmfw_centralized_cstate_management): the TOC sizes the TMR, the SMU firmware loads before the TMR
  // is set up ("TMR setup should be performed after PMFW loaded and before other non-psp firmware loaded"), then
  // every other IP firmware in the order RequiredFiles lists them (psp_load_non_psp_fw).
  BAREGPU_RETURN_IF_ERROR(InitTmr());
  for (const File& file : files_) {
    if (file.required.role.kind == firmware::FileKind::kSmc) BAREGPU_RETURN_IF_ERROR(LoadIpFirmware(file));
  }
  BAREGPU_RETURN_IF_ERROR(LoadTmr());
  for (const File& file : files_) {
    const firmware::FileKind kind = file.required.role.kind;
    if (kind != firmware::FileKind::kSmc && kind != firmware::FileKind::kSos) {
      BAREGPU_RETURN_IF_ERROR(LoadIpFirmware(file));
    }
  }
  psp::PspGfxCmdResp autoload{};
  autoload.cmd_id = psp::GFX_CMD_ID_AUTOLOAD_RLC;
  BAREGPU_RETURN_IF_ERROR(Submit(autoload, "RLC autoload"));
  log_.push_back("AUTOLOAD_RLC");
  // psp_rl_load, after the non-PSP firmware (and the ASD, which baregpu does not load): the sOS package's register
  // list, when it has one, as GFX_FW_TYPE_REG_LIST.
  for (const File& file : files_) {
    if (file.required.role.kind == firmware::FileKind::kSos) BAREGPU_RETURN_IF_ERROR(LoadIpFirmware(file));
  }
  return absl::OkStatus();
}

absl::Status Psp::FiniHw() {
  RegisterIo& io = device_.io();
  auto mp0 = device_.Regs<regs::Ip::kMp0>();
  mp0.Write(mp0::MP0_SMN_C2PMSG_64{}.set_raw(psp::GFX_CTRL_CMD_ID_DESTROY_RINGS));
  // psp_v13_0_ring_stop: after the delay, only the response flag counts.
  absl::SleepFor(kHandshakeDelay);
  return io.WaitFor(*mp0.AddressOf<mp0::MP0_SMN_C2PMSG_64>(), kReadyBit, kReadyBit, kTimeout,
                    "the sOS to destroy the KM ring");
}

}  // namespace am
