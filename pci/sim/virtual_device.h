// The PCI side of every virtual device: configuration space that behaves like a real function's (read-only
// identity, BAR sizing, command register, capability list), BARs backed by register models or memory, DMA that
// reaches only allocated buffers (DmaSpace), and MSI delivered to eventfds.
//
// Device models (pci/sim/edu_device, am/sim/) derive from it and add their registers and engines.
#ifndef BAREGPU_PCI_SIM_VIRTUAL_DEVICE_H_
#define BAREGPU_PCI_SIM_VIRTUAL_DEVICE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "base/fd.h"
#include "base/mutex.h"
#include "pci/device.h"
#include "pci/iova_allocator.h"
#include "pci/sim/dma_space.h"

namespace pci::sim {

struct Identity {
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint32_t class_code = 0;  // 24 bits: base class, subclass, programming interface
  uint8_t revision = 0;
  uint16_t subsystem_vendor_id = 0;
  uint16_t subsystem_id = 0;
};

class VirtualDevice : public Device {
 public:
  ~VirtualDevice() override;

  absl::string_view backend() const override { return "virtual"; }
  absl::Status ReadConfig(uint32_t offset, std::span<uint8_t> data) override;
  absl::Status WriteConfig(uint32_t offset, std::span<const uint8_t> data) override;
  absl::StatusOr<BarInfo> GetBarInfo(int bar) override;
  absl::StatusOr<Mmio> MapMmio(int bar) override;
  absl::StatusOr<std::span<uint8_t>> MapMemory(int bar) override;
  using Device::AllocDma;
  absl::StatusOr<std::unique_ptr<DmaBuffer>> AllocDma(size_t size, const DmaOptions& options) override;
  absl::StatusOr<std::unique_ptr<DmaMapping>> MapPeerMemory(std::span<uint8_t> memory) override;
  absl::Status ResetFunction() override;
  absl::StatusOr<std::string> ReadExpansionRom() override;
  bool debug_endpoint_default() const override { return true; }
  absl::Status ReadDmaMemory(uint64_t address, std::span<uint8_t> out) override;
  absl::StatusOr<std::vector<int>> EnableInterrupts(int count) override;
  absl::Status DisableInterrupts() override;

  // For tests: what bus-master accesses the model attempted and was refused.
  const DmaSpace& dma_space() const { return *dma_; }
  uint64_t interrupts_raised() const { return interrupts_raised_.load(std::memory_order_acquire); }

 protected:
  // Device addresses handed out for DMA memory start here: low addresses stay unused so that a zero or small
  // garbage address written by a buggy driver is never a valid DMA target.
  static constexpr uint64_t kFirstIova = uint64_t{1} << 20;

  VirtualDevice(std::string name, const Identity& identity, int max_interrupt_vectors);

  // BAR set-up, during construction. A register BAR hands accesses to `handler`; a memory BAR is plain memory.
  void AddRegisterBar(int index, uint64_t size, bool is_64bit, MmioHandler* handler, bool prefetchable = false);
  // `bar_size` (a power of two, at least memory.size()) is what the BAR decodes; only `memory` is backed.
  void AddMemoryBar(int index, std::span<uint8_t> memory, uint64_t bar_size, bool is_64bit, bool prefetchable);
  // An expansion ROM BAR (PCI_ROM_ADDRESS) decoding `bar_size` bytes (a power of two, at least 2 KiB: the register's
  // address field starts at bit 11) with `contents` at its start; disabled and at address 0 after reset, as a BIOS
  // leaves it until it maps the ROM. During construction.
  void AddExpansionRom(std::string contents, uint32_t bar_size);
  // Appends a capability to the list in the legacy configuration space; `body` starts after the id/next bytes.
  void AddCapability(uint8_t id, std::span<const uint8_t> body);
  // Where the first capability goes (0x40 unless set; a dword offset in 0x40..0xfc): a function whose
  // device-specific registers sit right after the standard header (NVIDIA's, whose capabilities start at 0x60) sets
  // it before the first AddCapability.
  void SetFirstCapabilityOffset(uint8_t offset);
  // Appends a PCI Express extended capability (from offset 0x100; header layout PCI_EXT_CAP in linux/pci_regs.h);
  // `body` starts after the header. Extended configuration space is read-only in the model: what a capability
  // describes (a BAR's size, say) does not change.
  void AddExtendedCapability(uint16_t id, uint8_t version, std::span<const uint8_t> body);

