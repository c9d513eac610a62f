// hcq::Allocator: buffers of one device. The backend provides only allocation and mapping (Device::AllocMemory,
// FreeMemory, MapPeer); copies are built on the device's copy queue: host data streams through a ring of staging
// buffers in host memory (default 32 x 2 MiB) so a transfer of any size allocates nothing, and device-to-device
// copies go straight from one device address to the other, ordered by both devices' timelines.
#ifndef BAREGPU_HCQ_ALLOCATOR_H_
#define BAREGPU_HCQ_ALLOCATOR_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "hcq/buffer.h"
#include "hcq/hw_queue.h"

namespace hcq {

class Device;

class Allocator {
 public:
  explicit Allocator(Device& device) : device_(device) {}
  // The staging ring; called once by the device after its queues exist.
  absl::Status Init(uint32_t staging_buffers, uint64_t staging_bytes);

  absl::StatusOr<Buffer> alloc(uint64_t size, const BufferSpec& spec = {});
  absl::Status free(const Buffer& buffer);

  // Host -> device and device -> host through the staging ring; both wait for the device's earlier work.
  absl::Status copyin(const Buffer& destination, std::span<const uint8_t> source);
  absl::Status copyout(std::span<uint8_t> destination, const Buffer& source);
  // `size` bytes from `source` (this device's or a peer's buffer) to `destination` on any device.
  absl::Status transfer(const Buffer& destination, const Buffer& source, uint64_t size);
  // Makes `buffer` reachable from this device at its address (peer access).
  absl::Status map(const Buffer& buffer);

  const std::vector<Buffer>& staging() const { return staging_; }
  // After a timeline rollover every staging buffer is free (the device synchronized).
  void ResetStagingTimeline() { std::fill(staging_timeline_.begin(), staging_timeline_.end(), 0); }
  // Frees the staging ring (the device's teardown).
  void Shutdown();

 private:
  Device& device_;
  std::vector<Buffer> staging_;
  std::vector<uint64_t> staging_timeline_;  // the timeline value after which each staging buffer is free
  uint32_t next_staging_ = 0;
  std::unique_ptr<CopyQueue> queue_;  // reused for every transfer
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_ALLOCATOR_H_
