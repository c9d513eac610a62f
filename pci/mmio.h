// A window of memory-mapped registers (a BAR mapped for register access).
//
// Two kinds behind one non-virtual interface: a direct window is a mapping of the BAR (real devices), a trapped
// window hands every access to a handler (virtual devices, or BARs that VFIO cannot mmap). Accesses outside the
// window or not naturally aligned read as all ones and write nothing, as an unclaimed PCI read does.
//
// Ordering: a volatile access is ordered only against other volatile accesses, so every direct write is preceded
// by a compiler barrier: plain stores the program made before it (a ring's packets, an MQD) are not moved past it.
// The CPU keeps uncached stores in order; what a write must follow in write-combined memory needs a fence first
// (am::Ring does that before its doorbell).
#ifndef BAREGPU_PCI_MMIO_H_
#define BAREGPU_PCI_MMIO_H_

#include <atomic>
#include <cstdint>

namespace pci {

class MmioHandler {
 public:
  virtual ~MmioHandler() = default;
  virtual uint32_t Read32(uint64_t offset) = 0;
  virtual void Write32(uint64_t offset, uint32_t value) = 0;
  // 64-bit accesses default to two 32-bit accesses, low dword first.
  virtual uint64_t Read64(uint64_t offset);
  virtual void Write64(uint64_t offset, uint64_t value);
};

class Mmio {
 public:
  static constexpr uint32_t kUnclaimedRead = 0xffffffff;

  Mmio() = default;
  static Mmio Direct(volatile void* base, uint64_t size) {
    return Mmio(static_cast<volatile uint8_t*>(base), nullptr, size);
  }
  static Mmio Trapped(MmioHandler* handler, uint64_t size) { return Mmio(nullptr, handler, size); }

  uint64_t size() const { return size_; }
  bool valid() const { return size_ != 0; }

  uint32_t Read32(uint64_t offset) const {
    if (!InWindow(offset, 4)) return kUnclaimedRead;
    if (base_ != nullptr) return *reinterpret_cast<volatile uint32_t*>(base_ + offset);
    return handler_->Read32(offset);
  }
  void Write32(uint64_t offset, uint32_t value) const {
    if (!InWindow(offset, 4)) return;
    if (base_ != nullptr) {
      std::atomic_signal_fence(std::memory_order_seq_cst);  // compiler barrier (see above)
      *reinterpret_cast<volatile uint32_t*>(base_ + offset) = value;
    } else {
      handler_->Write32(offset, value);
    }
  }
  uint64_t Read64(uint64_t offset) const {
    if (!InWindow(offset, 8)) return ~uint64_t{0};
    if (base_ != nullptr) return *reinterpret_cast<volatile uint64_t*>(base_ + offset);
    return handler_->Read64(offset);
  }
  void Write64(uint64_t offset, uint64_t value) const {
    if (!InWindow(offset, 8)) return;
    if (base_ != nullptr) {
      std::atomic_signal_fence(std::memory_order_seq_cst);  // compiler barrier (see above)
      *reinterpret_cast<volatile uint64_t*>(base_ + offset) = value;
    } else {
      handler_->Write64(offset, value);
    }
  }

 private:
  Mmio(volatile uint8_t* base, MmioHandler* handler, uint64_t size) : base_(base), handler_(handler), size_(size) {}
  bool InWindow(uint64_t offset, uint64_t width) const {
    return (offset & (width - 1)) == 0 && offset < size_ && size_ - offset >= width;
  }

  volatile uint8_t* base_ = nullptr;
  MmioHandler* handler_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace pci

#endif  // BAREGPU_PCI_MMIO_H_
