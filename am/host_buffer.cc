#include "am/host_buffer.h"

#include "am/device.h"
#include "base/status_macros.h"

namespace am {

absl::StatusOr<std::unique_ptr<HostBuffer>> HostBuffer::Create(Device& device, uint64_t size, bool snooped) {
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::DmaBuffer> buffer, device.pci().AllocDma(size));
  BAREGPU_ASSIGN_OR_RETURN(uint64_t va, device.memory().MapSystem(*buffer, {.system = true, .snooped = snooped}));
  return std::unique_ptr<HostBuffer>(new HostBuffer(device, std::move(buffer), va));
}

HostBuffer::~HostBuffer() {
  // The GPU loses the pages before they go back to the host; a device that cannot flush its TLB any more is
  // closing anyway.
  if (device_.memory().Unmap(va_).ok()) (void)device_.memory().Flush();
}

}  // namespace am
