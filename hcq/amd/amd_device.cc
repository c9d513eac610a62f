#include "hcq/amd/amd_device.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "am/code_object.h"
#include "am/completion_interrupts.h"
#include "am/ih.h"
#include "am/kernel_dispatch.h"
#include "am/page_table.h"
#include "am/psp.h"
#include "am/regs/hw_id_constants.h"
#include "am/regs/smu_constants.h"
#include "am/smu.h"
#include "am/soc.h"
#include "base/bits.h"
#include "base/json_string.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "hcq/amd/amd_program.h"
#include "hcq/amd/queues.h"
#include "hcq/program.h"

namespace hcq::amd {
namespace {

const bool kRegistered = RegisterBackend("amd", &AmdDevice::Open);

// SIMDs per CU on RDNA: a CU is two SIMD32s (AMD's RDNA whitepaper; tinygrad's AM interface states simd_per_cu 2 for
// gfx11, ../shared/vendor/tinygrad/tinygrad/runtime/ops_amd.py _compute_props, as KFD's topology does for Navi31).
constexpr uint32_t kRdnaSimdsPerCu = 2;

// amdgpu's IP_VERSION(major, minor, revision) packing (amdgpu.h), 0 for an absent block.
uint32_t PackedVersion(const am::Discovery& discovery, uint16_t hw_id) {
  const std::optional<am::IpVersion> v = discovery.VersionOf(hw_id);
  return v ? (uint32_t{v->major} << 16) | (uint32_t{v->minor} << 8) | v->revision : 0;
}

}  // namespace

AmdProgram::~AmdProgram() {
  if (image_.valid()) (void)device().allocator().free(image_);
  if (scratch_.valid()) (void)device().allocator().free(scratch_);
}

absl::StatusOr<std::unique_ptr<Device>> AmdDevice::Open(absl::string_view name, const DeviceOptions& options) {
  (void)kRegistered;
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<am::Device> am, am::Device::Open(name));
  BAREGPU_RETURN_IF_ERROR(am->Boot());
  std::unique_ptr<AmdDevice> device(new AmdDevice(std::string(name), options, std::move(am)));
  BAREGPU_RETURN_IF_ERROR(device->Init());
  BAREGPU_RETURN_IF_ERROR(device->StartDebugEndpoint());
  return device;
}

absl::Status AmdDevice::Init() {
  BAREGPU_ASSIGN_OR_RETURN(wait_timeout_, DefaultWaitTimeout());
  // The MSI now, not in the first wait that sleeps (which then allocates nothing). A device without one (the sysfs
  // backend) keeps the answer: its waits sleep in steps.
  if (absl::StatusOr<int> fd = am_->completion_interrupts().EventFd(); !fd.ok()) {
    BAREGPU_LOG(kInfo, "%s: %s", name(), fd.status().message());
  }
  return InitCommon();
}

absl::Status AmdDevice::StartDebugEndpoint() {
  pci::Device& pci = am_->pci();
  BAREGPU_ASSIGN_OR_RETURN(const bool wanted, serve::DebugEndpointWanted(pci, options().debug_endpoint));
  if (!wanted) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<serve::DebugEndpoint>> endpoint =
      serve::DebugEndpoint::Start(pci, [this] { return HolderStatus(); });
  if (endpoint.ok()) {
    debug_endpoint_ = std::move(*endpoint);
    return absl::OkStatus();
  }
  // Asked for, it must work; the device's default only when it can (two processes holding devices of one name in
  // different BAREGPU_SIM_DIRs share one runtime directory, and the first one serves).
  const char* variable = std::getenv(serve::kDebugEndpointEnv);
  const bool asked = options().debug_endpoint.has_value() || (variable != nullptr && *variable != '\0');
  return asked ? endpoint.status() : absl::OkStatus();
}

