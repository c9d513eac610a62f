#include "am/sim/psp_model.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <map>
#include <span>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "am/regs/mmhub.h"
#include "am/regs/mp0.h"
#include "am/regs/psp_driver_constants.h"
#include "base/status_macros.h"
#include "firmware/fw_types.h"
#include "firmware/psp_image.h"
#include "firmware/virtual_firmware.h"

namespace am::sim {
namespace {

namespace psp = regs::psp;
using firmware::LoadPath;
namespace gfx = firmware::gfx_fw_type;
namespace pspfw = firmware::psp_fw_type;

// psp_v13_0_wait_for_bootloader: the bootloader is ready for a command when C2PMSG_35 reads exactly bit 31.
constexpr uint32_t kBootloaderReady = 0x80000000;

// mmhub_v3_0.c mmhub_client_ids_v3_0_0: MMHUB UTCL2 client id 6 is MP0 (the PSP).
constexpr uint32_t kMp0ClientId = 6;

// psp_gfx_if.h defines only three failure codes (TEE_ERROR_CANCEL, TEE_ERROR_NOT_SUPPORTED,
// PSP_ERR_UNKNOWN_COMMAND) and says nothing about which command answers which. The virtual PSP's choice:
// - an id it does not know: PSP_ERR_UNKNOWN_COMMAND;
// - a known command it does not take now or at all (prerequisite missing, firmware type this ASIC does not have,
//   SR-IOV-only commands; amdgpu_psp.c expects TEE_ERROR_NOT_SUPPORTED for SETUP_VMR): TEE_ERROR_NOT_SUPPORTED;
// - a command whose input is unusable (an image that fails validation, a bad size, address or unmapped buffer):
//   TEE_ERROR_CANCEL, the load is cancelled.
constexpr uint32_t kUnknown = psp::PSP_ERR_UNKNOWN_COMMAND;
constexpr uint32_t kRefused = psp::TEE_ERROR_NOT_SUPPORTED;
constexpr uint32_t kBadInput = psp::TEE_ERROR_CANCEL;

// The ring control mailbox answers in C2PMSG_64[15:0] (GFX_CMD_STATUS_MASK), which has no room for the 32-bit
// TEE codes: the virtual PSP answers PSP_ERR_UNKNOWN_COMMAND for an unknown control id and the low half of
// TEE_ERROR_NOT_SUPPORTED for a ring it will not create (its choice; psp_v13_0_ring_create only checks for 0).
constexpr uint32_t kControlRefused = psp::TEE_ERROR_NOT_SUPPORTED & psp::GFX_CMD_STATUS_MASK;

// psp_gfx_if.h: a psp_gfx_rb_frame is 64 bytes; the write pointer counts dwords (psp_ring_cmd_submit).
constexpr uint32_t kFrameDwords = sizeof(psp::PspGfxRbFrame) / 4;
static_assert(kFrameDwords == 16);
static_assert(offsetof(psp::PspGfxCmdResp, resp) == 864);

// The virtual payload carries no version of its own; the virtual firmware's containers and sOS descriptors all say
// ucode version 1 (firmware/virtual_firmware.cc), so that is what the virtual PSP and SMU report.
constexpr uint32_t kVirtualFirmwareVersion = 1;

// The components the bootloader takes, in the only order it takes them (psp_v13_0.c, amdgpu_psp.c psp_hw_start;
// tinygrad AM_PSP.init_hw). Any may be skipped except SYS_DRV, which the sOS runs on ("sys driver and sOS" in
// psp_v13_0_bootloader_load_sos), and nothing follows SOS.
struct BootComponent {
  const char* name;
  uint32_t command;
  std::vector<uint32_t> types;  // psp_fw_type; the first is the component's own
};
const std::vector<BootComponent>& BootOrder() {
  static const auto* order = new std::vector<BootComponent>{
      {"KDB", psp::PSP_BL__LOAD_KEY_DATABASE, {pspfw::kKdb}},
      // Linux 6.12 psp_v13_0_bootloader_load_spl and tinygrad (MP0 < 14) hand the KDB with this command; the SPL
      // component itself is taken too.
      {"SPL", psp::PSP_BL__LOAD_TOS_SPL_TABLE, {pspfw::kSpl, pspfw::kKdb}},
      {"SYS_DRV", psp::PSP_BL__LOAD_SYSDRV, {pspfw::kSysDrv}},
      {"SOC_DRV", psp::PSP_BL__LOAD_SOCDRV, {pspfw::kSocDrv}},
      {"INTF_DRV", psp::PSP_BL__LOAD_INTFDRV, {pspfw::kIntfDrv}},
      {"DBG_DRV", psp::PSP_BL__LOAD_DBGDRV, {pspfw::kDbgDrv}},
      {"RAS_DRV", psp::PSP_BL__LOAD_RASDRV, {pspfw::kRasDrv}},
      {"SOS", psp::PSP_BL__LOAD_SOSDRV, {pspfw::kSos}},
  };
  return *order;
}
constexpr size_t kSysDrvIndex = 2;
constexpr size_t kSosIndex = 7;

// What AUTOLOAD_RLC needs loaded: the RLC (RLC_G and, for RLC v2.2+, its RLX6 IRAM/DRAM images, which
// gfx_v11_0_rlc_backdoor_autoload_copy_gfx_ucode also places) and the compute CP it starts (RS64 MEC and its
// stack). PFP/ME are not required: tinygrad's AM driver boots Navi31 loading only MEC (AMFirmware, GC < 12).
constexpr uint32_t kAutoloadPrerequisites[] = {gfx::kRlcG, gfx::kRlcIram, gfx::kRlcDramBoot, gfx::kRs64Mec,
                                               gfx::kRs64MecP0Stack};

std::string CommandName(uint32_t cmd_id) {
  static const auto* names = new std::map<uint32_t, const char*>{
      {psp::GFX_CMD_ID_LOAD_TA, "LOAD_TA"},         {psp::GFX_CMD_ID_UNLOAD_TA, "UNLOAD_TA"},
      {psp::GFX_CMD_ID_INVOKE_CMD, "INVOKE_CMD"},   {psp::GFX_CMD_ID_LOAD_ASD, "LOAD_ASD"},
      {psp::GFX_CMD_ID_SETUP_TMR, "SETUP_TMR"},     {psp::GFX_CMD_ID_LOAD_IP_FW, "LOAD_IP_FW"},
      {psp::GFX_CMD_ID_DESTROY_TMR, "DESTROY_TMR"}, {psp::GFX_CMD_ID_SAVE_RESTORE, "SAVE_RESTORE"},
      {psp::GFX_CMD_ID_SETUP_VMR, "SETUP_VMR"},     {psp::GFX_CMD_ID_DESTROY_VMR, "DESTROY_VMR"},
      {psp::GFX_CMD_ID_PROG_REG, "PROG_REG"},       {psp::GFX_CMD_ID_GET_FW_ATTESTATION, "GET_FW_ATTESTATION"},
      {psp::GFX_CMD_ID_LOAD_TOC, "LOAD_TOC"},       {psp::GFX_CMD_ID_AUTOLOAD_RLC, "AUTOLOAD_RLC"},
      {psp::GFX_CMD_ID_BOOT_CFG, "BOOT_CFG"},       {psp::GFX_CMD_ID_SRIOV_SPATIAL_PART, "SRIOV_SPATIAL_PART"},
  };
  auto it = names->find(cmd_id);
  return it != names->end() ? it->second : absl::StrFormat("command %#x", cmd_id);
}

uint64_t Address(uint32_t lo, uint32_t hi) { return (uint64_t{hi} << 32) | lo; }

uint32_t LittleEndian32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

template <typename T>
std::span<uint8_t> BytesOf(T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  return {reinterpret_cast<uint8_t*>(&value), sizeof(T)};
}
std::span<uint8_t> BytesOf(std::string& bytes) { return {reinterpret_cast<uint8_t*>(bytes.data()), bytes.size()}; }

std::atomic_ref<uint32_t> Atomic(uint32_t& field) { return std::atomic_ref<uint32_t>(field); }

}  // namespace

uint32_t PspModel::TocTmrSize() {
  // The TMR the virtual TOC asks for: 0x1300000, the largest TMR tinygrad's AM driver reserves for MP0 13.0.x
  // (AM_PSP.max_tmr_size, which it asserts the real TOC's answer fits).
  return 0x1300000;
}

PspModel::PspModel(const ModelContext& context, SmuModel& smu)
    : context_(context),
      smu_(smu),
      state_(StateBlock<PspState>(context.state.psp)),
      client_{Hub::kMm, 0, kMp0ClientId, "psp"} {
  // The only ASIC profile, and the model of its PSP: the IP versions its firmware must be built for.
  if (absl::StatusOr<firmware::AsicProfile> profile = firmware::FindAsicProfile("navi31"); profile.ok()) {
    profile_ = *std::move(profile);
  }
  if (auto files = firmware::RequiredFiles(profile_.ip); files.ok()) {
    for (const firmware::RequiredFile& file : *files) {
      for (const firmware::ProvidedType& provided : file.provides) {
        if (provided.load == LoadPath::kIpFirmware) ip_firmware_[provided.type] = file.ip;
      }
    }
  }

  const regs::IpBases& bases = context_.bases;
  bootloader_command_ = RegisterAddress<regs::mp0::MP0_SMN_C2PMSG_35>(bases);
  bootloader_address_ = RegisterAddress<regs::mp0::MP0_SMN_C2PMSG_36>(bases);
  sos_version_ = RegisterAddress<regs::mp0::MP0_SMN_C2PMSG_58>(bases);
  sos_sign_of_life_ = RegisterAddress<regs::mp0::MP0_SMN_C2PMSG_81>(bases);
  ring_control_ = RegisterAddress<regs::mp0::MP0_SMN_C2PMSG_64>(bases);
  ring_wptr_ = RegisterAddress<regs::mp0::MP0_SMN_C2PMSG_67>(bases);
  ring_address_lo_ = RegisterAddress<regs::mp0::MP0_SMN_C2PMSG_69>(bases);
  ring_address_hi_ = RegisterAddress<regs::mp0::MP0_SMN_C2PMSG_70>(bases);
  ring_size_ = RegisterAddress<regs::mp0::MP0_SMN_C2PMSG_71>(bases);

  RegisterFile& registers = context_.registers;
  // While a command is in flight the register shows it (bit 31 clear); then ready, with any error in [7:0]. Once
  // the sOS runs the bootloader has handed over and answers no more: the register keeps the last command written
  // (psp_v13_0_bootloader_load_sos waits for C2PMSG_81 instead, and every psp_v13_0_bootloader_load_* returns
  // early once the sOS is alive, so no driver waits here again).
  registers.OnRead(bootloader_command_, "psp", [this](uint32_t stored) {
    if (Atomic(state_.sos_alive).load(std::memory_order_acquire)) return stored & ~kBootloaderReady;
    if (Atomic(state_.bootloader_busy).load(std::memory_order_acquire)) return stored & ~kBootloaderReady;
    return kBootloaderReady | Atomic(state_.bootloader_error).load(std::memory_order_acquire);
  });
  registers.OnWrite(bootloader_command_, "psp", [this](uint32_t value) {
    if (Atomic(state_.sos_alive).load(std::memory_order_acquire)) {
      Error(absl::StrFormat(
          "bootloader: C2PMSG_35 = %#x written while the sOS runs: the bootloader handed over to the sOS and takes "
          "nothing more (no answer comes) until the device is reset",
          value));
      return;
    }
    Atomic(state_.bootloader_busy).store(1, std::memory_order_release);
    Wake(kBootloaderWork);
  });
  // C2PMSG_33 bit 31: the IFWI's initialisation is complete, which amdgpu_discovery_read_binary_from_mem waits for
  // before it reads the discovery table (psp_v13_0_wait_for_vmbx_ready waits for the same bit). The virtual
  // firmware initialises at once.
  registers.OnRead(RegisterAddress<regs::mp0::MP0_SMN_C2PMSG_33>(bases), "psp",
                   [](uint32_t stored) { return stored | kBootloaderReady; });
  // A heartbeat: each read sees a new non-zero value. psp_v13_0_bootloader_load_sos waits for C2PMSG_81 to change
  // from a value it read after starting the sOS, so a constant sign of life would never satisfy it.
  registers.OnRead(sos_sign_of_life_, "psp", [this](uint32_t) -> uint32_t {
    if (!Atomic(state_.sos_alive).load(std::memory_order_acquire)) return 0;
    uint32_t beat = Atomic(state_.sos_heartbeat).fetch_add(1, std::memory_order_relaxed) + 1;
    return beat != 0 ? beat : 1;
  });
  registers.OnWrite(ring_control_, "psp", [this](uint32_t value) {
    if (!Atomic(state_.sos_alive).load(std::memory_order_acquire)) {
      Error(
          absl::StrFormat("ring control: C2PMSG_64 = %#x written before the sOS is running (no answer comes; "
                          "load the sOS through the bootloader first)",
                          value));
      return;
    }
    Wake(kControlWork);
  });
  registers.OnWrite(ring_wptr_, "psp", [this](uint32_t value) {
    if (!Atomic(state_.ring_created).load(std::memory_order_acquire)) {
      Error(
          absl::StrFormat("KM ring: write pointer C2PMSG_67 = %#x written before a ring was created "
                          "(GFX_CTRL_CMD_ID_INIT_GPCOM_RING in C2PMSG_64); nothing is read",
                          value));
      return;
    }
    Wake(kRingWork);
  });

  // The PMFW an earlier process had the PSP load is still running on the MP1.
  if (context_.firmware.Has(gfx::kSmu)) smu_.FirmwareLoaded(context_.firmware.Version(gfx::kSmu));

  thread_ = base::PooledThread([this] { Run(); });
  // A previous process may have left work unanswered; the PSP picks it up as it would after a stall.
  if (Atomic(state_.bootloader_busy).load()) Wake(kBootloaderWork);
  const uint32_t control = registers.Peek(ring_control_);
  if (Atomic(state_.sos_alive).load() && control != 0 && !(control & psp::GFX_FLAG_RESPONSE)) Wake(kControlWork);
  if (Atomic(state_.ring_created).load()) Wake(kRingWork);
}

PspModel::~PspModel() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PspModel::InjectCommandFailure(uint32_t cmd_id, uint32_t status) {
  base::MutexLock lock(&injection_mu_);
  if (status == psp::TEE_SUCCESS) {
    failing_commands_.erase(cmd_id);
  } else {
    failing_commands_[cmd_id] = status;
  }
}

void PspModel::InjectCommandStall(uint32_t cmd_id) {
  base::MutexLock lock(&injection_mu_);
  stalling_commands_.insert(cmd_id);
}

void PspModel::RejectFirmwareType(uint32_t gfx_fw_type) {
  base::MutexLock lock(&injection_mu_);
  rejected_types_.insert(gfx_fw_type);
}

void PspModel::Reset() {
  std::lock_guard execute(execute_mu_);
  {
    std::lock_guard lock(mu_);
    pending_ = 0;
  }
  for (uint32_t* field : {&state_.bootloader_busy, &state_.bootloader_error, &state_.sos_alive, &state_.sos_heartbeat,
                          &state_.ring_created}) {
    Atomic(*field).store(0, std::memory_order_release);
  }
  state_.bootloader_stage = state_.bootloader_loaded = 0;
  state_.ring_size_bytes = state_.ring_rptr_dwords = 0;
  state_.ring_address = 0;
  state_.toc_loaded = state_.toc_tmr_size = state_.tmr_set = state_.tmr_size = 0;
  state_.tmr_address = 0;
}

void PspModel::Wake(uint32_t work) {
  {
    std::lock_guard lock(mu_);
    pending_ |= work;
  }
  wake_.notify_one();
}

void PspModel::Run() {
  // Waiting for work, the PSP holds no host pointer into DMA memory: memory the driver frees meanwhile may go back to
  // the host (pci/sim/dma_space.h).
  pci::sim::DmaSpace::Accessor dma_access(context_.dma);
  std::unique_lock lock(mu_);
  while (true) {
    dma_access.Offline();
    wake_.wait(lock, [this] { return stop_ || pending_ != 0; });
    dma_access.Online();
    if (stop_) return;
    const uint32_t work = std::exchange(pending_, 0);
    lock.unlock();
    {
      std::lock_guard execute(execute_mu_);
      if (work & kBootloaderWork) RunBootloaderCommand();
      if (work & kControlWork) RunControlCommand();
      if (work & kRingWork) DrainRing();
    }
    lock.lock();
  }
}

void PspModel::Error(std::string message) { context_.errors.Report("psp", std::move(message)); }

// --- Bootloader --------------------------------------------------------------------------------------------------

void PspModel::RunBootloaderCommand() {
  if (!Atomic(state_.bootloader_busy).load(std::memory_order_acquire)) return;  // reset meanwhile
  const uint32_t command = context_.registers.Peek(bootloader_command_);
  const uint64_t address = uint64_t{context_.registers.Peek(bootloader_address_)} << 20;
  if (const uint32_t latched = Atomic(state_.bootloader_error).load(); latched != 0) {
    Error(
        absl::StrFormat("bootloader: command %#x ignored: the bootloader stopped after an earlier failure "
                        "(error %d in C2PMSG_35[7:0]); reset the device to start again",
                        command, latched));
  } else if (const uint32_t error = ExecuteBootloaderCommand(command, address); error != 0) {
    Atomic(state_.bootloader_error).store(error, std::memory_order_release);
  }
  Atomic(state_.bootloader_busy).store(0, std::memory_order_release);
}

uint32_t PspModel::ExecuteBootloaderCommand(uint32_t command, uint64_t address) {
  const std::vector<BootComponent>& order = BootOrder();
  auto it = std::find_if(order.begin(), order.end(), [&](const BootComponent& c) { return c.command == command; });
  if (it == order.end()) {
    Error(
        absl::StrFormat("bootloader: unknown command %#x in C2PMSG_35 (the components it takes: "
                        "PSP_BL__LOAD_* for KDB, SPL, SYS_DRV, SOC_DRV, INTF_DRV, DBG_DRV, RAS_DRV, SOS)",
                        command));
    return kBootloaderUnknownCommand;
  }
  const BootComponent& component = *it;
  const size_t index = it - order.begin();
  const size_t stage = std::min<size_t>(state_.bootloader_stage, order.size());
  if (index + 1 <= stage) {
    Error(
        absl::StrFormat("bootloader: %s (%#x) out of order: %s was already loaded; components come in the order "
                        "KDB, SPL, SYS_DRV, SOC_DRV, INTF_DRV, DBG_DRV, RAS_DRV, SOS, each at most once",
                        component.name, command, order[stage - 1].name));
    return kBootloaderOutOfOrder;
  }
  if (index == kSosIndex && !(state_.bootloader_loaded & (1u << kSysDrvIndex))) {
    Error("bootloader: SOS before SYS_DRV; the sOS runs on the system driver, load SYS_DRV first");
    return kBootloaderOutOfOrder;
  }

  // The bootloader is given only an address: the component's own header says how long it is.
  const firmware::IpVersion& ip = profile_.ip.mp0;
  const auto reject = [&](const std::string& why) {
    Error(absl::StrFormat("bootloader: %s (%s) from %#x rejected: %s", component.name,
                          firmware::TypeName(LoadPath::kBootloader, component.types.front()), address, why));
    return kBootloaderBadComponent;
  };
  std::string header(std::max(firmware::kVirtualPayloadHeaderSize, firmware::kPspImageHeaderSize), '\0');
  if (absl::Status read = ReadMemory(context_.memory, client_, address, BytesOf(header)); !read.ok()) {
    return reject(absl::StrCat("buffer unreadable: ", read.message()));
  }
  uint32_t version = kVirtualFirmwareVersion;
  if (firmware::IsPspImage(header)) {
    absl::StatusOr<std::string> image = ReadRealBootComponent(address, header);
    if (!image.ok()) return reject(std::string(image.status().message()));
    firmware::RealImageVerdict verdict;
    for (uint32_t type : component.types) {
      firmware::RealImageVerdict v = firmware::ValidateRealImage(*image, LoadPath::kBootloader, type);
      if (type == component.types.front() || v.ok()) verdict = v;
      if (v.ok()) break;
    }
    if (!verdict.ok()) return reject(absl::StrCat("real firmware: ", verdict.error));
    version = verdict.version;
  } else if (std::memcmp(header.data(), firmware::kVirtualPayloadMagic, sizeof(firmware::kVirtualPayloadMagic)) != 0 &&
             std::find(component.types.begin(), component.types.end(), pspfw::kKdb) != component.types.end()) {
    // A real key database carries no PSP image header and its format is not public: the bootloader takes it as
    // it is (docs/fidelity.md, "Real firmware").
  } else {
    const auto expectation = [&](uint32_t type) {
      return firmware::VirtualFirmwareExpectation{profile_.name, ip, LoadPath::kBootloader, type};
    };
    firmware::VirtualFirmwareVerdict verdict = firmware::ValidateVirtualFirmware(
        absl::string_view(header).substr(0, firmware::kVirtualPayloadHeaderSize), expectation(component.types[0]));
    if (verdict.check == firmware::VirtualFirmwareCheck::kBadMagic ||
        verdict.check == firmware::VirtualFirmwareCheck::kBadFormat) {
      return reject(absl::StrCat(firmware::VirtualFirmwareCheckName(verdict.check), ": ", verdict.detail));
    }
    const uint32_t size = LittleEndian32(reinterpret_cast<const uint8_t*>(header.data()) + 20);
    if (size > kBootloaderBufferBytes) {
      return reject(absl::StrFormat("its header says %d bytes, more than the %d-byte bootloader buffer", size,
                                    kBootloaderBufferBytes));
    }
    std::string image(std::max<uint32_t>(size, firmware::kVirtualPayloadHeaderSize), '\0');
    if (absl::Status read = ReadMemory(context_.memory, client_, address, BytesOf(image)); !read.ok()) {
      return reject(absl::StrCat("buffer unreadable: ", read.message()));
    }
    for (uint32_t type : component.types) {
      firmware::VirtualFirmwareVerdict v = firmware::ValidateVirtualFirmware(image, expectation(type));
      if (v.ok()) {
        verdict = v;
        break;
      }
      if (type == component.types.front()) verdict = v;
    }
    if (!verdict.ok()) {
      return reject(absl::StrCat(firmware::VirtualFirmwareCheckName(verdict.check), ": ", verdict.detail));
    }
  }

  state_.bootloader_stage = static_cast<uint32_t>(index + 1);
  state_.bootloader_loaded |= 1u << index;
  if (index == kSosIndex) {
    // psp_v13_0_init_sos_version reads the sOS version from C2PMSG_58; psp_v13_0_ring_create waits for C2PMSG_64
    // bit 31, the sOS being ready for ring creation.
    context_.registers.Poke(sos_version_, version);
    context_.registers.Poke(ring_control_, psp::GFX_FLAG_RESPONSE);
    Atomic(state_.sos_alive).store(1, std::memory_order_release);
  }
  return 0;
}

absl::StatusOr<std::string> PspModel::ReadRealBootComponent(uint64_t address, absl::string_view header) {
  BAREGPU_ASSIGN_OR_RETURN(const firmware::PspImageHeader parsed,
                           firmware::ParsePspImageHeader("the component's PSP image header", header));
  if (parsed.rom_size > kBootloaderBufferBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("real firmware: its header says %d bytes (rom_size), more than the %d-byte bootloader buffer",
                        parsed.rom_size, kBootloaderBufferBytes));
  }
  std::string image(parsed.rom_size, '\0');
  if (absl::Status read = ReadMemory(context_.memory, client_, address, BytesOf(image)); !read.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("buffer unreadable: ", read.message()));
  }
  return image;
}

