#include "am/device.h"

#include <linux/pci_regs.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "am/completion_interrupts.h"
#include "am/gfx.h"
#include "am/gmc.h"
#include "am/ih.h"
#include "am/packet_trace.h"
#include "am/psp.h"
#include "am/regs/gc.h"
#include "am/regs/hw_id_constants.h"
#include "am/regs/mmhub.h"
#include "am/regs/mp0.h"
#include "am/regs/nbio.h"
#include "am/sdma.h"
#include "am/smu.h"
#include "am/soc.h"
#include "base/log.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "pci/open.h"
#include "pci/virtual_registry.h"

namespace am {
namespace {

struct Supported {
  uint16_t hw_id;
  uint8_t major, minor;
};
// Navi31's blocks (the versions Linux's amdgpu_discovery.c maps to gfx11 dGPU code: gfx_v11_0, gmc_v11_0 with
// mmhub_v3_0, ih_v6_0, nbio_v4_3, psp_v13_0, smu_v13_0_0, sdma_v6_0, hdp_v6_0).
constexpr Supported kSupported[] = {
    {regs::discovery::GC_HWID, 11, 0},   {regs::discovery::MMHUB_HWID, 3, 0}, {regs::discovery::OSSSYS_HWID, 6, 0},
    {regs::discovery::NBIF_HWID, 4, 3},  {regs::discovery::MP0_HWID, 13, 0},  {regs::discovery::MP1_HWID, 13, 0},
    {regs::discovery::SDMA0_HWID, 6, 0}, {regs::discovery::HDP_HWID, 6, 0},
};

}  // namespace

absl::Status CheckSupportedVersions(const Discovery& discovery) {
  std::vector<std::string> problems;
  for (const Supported& s : kSupported) {
    const std::optional<IpVersion> version = discovery.VersionOf(s.hw_id);
    if (!version) {
      problems.push_back(absl::StrFormat("%s missing from the discovery table", HwIdName(s.hw_id)));
    } else if (version->major != s.major || version->minor != s.minor) {
      problems.push_back(absl::StrFormat("%s %d.%d.%d (baregpu supports %d.%d.x)", HwIdName(s.hw_id), version->major,
                                         version->minor, version->revision, s.major, s.minor));
    }
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::UnimplementedError(
      absl::StrCat("unsupported GPU: ", absl::StrJoin(problems, "; "), " (baregpu drives Navi31 / RX 7900 XTX)"));
}

absl::StatusOr<std::unique_ptr<Device>> Device::Open(absl::string_view name, DeviceOptions options) {
  BAREGPU_LOG(kDebug, "%s: opening", base::Printable(name));
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> pci, pci::Open(name));
  BAREGPU_LOG(kInfo, "%s: opened (%s backend)", pci->name(), pci->backend());
  BAREGPU_RETURN_IF_ERROR(pci->SetDmaMaskBits(Gmc::kDmaMaskBits));
  return Open(std::move(pci), std::move(options));
}

absl::StatusOr<TraceOptions> ParseTraceOptions(absl::string_view value) {
  TraceOptions options;
  for (absl::string_view entry : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry == "regs") {
      options.regs = true;
    } else if (entry == "packets") {
      options.packets = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s=%s: unknown entry %s; accepted: regs (every register access, decoded), packets (every "
                          "packet given to a ring, decoded), comma-separated",
                          kTraceEnvironmentVariable, base::Printable(value), base::Printable(entry)));
    }
  }
  return options;
}

void Device::SetCurrentStep(std::string step) {
  base::MutexLock lock(&trace_mutex_);
  current_step_ = std::move(step);
}

void Device::TraceRegistersToStderr() {
  io_->set_tracer([this](bool write, uint64_t address, uint32_t value) {
    std::string text;
    {
      base::MutexLock lock(&trace_mutex_);
      if (traced_step_ != current_step_) {
        traced_step_ = current_step_;
        text = absl::StrFormat("== %s: %s\n", pci_->name(),
                               current_step_.empty() ? "outside the boot steps" : current_step_);
      }
    }
    absl::StrAppend(&text, io_->Describe(write, address, value), "\n");
    std::fwrite(text.data(), 1, text.size(), stderr);
  });
}

