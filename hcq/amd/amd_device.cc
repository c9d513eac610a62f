#include "hcq/amd/amd_device.h"

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/code_object.h"
#include "am/page_table.h"
#include "am/regs/gc.h"
#include "am/regs/nbio.h"
#include "am/soc.h"
#include "base/bits.h"
#include "base/status_macros.h"
#include "firmware/store.h"
#include "hcq/amd/amd_program.h"
#include "hcq/amd/queues.h"
#include "hcq/program.h"
#include "pci/open.h"

namespace hcq::amd {
namespace {

// gmc_v11_0_sw_init: the GPU addresses 44 bits of system memory.
constexpr unsigned kDmaMaskBits = 44;
// COMPUTE_TMPRING_SIZE.WAVESIZE counts 256-byte units (gfx11; what the virtual GPU's interpreter reads too); the
// field is 15 bits. Scratch is sized for this many waves in flight (WAVES is 12 bits): Navi31's 96 CUs x 32 wave
// slots.
constexpr uint64_t kScratchGranule = 256;
constexpr uint64_t kMaxWaveSizeField = 0x7fff;
constexpr uint32_t kScratchWaves = 96 * 32;

const bool kRegistered = RegisterBackend("amd", &AmdDevice::Open);

}  // namespace

AmdProgram::~AmdProgram() {
  if (image_.valid()) (void)device().allocator().free(image_);
  if (scratch_.valid()) (void)device().allocator().free(scratch_);
}

absl::StatusOr<std::unique_ptr<Device>> AmdDevice::Open(absl::string_view name, const DeviceOptions& options) {
  (void)kRegistered;
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> pci, pci::Open(name));
  const bool is_virtual = pci->backend() == "virtual";  // which firmware files to offer, nothing else
  BAREGPU_RETURN_IF_ERROR(pci->SetDmaMaskBits(kDmaMaskBits));
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<am::Device> am,
                           am::Device::Open(std::move(pci), {.firmware = firmware::StoreForDevice(is_virtual)}));
  BAREGPU_RETURN_IF_ERROR(am->Boot());
  std::unique_ptr<AmdDevice> device(new AmdDevice(std::string(name), options, std::move(am)));
  BAREGPU_RETURN_IF_ERROR(device->Init());
  return device;
}

absl::Status AmdDevice::Init() {
  BAREGPU_ASSIGN_OR_RETURN(ring_timeout_, DefaultWaitTimeout());
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio registers, am_->pci().MapMmio(5));
  BAREGPU_RETURN_IF_ERROR(compute_ring_.Init(am_->gfx(), registers, am::Soc::kRemapMemFlush));
  BAREGPU_RETURN_IF_ERROR(copy_ring_.Init(am_->sdma(), registers, am::Soc::kRemapMemFlush));
  auto nbio = am_->Regs<am::regs::Ip::kNbio>();
  hdp_flush_request_ =
      static_cast<uint32_t>(nbio.AddressOf<am::regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_REQ>().value_or(0));
  hdp_flush_done_ = static_cast<uint32_t>(nbio.AddressOf<am::regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_DONE>().value_or(0));
  BAREGPU_RETURN_IF_ERROR(nbio.status());
  return InitCommon();
}

AmdDevice::~AmdDevice() {
  // Let submitted work finish before its memory goes (bounded: a hung device still closes).
  (void)timeline_signal().wait(timeline_value() - 1, absl::Seconds(1));
  FiniCommon();
  // Other devices lose their view of this device's memory before it is freed (their accesses fault, not corrupt).
  for (auto& [importer, mappings] : importers_) importer->DropPeersOf(*this);
  for (auto& [va, peer] : peers_) {
    if (std::shared_ptr<Allocation> allocation = peer.allocation.lock())
      std::erase(allocation->mapped, static_cast<Device*>(this));
    peer.owner->ForgetImporter(this);
  }
  peers_.clear();
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
  return limit == 0 || limit > am::Sdma::kMaxCopyBytes ? am::Sdma::kMaxCopyBytes : limit;
}

std::unique_ptr<ComputeQueue> AmdDevice::NewComputeQueue() { return std::make_unique<Pm4Queue>(*this); }
std::unique_ptr<CopyQueue> AmdDevice::NewCopyQueue() { return std::make_unique<SdmaQueue>(*this); }

void AmdDevice::FlushHostWrites() { am_->soc().FlushHdp(); }

std::string AmdDevice::DescribeQueues() { return absl::StrCat(compute_ring_.Describe(), "; ", copy_ring_.Describe()); }

absl::StatusOr<std::shared_ptr<Allocation>> AmdDevice::AllocMemory(uint64_t size, const BufferSpec& spec) {
  auto allocation = std::make_shared<Allocation>();
  am::MemoryManager& memory = am_->memory();
  // Whole pages: the page tables map nothing smaller; 2 MiB alignment lets big buffers use huge pages.
  const uint64_t rounded = (size + 4095) & ~uint64_t{4095};
  if (spec.kind == MemoryKind::kVram) {
    BAREGPU_ASSIGN_OR_RETURN(uint64_t offset,
                             memory.AllocVram(rounded, rounded >= (uint64_t{2} << 20) ? uint64_t{2} << 20 : 4096));
    absl::StatusOr<uint64_t> va = memory.MapVram(offset, rounded);
    if (!va.ok()) {
      (void)memory.FreeVram(offset);
      return va.status();
    }
    allocation->va = *va;
    allocation->backend_handle = offset;
    if (spec.cpu_access) {
      absl::StatusOr<std::span<uint8_t>> view = memory.CpuView(offset, rounded);
      if (view.ok()) allocation->cpu = view->data();
    }
  } else {
    BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::DmaBuffer> buffer, am_->pci().AllocDma(rounded));
    BAREGPU_ASSIGN_OR_RETURN(allocation->va, memory.MapSystem(*buffer, {.system = true, .snooped = !spec.uncached}));
    allocation->cpu = buffer->cpu();
    host_[allocation->va] = std::move(buffer);
  }
  allocation->size = size;
  BAREGPU_RETURN_IF_ERROR(memory.Flush());
  return allocation;
}