// --- Ring control ------------------------------------------------------------------------------------------------

void PspModel::RunControlCommand() {
  if (!Atomic(state_.sos_alive).load(std::memory_order_acquire)) return;  // reset meanwhile
  const uint32_t command = context_.registers.Peek(ring_control_);
  if (command & psp::GFX_FLAG_RESPONSE) return;  // already answered (a second wake for the same command)
  uint32_t status = 0;
  switch (command) {
    case psp::PSP_RING_TYPE__KM << 16:  // psp_v13_0_ring_create (= GFX_CTRL_CMD_ID_INIT_GPCOM_RING)
      status = CreateRing();
      break;
    case psp::GFX_CTRL_CMD_ID_DESTROY_RINGS:  // psp_v13_0_ring_stop; destroying no ring is harmless
      Atomic(state_.ring_created).store(0, std::memory_order_release);
      state_.ring_address = 0;
      state_.ring_size_bytes = state_.ring_rptr_dwords = 0;
      break;
    case psp::GFX_CTRL_CMD_ID_INIT_RBI_RING:
      Error("ring control: GFX_CTRL_CMD_ID_INIT_RBI_RING: the user-mode (RBI) ring is not modelled; only the KM ring");
      status = kControlRefused;
      break;
    default:
      Error(
          absl::StrFormat("ring control: unknown command %#x in C2PMSG_64 (known: INIT_GPCOM_RING %#x, "
                          "DESTROY_RINGS %#x)",
                          command, psp::GFX_CTRL_CMD_ID_INIT_GPCOM_RING, psp::GFX_CTRL_CMD_ID_DESTROY_RINGS));
      status = psp::PSP_ERR_UNKNOWN_COMMAND;
  }
  context_.registers.Poke(ring_control_, psp::GFX_FLAG_RESPONSE | (status & psp::GFX_CMD_STATUS_MASK));
}