absl::StatusOr<std::string> AmdDevice::HolderStatus() {
  auto number_or_null = [](const absl::StatusOr<uint32_t>& v) { return v.ok() ? absl::StrCat(*v) : "null"; };
  const absl::StatusOr<uint32_t> smu = am_->smu().Send(am::regs::smu::PPSMC_MSG_GetSmuVersion);
  const absl::StatusOr<uint32_t> sos =
      am_->psp().sos_alive() ? absl::StatusOr<uint32_t>(am_->psp().sos_version()) : absl::NotFoundError("no sOS");
  std::string metrics;
  if (absl::StatusOr<am::regs::smu::SmuMetrics> m = am_->smu().Metrics(); m.ok()) {
    metrics =
        absl::StrFormat(R"({"size": %d, "table": "%s"})", sizeof(*m),
                        absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(&*m), sizeof(*m))));
  } else {
    metrics = absl::StrFormat(R"({"error": %s})", base::JsonString(m.status().message()));
  }
  const am::MemoryManager& memory = am_->memory();
  const am::MemoryManager::Usage usage = memory.usage();
  auto region = [](const am::MemoryManager::RegionUsage& r) {
    return absl::StrFormat(R"({"size": %d, "free": %d, "largest_free": %d, "allocations": %d})", r.size, r.free,
                           r.largest_free, r.allocations);
  };
  const WaitStats waits = wait_stats();
  return absl::StrFormat(
      R"({"schema": "baregpu.holder_status/1", "pid": %d, "device": %s, "firmware": {"smu": %s, "sos": %s}, )"
      R"("metrics": %s, "vram": {"total": %d, "cpu_visible": %d, "regions": {"boot": %s, "page_tables": %s, )"
      R"("general": %s}, "mappings": %d}, "waits": {"interrupt": %s, "sleeping": %d, "sleeps": %d, )"
      R"("interrupt_wakes": %d, "timer_wakes": %d, "blind_waits": %d}})",
      ::getpid(), base::JsonString(am_->pci().name()), number_or_null(smu), number_or_null(sos), metrics,
      memory.layout().vram_size, memory.cpu_visible_size(), region(usage.boot), region(usage.page_tables),
      region(usage.general), usage.mappings, am_->completion_interrupts().EventFd().ok() ? "true" : "false",
      sleeping_waits(), waits.sleeps, waits.interrupt_wakes, waits.timer_wakes, waits.blind_waits);
}

AmdDevice::~AmdDevice() {
  // The debug endpoint reads the device through its registers and VRAM: it stops before anything below goes.
  debug_endpoint_.reset();
  // Let submitted work finish before its memory goes (bounded: a hung device still closes).
  (void)timeline_signal().wait(timeline_value() - 1, absl::Seconds(1));
  // Then stop the engines, as amdgpu's fini does (dequeue the HQD, halt SDMA), before freeing what they may still
  // read: a queue waiting on a signal that never comes would otherwise poll freed memory.
  (void)am_->StopQueues();
  FiniCommon();
  // Other devices lose their view of this device's memory before it is freed (their accesses fault, not corrupt).
  for (auto& [importer, mappings] : importers_) importer->DropPeersOf(*this);
  for (auto& [va, peer] : peers_) {
    if (std::shared_ptr<Allocation> allocation = peer.allocation.lock())
      std::erase(allocation->mapped, static_cast<Device*>(this));
    peer.owner->ForgetImporter(this);
  }
  peers_.clear();
  base::MutexLock lock(&host_mu_);
  host_.clear();
}

void AmdDevice::ForgetImporter(AmdDevice* importer) {
  auto it = importers_.find(importer);
  if (it != importers_.end() && --it->second == 0) importers_.erase(it);
}

void AmdDevice::DropPeersOf(const AmdDevice& owner) {
  absl::erase_if(peers_, [&](const auto& entry) {
    const Peer& peer = entry.second;
    if (peer.owner != &owner) return false;
    if (std::shared_ptr<Allocation> allocation = peer.allocation.lock())
      std::erase(allocation->mapped, static_cast<Device*>(this));
    return true;
  });
}

uint64_t AmdDevice::copy_packet_bytes() const {
  const uint64_t limit = options().max_copy_packet_bytes;
  return limit == 0 || limit > am::regs::sdma::kMaxCopyLinearBytes ? am::regs::sdma::kMaxCopyLinearBytes : limit;
}

