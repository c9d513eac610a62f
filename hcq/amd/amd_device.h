// hcq::amd::AmdDevice: HCQ on an am::Device. The compute queue type writes PM4 into the MEC ring am::Gfx set up
// (MEC1 pipe 0 queue 0), the copy queue type SDMA packets into am::Sdma's engine 0 ring. Both rings are written
// here directly through CPU pointers resolved once at open: wrap-around at the ring's end (both engines fetch
// across it), back-pressure on the engine's read pointer (a bounded wait for room), the write pointer, an HDP
// flush so the GPU sees what the CPU wrote through BAR0, then the doorbell. Buffers are VRAM (TLSF) or host DMA
// memory, mapped into the device's page tables at addresses from the process-wide VA allocator (context 0, the
// VMID the kernel queues run in), so a buffer has one address on every device it is mapped to.
#ifndef BAREGPU_HCQ_AMD_AMD_DEVICE_H_
#define BAREGPU_HCQ_AMD_AMD_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "am/device.h"
#include "am/gfx.h"
#include "am/peer_mapping.h"
#include "am/sdma.h"
#include "hcq/device.h"
#include "pci/dma_buffer.h"
#include "pci/mmio.h"

namespace hcq::amd {

// The compute ring (PM4, dword units; the MEC reports a wrapped rptr).
class ComputeRing {
 public:
  absl::Status Init(am::Gfx& gfx, pci::Mmio registers, uint64_t hdp_flush_offset);
  // Copies `dwords` into the ring at the write pointer and rings the doorbell.
  absl::Status Write(std::span<const uint32_t> dwords, const class AmdDevice& device);
  uint32_t rptr() const;
  uint64_t wptr() const { return gfx_->wptr(); }
  std::string Describe() const;

 private:
  am::Gfx* gfx_ = nullptr;
  am::Gfx::RingAccess ring_;
  pci::Mmio registers_;
  uint64_t hdp_flush_offset_ = 0;
};

// The copy ring (SDMA, byte units; the engine writes back a 64-bit rptr that never wraps).
class CopyRing {
 public:
  absl::Status Init(am::Sdma& sdma, pci::Mmio registers, uint64_t hdp_flush_offset);
  absl::Status Write(std::span<const uint32_t> dwords, const class AmdDevice& device);
  uint64_t rptr() const;
  uint64_t wptr() const { return sdma_->wptr(); }
  std::string Describe() const;

 private:
  am::Sdma* sdma_ = nullptr;
  am::Sdma::RingAccess ring_;
  pci::Mmio registers_;
  uint64_t hdp_flush_offset_ = 0;
  uint64_t published_wptr_ = 0;
};

class AmdDevice final : public Device {
 public:
  static absl::StatusOr<std::unique_ptr<Device>> Open(absl::string_view name, const DeviceOptions& options);
  ~AmdDevice() override;

  std::unique_ptr<ComputeQueue> NewComputeQueue() override;
  std::unique_ptr<CopyQueue> NewCopyQueue() override;
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(std::span<const uint8_t> code_object,
                                                       absl::string_view kernel) override;
  std::string DescribeQueues() override;
  void FlushHostWrites() override;
  absl::StatusOr<std::shared_ptr<Allocation>> AllocMemory(uint64_t size, const BufferSpec& spec) override;
  absl::Status FreeMemory(Allocation& allocation) override;
  absl::Status MapPeer(Allocation& allocation) override;

  am::Device& am() { return *am_; }
  ComputeRing& compute_ring() { return compute_ring_; }
  CopyRing& copy_ring() { return copy_ring_; }
  // How long submit waits for room in a ring (the signal wait timeout, read once at open).
  absl::Duration ring_timeout() const { return ring_timeout_; }
  // Absolute dword addresses the compute queue's packets name.
  uint32_t hdp_flush_request() const { return hdp_flush_request_; }
  uint32_t hdp_flush_done() const { return hdp_flush_done_; }
  uint64_t copy_packet_bytes() const;

 private:
  AmdDevice(std::string name, const DeviceOptions& options, std::unique_ptr<am::Device> am)
      : Device(std::move(name), options), am_(std::move(am)) {}
  absl::Status Init();

  std::unique_ptr<am::Device> am_;
  ComputeRing compute_ring_;
  CopyRing copy_ring_;
  absl::Duration ring_timeout_;
  uint32_t hdp_flush_request_ = 0, hdp_flush_done_ = 0;
  // Host allocations by VA (the DMA buffer must outlive its mapping); VRAM allocations keep their offset in the
  // Allocation.
  absl::flat_hash_map<uint64_t, std::unique_ptr<pci::DmaBuffer>> host_;
  // Drops every mapping of `owner`'s memory from this device's page tables (the owner is closing).
  void DropPeersOf(const AmdDevice& owner);
  // One mapping of this device's memory left `importer`'s page tables.
  void ForgetImporter(AmdDevice* importer);

  // Other devices' memory mapped here (by VA), with the allocation that lists this device among its mappings.
  struct Peer {
    std::unique_ptr<am::PeerMapping> mapping;
    AmdDevice* owner;
    std::weak_ptr<Allocation> allocation;  // a buffer dropped without free() leaves its peers' mappings behind
  };
  absl::flat_hash_map<uint64_t, Peer> peers_;
  // Devices that mapped memory of this one, with how many mappings each holds (closing this device revokes them
  // first). Devices are opened, mapped and closed by one thread at a time.
  absl::flat_hash_map<AmdDevice*, int> importers_;
};

}  // namespace hcq::amd

#endif  // BAREGPU_HCQ_AMD_AMD_DEVICE_H_