absl::StatusOr<std::unique_ptr<Device>> Device::Open(std::unique_ptr<pci::Device> pci, DeviceOptions options) {
  TraceOptions trace;
  if (const char* env = std::getenv(kTraceEnvironmentVariable); env != nullptr) {
    BAREGPU_ASSIGN_OR_RETURN(trace, ParseTraceOptions(env));
  }
  BAREGPU_ASSIGN_OR_RETURN(DeviceDiscovery discovery, ReadDiscovery(*pci));
  BAREGPU_RETURN_IF_ERROR(CheckSupportedVersions(discovery.discovery));
  std::unique_ptr<Device> device(new Device(std::move(pci), std::move(discovery)));
  device->vm_fault_stop_ = options.vm_fault_stop;
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio bar5, device->pci_->MapMmio(5));
  device->io_ = std::make_unique<RegisterIo>(bar5, device->bases_);
  if (trace.regs) device->TraceRegistersToStderr();
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> vram, device->pci_->MapMemory(0));
  BAREGPU_ASSIGN_OR_RETURN(device->memory_, MemoryManager::Create(vram, {.vram_size = device->discovery_.vram_size}));
  auto mmhub = device->Regs<regs::Ip::kMmhub>();
  // mmhub_v3_0_get_fb_location / _get_mc_fb_offset: both registers count 16 MiB units.
  device->fb_start_ = uint64_t{mmhub.Read<regs::mmhub::MMMC_VM_FB_LOCATION_BASE>().fb_base()} << 24;
  device->fb_offset_ = uint64_t{mmhub.Read<regs::mmhub::MMMC_VM_FB_OFFSET>().fb_offset()} << 24;
  BAREGPU_RETURN_IF_ERROR(mmhub.status());
  if (!options.firmware) {
    for (const std::string& problem : firmware::UserSearchRootProblems()) BAREGPU_LOG(kWarn, "%s", problem);
    options.firmware = firmware::Store(firmware::DeviceSearchRoots(device->pci_->firmware_roots()));
  }
  BAREGPU_RETURN_IF_ERROR(device->CreateBlocks(*options.firmware));
  if (trace.packets) {
    device->gfx_->ring().set_tracer(PacketTracer(*device));
    device->sdma_->ring().set_tracer(PacketTracer(*device));
  }
  BAREGPU_LOG(kInfo, "%s: IP discovery at VRAM %#x, %d IP blocks, VRAM %d MiB, FB at MC %#x", device->pci_->name(),
              device->discovery_.table_address, device->discovery_.discovery.ips.size(),
              device->discovery_.vram_size >> 20, device->fb_start_);
  return device;
}