absl::Status AmdDevice::FreeMemory(Allocation& allocation) {
  // Peers lose their mappings before the memory goes.
  for (Device* device : allocation.mapped) {
    if (auto* peer = dynamic_cast<AmdDevice*>(device); peer != nullptr && peer != this) {
      if (peer->peers_.erase(allocation.va) != 0) ForgetImporter(peer);
    }
  }
  am::MemoryManager& memory = am_->memory();
  BAREGPU_RETURN_IF_ERROR(memory.Unmap(allocation.va));
  BAREGPU_RETURN_IF_ERROR(memory.Flush());
  if (allocation.spec.kind == MemoryKind::kVram) return memory.FreeVram(allocation.backend_handle);
  host_.erase(allocation.va);
  return absl::OkStatus();
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
    auto buffer = owner->host_.find(allocation.va);
    if (buffer == owner->host_.end()) {
      return absl::FailedPreconditionError(
          absl::StrFormat("%s: %s's host buffer at %#x is no longer allocated", name(), owner->name(), allocation.va));
    }
    BAREGPU_ASSIGN_OR_RETURN(mapping,
                             am::PeerMapping::CreateForHostMemory(*am_, {buffer->second->cpu(), buffer->second->size()},
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
  if (k->lds_size() > am::kMaxLdsBytes) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: kernel %s wants %d bytes of LDS, a gfx11 workgroup has %d",
                                                      name(), kernel, k->lds_size(), am::kMaxLdsBytes));
  }
  if (object.image_alignment() > 4096) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: the code object wants %d-byte alignment; at most 4096", name(), object.image_alignment()));
  }
  // Every wave slot that may run the kernel gets a private segment (tinygrad sizes scratch the same way): WAVESIZE
  // is the bytes of one wave in 256-byte units, WAVES how many waves the buffer holds.
  const uint64_t wave_bytes =
      (uint64_t{k->scratch_size()} * k->wave_size() + kScratchGranule - 1) / kScratchGranule * kScratchGranule;
  if (wave_bytes / kScratchGranule > kMaxWaveSizeField) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: kernel %s needs %d bytes of scratch per work-item, more than COMPUTE_TMPRING_SIZE.WAVESIZE holds", name(),
        kernel, k->scratch_size()));
  }
  BAREGPU_ASSIGN_OR_RETURN(Buffer image, allocator().alloc(object.image().size()));
  if (absl::Status copied = allocator().copyin(image, object.image()); !copied.ok()) {
    (void)allocator().free(image);
    return copied;
  }
  if (absl::Status synced = synchronize(); !synced.ok()) {
    (void)allocator().free(image);
    return synced;
  }
  const am::KernelDescriptor& d = k->descriptor;
  KernelSetup setup{
      .entry = image.va() + k->entry_offset,
      .rsrc1 = d.compute_pgm_rsrc1,
      // The CP takes the LDS size from the dispatch's RSRC2, not from the descriptor.
      .rsrc2 = am::regs::gc::COMPUTE_PGM_RSRC2::FromRaw(d.compute_pgm_rsrc2)
                   .lds_size(am::LdsSizeGranules(k->lds_size()))
                   .raw(),
      .rsrc3 = d.compute_pgm_rsrc3,
      .private_segment_buffer = d.has(am::KernelDescriptor::kEnableSgprPrivateSegmentBuffer),
      .dispatch_ptr = d.has(am::KernelDescriptor::kEnableSgprDispatchPtr),
      .queue_ptr = d.has(am::KernelDescriptor::kEnableSgprQueuePtr),
      .kernarg_segment_ptr = d.has(am::KernelDescriptor::kEnableSgprKernargSegmentPtr),
      .dispatch_id = d.has(am::KernelDescriptor::kEnableSgprDispatchId),
      .flat_scratch_init = d.has(am::KernelDescriptor::kEnableSgprFlatScratchInit),
      .private_segment_size = d.has(am::KernelDescriptor::kEnableSgprPrivateSegmentSize),
      .wave32 = k->wave32(),
      .private_segment_bytes = k->scratch_size(),
      .group_segment_bytes = k->lds_size(),
      .descriptor = image.va() + k->descriptor_offset,
  };
  Buffer scratch;
  if (k->scratch_size() != 0) {
    absl::StatusOr<Buffer> allocated = allocator().alloc(wave_bytes * kScratchWaves, {.cpu_access = false});
    if (!allocated.ok()) {
      (void)allocator().free(image);
      return allocated.status();
    }
    scratch = *allocated;
    setup.tmpring_size = am::regs::gc::COMPUTE_TMPRING_SIZE{}
                             .waves(kScratchWaves)
                             .wavesize(static_cast<uint32_t>(wave_bytes / kScratchGranule))
                             .raw();
    setup.scratch_base = scratch.va();
    setup.rsrc2 = am::regs::gc::COMPUTE_PGM_RSRC2::FromRaw(setup.rsrc2).scratch_en(1).raw();
  }
  return std::unique_ptr<Program>(new AmdProgram(*this, std::string(kernel), k->kernarg_size(), setup,
                                                 am::ImplicitArguments::For(*k), std::move(image), std::move(scratch)));
}

}  // namespace hcq::amd