DeviceProperties AmdDevice::properties() const {
  namespace hw = am::regs::discovery;
  const am::DeviceDiscovery& found = am_->discovery();
  const am::Discovery& ips = found.discovery;
  const am::GcInfo gc = ips.gc.value_or(am::GcInfo{});
  const am::IpVersion gfx = ips.VersionOf(hw::GC_HWID).value_or(am::IpVersion{});
  DeviceProperties p{};
  // The compiler's target from the GC IP version, as tinygrad names it from KFD's gfx_target_version ("gfx%d%x%x":
  // 11.0.0 is gfx1100, 9.0.10 gfx90a; ops_amd.py) and KFD computes that version (major * 10000 + minor * 100 +
  // stepping, kfd_topology.c).
  p.arch = absl::StrFormat("gfx%d%x%x", gfx.major, gfx.minor, gfx.revision);
  p.gfx_target_version = uint32_t{gfx.major} * 10000 + uint32_t{gfx.minor} * 100 + gfx.revision;
  p.shader_engines = gc.num_se;
  p.shader_arrays_per_engine = gc.num_sa_per_se;
  p.compute_units = gc.total_cus();
  p.simds_per_cu = kRdnaSimdsPerCu;
  p.wave_size = gc.wave_size;
  p.max_waves_per_simd = gc.max_waves_per_simd;
  p.lds_bytes = static_cast<uint32_t>(base::KiB(gc.lds_size_kib));
  p.vram_bytes = found.vram_size;
  p.visible_vram_bytes = am_->memory().cpu_visible_size();
  p.gc_version = PackedVersion(ips, hw::GC_HWID);
  p.sdma_version = PackedVersion(ips, hw::SDMA0_HWID);
  p.mmhub_version = PackedVersion(ips, hw::MMHUB_HWID);
  p.mp0_version = PackedVersion(ips, hw::MP0_HWID);
  p.mp1_version = PackedVersion(ips, hw::MP1_HWID);
  p.nbio_version = PackedVersion(ips, hw::NBIF_HWID);  // NBIO is discovered as NBIF (amdgpu_discovery.c)
  p.ih_version = PackedVersion(ips, hw::OSSSYS_HWID);  // the IH is part of OSSSYS (osssys_v6_0 / ih_v6_0)
  p.hdp_version = PackedVersion(ips, hw::HDP_HWID);
  p.timestamp_hz = Signal::kTicksPerMicrosecond * 1'000'000;  // RELEASE_MEM/SDMA timestamps: RLC_REFCLK
  return p;
}

std::unique_ptr<ComputeQueue> AmdDevice::NewComputeQueue() { return std::make_unique<Pm4Queue>(*this); }
std::unique_ptr<CopyQueue> AmdDevice::NewCopyQueue() { return std::make_unique<SdmaQueue>(*this); }

void AmdDevice::FlushHostWrites() { am_->soc().FlushHdp(); }

std::string AmdDevice::DescribeQueues() {
  std::string described = absl::StrCat(compute_ring().Describe(), "; ", copy_ring().Describe());
  // What the device itself reported meanwhile (a virtual GPU's model errors: an illegal instruction that stopped a
  // wave, a packet it refused) is usually why the queue stands still.
  const std::vector<std::string> diagnostics = am_->pci().TakeDiagnostics();
  if (!diagnostics.empty()) absl::StrAppend(&described, "; the device reported: ", absl::StrJoin(diagnostics, "; "));
  return described;
}