uint32_t PspModel::CreateRing() {
  const uint64_t address =
      Address(context_.registers.Peek(ring_address_lo_), context_.registers.Peek(ring_address_hi_));
  const uint32_t size = context_.registers.Peek(ring_size_);
  if (Atomic(state_.ring_created).load()) {
    Error(
        absl::StrFormat("ring control: INIT_GPCOM_RING while the KM ring at %#x (%d bytes) exists; destroy it "
                        "first (GFX_CTRL_CMD_ID_DESTROY_RINGS)",
                        state_.ring_address, state_.ring_size_bytes));
    return kControlRefused;
  }
  if (size == 0 || size % sizeof(psp::PspGfxRbFrame) != 0) {
    Error(
        absl::StrFormat("ring control: KM ring size C2PMSG_71 = %d bytes is not a non-zero multiple of the "
                        "%d-byte frame (psp_gfx_rb_frame)",
                        size, sizeof(psp::PspGfxRbFrame)));
    return kControlRefused;
  }
  for (uint64_t at = address, left = size; left > 0;) {
    absl::StatusOr<std::span<uint8_t>> piece = context_.memory.Map(client_, at, left, Access::kRead);
    if (!piece.ok()) {
      Error(absl::StrFormat("ring control: KM ring at %#x (%d bytes, C2PMSG_69/70/71) is not readable: %s", address,
                            size, piece.status().message()));
      return kControlRefused;
    }
    at += piece->size();
    left -= piece->size();
  }
  state_.ring_address = address;
  state_.ring_size_bytes = size;
  state_.ring_rptr_dwords = 0;
  // A new ring starts empty at its base: the write pointer goes back to 0, so a driver that reads C2PMSG_67 to
  // place its next frame (Linux psp_ring_get_wptr, tinygrad _ring_submit) starts at the first frame.
  context_.registers.Poke(ring_wptr_, 0);
  Atomic(state_.ring_created).store(1, std::memory_order_release);
  return 0;
}