absl::Status Device::CreateBlocks(firmware::Store& firmware) {
  // The IP block implementations, in init order, each for the hardware id and major.minor it drives (as amdgpu's
  // amdgpu_discovery_set_*_ip_blocks pick gfx_v11_0, psp_v13_0, ... by the discovered versions). A new GPU is new
  // entries here plus the blocks' classes (docs/adding-an-ip-block.md); which block drives what is decided nowhere
  // else.
  struct Entry {
    const char* block;
    uint16_t hw_id;
    uint8_t major, minor;
    IpBlock* (*create)(Device& device, firmware::Store& firmware);
  };
  static constexpr Entry kBlocks[] = {
      {"soc", regs::discovery::NBIF_HWID, 4, 3,
       [](Device& d, firmware::Store&) -> IpBlock* { return (d.soc_ = std::make_unique<Soc>(d)).get(); }},
      {"gmc", regs::discovery::GC_HWID, 11, 0,
       [](Device& d, firmware::Store&) -> IpBlock* { return (d.gmc_ = std::make_unique<Gmc>(d)).get(); }},
      {"ih", regs::discovery::OSSSYS_HWID, 6, 0,
       [](Device& d, firmware::Store&) -> IpBlock* { return (d.ih_ = std::make_unique<Ih>(d)).get(); }},
      {"psp", regs::discovery::MP0_HWID, 13, 0,
       [](Device& d, firmware::Store& f) -> IpBlock* { return (d.psp_ = std::make_unique<Psp>(d, f)).get(); }},
      {"smu", regs::discovery::MP1_HWID, 13, 0,
       [](Device& d, firmware::Store&) -> IpBlock* { return (d.smu_ = std::make_unique<Smu>(d)).get(); }},
      {"gfx", regs::discovery::GC_HWID, 11, 0,
       [](Device& d, firmware::Store& f) -> IpBlock* { return (d.gfx_ = std::make_unique<Gfx>(d, f)).get(); }},
      {"sdma", regs::discovery::SDMA0_HWID, 6, 0,
       [](Device& d, firmware::Store&) -> IpBlock* { return (d.sdma_ = std::make_unique<Sdma>(d)).get(); }},
  };
  blocks_.clear();
  for (const Entry& entry : kBlocks) {
    const std::optional<IpVersion> version = discovery_.discovery.VersionOf(entry.hw_id);
    if (!version || version->major != entry.major || version->minor != entry.minor) {
      return absl::UnimplementedError(absl::StrFormat(
          "no %s block for %s %s (baregpu has one for %d.%d)", entry.block, HwIdName(entry.hw_id),
          version ? absl::StrFormat("%d.%d.%d", version->major, version->minor, version->revision) : "(missing)",
          entry.major, entry.minor));
    }
    blocks_.push_back(entry.create(*this, firmware));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<firmware::RequiredFile>> RequiredFirmware(const Discovery& d) {
  // The file list is per ASIC, so it takes every versioned block.
  auto version = [&](uint16_t hw_id) {
    const std::optional<IpVersion> v = d.VersionOf(hw_id);
    return v ? firmware::IpVersion{v->major, v->minor, v->revision} : firmware::IpVersion{};
  };
  return firmware::RequiredFiles({version(regs::discovery::GC_HWID), version(regs::discovery::MP0_HWID),
                                  version(regs::discovery::MP1_HWID), version(regs::discovery::SDMA0_HWID)});
}

absl::StatusOr<std::vector<firmware::RequiredFile>> Device::RequiredFirmware() const {
  return am::RequiredFirmware(discovery_.discovery);
}

Device::Device(std::unique_ptr<pci::Device> pci, DeviceDiscovery discovery)
    : pci_(std::move(pci)),
      discovery_(std::move(discovery)),
      bases_(discovery_.discovery.Bases()),
      completion_interrupts_(std::make_unique<CompletionInterrupts>(*this)) {}

Device::~Device() = default;

absl::Status Device::Run(IpBlock& block, absl::string_view phase, absl::Status (IpBlock::*step)()) {
  BAREGPU_LOG(kDebug, "%s: %s %s: start", pci_->name(), block.name(), phase);
  SetCurrentStep(absl::StrCat(block.name(), " ", phase));
  const absl::Time start = absl::Now();
  absl::Status status = (block.*step)();
  SetCurrentStep("");
  steps_.push_back({std::string(block.name()), std::string(phase), absl::Now() - start, status, start});
  if (status.ok()) {
    BAREGPU_LOG(kInfo, "%s: %s %s: ok in %.3f ms", pci_->name(), block.name(), phase,
                absl::ToDoubleMilliseconds(steps_.back().duration));
  } else {
    BAREGPU_LOG(kError, "%s: %s %s failed: %s", pci_->name(), block.name(), phase, status.message());
  }
  if (!status.ok()) return absl::Status(status.code(), absl::StrCat(block.name(), " ", phase, ": ", status.message()));
  return absl::OkStatus();
}

absl::string_view BootKindName(BootKind kind) {
  switch (kind) {
    case BootKind::kFull:
      return "full";
    case BootKind::kFullAfterReset:
      return "full, after a chip reset";
    case BootKind::kPartial:
      return "partial";
  }
  return "?";
}

absl::Status Device::RunBlocks(bool partial) {
  // init_sw for all, always in the same order from an empty boot region, so that boot-region allocations land where
  // they did before, also when a boot starts over (a failed partial boot, a reset after a stopped bootloader).
  memory_->ReleaseBootRegion();
  for (IpBlock* block : blocks_) BAREGPU_RETURN_IF_ERROR(Run(*block, "init_sw", &IpBlock::InitSw));
  for (IpBlock* block : blocks_) {
    if (partial && (block == psp_.get() || block == smu_.get())) continue;  // their firmware runs already
    BAREGPU_RETURN_IF_ERROR(Run(*block, "init_hw", &IpBlock::InitHw));
  }
  return absl::OkStatus();
}

absl::Status Device::ResetAsic() {
  // soc21_asic_reset_method picks a mode1 reset for MP1 13.0.0, which the SMU's firmware performs. When that
  // firmware is not running (a driver stopped between the PSP's start and its load of the PMFW), nothing on the
  // chip can reset it: MP0 13.0.x has no PSP mode1 reset (psp_v13_0.c sets no .mode1_reset, so
  // amdgpu_device_mode1_reset's psp_gpu_reset fallback does nothing there). The driver then takes soc21_asic_reset's
  // other path, AMD_RESET_METHOD_PCI (amdgpu_device_pci_reset: pci_reset_function), as a real card is reset by a PCI
  // function or bus reset.
  const bool smu_running = smu_->FirmwareRunning();
  const std::string block = smu_running ? "smu" : "pci";
  const std::string phase = smu_running ? "mode1_reset" : "function_reset";
  SetCurrentStep(absl::StrCat(block, " ", phase));
  const absl::Time start = absl::Now();
  absl::Status status = ResetChip(smu_running ? ResetMethod::kMode1 : ResetMethod::kPciFunction);
  SetCurrentStep("");
  steps_.push_back({block, phase, absl::Now() - start, status, start});
  return status;
}

std::string Device::ResetFix() const {
  return absl::StartsWith(pci_->name(), pci::kVirtualPrefix)
             ? absl::StrFormat("power-cycle it with `baregpu sim reset %s`", pci_->name())
             : absl::StrFormat("reset it from the host (echo 1 > /sys/bus/pci/devices/%s/reset)", pci_->name());
}

absl::Status Device::ResetChip(ResetMethod method) {
  // amdgpu_device_mode1_reset: the reset loses the PCI state, so it is saved first and put back after; bus
  // mastering is off while the chip resets, so nothing is moving memory when it goes down. pci_reset_function saves
  // and restores the same state around a function reset (pci_dev_save_and_disable, pci_dev_restore).
  const char* const what = method == ResetMethod::kMode1 ? "mode1 reset" : "PCI reset";
  BAREGPU_ASSIGN_OR_RETURN(const uint16_t command, pci_->ReadConfig16(PCI_COMMAND));
  BAREGPU_RETURN_IF_ERROR(pci_->SetBusMaster(false));
  absl::Status reset = method == ResetMethod::kMode1 ? smu_->Mode1Reset() : pci_->ResetFunction();
  if (!reset.ok()) {
    return absl::Status(reset.code(),
                        absl::StrFormat("%s: %s failed: %s; %s", pci_->name(), what, reset.message(), ResetFix()));
  }
  BAREGPU_RETURN_IF_ERROR(pci_->WriteConfig16(PCI_COMMAND, command));
  // The ASIC is out of reset once RCC_CONFIG_MEMSIZE no longer reads all ones (amdgpu_device_mode1_reset, through
  // nbio_v4_3_get_memsize).
  const uint64_t memsize_register = *Regs<regs::Ip::kNbio>().AddressOf<regs::nbio::RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE>();
  const absl::Time deadline = absl::Now() + Smu::kTimeout;
  for (uint32_t memsize = io_->ReadDword(memsize_register); memsize == pci::Mmio::kUnclaimedRead;
       memsize = io_->ReadDword(memsize_register)) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrFormat("the chip did not come out of the %s within %s: RCC_CONFIG_MEMSIZE still reads %#x", what,
                          absl::FormatDuration(Smu::kTimeout), memsize));
    }
  }
  // The reset took the sOS down with everything else: its sign of life is gone (psp_v13_0_is_sos_alive).
  auto mp0 = Regs<regs::Ip::kMp0>();
  return io_->WaitFor(*mp0.AddressOf<regs::mp0::MP0_SMN_C2PMSG_81>(), 0xffffffff, 0, Smu::kTimeout,
                      "the reset to stop the sOS");
}

