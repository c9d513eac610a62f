// What a virtual device can reach by DMA: exactly the DMA buffers the driver allocated from it, nothing else.
//
// This is the IOMMU's guarantee made explicit: every bus-master access of a device model goes through here,
// translates only inside a mapped buffer, and an access that touches an unmapped byte moves no data at all and
// is recorded as a fault.
//
// Host pointers that Translate hands out outlive its lock, so memory unmapped from the space is not given back to
// the host at once: an IOMMU's unmap completes only after the device's accesses in flight, and a driver that frees a
// buffer under a running engine must see a fault, not take the process down. The engine threads that keep such
// pointers register as Accessors and say when they hold none (quiescent-state reclamation); Retire()d memory is
// released once every registered thread has done so since the unmapping, or is asleep.
#ifndef BAREGPU_PCI_SIM_DMA_SPACE_H_
#define BAREGPU_PCI_SIM_DMA_SPACE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "pci/host_memory.h"

namespace pci::sim {

struct DmaFault {
  uint64_t address = 0;
  uint64_t size = 0;
  bool write = false;
  bool bus_master_disabled = false;  // refused because PCI_COMMAND_MASTER was clear, not for want of a mapping
};

class DmaSpace {
 public:
  // A device model's thread that uses host pointers Translate gave, directly or through views kept above this space
  // (am::sim::CachedMemory, checked against generation() before each use). While it is registered and awake, memory
  // retired after its last Quiescent() is kept. One per thread, made and destroyed on it; a null space makes it inert.
  class Accessor {
   public:
    explicit Accessor(DmaSpace* space);
    ~Accessor();
    Accessor(const Accessor&) = delete;
    Accessor& operator=(const Accessor&) = delete;

    // The thread holds no pointer it translated before this call. One plain store while nothing is retired.
    void Quiescent();
    // Around a sleep: the thread holds no pointer from Offline() until Online() returns.
    void Offline();
    void Online();

   private:
    friend class DmaSpace;
    static constexpr uint64_t kOffline = ~uint64_t{0};
    DmaSpace* space_;
    // The generation() the thread read at its last quiescent point, or kOffline. Its own cache line: written at
    // every quiescent point, read only by ReleaseRetired.
    alignas(64) std::atomic<uint64_t> state_{0};
  };

  void Map(uint64_t address, uint8_t* host, uint64_t size);
  void Unmap(uint64_t address);
  // Host memory whose mappings are gone (Unmap first): released now when no Accessor can still hold a pointer into
  // it, else by the first Accessor call after which none can.
  void Retire(HostMemory memory);
  // Retired memory not yet released (for tests).
  size_t retired_count() const;

  // Copy between device addresses and the model. All or nothing: false (and a recorded fault) when any byte of
  // the range is unmapped or bus mastering is off. A range may span adjacent mappings.
  bool Read(uint64_t address, void* destination, uint64_t size);
  bool Write(uint64_t address, const void* source, uint64_t size);
  // A host pointer to [address, address + size) when it lies in one mapping, else nullptr (no fault recorded:
  // callers that get nullptr fall back to Read/Write or report the fault themselves).
  uint8_t* Translate(uint64_t address, uint64_t size);
  // A debugger's read (pci::Device::ReadDmaMemory): what the device would read, all or nothing, but it is no
  // bus-master access of the device, so it needs no bus mastering and a miss records no fault.
  bool Peek(uint64_t address, void* destination, uint64_t size);

  void set_bus_master(bool enabled) {
    bus_master_.store(enabled, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  bool bus_master() const { return bus_master_.load(std::memory_order_acquire); }
  // Changes whenever a host pointer Translate gave may have become invalid (an unmapping, bus mastering switched):
  // what a translation cache above this space checks.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  uint64_t fault_count() const { return fault_count_.load(std::memory_order_acquire); }
  std::optional<DmaFault> last_fault() const;
  void RecordFault(const DmaFault& fault);

 private:
  struct Mapping {
    uint8_t* host;
    uint64_t size;
  };
  // Calls fn(host_pointer, length) for each piece of the range, only after checking that all of it is mapped.
  // `device_access`: a bus-master access of the model (checked against bus mastering; a miss is a fault), else a
  // debugger's peek.
  template <typename Fn>
  bool ForEachPiece(uint64_t address, uint64_t size, bool write, bool device_access, Fn fn);
  // Releases the retired memory no registered Accessor can hold a pointer into.
  void ReleaseRetired();

  struct RetiredMemory {
    uint64_t generation;  // generation() after its unmapping: an Accessor that read at least this holds no pointer
    HostMemory memory;
  };

  mutable base::Mutex mu_;
  std::map<uint64_t, Mapping> mappings_ ABSL_GUARDED_BY(mu_);
  std::optional<DmaFault> last_fault_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> fault_count_{0};
  std::atomic<bool> bus_master_{false};
  std::atomic<uint64_t> generation_{0};
  // No other lock is taken while it is held (engine threads call in holding their own).
  mutable base::Mutex retired_mu_;
  std::vector<Accessor*> accessors_ ABSL_GUARDED_BY(retired_mu_);
  std::vector<RetiredMemory> retired_ ABSL_GUARDED_BY(retired_mu_);
  std::atomic<size_t> retired_count_{0};  // retired_.size(), read without the lock by Accessor calls
};

}  // namespace pci::sim

#endif  // BAREGPU_PCI_SIM_DMA_SPACE_H_