// --- KM ring -----------------------------------------------------------------------------------------------------

void PspModel::DrainRing() {
  if (!Atomic(state_.ring_created).load(std::memory_order_acquire)) return;
  const uint32_t wptr = context_.registers.Peek(ring_wptr_);
  const uint32_t ring_dwords = state_.ring_size_bytes / 4;
  if (wptr > ring_dwords || wptr % kFrameDwords != 0) {
    Error(
        absl::StrFormat("KM ring: write pointer %d (dwords, C2PMSG_67) is not a frame boundary within the "
                        "%d-dword ring; nothing is read",
                        wptr, ring_dwords));
    return;
  }
  const uint32_t target = wptr % ring_dwords;
  if (state_.ring_rptr_dwords >= ring_dwords || state_.ring_rptr_dwords % kFrameDwords != 0) {
    state_.ring_rptr_dwords = 0;  // only a damaged state file gets here
  }
  while (state_.ring_rptr_dwords != target) {
    ProcessFrame(state_.ring_address + uint64_t{state_.ring_rptr_dwords} * 4);
    state_.ring_rptr_dwords = (state_.ring_rptr_dwords + kFrameDwords) % ring_dwords;
  }
}

void PspModel::ProcessFrame(uint64_t frame_address) {
  psp::PspGfxRbFrame frame;
  if (absl::Status read = ReadMemory(context_.memory, client_, frame_address, BytesOf(frame)); !read.ok()) {
    Error(absl::StrFormat("KM ring: frame at %#x unreadable: %s", frame_address, read.message()));
    return;
  }
  const uint64_t command_address = Address(frame.cmd_buf_addr_lo, frame.cmd_buf_addr_hi);
  const uint64_t fence_address = Address(frame.fence_addr_lo, frame.fence_addr_hi);
  psp::PspGfxCmdResp command;
  if (absl::Status read = ReadMemory(context_.memory, client_, command_address, BytesOf(command)); !read.ok()) {
    // Without its command the PSP has nothing to answer: no response, no fence; the driver's wait times out.
    Error(absl::StrFormat("KM ring: command buffer at %#x (frame at %#x) unreadable: %s", command_address,
                          frame_address, read.message()));
    return;
  }
  {
    base::MutexLock lock(&injection_mu_);
    if (stalling_commands_.contains(command.cmd_id)) {
      Error(absl::StrFormat("KM ring: %s (frame at %#x) stalls the sOS (injected): no response, no fence",
                            CommandName(command.cmd_id), frame_address));
      return;
    }
  }
  const Response response = Execute(command);
  psp::PspGfxResp resp{};
  resp.status = response.status;
  resp.tmr_size = response.tmr_size;
  if (absl::Status written =
          WriteMemory(context_.memory, client_, command_address + offsetof(psp::PspGfxCmdResp, resp), BytesOf(resp));
      !written.ok()) {
    Error(absl::StrFormat("KM ring: response to %s at %#x unwritable: %s", CommandName(command.cmd_id), command_address,
                          written.message()));
  }
  absl::StatusOr<uint32_t*> fence = MapDword(context_.memory, client_, fence_address, Access::kWrite);
  if (!fence.ok()) {
    Error(absl::StrFormat("KM ring: fence of %s at %#x unwritable: %s", CommandName(command.cmd_id), fence_address,
                          fence.status().message()));
    return;
  }
  std::atomic_ref<uint32_t>(**fence).store(frame.fence_value, std::memory_order_release);
}

