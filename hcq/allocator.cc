#include "hcq/allocator.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "hcq/device.h"

namespace hcq {

absl::Status Allocator::Init(uint32_t staging_buffers, uint64_t staging_bytes) {
  if (staging_buffers == 0 || staging_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: a staging ring of %d x %d bytes cannot move data",
                                                      device_.name(), staging_buffers, staging_bytes));
  }
  for (uint32_t i = 0; i < staging_buffers; ++i) {
    BAREGPU_ASSIGN_OR_RETURN(Buffer buffer, alloc(staging_bytes, {.kind = MemoryKind::kHost}));
    staging_.push_back(buffer);
  }
  staging_timeline_.assign(staging_buffers, 0);
  queue_ = device_.NewCopyQueue();
  return absl::OkStatus();
}

void Allocator::Shutdown() {
  queue_.reset();
  for (const Buffer& buffer : staging_) (void)free(buffer);
  staging_.clear();
}

absl::StatusOr<Buffer> Allocator::alloc(uint64_t size, const BufferSpec& spec) {
  if (size == 0) return absl::InvalidArgumentError(absl::StrFormat("%s: allocation of 0 bytes", device_.name()));
  BAREGPU_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> allocation, device_.AllocMemory(size, spec));
  allocation->owner = &device_;
  allocation->spec = spec;
  if (allocation->mapped.empty()) allocation->mapped.push_back(&device_);
  return Buffer(std::move(allocation));
}

absl::Status Allocator::free(const Buffer& buffer) {
  if (!buffer.valid()) return absl::InvalidArgumentError("free of an empty buffer");
  Allocation& allocation = const_cast<Allocation&>(*buffer.base());
  if (allocation.owner != &device_) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: free of a buffer of %s", device_.name(),
                                                      allocation.owner ? allocation.owner->name() : "no device"));
  }
  if (allocation.size == 0)
    return absl::FailedPreconditionError(absl::StrFormat("%s: buffer freed twice", device_.name()));
  BAREGPU_RETURN_IF_ERROR(device_.FreeMemory(allocation));
  allocation.size = 0;
  allocation.cpu = nullptr;
  return absl::OkStatus();
}

absl::Status Allocator::copyin(const Buffer& destination, std::span<const uint8_t> source) {
  if (source.size() > destination.size()) {
    return absl::OutOfRangeError(absl::StrFormat("%s: copyin of %d bytes into a buffer of %d", device_.name(),
                                                 source.size(), destination.size()));
  }
  const Signal& timeline = device_.timeline_signal();
  for (uint64_t done = 0; done < source.size();) {
    next_staging_ = (next_staging_ + 1) % staging_.size();
    const Buffer& staging = staging_[next_staging_];
    // The staging buffer is free once the copy that last used it has completed.
    BAREGPU_RETURN_IF_ERROR(timeline.wait(staging_timeline_[next_staging_]));
    const uint64_t piece = std::min<uint64_t>(staging.size(), source.size() - done);
    std::memcpy(staging.cpu(), source.data() + done, piece);
    queue_->reset();
    queue_->wait(timeline, device_.timeline_value() - 1)
        .copy(destination.va() + done, staging.va(), piece)
        .signal(timeline, device_.next_timeline());
    BAREGPU_RETURN_IF_ERROR(queue_->submit(device_));
    staging_timeline_[next_staging_] = device_.timeline_value() - 1;
    done += piece;
  }
  return absl::OkStatus();
}

absl::Status Allocator::copyout(std::span<uint8_t> destination, const Buffer& source) {
  if (destination.size() > source.size()) {
    return absl::OutOfRangeError(absl::StrFormat("%s: copyout of %d bytes from a buffer of %d", device_.name(),
                                                 destination.size(), source.size()));
  }
  BAREGPU_RETURN_IF_ERROR(device_.synchronize());
  const Signal& timeline = device_.timeline_signal();
  const Buffer& staging = staging_[0];
  for (uint64_t done = 0; done < destination.size();) {
    const uint64_t piece = std::min<uint64_t>(staging.size(), destination.size() - done);
    queue_->reset();
    queue_->wait(timeline, device_.timeline_value() - 1)
        .copy(staging.va(), source.va() + done, piece)
        .signal(timeline, device_.next_timeline());
    BAREGPU_RETURN_IF_ERROR(queue_->submit(device_));
    BAREGPU_RETURN_IF_ERROR(timeline.wait(device_.timeline_value() - 1));
    std::memcpy(destination.data() + done, staging.cpu(), piece);
    done += piece;
  }
  return absl::OkStatus();
}

absl::Status Allocator::map(const Buffer& buffer) {
  if (!buffer.valid()) return absl::InvalidArgumentError("map of an empty buffer");
  Allocation& allocation = const_cast<Allocation&>(*buffer.base());
  if (std::find(allocation.mapped.begin(), allocation.mapped.end(), &device_) != allocation.mapped.end()) {
    return absl::OkStatus();
  }
  BAREGPU_RETURN_IF_ERROR(device_.MapPeer(allocation));
  allocation.mapped.push_back(&device_);
  return absl::OkStatus();
}

absl::Status Allocator::transfer(const Buffer& destination, const Buffer& source, uint64_t size) {
  if (size > destination.size() || size > source.size()) {
    return absl::OutOfRangeError(absl::StrFormat("%s: transfer of %d bytes between buffers of %d and %d",
                                                 device_.name(), size, destination.size(), source.size()));
  }
  // This device copies: it must reach both buffers, and each device's queues must see the other's timeline.
  Device& other = *destination.base()->owner;
  BAREGPU_RETURN_IF_ERROR(map(destination));
  BAREGPU_RETURN_IF_ERROR(map(source));
  if (&other != &device_) {
    BAREGPU_RETURN_IF_ERROR(device_.ShareSignalsWith(other));
    BAREGPU_RETURN_IF_ERROR(other.ShareSignalsWith(device_));
  }
  queue_->reset();
  queue_->wait(device_.timeline_signal(), device_.timeline_value() - 1);
  if (&other != &device_) queue_->wait(other.timeline_signal(), other.timeline_value() - 1);
  queue_->copy(destination.va(), source.va(), size).signal(device_.timeline_signal(), device_.next_timeline());
  BAREGPU_RETURN_IF_ERROR(queue_->submit(device_));
  if (&other != &device_) {
    // The destination's later work waits for the copy.
    std::unique_ptr<ComputeQueue> after = other.NewComputeQueue();
    after->wait(device_.timeline_signal(), device_.timeline_value() - 1)
        .signal(other.timeline_signal(), other.next_timeline());
    BAREGPU_RETURN_IF_ERROR(after->submit(other));
  }
  return absl::OkStatus();
}

}  // namespace hcq