absl::StatusOr<std::shared_ptr<Allocation>> AmdDevice::AllocMemory(uint64_t size, const BufferSpec& spec) {
  // Checked before rounding: a size within a page of 2^64 rounded up wraps to 0, and the allocator then reported
  // "allocation of 0 bytes" for a request of 2^64 - 1. No buffer can exceed the 48-bit GPU address space.
  if (size > am::PageTable::kAddressSpace) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: cannot allocate %d bytes (%#x) of %s: more than the GPU's whole %#x-byte (48-bit) address space", name(),
        size, size, spec.kind == MemoryKind::kVram ? "VRAM" : "host memory", am::PageTable::kAddressSpace));
  }
  auto allocation = std::make_shared<Allocation>();
  am::MemoryManager& memory = am_->memory();
  // Whole pages: the page tables map nothing smaller; 2 MiB alignment lets big buffers use huge pages.
  const uint64_t rounded = base::AlignUp(size, am::PageTable::kPageSize);
  if (spec.kind == MemoryKind::kVram) {
    absl::StatusOr<uint64_t> offset =
        memory.AllocVram(rounded, rounded >= (uint64_t{2} << 20) ? uint64_t{2} << 20 : 4096);
    if (!offset.ok()) {
      return absl::Status(offset.status().code(), absl::StrFormat("%s: cannot allocate %d bytes of VRAM: %s", name(),
                                                                  size, offset.status().message()));
    }
    // CPU-visible VRAM sits at its CPU address, as host memory does: one pointer for both (tinygrad's HCQ, KFD).
    absl::StatusOr<uint64_t> va = spec.cpu_access && memory.CpuView(*offset, rounded).ok()
                                      ? memory.MapVramAtCpuAddress(*offset, rounded, {.executable = spec.executable})
                                      : memory.MapVram(*offset, rounded, {.executable = spec.executable});
    if (!va.ok()) {
      (void)memory.FreeVram(*offset);
      return va.status();
    }
    allocation->va = *va;
    allocation->backend_handle = *offset;
    if (spec.cpu_access) {
      absl::StatusOr<std::span<uint8_t>> view = memory.CpuView(*offset, rounded);
      if (view.ok()) allocation->cpu = view->data();
    }
  } else {
    if (spec.executable) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: executable host memory is not supported; code goes to VRAM", name()));
    }
    absl::StatusOr<std::unique_ptr<am::HostBuffer>> created =
        am::HostBuffer::Create(*am_, rounded, /*snooped=*/!spec.uncached, /*at_cpu_address=*/true);
    if (!created.ok()) {
      return absl::Status(created.status().code(), absl::StrFormat("%s: cannot allocate %d bytes of host memory: %s",
                                                                   name(), size, created.status().message()));
    }
    std::unique_ptr<am::HostBuffer> buffer = std::move(*created);
    allocation->va = buffer->va();
    allocation->cpu = buffer->cpu();
    base::MutexLock lock(&host_mu_);
    host_[allocation->va] = std::move(buffer);
  }
  allocation->size = size;
  BAREGPU_RETURN_IF_ERROR(memory.Flush());
  return allocation;
}

std::vector<std::string> AmdDevice::TakeFaults() {
  std::vector<std::string> faults;
  // The interrupt ring holds the faults (tinygrad's AM driver drains it while it waits, amdgpu in its IRQ handler).
  // Its end-of-pipe and trap entries only woke sleeping waits (hcq/interrupt_sleep.h), which read their signals.
  for (const am::IhEvent& event : am_->ih().DrainFaults()) faults.push_back(event.description);
  if (am_->ih().overflowed_since_last_drain()) {
    faults.push_back("the interrupt ring overflowed: entries were lost (ih_v6_0 RB_OVERFLOW)");
  }
  return faults;
}

absl::StatusOr<int> AmdDevice::CompletionEventFd() { return am_->completion_interrupts().EventFd(); }
absl::Status AmdDevice::HoldCompletionInterrupts() { return am_->completion_interrupts().Hold(); }
void AmdDevice::ReleaseCompletionInterrupts() { am_->completion_interrupts().Release(); }

bool AmdDevice::FaultsMayBePending() {
  // What TakeFaults looks at: entries in the interrupt ring, or an overflow it reports.
  return am_->ih().Pending() || am_->ih().overflowed_since_last_drain();
}

absl::StatusOr<std::vector<std::string>> AmdDevice::ResetBusyQueues() {
  BAREGPU_ASSIGN_OR_RETURN(std::vector<am::QueueReset> resets, am_->RecoverQueues());
  std::vector<std::string> lines;
  for (const am::QueueReset& reset : resets) lines.push_back(reset.ToString());
  return lines;
}

absl::Status AmdDevice::FreeMemory(Allocation& allocation) {
  // Peers lose their mappings before the memory goes.
  for (Device* device : allocation.mapped) {
    if (auto* peer = dynamic_cast<AmdDevice*>(device); peer != nullptr && peer != this) {
      if (peer->peers_.erase(allocation.va) != 0) ForgetImporter(peer);
    }
  }
  if (allocation.spec.kind == MemoryKind::kHost) {
    std::unique_ptr<am::HostBuffer> buffer;
    {
      base::MutexLock lock(&host_mu_);
      auto it = host_.find(allocation.va);
      if (it == host_.end()) {
        return absl::NotFoundError(absl::StrFormat("%s: no host buffer at %#x", name(), allocation.va));
      }
      buffer = std::move(it->second);
      host_.erase(it);
    }
    return absl::OkStatus();  // ~HostBuffer unmaps it and flushes the TLB (outside the lock)
  }
  am::MemoryManager& memory = am_->memory();
  BAREGPU_RETURN_IF_ERROR(memory.Unmap(allocation.va));
  BAREGPU_RETURN_IF_ERROR(memory.Flush());
  return memory.FreeVram(allocation.backend_handle);
}