absl::Status Device::Boot(BootOptions options) {
  BAREGPU_RETURN_IF_ERROR(pci_->SetBusMaster(true));
  steps_.clear();
  auto gc = Regs<regs::Ip::kGc>();
  const bool flagged = gc.Read<regs::gc::SCRATCH_REG7>().raw() == kBootedFlag;
  const bool sos_alive = Regs<regs::Ip::kMp0>().Read<regs::mp0::MP0_SMN_C2PMSG_81>().raw() != 0;
  BAREGPU_LOG(kInfo, "%s: boot: booted flag %s, sOS %s%s", pci_->name(), flagged ? "set" : "clear",
              sos_alive ? "running" : "not running", options.full_reset ? ", full boot asked for" : "");
  absl::Status booted;
  if (!options.full_reset && flagged && sos_alive) {
    boot_kind_ = BootKind::kPartial;
    booted = RunBlocks(/*partial=*/true);
    if (booted.ok()) return completion_interrupts_->AfterBoot();
    // A previous state we cannot build on: start over.
    options.full_reset = true;
  }
  gc.Write(regs::gc::SCRATCH_REG7{}.set_raw(0));
  // A running sOS needs a reset before a full boot (soc21_need_reset_on_init), and so does a bootloader that stopped
  // on an error (a driver stopped it half-way, issue 23): it takes no component until the chip is reset.
  if (sos_alive || psp_->bootloader_stopped()) {
    boot_kind_ = BootKind::kFullAfterReset;
    BAREGPU_RETURN_IF_ERROR(ResetAsic());
  } else {
    boot_kind_ = BootKind::kFull;
  }
  absl::Status full = RunBlocks(/*partial=*/false);
  if (!full.ok() && boot_kind_ == BootKind::kFull && psp_->bootloader_stopped()) {
    // The bootloader looked fresh but refused a component: a driver was stopped part-way through handing them over
    // (nothing shows that beforehand; soc21_need_reset_on_init looks at the sOS's sign of life only). The chip is
    // reset and the boot runs once more.
    BAREGPU_LOG(kInfo, "%s: the PSP bootloader stopped (%s); resetting the chip and booting again", pci_->name(),
                full.message());
    boot_kind_ = BootKind::kFullAfterReset;
    BAREGPU_RETURN_IF_ERROR(ResetAsic());
    full = RunBlocks(/*partial=*/false);
  }
  if (!full.ok()) return full;
  gc.Write(regs::gc::SCRATCH_REG7{}.set_raw(kBootedFlag));
  return completion_interrupts_->AfterBoot();
}

absl::StatusOr<std::vector<QueueReset>> Device::RecoverQueues() {
  std::vector<QueueReset> resets;
  if (!gfx_->idle()) {
    BAREGPU_ASSIGN_OR_RETURN(QueueReset reset, gfx_->ResetQueue());
    resets.push_back(std::move(reset));
  }
  if (!sdma_->idle()) {
    BAREGPU_ASSIGN_OR_RETURN(QueueReset reset, sdma_->ResetQueue());
    resets.push_back(std::move(reset));
  }
  return resets;
}

absl::Status Device::StopQueues() {
  absl::Status result = gfx_->FiniHw();
  result.Update(sdma_->FiniHw());
  return result;
}

absl::Status Device::Fini() {
  absl::Status result;
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) result.Update(Run(**it, "fini_hw", &IpBlock::FiniHw));
  return result;
}

}  // namespace am
