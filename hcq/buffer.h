// hcq::Buffer: memory the device reaches at a virtual address, with the CPU's view when the CPU can map it, the
// buffer it is a view into, and the devices it is mapped to (a buffer mapped into a peer device's page tables is
// reachable there at the same address).
#ifndef BAREGPU_HCQ_BUFFER_H_
#define BAREGPU_HCQ_BUFFER_H_

#include <cstdint>
#include <memory>
#include <vector>

namespace hcq {

class Device;

enum class MemoryKind { kVram, kHost };

// Options of an allocation.
struct BufferSpec {
  MemoryKind kind = MemoryKind::kVram;
  bool cpu_access = true;   // the CPU maps it (VRAM through BAR0; host memory always)
  bool uncached = false;    // GPU accesses bypass its caches (host memory: not snooped)
  bool executable = false;  // code: the GPU fetches instructions from it (VRAM mapped with the PTE's EXECUTABLE bit)
};

// What an allocation is; shared by every view into it.
struct Allocation : std::enable_shared_from_this<Allocation> {
  Device* owner = nullptr;
  BufferSpec spec;
  uint64_t va = 0, size = 0;
  uint8_t* cpu = nullptr;
  std::vector<Device*> mapped;  // devices whose page tables map it (owner first)
  uint64_t backend_handle = 0;  // the backend's own reference (VRAM offset, DMA buffer index)
};

class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::shared_ptr<Allocation> base) : base_(std::move(base)), size_(base_->size) {}

  uint64_t va() const { return base_ ? base_->va + offset_ : 0; }
  uint64_t size() const { return size_; }
  // The CPU's view of the buffer, or null when the CPU cannot map it.
  uint8_t* cpu() const { return base_ && base_->cpu ? base_->cpu + offset_ : nullptr; }
  bool valid() const { return base_ != nullptr; }
  uint64_t offset_in_base() const { return offset_; }
  const Allocation* base() const { return base_.get(); }
  const std::vector<Device*>& mapped() const { return base_->mapped; }

  // A view of [offset, offset + size) of this buffer (clamped to it).
  Buffer offset(uint64_t offset, uint64_t size) const {
    Buffer view = *this;
    offset = offset < size_ ? offset : size_;
    view.offset_ += offset;
    view.size_ = size < size_ - offset ? size : size_ - offset;
    return view;
  }

 private:
  friend class Allocator;
  std::shared_ptr<Allocation> base_;
  uint64_t offset_ = 0, size_ = 0;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_BUFFER_H_