PspModel::Response PspModel::Execute(const psp::PspGfxCmdResp& command) {
  {
    base::MutexLock lock(&injection_mu_);
    if (auto it = failing_commands_.find(command.cmd_id); it != failing_commands_.end()) {
      Error(absl::StrFormat("%s: failed with status %#x (injected)", CommandName(command.cmd_id), it->second));
      return {it->second};
    }
  }
  switch (command.cmd_id) {
    case psp::GFX_CMD_ID_LOAD_TOC:
      return LoadToc(command.cmd.cmd_load_toc);
    case psp::GFX_CMD_ID_SETUP_TMR:
      return SetupTmr(command.cmd.cmd_setup_tmr);
    case psp::GFX_CMD_ID_LOAD_IP_FW:
      return LoadIpFirmware(command.cmd.cmd_load_ip_fw);
    case psp::GFX_CMD_ID_AUTOLOAD_RLC:
      return AutoloadRlc();
    case psp::GFX_CMD_ID_DESTROY_TMR:  // psp_tmr_unload at driver unload
      state_.tmr_set = 0;
      return {};
    case psp::GFX_CMD_ID_SETUP_VMR:
    case psp::GFX_CMD_ID_DESTROY_VMR:
    case psp::GFX_CMD_ID_SRIOV_SPATIAL_PART:
      Error(absl::StrFormat("%s: an SR-IOV virtual-function command; this is the physical function",
                            CommandName(command.cmd_id)));
      return {kRefused};
    case psp::GFX_CMD_ID_LOAD_TA:
    case psp::GFX_CMD_ID_UNLOAD_TA:
    case psp::GFX_CMD_ID_INVOKE_CMD:
    case psp::GFX_CMD_ID_LOAD_ASD:
    case psp::GFX_CMD_ID_SAVE_RESTORE:
    case psp::GFX_CMD_ID_PROG_REG:
    case psp::GFX_CMD_ID_GET_FW_ATTESTATION:
    case psp::GFX_CMD_ID_BOOT_CFG:
      Error(absl::StrFormat("%s: not modelled by the virtual PSP (trusted applications and platform services)",
                            CommandName(command.cmd_id)));
      return {kRefused};
    default:
      Error(absl::StrFormat("KM ring: unknown command id %#x", command.cmd_id));
      return {kUnknown};
  }
}