absl::Status AmdDevice::MapPeer(Allocation& allocation) {
  auto* owner = dynamic_cast<AmdDevice*>(allocation.owner);
  if (owner == nullptr || owner == this) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: peer mapping of a buffer that is not another AMD device's", name()));
  }
  std::unique_ptr<am::PeerMapping> mapping;
  if (allocation.spec.kind == MemoryKind::kHost) {
    // The owner's DMA pages, made reachable by this device's DMA as well (the IOMMU under VFIO).
    base::MutexLock lock(&owner->host_mu_);
    auto buffer = owner->host_.find(allocation.va);
    if (buffer == owner->host_.end()) {
      return absl::FailedPreconditionError(
          absl::StrFormat("%s: %s's host buffer at %#x is no longer allocated", name(), owner->name(), allocation.va));
    }
    BAREGPU_ASSIGN_OR_RETURN(mapping, am::PeerMapping::CreateForHostMemory(*am_, buffer->second->memory(),
                                                                           allocation.va, allocation.spec.uncached));
  } else {
    const uint64_t rounded = base::AlignUp(allocation.size, am::PageTable::kPageSize);
    BAREGPU_ASSIGN_OR_RETURN(
        mapping, am::PeerMapping::Create(*am_, *owner->am_, allocation.backend_handle, rounded, allocation.va));
  }
  peers_[allocation.va] = {std::move(mapping), owner, allocation.weak_from_this()};
  ++owner->importers_[this];
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Program>> AmdDevice::LoadProgram(std::span<const uint8_t> code_object,
                                                                absl::string_view kernel) {
  BAREGPU_ASSIGN_OR_RETURN(am::CodeObject object, am::CodeObject::Parse(code_object));
  if (object.target() != "gfx1100") {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: the code object is for %s, this device runs gfx1100 code; compile with -mcpu=gfx1100",
                        name(), object.target().empty() ? "an unknown target" : std::string(object.target())));
  }
  BAREGPU_ASSIGN_OR_RETURN(const am::CodeObject::Kernel* k, object.FindKernel(kernel));
  if (object.image_alignment() > am::PageTable::kPageSize) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: the code object wants %d-byte alignment; at most %d", name(),
                                                      object.image_alignment(), am::PageTable::kPageSize));
  }
  // Checked before anything is allocated; the image's address is set once it is loaded.
  absl::StatusOr<am::KernelDispatch> dispatch = am::KernelDispatch::Create(*am_, *k, 0);
  if (!dispatch.ok()) {
    return absl::Status(dispatch.status().code(), absl::StrCat(name(), ": ", dispatch.status().message()));
  }
  // Executable pages, with the instruction prefetcher's guard mapped after the image (docs/fidelity.md, B10).
  BAREGPU_ASSIGN_OR_RETURN(
      Buffer image, allocator().alloc(am::CodeBytesWithPrefetchGuard(object.image().size()), {.executable = true}));
  // A relocatable object's absolute relocations (if any) are resolved against the address it lands at.
  if (absl::Status copied = allocator().copyin(image, object.ImageAt(image.va())); !copied.ok()) {
    (void)allocator().free(image);
    return copied;
  }
  if (absl::Status synced = synchronize(); !synced.ok()) {
    (void)allocator().free(image);
    return synced;
  }
  dispatch->set_image(image.va());
  Buffer scratch;
  if (dispatch->scratch_bytes() != 0) {
    absl::StatusOr<Buffer> allocated = allocator().alloc(dispatch->scratch_bytes(), {.cpu_access = false});
    if (!allocated.ok()) {
      (void)allocator().free(image);
      return allocated.status();
    }
    scratch = *allocated;
    dispatch->set_scratch(scratch.va());
  }
  ProgramMetadata metadata{.present = k->has_metadata, .required_local = k->required_workgroup_size};
  for (const am::CodeObject::Kernel::Argument& a : k->arguments) {
    // AMDGPUUsage: every hidden argument's .value_kind starts with "hidden_"; the rest are the kernel's own.
    if (!absl::StartsWith(a.value_kind, "hidden_")) metadata.arguments.push_back({a.offset, a.size});
  }
  return std::unique_ptr<Program>(new AmdProgram(*this, std::string(kernel), k->kernarg_size(), *std::move(dispatch),
                                                 std::move(image), std::move(scratch), std::move(metadata)));
}

}  // namespace hcq::amd
