#include "am/host_buffer.h"

#include "am/device.h"
#include "base/status_macros.h"

namespace am {

absl::StatusOr<std::unique_ptr<HostBuffer>> HostBuffer::Create(Device& device, uint64_t size, bool snooped,
                                                               bool at_cpu_address) {
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::DmaBuffer> buffer, device.pci().AllocDma(size));
  const am::PageFlags flags{.system = true, .snooped = snooped};
  BAREGPU_ASSIGN_OR_RETURN(uint64_t va, at_cpu_address ? device.memory().MapSystemAtCpuAddress(*buffer, flags)
                                                       : device.memory().MapSystem(*buffer, flags));
  return std::unique_ptr<HostBuffer>(new HostBuffer(device, std::move(buffer), va));
}

HostBuffer::~HostBuffer() {
  // The GPU loses the pages before they go back to the host; a device that cannot flush its TLB any more is
  // closing anyway.
  if (device_.memory().Unmap(va_).ok()) (void)device_.memory().Flush();
}

}  // namespace am
