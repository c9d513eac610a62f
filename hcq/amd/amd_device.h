// hcq::amd::AmdDevice: HCQ on an am::Device. The compute queue type writes PM4 into the MEC ring am::Gfx set up
// (MEC1 pipe 0 queue 0), the copy queue type SDMA packets into am::Sdma's engine 0 ring, both through the ring's
// one writer (am::Ring: room, wrap-around, write pointer, HDP flush, doorbell). Packets come from am/regs' one
// encoder per packet; kernel launches from am::KernelDispatch. Buffers are VRAM (TLSF) or host memory
// (am::HostBuffer), mapped into the device's page tables at addresses from the process-wide VA allocator (context
// 0, the VMID the kernel queues run in), so a buffer has one address on every device it is mapped to.
//
// This backend includes only am/ headers: which device it is, where its firmware is and how it is reached are
// am::Device's business (am::Device::Open by name). The one exception is serve/debug_endpoint.h, which serves the
// pci::Device underneath to debuggers without knowing what it is.
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
#include "am/host_buffer.h"
#include "am/peer_mapping.h"
#include "am/ring.h"
#include "am/sdma.h"
#include "base/mutex.h"
#include "hcq/device.h"
#include "serve/debug_endpoint.h"

namespace hcq::amd {

class AmdDevice final : public Device {
 public:
  static absl::StatusOr<std::unique_ptr<Device>> Open(absl::string_view name, const DeviceOptions& options);
  ~AmdDevice() override;

  DeviceProperties properties() const override;
  std::unique_ptr<ComputeQueue> NewComputeQueue() override;
  std::unique_ptr<CopyQueue> NewCopyQueue() override;
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(std::span<const uint8_t> code_object,
                                                       absl::string_view kernel) override;
  std::string DescribeQueues() override;
  std::vector<std::string> TakeFaults() override;
  bool FaultsMayBePending() override;
  absl::StatusOr<std::vector<std::string>> ResetBusyQueues() override;
  void FlushHostWrites() override;
  // am::CompletionInterrupts: the MEC pipe's end-of-pipe interrupt and the SDMA trap, through the IH's MSI.
  absl::StatusOr<int> CompletionEventFd() override;
  absl::Status HoldCompletionInterrupts() override;
  void ReleaseCompletionInterrupts() override;
  absl::StatusOr<std::shared_ptr<Allocation>> AllocMemory(uint64_t size, const BufferSpec& spec) override;
  absl::Status FreeMemory(Allocation& allocation) override;
  absl::Status MapPeer(Allocation& allocation) override;

  am::Device& am() { return *am_; }
  am::Ring& compute_ring() { return am_->gfx().ring(); }
  am::Ring& copy_ring() { return am_->sdma().ring(); }
  uint64_t copy_packet_bytes() const;
  // The debug endpoint's socket, or "" when this process serves none (DeviceOptions::debug_endpoint).
  std::string debug_endpoint_path() const { return debug_endpoint_ ? debug_endpoint_->path() : std::string(); }

 private:
  AmdDevice(std::string name, const DeviceOptions& options, std::unique_ptr<am::Device> am)
      : Device(std::move(name), options), am_(std::move(am)) {}
  absl::Status Init();
  absl::Status StartDebugEndpoint();
  // The debug endpoint's HOLDER_STATUS (`baregpu smi` attached), schema baregpu.holder_status/1: {"pid", "device",
  // "firmware": {"smu", "sos"} (numbers, null when not answering), "metrics": {"table": hex of SmuMetrics_t,
  // "size"} or {"error"}, "vram": {"total", "cpu_visible", "regions": {"boot"|"page_tables"|"general": {"size",
  // "free", "largest_free", "allocations"}}, "mappings"}, "waits": {"interrupt" (whether waits can sleep on it),
  // "sleeping", "sleeps", "interrupt_wakes", "timer_wakes", "blind_waits"} (Device::wait_stats)}. Runs on the
  // endpoint's thread.
  absl::StatusOr<std::string> HolderStatus();

  std::unique_ptr<am::Device> am_;
  // Serves am_'s pci::Device to debuggers; stopped first when the device closes (it reads what closing tears down).
  std::unique_ptr<serve::DebugEndpoint> debug_endpoint_;
  // Host allocations by VA; VRAM allocations keep their offset in the Allocation. Threads allocate and free at
  // once (hcq/device.h); the memory manager locks itself, this map has its own lock.
  base::Mutex host_mu_;
  absl::flat_hash_map<uint64_t, std::unique_ptr<am::HostBuffer>> host_ ABSL_GUARDED_BY(host_mu_);
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