PspModel::Response PspModel::LoadToc(const psp::PspGfxCmdLoadToc& cmd) {
  const uint64_t address = Address(cmd.toc_phy_addr_lo, cmd.toc_phy_addr_hi);
  // The driver hands the TOC over in its 1 MiB private firmware buffer (psp_load_toc, psp_copy_fw).
  if (cmd.toc_size == 0 || cmd.toc_size > kBootloaderBufferBytes) {
    Error(absl::StrFormat("LOAD_TOC: toc_size %d bytes; it must be 1..%d", cmd.toc_size, kBootloaderBufferBytes));
    return {kBadInput};
  }
  if (const CheckedImage toc = CheckImage(address, cmd.toc_size, LoadPath::kToc, pspfw::kToc, profile_.ip.mp0);
      !toc.error.empty()) {
    Error(absl::StrFormat("LOAD_TOC: TOC at %#x (%d bytes) rejected: %s", address, cmd.toc_size, toc.error));
    return {kBadInput};
  }
  state_.toc_loaded = 1;
  state_.toc_tmr_size = TocTmrSize();
  return {psp::TEE_SUCCESS, TocTmrSize()};
}

PspModel::Response PspModel::SetupTmr(const psp::PspGfxCmdSetupTmr& cmd) {
  if (!state_.toc_loaded) {
    Error("SETUP_TMR before LOAD_TOC: the TOC says how large the TMR must be (psp_tmr_init)");
    return {kRefused};
  }
  // MP0 13.0.0 leaves DF C-state management to the PMFW, so the TMR is set up only once the PMFW runs
  // (amdgpu_psp.c psp_hw_start: "TMR setup should be performed after PMFW loaded and before other non-psp firmware
  // loaded", for psp_check_pmfw_centralized_cstate_management's list, which has 13.0.0).
  if (!context_.firmware.Has(gfx::kSmu)) {
    Error(
        "SETUP_TMR before the PMFW (GFX_FW_TYPE_SMU) is loaded: on MP0 13.0.0 the PMFW manages DF C-states and "
        "loads first, then the TMR is set up (psp_hw_start, pmfw_centralized_cstate_management)");
    return {kRefused};
  }
  const uint64_t address = Address(cmd.buf_phy_addr_lo, cmd.buf_phy_addr_hi);
  if (std::string why = CheckTmrAddresses(cmd); !why.empty()) {
    Error(absl::StrCat("SETUP_TMR: ", why));
    return {kBadInput};
  }
  if (address % kTmrAlignment != 0 || cmd.buf_size < state_.toc_tmr_size) {
    Error(
        absl::StrFormat("SETUP_TMR: TMR at %#x of %#x bytes; it must be %#x-aligned (PSP_TMR_ALIGNMENT) and hold "
                        "the %#x bytes LOAD_TOC asked for",
                        address, cmd.buf_size, kTmrAlignment, state_.toc_tmr_size));
    return {kBadInput};
  }
  for (uint64_t at = address, left = cmd.buf_size; left > 0;) {
    absl::StatusOr<std::span<uint8_t>> piece = context_.memory.Map(client_, at, left, Access::kWrite);
    if (!piece.ok()) {
      Error(absl::StrFormat("SETUP_TMR: TMR at %#x (%#x bytes) is not writable: %s", address, cmd.buf_size,
                            piece.status().message()));
      return {kBadInput};
    }
    at += piece->size();
    left -= piece->size();
  }
  if (state_.tmr_set && (address != state_.tmr_address || cmd.buf_size != state_.tmr_size)) {
    Error(
        absl::StrFormat("SETUP_TMR: a TMR is already set up at %#x (%#x bytes); the protected region cannot move "
                        "to %#x (%#x bytes) before DESTROY_TMR or a reset",
                        state_.tmr_address, state_.tmr_size, address, cmd.buf_size));
    return {kRefused};
  }
  state_.tmr_address = address;
  state_.tmr_size = cmd.buf_size;
  state_.tmr_set = 1;
  return {};
}

