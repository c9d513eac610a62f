#include "nv/sim/gsp_rm_model.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nv/gsp/queue_element.h"
#include "nv/regs/clc56f_constants.h"
#include "nv/regs/gsp_constants.h"
#include "nv/regs/names.h"
#include "nv/regs/rpc_constants.h"
#include "nv/regs/sequencer_constants.h"
#include "nv/regs/status_constants.h"
#include "nv/sim/ad102.h"

namespace nv::sim {
namespace {

namespace rpc = regs::rpc;
namespace status = regs::status;
using gsp::GSP_ARGUMENTS_CACHED;
using gsp::GspStaticConfigInfo;
using gsp::GspSystemInfo;
using gsp::LibosMemoryRegionInitArgument;

// LibOS region names as numbers: the characters in order, the first in the most significant byte used
// (libos_init_args.h id8; nouveau r535_gsp_libos_id8, tinygrad int.from_bytes(name, 'big')). The model's own
// reading, not the driver's builder.
constexpr uint64_t Id8(std::string_view name) {
  uint64_t v = 0;
  for (char c : name) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}
std::string Id8Name(uint64_t id8) {
  std::string name;
  for (int shift = 56; shift >= 0; shift -= 8) {
    const char c = static_cast<char>((id8 >> shift) & 0xff);
    if (c != 0) name.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  return name;
}
// The regions nouveau (r535_gsp_libos_init) and tinygrad (NV_GSP.init_libos_args) describe; LibOS needs the RM
// arguments, and GSP-RM writes its logs into the three buffers. tinygrad adds LOGMNOC and LOGKRNL (570's), which
// the model accepts and ignores.
constexpr std::string_view kRequiredRegions[] = {"LOGINIT", "LOGINTR", "LOGRM", "RMARGS"};
constexpr uint64_t kRmArgsId8 = Id8("RMARGS");
constexpr uint64_t kLibosPage = regs::gsp::LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE;

// PACKED_REGISTRY_ENTRY.type values (nouveau r535.c enum registry_type; tinygrad REGISTRY_TABLE_ENTRY_TYPE_*).
constexpr uint8_t kRegistryDword = 1;
constexpr uint8_t kRegistryBinary = 2;
constexpr uint8_t kRegistryString = 3;

// rpc_unloading_guest_driver_v1F_07 (nouveau's g_rpc-structures.h copy: NvBool bInPMTransition, NvBool
// bGc6Entering, NvU32 newLevel): 8 bytes.
constexpr size_t kUnloadingGuestDriverSize = 8;

// Controls the model answers (open-gpu-kernel-modules 535.113.01 src/common/sdk/nvidia/inc/ctrl/), with the sizes of
// their parameter structures measured with gcc against those headers. GET_GID_INFO and GET_NAME_STRING are what a
// client asks a subdevice first (nvidia-smi's UUID and name; RM fills GspStaticConfigInfo.gidInfo from the first);
// GET_WORK_SUBMIT_TOKEN is what tinygrad asks of every channel before it can ring its doorbell
// (ops_nv.py _new_gpu_fifo).
constexpr uint32_t kCtrlGpuGetNameString = 0x20800110;  // ctrl2080gpu.h NV2080_CTRL_CMD_GPU_GET_NAME_STRING
constexpr uint32_t kCtrlGpuGetGidInfo = 0x2080014a;     // ctrl2080gpu.h NV2080_CTRL_CMD_GPU_GET_GID_INFO
constexpr uint32_t kCtrlGpfifoGetWorkSubmitToken =
    0xc36f0108;                                   // ctrlc36f.h NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN
constexpr size_t kNameStringParamsSize = 132;     // NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS: flags, union of 64 NvU16
constexpr size_t kWorkSubmitTokenParamsSize = 4;  // NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS
// ctrl2080gpu.h NV2080_CTRL_GPU_GET_NAME_STRING_FLAGS_TYPE_ASCII / _UNICODE.
constexpr uint32_t kNameStringAscii = 0;
constexpr uint32_t kNameStringUnicode = 1;
// ctrl2080gpu.h NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT (1:0): _ASCII 0, _BINARY 2.
constexpr uint32_t kGidFormatMask = 0x3;
constexpr uint32_t kGidFormatAscii = 0;
constexpr uint32_t kGidFormatBinary = 2;
// A GID's binary form: the 16 bytes of the GPU's UUID (RM's SHA-1 GID truncated to 16; nvidia-smi prints it as
// "GPU-" and the UUID). The model's GPU has this one (model's choice).
constexpr uint8_t kGpuUuid[16] = {0x5a, 0x1d, 0xad, 0x10, 0x2c, 0x84, 0x40, 0x90,
                                  0x8b, 0x61, 0x0a, 0xd1, 0x02, 0x76, 0x49, 0x0b};

// The RTX 4090's units. AD102 has 12 GPCs of 6 TPCs (72 TPCs, 2 SMs each); the RTX 4090 ships with one GPC off and
// 128 SMs (64 TPCs) (thefpsreview.com "NVIDIA GeForce RTX 4090 GPU Family Specifications", from NVIDIA's Ada
// whitepaper). Which GPC and which two further TPCs are fused off differs from board to board and is not public:
// the model takes GPC 11 off and one TPC each from GPCs 9 and 10.
constexpr int kGpcs = 12;
constexpr int kTpcsPerGpc = 6;
constexpr uint32_t kRtx4090GpcMask = 0x7ff;
constexpr uint32_t TpcMaskOf(int gpc) {
  if (gpc >= 11) return 0;
  if (gpc >= 9) return (1u << (kTpcsPerGpc - 1)) - 1;
  return (1u << kTpcsPerGpc) - 1;
}
// 24 GiB of GDDR6X on a 384-bit bus, 12 32-bit controllers (thefpsreview.com, as above); the RAM type is
// ctrl2080fb.h NV2080_CTRL_FB_INFO_RAM_TYPE_GDDR6X.
constexpr uint32_t kFbBusWidth = 384;
constexpr uint32_t kFbps = 12;
constexpr uint32_t kRamTypeGddr6x = 0x12;
// Ada SMs (compute capability 8.9): 48 resident warps of 32 threads (CUDA C Programming Guide, "Features and
// Technical Specifications"); one RT core per SM (thefpsreview.com: 128 RT cores).
constexpr uint32_t kMaxWarpsPerSm = 48;
constexpr uint32_t kThreadsPerWarp = 32;
constexpr uint32_t kRtCoresPerSm = 1;
// L2: the RTX 4090's 72 MiB (NVIDIA's product specification; the full AD102 has 96 MiB). Model's choice where no
// source here gives it.
constexpr uint32_t kL2CacheSize = 72u << 20;
constexpr char kGpuName[] = "NVIDIA GeForce RTX 4090";
constexpr char kGpuShortName[] = "AD102";
// NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS.chipSKU: the RTX 4090's die is AD102-300 (its marking).
constexpr char kChipSku[] = "300";

template <typename T>
T LoadAt(std::span<const uint8_t> bytes, size_t offset = 0) {
  T v{};
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}
template <typename T>
std::span<const uint8_t> BytesOf(const T& v) {
  return std::span(reinterpret_cast<const uint8_t*>(&v), sizeof(T));
}

std::string RpcLabel(uint32_t function) {
  absl::string_view name = regs::RpcName(function);
  return name.empty() ? absl::StrFormat("RPC %#x", function) : absl::StrFormat("%s (%#x)", name, function);
}
std::string StatusLabel(uint32_t s) {
  absl::string_view name = regs::StatusName(s);
  return name.empty() ? absl::StrFormat("%#x", s) : absl::StrFormat("%s (%#x)", name, s);
}

GspStaticConfigInfo BuildStaticInfo(const GspRmConfig& config) {
  GspStaticConfigInfo s{};
  s.gidInfo.index = 0;
  s.gidInfo.flags = kGidFormatBinary;
  s.gidInfo.length = sizeof(kGpuUuid);
  std::memcpy(s.gidInfo.data, kGpuUuid, sizeof(kGpuUuid));
  s.gpcInfo.gpcMask = kRtx4090GpcMask;
  for (int gpc = 0; gpc < kGpcs; ++gpc) {
    s.tpcInfo[gpc].gpcId = gpc;
    s.tpcInfo[gpc].tpcMask = TpcMaskOf(gpc);
    // One ZCULL unit per TPC (model's choice: nouveau and tinygrad never read zcullInfo).
    s.zcullInfo[gpc].gpcId = gpc;
    s.zcullInfo[gpc].zcullMask = TpcMaskOf(gpc);
  }
  std::memcpy(s.SKUInfo.chipSKU, kChipSku, sizeof(kChipSku) - 1);
  // Video memory as GSP-RM partitions it: one region below RM's reserved top, usable, compressible and ISO-capable
  // (what nouveau's r535_gsp_rpc_get_gsp_static_info keeps), then RM's own, reserved and protected.
  const uint64_t usable_end = config.fb_size - config.rm_reserved_size;
  s.fbRegionInfoParams.numFBRegions = 2;
  auto& usable = s.fbRegionInfoParams.fbRegion[0];
  usable.base = 0;
  usable.limit = usable_end - 1;
  usable.supportCompressed = 1;
  usable.supportISO = 1;
  auto& reserved = s.fbRegionInfoParams.fbRegion[1];
  reserved.base = usable_end;
  reserved.limit = config.fb_size - 1;
  reserved.reserved = config.rm_reserved_size;
  reserved.bProtected = 1;
  s.SM_info.maxWarpsPerSM = kMaxWarpsPerSm;
  s.SM_info.maxThreadsPerWarp = kThreadsPerWarp;
  s.SM_info.rtCoreCount = kRtCoresPerSm;
  s.fb_length = config.fb_size;
  s.fbio_mask = (1u << kFbps) - 1;
  s.fbp_mask = (1u << kFbps) - 1;
  s.fb_bus_width = kFbBusWidth;
  s.fb_ram_type = kRamTypeGddr6x;
  s.l2_cache_size = kL2CacheSize;
  std::memcpy(s.gpuNameString, kGpuName, sizeof(kGpuName));
  std::memcpy(s.gpuShortNameString, kGpuShortName, sizeof(kGpuShortName));
  for (size_t i = 0; i < sizeof(kGpuName); ++i) s.gpuNameString_Unicode[i] = static_cast<uint8_t>(kGpuName[i]);
  // RM's BAR1 and BAR2 page directories live in its reserved FB; the model places them at its first two pages
  // (model's choice: nouveau only hands them back to RM, r535_bar_bar2_init / r535_bar_bar1_init).
  s.bar1PdeBase = usable_end;
  s.bar2PdeBase = usable_end + kLibosPage;
  s.bVbiosValid = 1;  // the virtual AD102 serves a VBIOS (firmware/nv/virtual_vbios)
  s.hInternalClient = GspRmModel::kInternalClient;
  s.hInternalDevice = GspRmModel::kInternalDevice;
  s.hInternalSubdevice = GspRmModel::kInternalSubdevice;
  return s;
}

}  // namespace

GspRmModel::GspRmModel(DeviceMemory& memory, PrivBus& priv_bus, GspRmConfig config)
    : memory_(memory), priv_bus_(priv_bus), config_(config), queue_(memory), static_info_(BuildStaticInfo(config)) {
  // GSP-RM's own client, device and subdevice exist from its start (nouveau sends internal controls to them).
  const uint8_t none[108] = {};
  const uint8_t device[56] = {};
  const uint8_t subdevice[4] = {};
  objects_.Alloc(kInternalClient, 0, kInternalClient, rm_class::NV01_ROOT, std::span(none));
  objects_.Alloc(kInternalClient, kInternalClient, kInternalDevice, rm_class::NV01_DEVICE_0, std::span(device));
  objects_.Alloc(kInternalClient, kInternalDevice, kInternalSubdevice, rm_class::NV20_SUBDEVICE_0,
                 std::span(subdevice));
}

std::vector<absl::Status> GspRmModel::errors() const {
  std::vector<absl::Status> all = errors_;
  all.insert(all.end(), queue_.errors().begin(), queue_.errors().end());
  return all;
}

void GspRmModel::Fail(std::string what) {
  errors_.push_back(absl::FailedPreconditionError(absl::StrCat("virtual GSP-RM: ", what)));
  state_ = State::kFailed;
}

// --- boot ---

void GspRmModel::Boot(uint64_t libos_args_address) {
  if (state_ != State::kHalted) {
    return Fail(absl::StrFormat("started again (LibOS arguments %#x) while running", libos_args_address));
  }
  GSP_ARGUMENTS_CACHED rm_args;
  if (!ReadLibosArguments(libos_args_address, &rm_args)) return;
  if (rm_args.srInitArguments.bInPMTransition != 0) {
    return Fail("GSP_ARGUMENTS_CACHED.srInitArguments.bInPMTransition is set: resume from suspend is not modelled");
  }
  queue_args_ = rm_args.messageQueueInitArguments;
  if (!queue_.Start(queue_args_)) {
    state_ = State::kFailed;
    return;
  }
  state_ = State::kInitializing;
  ProcessCommands();
}

bool GspRmModel::ReadLibosArguments(uint64_t address, GSP_ARGUMENTS_CACHED* rm_args) {
  // LibOS takes one page of LibosMemoryRegionInitArgument, up to the first with id8 0
  // (LIBOS_MEMORY_REGION_INIT_ARGUMENTS_MAX bytes; nouveau and tinygrad zero the rest of the page).
  std::vector<uint8_t> page(regs::gsp::LIBOS_MEMORY_REGION_INIT_ARGUMENTS_MAX);
  if (address == 0 || address % kLibosPage != 0) {
    Fail(absl::StrFormat("LibOS arguments address %#x (MAILBOX0/1) is not a page-aligned bus address", address));
    return false;
  }
  if (!memory_.ReadSystem(address, page)) {
    Fail(absl::StrFormat("LibOS arguments at bus address %#x (MAILBOX0/1): DMA reaches no mapped memory", address));
    return false;
  }
  absl::flat_hash_map<uint64_t, LibosMemoryRegionInitArgument> regions;
  const size_t count = page.size() / sizeof(LibosMemoryRegionInitArgument);
  for (size_t i = 0; i < count; ++i) {
    const auto arg = LoadAt<LibosMemoryRegionInitArgument>(page, i * sizeof(LibosMemoryRegionInitArgument));
    if (arg.id8 == 0) break;
    const std::string name = Id8Name(arg.id8);
    auto bad = [&](absl::string_view why) {
      Fail(absl::StrFormat("LibOS region %u \"%s\" (id8 %#x, pa %#x, size %#x, kind %u, loc %u) at %#x: %s", i, name,
                           arg.id8, arg.pa, arg.size, arg.kind, arg.loc, address, why));
      return false;
    };
    if (arg.kind != regs::gsp::LIBOS_MEMORY_REGION_CONTIGUOUS && arg.kind != regs::gsp::LIBOS_MEMORY_REGION_RADIX3) {
      return bad("kind is neither LIBOS_MEMORY_REGION_CONTIGUOUS nor _RADIX3");
    }
    if (arg.loc != regs::gsp::LIBOS_MEMORY_REGION_LOC_SYSMEM && arg.loc != regs::gsp::LIBOS_MEMORY_REGION_LOC_FB) {
      return bad("loc is neither LIBOS_MEMORY_REGION_LOC_SYSMEM nor _FB");
    }
    // nouveau and tinygrad describe every region as CONTIGUOUS in SYSMEM; the model reads no other.
    if (arg.kind != regs::gsp::LIBOS_MEMORY_REGION_CONTIGUOUS || arg.loc != regs::gsp::LIBOS_MEMORY_REGION_LOC_SYSMEM) {
      return bad("only CONTIGUOUS regions in SYSMEM are modelled");
    }
    if (arg.size == 0 || arg.pa % kLibosPage != 0 || arg.size % kLibosPage != 0 || arg.pa + arg.size < arg.pa) {
      return bad("not a whole number of 4 KiB pages at a page-aligned address");
    }
    uint8_t probe;
    if (!memory_.ReadSystem(arg.pa, std::span(&probe, 1)) ||
        !memory_.ReadSystem(arg.pa + arg.size - 1, std::span(&probe, 1))) {
      return bad("DMA reaches no mapped memory at its start or end");
    }
    if (!regions.emplace(arg.id8, arg).second) return bad("named twice");
  }
  for (std::string_view name : kRequiredRegions) {
    if (!regions.contains(Id8(name))) {
      Fail(absl::StrFormat("LibOS arguments at %#x have no \"%s\" region (%u regions given)", address, name,
                           regions.size()));
      return false;
    }
  }
  const LibosMemoryRegionInitArgument& rmargs = regions[kRmArgsId8];
  if (rmargs.size < sizeof(GSP_ARGUMENTS_CACHED)) {
    Fail(absl::StrFormat("LibOS region \"RMARGS\" is %#x bytes, less than GSP_ARGUMENTS_CACHED (%u)", rmargs.size,
                         sizeof(GSP_ARGUMENTS_CACHED)));
    return false;
  }
  if (!memory_.ReadSystem(rmargs.pa, std::span(reinterpret_cast<uint8_t*>(rm_args), sizeof(*rm_args)))) {
    Fail(absl::StrFormat("GSP_ARGUMENTS_CACHED at %#x: DMA reaches no mapped memory", rmargs.pa));
    return false;
  }
  return true;
}

void GspRmModel::ProcessCommands() {
  while (state_ == State::kInitializing || state_ == State::kRunning || state_ == State::kUnloaded) {
    std::optional<GspCommand> command = queue_.ReadCommand();
    if (!command) {
      if (queue_.stopped()) state_ = State::kFailed;  // the queue recorded why
      return;
    }
    if (state_ == State::kInitializing) {
      Initialize(*command);
    } else {
      Execute(*command);
    }
  }
}

void GspRmModel::Initialize(const GspCommand& command) {
  // GSP-RM's init takes the system information, then the registry, before anything else (nouveau r535_gsp_oneinit
  // queues them in this order; tinygrad NV_GSP.init_sw too). Neither driver waits for a reply, and none is sent.
  if (!have_system_info_) {
    if (command.function != rpc::NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO) {
      return Fail(absl::StrFormat("first RPC at init is %s (command element %u), expected GSP_SET_SYSTEM_INFO",
                                  RpcLabel(command.function), command.first_element));
    }
    if (CheckSystemInfo(command.payload)) have_system_info_ = true;
    return;
  }
  if (command.function != rpc::NV_VGPU_MSG_FUNCTION_SET_REGISTRY) {
    return Fail(absl::StrFormat("second RPC at init is %s (command element %u), expected SET_REGISTRY",
                                RpcLabel(command.function), command.first_element));
  }
  if (CheckRegistry(command.payload)) PostSequencer();
}

bool GspRmModel::CheckSystemInfo(std::span<const uint8_t> payload) {
  // nouveau's r535_gsp_rpc_set_system_info sends exactly the GspSystemInfo of gsp_static_config.h.
  if (payload.size() != sizeof(GspSystemInfo)) {
    Fail(absl::StrFormat("GSP_SET_SYSTEM_INFO carries %u bytes, expected sizeof(GspSystemInfo) %u", payload.size(),
                         sizeof(GspSystemInfo)));
    return false;
  }
  const auto info = LoadAt<GspSystemInfo>(payload);
  auto bad = [&](absl::string_view why) {
    Fail(absl::StrCat("GSP_SET_SYSTEM_INFO: ", why));
    return false;
  };
  // GSP-RM maps the GPU's BARs at these bus addresses (nouveau: pci_resource_start of BAR0, BAR1 and resource 3).
  if (info.gpuPhysAddr == 0) return bad("gpuPhysAddr (BAR0) is 0");
  if (info.gpuPhysFbAddr == 0) return bad("gpuPhysFbAddr (BAR1) is 0");
  if (info.gpuPhysInstAddr == 0) return bad("gpuPhysInstAddr (BAR3) is 0");
  // The chip's PCI configuration mirror in BAR0 (NV_PCFG; nv/sim/ad102.h).
  if (info.pciConfigMirrorBase != Ad102::kConfigMirrorBase || info.pciConfigMirrorSize != Ad102::kConfigMirrorSize) {
    return bad(absl::StrFormat("pciConfigMirrorBase/Size %#x/%#x, the AD102's NV_PCFG mirror is %#x/%#x",
                               info.pciConfigMirrorBase, info.pciConfigMirrorSize, Ad102::kConfigMirrorBase,
                               Ad102::kConfigMirrorSize));
  }
  // GSP-RM lays client VA spaces out below the host's user VA limit (nouveau: TASK_SIZE).
  if (info.maxUserVa == 0) return bad("maxUserVa is 0");
  // nvDomainBusDeviceFunc is bus << 8 | device << 3 | function (nouveau pci_dev_id, tinygrad bdf_as_int).
  if (info.nvDomainBusDeviceFunc > 0xffff) {
    return bad(absl::StrFormat("nvDomainBusDeviceFunc %#x is not bus << 8 | devfn", info.nvDomainBusDeviceFunc));
  }
  return true;
}

bool GspRmModel::CheckRegistry(std::span<const uint8_t> payload) {
  auto bad = [&](absl::string_view why) {
    Fail(absl::StrCat("SET_REGISTRY: malformed PACKED_REGISTRY_TABLE: ", why));
    return false;
  };
  if (payload.size() < sizeof(gsp::PACKED_REGISTRY_TABLE)) {
    return bad(
        absl::StrFormat("%u bytes, less than its header (%u)", payload.size(), sizeof(gsp::PACKED_REGISTRY_TABLE)));
  }
  const auto table = LoadAt<gsp::PACKED_REGISTRY_TABLE>(payload);
  // size is the whole payload (nouveau build_registry, tinygrad rpc_set_registry_table).
  if (table.size != payload.size()) {
    return bad(absl::StrFormat("size %u, but the RPC carries %u bytes", table.size, payload.size()));
  }
  const uint64_t entries_end =
      sizeof(gsp::PACKED_REGISTRY_TABLE) + uint64_t{table.numEntries} * sizeof(gsp::PACKED_REGISTRY_ENTRY);
  if (entries_end > table.size) {
    return bad(absl::StrFormat("numEntries %u needs %u bytes of entries, the table has %u", table.numEntries,
                               entries_end, table.size));
  }
  // A NUL-terminated string at [offset, size): the bytes before its NUL, or nullopt. (The lambda takes the size, not
  // the table: a struct with a flexible array member cannot be captured.)
  const uint64_t table_size = table.size;
  auto string_at = [&payload, entries_end, table_size](uint64_t offset) -> std::optional<std::string_view> {
    if (offset < entries_end || offset >= table_size) return std::nullopt;
    const auto* start = reinterpret_cast<const char*>(payload.data() + offset);
    const void* nul = std::memchr(start, 0, table_size - offset);
    if (nul == nullptr) return std::nullopt;
    return std::string_view(start, static_cast<const char*>(nul) - start);
  };
  for (uint32_t i = 0; i < table.numEntries; ++i) {
    const auto entry = LoadAt<gsp::PACKED_REGISTRY_ENTRY>(
        payload, sizeof(gsp::PACKED_REGISTRY_TABLE) + size_t{i} * sizeof(gsp::PACKED_REGISTRY_ENTRY));
    const std::optional<std::string_view> name = string_at(entry.nameOffset);
    if (!name || name->empty()) {
      return bad(
          absl::StrFormat("entry %u: nameOffset %u is not a non-empty NUL-terminated name after the %u "
                          "entries and inside the %u-byte table",
                          i, entry.nameOffset, table.numEntries, table.size));
    }
    switch (entry.type) {
      case kRegistryDword:
        // nouveau and tinygrad: the value in data, length sizeof(u32).
        if (entry.length != sizeof(uint32_t)) {
          return bad(absl::StrFormat("entry %u \"%s\": DWORD with length %u, expected 4", i, *name, entry.length));
        }
        break;
      case kRegistryBinary:
      case kRegistryString: {
        // data is the value's offset in the table, length its bytes (a string's NUL included).
        if (entry.length == 0 || entry.data < entries_end || uint64_t{entry.data} + entry.length > table.size) {
          return bad(absl::StrFormat("entry %u \"%s\": value at %u, %u bytes, is not inside the table's data", i, *name,
                                     entry.data, entry.length));
        }
        if (entry.type == kRegistryString && payload[entry.data + entry.length - 1] != 0) {
          return bad(absl::StrFormat("entry %u \"%s\": string value is not NUL-terminated", i, *name));
        }
        break;
      }
      default:
        return bad(absl::StrFormat("entry %u \"%s\": type %u is not DWORD (1), BINARY (2) or STRING (3)", i, *name,
                                   entry.type));
    }
  }
  return true;
}

// --- the CPU sequencer ---

void GspRmModel::PostSequencer() {
  // The registers start where the model can tell whether the driver's steps took effect.
  priv_bus_.Write32(kTokenRegister, 0);
  priv_bus_.Write32(kModifyRegister, kSequencerModifyInitial);
  using namespace regs::gsp;  // NOLINT(build/namespaces): the opcodes as rmgspseq.h spells them
  const uint32_t commands[] = {
      GSP_SEQ_BUF_OPCODE_REG_WRITE,
      kTokenRegister,
      kSequencerToken,
      GSP_SEQ_BUF_OPCODE_REG_POLL,
      kTokenRegister,
      0xffffffff,
      kSequencerToken,
      kSequencerPollTimeoutUs,
      0,
      GSP_SEQ_BUF_OPCODE_REG_MODIFY,
      kModifyRegister,
      kSequencerModifyMask,
      kSequencerModifyValue,
      GSP_SEQ_BUF_OPCODE_REG_WRITE,
      kDoorbellRegister,
      kDoorbellValue,
  };
  gsp::rpc_run_cpu_sequencer_v17_00 header{};
  header.bufferSizeDWord = std::size(commands);  // the buffer is exactly the commands (model's choice)
  header.cmdIndex = std::size(commands);
  std::vector<uint8_t> payload(sizeof(header) + sizeof(commands));
  std::memcpy(payload.data(), &header, sizeof(header));
  std::memcpy(payload.data() + sizeof(header), commands, sizeof(commands));
  state_ = State::kAwaitingSequencer;
  Event(rpc::NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER, payload);
}

void GspRmModel::CheckSequencer() {
  // Every doorbell while the sequencer is outstanding is a moment to look: the driver may ring for an RPC before it
  // reads the event. Nothing landed yet: not run yet, keep waiting. Everything landed: done. Some but not all: the
  // driver skipped a step, and GSP-RM never finishes its init.
  const uint32_t token = priv_bus_.Read32(kTokenRegister);
  const uint32_t modified = priv_bus_.Read32(kModifyRegister);
  const uint32_t want = (kSequencerModifyInitial & ~kSequencerModifyMask) | kSequencerModifyValue;
  const bool wrote = token == kSequencerToken;
  const bool modify_done = modified == want;
  if (token == 0 && modified == kSequencerModifyInitial) return;
  if (!wrote) {
    return Fail(absl::StrFormat(
        "RUN_CPU_SEQUENCER not carried out: step 1 (REG_WRITE %#x = %#x) did not land, the register reads %#x; "
        "no INIT_DONE",
        kTokenRegister, kSequencerToken, token));
  }
  if (!modify_done) {
    return Fail(absl::StrFormat(
        "RUN_CPU_SEQUENCER not carried out: step 3 (REG_MODIFY %#x mask %#x value %#x) left %#x, expected %#x "
        "(from %#x); no INIT_DONE",
        kModifyRegister, kSequencerModifyMask, kSequencerModifyValue, modified, want, kSequencerModifyInitial));
  }
  state_ = State::kRunning;
  Event(rpc::NV_VGPU_MSG_EVENT_GSP_INIT_DONE, {});
  ProcessCommands();
}

void GspRmModel::OnDoorbell() {
  if (lose_next_doorbell_) {
    lose_next_doorbell_ = false;
    return;
  }
  switch (state_) {
    case State::kHalted:  // the core is not running: the write lands, nobody looks
    case State::kFailed:
      return;
    case State::kAwaitingSequencer:
      return CheckSequencer();
    case State::kInitializing:
    case State::kRunning:
    case State::kUnloaded:
      return ProcessCommands();
  }
}

// --- RPCs once running ---

void GspRmModel::Execute(const GspCommand& command) {
  if (auto it = fail_next_.find(command.function); it != fail_next_.end()) {
    const uint32_t injected = it->second;
    fail_next_.erase(it);
    std::vector<uint8_t> payload = command.payload;
    // The RPC's own status field, where it has one (what nouveau's r535_gsp_rpc_rm_*_push read).
    auto set_status = [&](size_t offset) {
      if (payload.size() >= offset + sizeof(uint32_t)) std::memcpy(payload.data() + offset, &injected, 4);
    };
    if (command.function == rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC) {
      set_status(offsetof(gsp::rpc_gsp_rm_alloc_v03_00, status));
    } else if (command.function == rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL) {
      set_status(offsetof(gsp::rpc_gsp_rm_control_v03_00, status));
    } else if (command.function == rpc::NV_VGPU_MSG_FUNCTION_FREE) {
      set_status(offsetof(gsp::rpc_free_v03_00, params.status));
    }
    refusals_.push_back(absl::StrFormat("%s: injected %s", RpcLabel(command.function), StatusLabel(injected)));
    return Reply(command, injected, payload);
  }
  if (state_ == State::kUnloaded) {
    // NV_ERR_INVALID_STATE ("Generic Error: Invalid state"): GSP-RM has unloaded the driver's state.
    Refused(command, {status::NV_ERR_INVALID_STATE,
                      absl::StrFormat("%s after UNLOADING_GUEST_DRIVER", RpcLabel(command.function))});
    return;
  }
  switch (command.function) {
    case rpc::NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO:
      // Answered in place of the request (nouveau r535_gsp_rpc_get_gsp_static_info reads the reply as one).
      return Reply(command, status::NV_OK, BytesOf(static_info_));
    case rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC:
      return AllocRpc(command);
    case rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL:
      return ControlRpc(command);
    case rpc::NV_VGPU_MSG_FUNCTION_FREE:
      return FreeRpc(command);
    case rpc::NV_VGPU_MSG_FUNCTION_UNLOADING_GUEST_DRIVER:
      if (command.payload.size() != kUnloadingGuestDriverSize) {
        return Refused(command, {status::NV_ERR_INVALID_PARAM_STRUCT,
                                 absl::StrFormat("UNLOADING_GUEST_DRIVER carries %u bytes, expected "
                                                 "rpc_unloading_guest_driver_v1F_07's %u",
                                                 command.payload.size(), kUnloadingGuestDriverSize)});
      }
      // Acknowledged; the suspend path's sequencer (bInPMTransition) is not modelled.
      Reply(command, status::NV_OK, command.payload);
      if (state_ == State::kRunning) state_ = State::kUnloaded;
      return;
    default:
      // NV_ERR_NOT_SUPPORTED: "Call not supported".
      return Refused(command,
                     {status::NV_ERR_NOT_SUPPORTED,
                      absl::StrFormat("%s is not an RPC the virtual GSP-RM implements", RpcLabel(command.function))});
  }
}

void GspRmModel::AllocRpc(const GspCommand& command) {
  using gsp::rpc_gsp_rm_alloc_v03_00;
  if (command.payload.size() < sizeof(rpc_gsp_rm_alloc_v03_00)) {
    return Refused(command, {status::NV_ERR_INVALID_PARAM_STRUCT,
                             absl::StrFormat("GSP_RM_ALLOC carries %u bytes, less than rpc_gsp_rm_alloc_v03_00 (%u)",
                                             command.payload.size(), sizeof(rpc_gsp_rm_alloc_v03_00))});
  }
  auto rpc = LoadAt<rpc_gsp_rm_alloc_v03_00>(command.payload);
  const std::span<const uint8_t> params = std::span(command.payload).subspan(sizeof(rpc));
  RmResult result;
  if (rpc.paramsSize != params.size()) {
    // NV_ERR_INVALID_ARGUMENT: the RPC's length and its paramsSize disagree.
    result = {status::NV_ERR_INVALID_ARGUMENT,
              absl::StrFormat("GSP_RM_ALLOC of class %#x: paramsSize %u but %u parameter bytes follow", rpc.hClass,
                              rpc.paramsSize, params.size())};
  } else {
    result = objects_.Alloc(rpc.hClient, rpc.hParent, rpc.hObject, rpc.hClass, params);
  }
  if (!result.ok()) refusals_.push_back(result.message);
  // The reply is the RPC with its status, the parameters after it (nouveau reads rpc->status and rpc->params).
  rpc.status = result.status;
  std::vector<uint8_t> reply = command.payload;
  std::memcpy(reply.data(), &rpc, sizeof(rpc));
  Reply(command, result.status, reply);
}

void GspRmModel::ControlRpc(const GspCommand& command) {
  using gsp::rpc_gsp_rm_control_v03_00;
  if (command.payload.size() < sizeof(rpc_gsp_rm_control_v03_00)) {
    return Refused(command,
                   {status::NV_ERR_INVALID_PARAM_STRUCT,
                    absl::StrFormat("GSP_RM_CONTROL carries %u bytes, less than rpc_gsp_rm_control_v03_00 (%u)",
                                    command.payload.size(), sizeof(rpc_gsp_rm_control_v03_00))});
  }
  std::vector<uint8_t> reply = command.payload;
  auto rpc = LoadAt<rpc_gsp_rm_control_v03_00>(reply);
  const std::span<uint8_t> params = std::span(reply).subspan(sizeof(rpc));
  RmResult result;
  if (rpc.paramsSize != params.size()) {
    result = {status::NV_ERR_INVALID_ARGUMENT,
              absl::StrFormat("GSP_RM_CONTROL %#x: paramsSize %u but %u parameter bytes follow", rpc.cmd,
                              rpc.paramsSize, params.size())};
  } else {
    result = Control(rpc.hClient, rpc.hObject, rpc.cmd, params);
  }
  if (!result.ok()) refusals_.push_back(result.message);
  rpc.status = result.status;
  std::memcpy(reply.data(), &rpc, sizeof(rpc));
  Reply(command, result.status, reply);
}

RmResult GspRmModel::Control(uint32_t hClient, uint32_t hObject, uint32_t cmd, std::span<uint8_t> params) {
  const RmObjectDatabase::Object* object = objects_.Find(hClient, hObject);
  if (object == nullptr) {
    if (objects_.Find(hClient, hClient) == nullptr) {
      return {status::NV_ERR_INVALID_CLIENT, absl::StrFormat("GSP_RM_CONTROL %#x: no client %#x", cmd, hClient)};
    }
    return {status::NV_ERR_INVALID_OBJECT_HANDLE,
            absl::StrFormat("GSP_RM_CONTROL %#x: %#x is not an object of client %#x", cmd, hObject, hClient)};
  }
  // A control belongs to a class's interface (the command's top 16 bits: 0x2080 subdevice, 0xc36f the
  // Volta-and-later GPFIFO channels that AMPERE_CHANNEL_GPFIFO_A inherits).
  auto on = [&](uint32_t want, size_t size, const char* name) -> RmResult {
    if (object->class_id != want) {
      return {status::NV_ERR_NOT_SUPPORTED,
              absl::StrFormat("GSP_RM_CONTROL %s (%#x) on object %#x of class %#x: not that class's control", name, cmd,
                              hObject, object->class_id)};
    }
    if (params.size() != size) {
      // NV_ERR_INVALID_PARAM_STRUCT: "Invalid structure parameter".
      return {status::NV_ERR_INVALID_PARAM_STRUCT,
              absl::StrFormat("GSP_RM_CONTROL %s (%#x): paramsSize %u, expected %u", name, cmd, params.size(), size)};
    }
    return {};
  };
  switch (cmd) {
    case kCtrlGpuGetGidInfo: {
      RmResult r = on(rm_class::NV20_SUBDEVICE_0, sizeof(gsp::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS),
                      "NV2080_CTRL_CMD_GPU_GET_GID_INFO");
      if (!r.ok()) return r;
      auto p = LoadAt<gsp::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS>(params);
      std::memset(p.data, 0, sizeof(p.data));
      const uint32_t format = p.flags & kGidFormatMask;
      if (format == kGidFormatBinary) {
        std::memcpy(p.data, kGpuUuid, sizeof(kGpuUuid));
        p.length = sizeof(kGpuUuid);
      } else if (format == kGidFormatAscii) {
        std::string text = "GPU-";
        for (size_t i = 0; i < sizeof(kGpuUuid); ++i) {
          if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
          absl::StrAppendFormat(&text, "%02x", kGpuUuid[i]);
        }
        std::memcpy(p.data, text.c_str(), text.size() + 1);
        p.length = static_cast<uint32_t>(text.size() + 1);
      } else {
        return {status::NV_ERR_INVALID_ARGUMENT,
                absl::StrFormat("NV2080_CTRL_CMD_GPU_GET_GID_INFO: flags %#x: FORMAT %u is neither ASCII (0) nor "
                                "BINARY (2)",
                                p.flags, format)};
      }
      std::memcpy(params.data(), &p, sizeof(p));
      return {};
    }
    case kCtrlGpuGetNameString: {
      RmResult r = on(rm_class::NV20_SUBDEVICE_0, kNameStringParamsSize, "NV2080_CTRL_CMD_GPU_GET_NAME_STRING");
      if (!r.ok()) return r;
      const uint32_t flags = LoadAt<uint32_t>(params);
      uint8_t* name = params.data() + sizeof(uint32_t);
      std::memset(name, 0, kNameStringParamsSize - sizeof(uint32_t));
      if (flags == kNameStringAscii) {
        std::memcpy(name, static_info_.gpuNameString, sizeof(static_info_.gpuNameString));
      } else if (flags == kNameStringUnicode) {
        std::memcpy(name, static_info_.gpuNameString_Unicode, sizeof(static_info_.gpuNameString_Unicode));
      } else {
        return {status::NV_ERR_INVALID_ARGUMENT,
                absl::StrFormat("NV2080_CTRL_CMD_GPU_GET_NAME_STRING: gpuNameStringFlags %#x is neither ASCII (0) "
                                "nor UNICODE (1)",
                                flags)};
      }
      return {};
    }
    case kCtrlGpfifoGetWorkSubmitToken: {
      RmResult r = on(regs::cls::AMPERE_CHANNEL_GPFIFO_A, kWorkSubmitTokenParamsSize,
                      "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN");
      if (!r.ok()) return r;
      // GSP-RM fills in the channel id only (tinygrad's rpc_rm_control adds the runlist).
      std::memcpy(params.data(), &object->channel_id, sizeof(uint32_t));
      return {};
    }
    default:
      return {status::NV_ERR_NOT_SUPPORTED,
              absl::StrFormat("GSP_RM_CONTROL %#x on object %#x (class %#x): not a control the virtual GSP-RM "
                              "implements",
                              cmd, hObject, object->class_id)};
  }
}

void GspRmModel::FreeRpc(const GspCommand& command) {
  using gsp::rpc_free_v03_00;
  if (command.payload.size() != sizeof(rpc_free_v03_00)) {
    return Refused(command, {status::NV_ERR_INVALID_PARAM_STRUCT,
                             absl::StrFormat("FREE carries %u bytes, expected rpc_free_v03_00's %u",
                                             command.payload.size(), sizeof(rpc_free_v03_00))});
  }
  auto rpc = LoadAt<rpc_free_v03_00>(command.payload);
  RmResult result;
  if (rpc.params.hRoot == kInternalClient) {
    // GSP-RM's own objects are not the host's to free (NV_ERR_INSUFFICIENT_PERMISSIONS: "The requester does not
    // have sufficient permissions"); nouveau only sends controls to them.
    result = {
        status::NV_ERR_INSUFFICIENT_PERMISSIONS,
        absl::StrFormat("FREE of object %#x of GSP-RM's internal client %#x", rpc.params.hObjectOld, kInternalClient)};
  } else {
    result = objects_.Free(rpc.params.hRoot, rpc.params.hObjectOld);
  }
  if (!result.ok()) refusals_.push_back(result.message);
  rpc.params.status = result.status;
  Reply(command, result.status, BytesOf(rpc));
}

void GspRmModel::Refused(const GspCommand& command, const RmResult& result) {
  refusals_.push_back(result.message);
  Reply(command, result.status, command.payload);
}

// --- the status queue ---

void GspRmModel::Reply(const GspCommand& command, uint32_t nv_status, std::span<const uint8_t> payload) {
  const bool corrupt = std::exchange(corrupt_next_checksum_, false);
  const uint32_t element = corrupt ? StatusWritePtr() : 0;
  absl::Status written = queue_.WriteReply(command, nv_status, payload);
  if (!written.ok()) {
    // GSP-RM would wait for room; the model has no thread to wait on, so it stops (the driver's wait times out).
    return Fail(absl::StrFormat("reply to %s not sent: %s", RpcLabel(command.function), written.message()));
  }
  if (corrupt) CorruptElement(element);
}

void GspRmModel::Event(uint32_t function, std::span<const uint8_t> payload) {
  const bool corrupt = std::exchange(corrupt_next_checksum_, false);
  const uint32_t element = corrupt ? StatusWritePtr() : 0;
  absl::Status written = queue_.WriteEvent(function, payload);
  if (!written.ok()) return Fail(absl::StrFormat("%s not sent: %s", RpcLabel(function), written.message()));
  if (corrupt) CorruptElement(element);
}

bool GspRmModel::SharedBusAddress(uint64_t offset, uint64_t* bus) {
  // Shared-region page p's bus address is page-table entry p, at shared offset p * 8, itself in an earlier page
  // (or page 0, sharedMemPhysAddr).
  const uint64_t page = offset / gsp::kSharedPageSize;
  if (page == 0) {
    *bus = queue_args_.sharedMemPhysAddr + offset;
    return true;
  }
  uint64_t entry_bus;
  uint64_t pte;
  if (!SharedBusAddress(page * sizeof(uint64_t), &entry_bus) ||
      !memory_.ReadSystem(entry_bus, std::span(reinterpret_cast<uint8_t*>(&pte), sizeof(pte)))) {
    return false;
  }
  *bus = pte + offset % gsp::kSharedPageSize;
  return true;
}

uint32_t GspRmModel::StatusWritePtr() {
  uint64_t bus;
  uint32_t write_ptr = 0;
  if (SharedBusAddress(queue_args_.statQueueOffset + offsetof(gsp::msgqTxHeader, writePtr), &bus)) {
    memory_.ReadSystem(bus, std::span(reinterpret_cast<uint8_t*>(&write_ptr), sizeof(write_ptr)));
  }
  return write_ptr;
}

void GspRmModel::CorruptElement(uint32_t element) {
  // The element the message started at: after the status queue's header page (GspMessageQueue::Start puts the
  // entries at GSP_MSG_QUEUE_HEADER_SIZE).
  const uint64_t offset = queue_args_.statQueueOffset + gsp::kQueueHeaderSize +
                          uint64_t{element} * gsp::kQueueElementSize + offsetof(gsp::GSP_MSG_QUEUE_ELEMENT, checkSum);
  uint64_t bus;
  uint32_t checksum;
  if (!SharedBusAddress(offset, &bus) ||
      !memory_.ReadSystem(bus, std::span(reinterpret_cast<uint8_t*>(&checksum), sizeof(checksum)))) {
    return;
  }
  checksum ^= 1;  // any flipped bit: the XOR fold no longer reaches zero
  memory_.WriteSystem(bus, std::span(reinterpret_cast<const uint8_t*>(&checksum), sizeof(checksum)));
}

}  // namespace nv::sim
