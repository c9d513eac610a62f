// pci::Device: everything the driver above needs from a PCI function, and nothing that says what backs it.
//
// Backends: VfioDevice (vfio-pci with the IOMMU), SysfsDevice (root, IOMMU off) and virtual devices
// (pci/sim/, am/sim/). Open one by name with pci::Open (pci/open.h).
#ifndef BAREGPU_PCI_DEVICE_H_
#define BAREGPU_PCI_DEVICE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "pci/dma_buffer.h"
#include "pci/dma_mapping.h"
#include "pci/mmio.h"
#include "pci/register_sequence.h"

namespace pci {

inline constexpr int kBarCount = 6;
inline constexpr uint32_t kConfigSpaceSize = 4096;  // PCIe extended configuration space

// How DMA memory is allocated.
struct DmaOptions {
  // The pages can be mapped by another process too (HostMemoryOptions::shareable; DmaBuffer::shareable_fd()).
  bool shareable = false;
};

struct BarInfo {
  int index = 0;
  uint64_t size = 0;  // 0: the BAR is not implemented
  bool is_io = false;
  bool is_64bit = false;
  bool prefetchable = false;
  bool present() const { return size != 0; }
};

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // The name the device was opened by: "0000:03:00.0", "sim:navi31", "sim:navi31:1".
  const std::string& name() const { return name_; }
  // "vfio", "sysfs" or "virtual"; for messages and tools only, never for driver decisions.
  virtual absl::string_view backend() const = 0;
  // Firmware roots this device's kind supplies, searched before the system's (/lib/firmware): set by whoever
  // opened it from the kind's registry entry (a virtual GPU's virtual firmware); empty for real devices.
  const std::vector<std::string>& firmware_roots() const { return firmware_roots_; }
  void set_firmware_roots(std::vector<std::string> roots) { firmware_roots_ = std::move(roots); }

  // Configuration space. Offsets beyond the space or a failing backend give an error naming the offset.
  virtual absl::Status ReadConfig(uint32_t offset, std::span<uint8_t> data) = 0;
  virtual absl::Status WriteConfig(uint32_t offset, std::span<const uint8_t> data) = 0;
  absl::StatusOr<uint8_t> ReadConfig8(uint32_t offset);
  absl::StatusOr<uint16_t> ReadConfig16(uint32_t offset);
  absl::StatusOr<uint32_t> ReadConfig32(uint32_t offset);
  absl::Status WriteConfig8(uint32_t offset, uint8_t value);
  absl::Status WriteConfig16(uint32_t offset, uint16_t value);
  absl::Status WriteConfig32(uint32_t offset, uint32_t value);
  // Offset of a standard capability (PCI_CAP_ID_*), or nullopt when the device lacks it.
  absl::StatusOr<std::optional<uint8_t>> FindCapability(uint8_t capability_id);

  virtual absl::StatusOr<BarInfo> GetBarInfo(int bar) = 0;
  // The BAR as a register window (32/64-bit accesses). Valid while the device lives.
  virtual absl::StatusOr<Mmio> MapMmio(int bar) = 0;
  // The BAR as plain memory (VRAM). Valid while the device lives. Fails for BARs that are not memory-like.
  virtual absl::StatusOr<std::span<uint8_t>> MapMemory(int bar) = 0;

  // DMA: memory the device can read and write, at device addresses at or below dma_mask().
  uint64_t dma_mask() const { return dma_mask_; }
  // Sets the addressing capability of the device in bits (12..64). New allocations honour it.
  absl::Status SetDmaMaskBits(unsigned bits);
  absl::StatusOr<std::unique_ptr<DmaBuffer>> AllocDma(size_t size) { return AllocDma(size, DmaOptions{}); }
  virtual absl::StatusOr<std::unique_ptr<DmaBuffer>> AllocDma(size_t size, const DmaOptions& options) = 0;
  // Peer-to-peer: makes `memory` (page-aligned; typically another device's BAR from MapMemory) reachable by this
  // device's DMA. Backends that cannot say so in an error naming themselves.
  virtual absl::StatusOr<std::unique_ptr<DmaMapping>> MapPeerMemory(std::span<uint8_t> memory);