std::string PspModel::CheckTmrAddresses(const psp::PspGfxCmdSetupTmr& cmd) {
  const uint64_t mc = Address(cmd.buf_phy_addr_lo, cmd.buf_phy_addr_hi);
  const uint64_t physical = Address(cmd.system_phy_addr_lo, cmd.system_phy_addr_hi);
  // Without virt_phy_addr the PSP has only buf_phy_addr and takes it as the TMR's physical address, which an MC
  // address (VRAM sits at FB_LOCATION_BASE, far above the VRAM's own size) is not: the TMR would land outside
  // VRAM. psp_prep_tmr_cmd_buf always sets the flag and passes both addresses.
  if ((cmd.tmr_flags & psp::PspGfxCmdSetupTmr::kVirtPhyAddr) == 0) {
    return absl::StrFormat(
        "tmr_flags %#x lack virt_phy_addr: buf_phy_addr %#x would be taken as a physical address; pass the MC "
        "address with virt_phy_addr set and the physical one in system_phy_addr (psp_prep_tmr_cmd_buf)",
        cmd.tmr_flags, mc);
  }
  // The MMHUB's frame-buffer window (the PSP is an MMHUB client): registers count 16 MiB units
  // (mmhub_v3_0_get_fb_location, mmhub_v3_0_get_mc_fb_offset).
  const RegisterFile& registers = context_.registers;
  const uint64_t fb_base =
      uint64_t{regs::mmhub::MMMC_VM_FB_LOCATION_BASE{}
                   .set_raw(registers.Peek(RegisterAddress<regs::mmhub::MMMC_VM_FB_LOCATION_BASE>(context_.bases)))
                   .fb_base()}
      << kFbUnitShift;
  const uint64_t fb_top =
      (uint64_t{regs::mmhub::MMMC_VM_FB_LOCATION_TOP{}
                    .set_raw(registers.Peek(RegisterAddress<regs::mmhub::MMMC_VM_FB_LOCATION_TOP>(context_.bases)))
                    .fb_top()}
       << kFbUnitShift) |
      ((uint64_t{1} << kFbUnitShift) - 1);
  const uint64_t fb_offset =
      uint64_t{regs::mmhub::MMMC_VM_FB_OFFSET{}
                   .set_raw(registers.Peek(RegisterAddress<regs::mmhub::MMMC_VM_FB_OFFSET>(context_.bases)))
                   .fb_offset()}
      << kFbUnitShift;
  if (mc < fb_base || cmd.buf_size == 0 || mc + cmd.buf_size - 1 > fb_top) {
    return absl::StrFormat(
        "TMR at MC %#x (%#x bytes) is not inside VRAM's MC window [%#x, %#x] (MMMC_VM_FB_LOCATION_BASE/TOP)", mc,
        cmd.buf_size, fb_base, fb_top);
  }
  // amdgpu_gmc_vram_mc2pa: the MC address less the window's base plus vram_base_offset (MMMC_VM_FB_OFFSET).
  const uint64_t expected = mc - fb_base + fb_offset;
  if (physical != expected) {
    return absl::StrFormat(
        "system_phy_addr %#x is not the physical address of the TMR at MC %#x: %#x (MC - FB_LOCATION_BASE + "
        "FB_OFFSET, amdgpu_gmc_vram_mc2pa)",
        physical, mc, expected);
  }
  return "";
}

