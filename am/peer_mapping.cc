#include "am/peer_mapping.h"

#include "absl/strings/str_format.h"
#include "am/device.h"
#include "base/status_macros.h"

namespace am {

absl::StatusOr<std::unique_ptr<PeerMapping>> PeerMapping::Create(Device& importer, Device& owner, uint64_t vram_offset,
                                                                 uint64_t size, uint64_t va) {
  constexpr uint64_t kPage = PageTable::kPageSize;
  if (size == 0 || vram_offset % kPage != 0 || size % kPage != 0 || va % kPage != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("peer mapping of %s VRAM %#x (+%#x) at VA %#x into %s: offset, size and VA must be "
                        "multiples of %d and the size non-zero",
                        owner.pci().name(), vram_offset, size, va, importer.pci().name(), kPage));
  }
  auto view = owner.memory().CpuView(vram_offset, size);
  if (!view.ok()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "peer mapping into %s: %s; peers reach VRAM only through the owner's BAR0 (enable resizable BAR / "
        "Above 4G decoding so BAR0 shows all of VRAM)",
        importer.pci().name(), view.status().message()));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::DmaMapping> dma, importer.pci().MapPeerMemory(*view));
  // Device memory of another GPU: not coherent with the CPU's caches, so not snooped.
  BAREGPU_RETURN_IF_ERROR(importer.memory().MapAt(va, size, dma->device_address(), PageFlags{.system = true}));
  std::unique_ptr<PeerMapping> mapping(new PeerMapping(importer, std::move(dma), va));
  BAREGPU_RETURN_IF_ERROR(importer.memory().Flush());
  return mapping;
}

absl::StatusOr<std::unique_ptr<PeerMapping>> PeerMapping::CreateForHostMemory(Device& importer,
                                                                              std::span<uint8_t> memory, uint64_t va,
                                                                              bool uncached) {
  constexpr uint64_t kPage = PageTable::kPageSize;
  if (memory.empty() || reinterpret_cast<uintptr_t>(memory.data()) % kPage != 0 || memory.size() % kPage != 0 ||
      va % kPage != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mapping host memory at %p (+%#x) at VA %#x into %s: address, size and VA must be "
                        "multiples of %d and the size non-zero",
                        static_cast<const void*>(memory.data()), memory.size(), va, importer.pci().name(), kPage));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::DmaMapping> dma, importer.pci().MapPeerMemory(memory));
  BAREGPU_RETURN_IF_ERROR(importer.memory().MapAt(va, memory.size(), dma->device_address(),
                                                  PageFlags{.system = true, .snooped = !uncached}));
  std::unique_ptr<PeerMapping> mapping(new PeerMapping(importer, std::move(dma), va));
  BAREGPU_RETURN_IF_ERROR(importer.memory().Flush());
  return mapping;
}

PeerMapping::~PeerMapping() {
  // A failure here means the importer's page tables no longer hold the range; the DMA mapping goes either way.
  (void)importer_.memory().Unmap(va_);
  (void)importer_.memory().Flush();
}

}  // namespace am