  // PCI_COMMAND_MASTER: without it the device may not start DMA or MSI writes.
  absl::Status SetBusMaster(bool enable);
  // What the device itself has reported in words since the last call (a virtual GPU's models: "sq: illegal
  // instruction at ..."), for logs such as `baregpu serve`'s; real devices have nothing to say here.
  virtual std::vector<std::string> TakeDiagnostics() { return {}; }

  // Whether the process that drives this device serves a debug endpoint (serve/debug_endpoint.h) when neither
  // BAREGPU_DEBUG_ENDPOINT nor the program says: virtual devices do, so their state can always be inspected from
  // another process; real ones do not (the endpoint lets any process of the same user reach the GPU).
  virtual bool debug_endpoint_default() const { return false; }

  // A memory BAR (VRAM) as a file another process can map, for a debugger's live view of it: bytes
  // [offset, offset + size) of `fd` are the BAR (a virtual device's VRAM state file, the VFIO device's region, the
  // sysfs resource file). The descriptor stays the device's (valid while it lives). An error when the BAR cannot be
  // mapped whole (VFIO allows mmap of only parts of it).
  struct SharedMemory {
    int fd = -1;
    uint64_t offset = 0;
    uint64_t size = 0;
  };
  virtual absl::StatusOr<SharedMemory> ShareMemory(int bar);

  // Reads the host memory the device reaches at device address `address` (what its page tables point at for host
  // buffers), as a debugger: no DMA happens and nothing is recorded. NotFound when the range is not inside one
  // piece of this process's DMA memory (a buffer; on sysfs, one hugepage of it: pci/dma_registry.h).
  virtual absl::Status ReadDmaMemory(uint64_t address, std::span<uint8_t> out);

  // Runs a register sequence (pci/register_sequence.h) on register BAR `bar`: the reads' values go to `out` (sized
  // by CheckRegisterSequence), every selection is put back at the end. The base runs it on MapMmio(bar) under
  // register_sequence_mutex(); a debug endpoint's client forwards it to the holder, which runs it the same way.
  virtual absl::Status RunRegisterSequence(int bar, std::span<const RegisterStep> steps, std::span<uint32_t> out);
  // Held around every access sequence whose steps must not interleave with another's: the driver's bank selections
  // (am::Gfx's GRBM_GFX_CNTL), a debugger's sequences. One per device, as amdgpu has one grbm_idx_mutex per GPU.
  base::Mutex& register_sequence_mutex() const { return register_sequence_mu_; }
  // The selection registers of register BAR `bar` (byte offsets) as the driver declares them: the only registers a
  // debug endpoint lets a client's sequence write. Empty until the driver says.
  void set_selection_registers(int bar, std::vector<uint32_t> offsets);
  bool IsSelectionRegister(int bar, uint32_t offset) const;

  // Function-level reset (or the backend's closest equivalent).
  virtual absl::Status ResetFunction() = 0;

  // The expansion ROM's contents (the PCI ROM BAR, PCI_ROM_ADDRESS: an option ROM, a GPU's VBIOS image). NotFound
  // for a function without one; Unimplemented for a backend that cannot read it.
  virtual absl::StatusOr<std::string> ReadExpansionRom() {
    return absl::UnimplementedError(
        absl::StrCat(name(), ": the ", backend(), " backend cannot read the expansion ROM"));
  }

  // Enables `count` interrupt vectors (MSI-X, else MSI) and returns one eventfd per vector; each interrupt adds
  // to its eventfd's counter. The eventfds stay owned by the device.
  virtual absl::StatusOr<std::vector<int>> EnableInterrupts(int count) = 0;
  virtual absl::Status DisableInterrupts() = 0;

 protected:
  explicit Device(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
  std::vector<std::string> firmware_roots_;
  mutable base::Mutex register_sequence_mu_;
  mutable base::Mutex selection_mu_;
  std::vector<std::pair<int, uint32_t>> selection_registers_ ABSL_GUARDED_BY(selection_mu_);
  uint64_t dma_mask_ = 0xffffffff;  // PCI's default: 32-bit DMA until the driver says more
};

}  // namespace pci

#endif  // BAREGPU_PCI_DEVICE_H_