PspModel::Response PspModel::LoadIpFirmware(const psp::PspGfxCmdLoadIpFw& cmd) {
  const std::string type = firmware::TypeName(LoadPath::kIpFirmware, cmd.fw_type);
  const uint64_t address = Address(cmd.fw_phy_addr_lo, cmd.fw_phy_addr_hi);
  {
    base::MutexLock lock(&injection_mu_);
    if (rejected_types_.contains(cmd.fw_type)) {
      Error(absl::StrFormat("LOAD_IP_FW: %s at %#x rejected (injected)", type, address));
      return {kBadInput};
    }
  }
  auto block = ip_firmware_.find(cmd.fw_type);
  if (block == ip_firmware_.end()) {
    Error(absl::StrFormat("LOAD_IP_FW: %s (%d) is not firmware %s takes", type, cmd.fw_type, profile_.name));
    return {kRefused};
  }
  // MP0 13.0.0 centralises DF C-state management in the PMFW, so Linux loads the SMU firmware after LOAD_TOC and
  // before SETUP_TMR (psp_hw_start, pmfw_centralized_cstate_management; tinygrad does the same). Everything else
  // goes into the TMR and needs it.
  if (cmd.fw_type == gfx::kSmu ? !state_.toc_loaded : !state_.tmr_set) {
    Error(absl::StrFormat("LOAD_IP_FW: %s before %s", type, cmd.fw_type == gfx::kSmu ? "LOAD_TOC" : "SETUP_TMR"));
    return {kRefused};
  }
  if (cmd.fw_size == 0 || cmd.fw_size > state_.toc_tmr_size) {
    Error(absl::StrFormat("LOAD_IP_FW: %s of %d bytes; it must be 1..%d (the TMR size)", type, cmd.fw_size,
                          state_.toc_tmr_size));
    return {kBadInput};
  }
  const CheckedImage image = CheckImage(address, cmd.fw_size, LoadPath::kIpFirmware, cmd.fw_type, block->second);
  if (!image.error.empty()) {
    Error(absl::StrFormat("LOAD_IP_FW: %s at %#x (%d bytes) rejected: %s", type, address, cmd.fw_size, image.error));
    return {kBadInput};
  }
  context_.firmware.Load(cmd.fw_type, image.version);
  if (image.ucode_start != 0) context_.firmware.SetUcodeStart(cmd.fw_type, image.ucode_start);
  if (cmd.fw_type == gfx::kSmu) smu_.FirmwareLoaded(image.version);
  return {};
}

PspModel::Response PspModel::AutoloadRlc() {
  if (!state_.tmr_set) {
    Error("AUTOLOAD_RLC before SETUP_TMR: the RLC autoloads its firmware from the TMR");
    return {kRefused};
  }
  std::vector<std::string> missing;
  for (uint32_t type : kAutoloadPrerequisites) {
    if (!context_.firmware.Has(type)) missing.push_back(firmware::TypeName(LoadPath::kIpFirmware, type));
  }
  if (!missing.empty()) {
    Error(absl::StrCat("AUTOLOAD_RLC: not loaded yet: ", absl::StrJoin(missing, ", "),
                       " (the RLC and the compute CP firmware it starts)"));
    return {kRefused};
  }
  context_.firmware.SetRlcAutoloaded();
  return {};
}

PspModel::CheckedImage PspModel::CheckImage(uint64_t address, uint64_t size, LoadPath load, uint32_t type,
                                            const firmware::IpVersion& ip) {
  std::string image(size, '\0');
  if (absl::Status read = ReadMemory(context_.memory, client_, address, BytesOf(image)); !read.ok()) {
    return {absl::StrCat("unreadable: ", read.message())};
  }
  if (firmware::IsPspImage(image)) {
    const firmware::RealImageVerdict verdict = firmware::ValidateRealImage(image, load, type);
    if (!verdict.ok()) return {absl::StrCat("real firmware: ", verdict.error)};
    return {"", verdict.version, verdict.ucode_start};
  }
  const firmware::VirtualFirmwareVerdict verdict =
      firmware::ValidateVirtualFirmware(image, {profile_.name, ip, load, type});
  if (verdict.ok()) return {"", kVirtualFirmwareVersion};
  return {absl::StrCat(firmware::VirtualFirmwareCheckName(verdict.check), ": ", verdict.detail)};
}

}  // namespace am::sim
