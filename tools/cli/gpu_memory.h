// What the GPU sees at a GPU address, read by a tool from the device's own registers and VRAM: the GCHUB's
// translation of an address in one VM context (the system aperture for context 0, then the context's page table),
// and the dwords there. `rings` reads ring buffers and indirect buffers with it, `waves` the instructions at a
// wave's PC.
//
// The page-table walk here is the one `pt` prints step by step; it sits behind Translate() alone so that it can be
// pointed at the shared walk the `mem` command's work introduces.
#ifndef BAREGPU_TOOLS_CLI_GPU_MEMORY_H_
#define BAREGPU_TOOLS_CLI_GPU_MEMORY_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "am/register_io.h"
#include "am/regs/ip_bases.h"
#include "pci/device.h"

namespace cli {

class GpuMemoryReader {
 public:
  // `vram`: BAR0 as plain memory (pci::Device::MapMemory(0)).
  GpuMemoryReader(pci::Device& device, am::RegisterIo& io, const am::regs::IpBases& bases, std::span<uint8_t> vram)
      : device_(device), io_(io), bases_(bases), vram_(vram) {}

  // The VRAM offset GCHUB context `vmid` translates `address` to. An error says why there is none: the context
  // is disabled, the address is outside its range, an entry is not valid, or the page is system memory (which a
  // tool cannot read through BAR0).
  absl::StatusOr<uint64_t> Translate(uint32_t vmid, uint64_t address);

  // `count` dwords from `address` (dword aligned), page by page through Translate.
  absl::StatusOr<std::vector<uint32_t>> ReadDwords(uint32_t vmid, uint64_t address, uint64_t count);

 private:
  absl::StatusOr<uint32_t> Gc(const char* name);
  // Context 0's system aperture (gmc_v11_0 / gfxhub_v3_0_init_system_aperture_regs): the FB range maps straight
  // onto VRAM, outside the page table. nullopt when `address` is not in it.
  absl::StatusOr<std::optional<uint64_t>> SystemAperture(uint64_t address);
  absl::StatusOr<uint64_t> Walk(uint32_t vmid, uint64_t address);

  pci::Device& device_;
  am::RegisterIo& io_;
  const am::regs::IpBases& bases_;
  std::span<uint8_t> vram_;
};

}  // namespace cli

#endif  // BAREGPU_TOOLS_CLI_GPU_MEMORY_H_