  // Bus-master accesses of the model; false when the access faulted (see DmaSpace).
  DmaSpace& dma() { return *dma_; }
  // Signals MSI vector `vector`, if the driver enabled it and bus mastering is on (an MSI is a memory write).
  void RaiseInterrupt(int vector);
  // A function-level reset clears the command register and interrupts; the model resets its own state here.
  virtual void OnFunctionReset() {}

  // Keeps what the driver can write in configuration space (command register, BAR addresses, interrupt line,
  // capability registers) in `storage`, memory that outlives this process as the device's other state does: a
  // real function keeps its configuration across driver sessions (sysfs, or vfio-pci without a reset), so bus
  // mastering stays on. Call once, at the end of construction (after the BARs and capabilities): a block saved by an
  // earlier open of the same layout is restored, anything else (zeros, another layout) is overwritten. At least
  // kPersistentConfigBytes.
  static constexpr size_t kPersistentConfigBytes = 2 * kPageSize;
  void PersistConfig(std::span<uint8_t> storage);
  // The command register back to its reset value (0: no memory decode, no bus mastering), as a reset of the chip
  // leaves it; the driver restores it (Linux: amdgpu_device_load_pci_state after amdgpu_device_mode1_reset).
  void ResetCommandRegister();

 private:
  struct Bar {
    uint64_t size = 0;
    bool is_64bit = false;
    bool prefetchable = false;
    MmioHandler* handler = nullptr;
    std::span<uint8_t> memory;
  };
  class Buffer;

  void ResetConfigRegisters() ABSL_EXCLUSIVE_LOCKS_REQUIRED(config_mu_);
  // Copies the writable state into the persistent block, when there is one.
  void SaveConfig() ABSL_EXCLUSIVE_LOCKS_REQUIRED(config_mu_);
  // A fingerprint of the configuration space as constructed (identity, BARs, capabilities), which a saved block
  // must match: a block left by another layout (an older build) is not restored.
  uint64_t LayoutFingerprint() const ABSL_SHARED_LOCKS_REQUIRED(config_mu_);
  uint32_t BarRegisterValue(int index) const ABSL_SHARED_LOCKS_REQUIRED(config_mu_);

  base::Mutex config_mu_;
  std::array<uint8_t, kConfigSpaceSize> config_ ABSL_GUARDED_BY(config_mu_){};
  std::array<uint64_t, kBarCount> bar_address_ ABSL_GUARDED_BY(config_mu_){};
  std::array<Bar, kBarCount> bars_;
  std::string rom_;        // the expansion ROM's contents; empty: none
  uint32_t rom_size_ = 0;  // what its BAR decodes
  std::span<uint8_t> persistent_config_ ABSL_GUARDED_BY(config_mu_);
  uint64_t layout_ ABSL_GUARDED_BY(config_mu_) = 0;
  uint8_t next_capability_ = 0x40;
  uint8_t last_capability_ = 0;
  uint32_t next_extended_capability_ = 0x100;  // after the legacy space (PCI_CFG_SPACE_SIZE, linux/pci_regs.h)
  uint32_t last_extended_capability_ = 0;

  std::shared_ptr<DmaSpace> dma_ = std::make_shared<DmaSpace>();
  std::shared_ptr<IovaAllocator> iova_;

  const int max_interrupt_vectors_;
  base::Mutex irq_mu_;
  std::vector<base::ScopedFd> irq_fds_ ABSL_GUARDED_BY(irq_mu_);
  std::atomic<uint64_t> interrupts_raised_{0};
};

}  // namespace pci::sim

#endif  // BAREGPU_PCI_SIM_VIRTUAL_DEVICE_H_
