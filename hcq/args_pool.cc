#include "hcq/args_pool.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_format.h"
#include "base/bits.h"
#include "base/status_macros.h"
#include "hcq/device.h"
#include "hcq/kernarg_area.h"

namespace hcq {

void ArgsPool::CatchUpWithRecoveries() {
  if (const uint64_t recoveries = device_.recoveries(); recoveries != recoveries_seen_) {
    ForceCompletion();
    recoveries_seen_ = recoveries;
  }
}

absl::StatusOr<ArgsState> ArgsPool::Take(Holder& holder, uint64_t size, uint32_t buffers) {
  CatchUpWithRecoveries();
  const uint64_t bytes = base::AlignUp(std::max<uint64_t>({size, 8 * uint64_t{buffers}, 1}), KernargArea::kAlignment);
  if (holder.chunks.empty() ||
      chunks_[holder.chunks.back()].memory.size() - chunks_[holder.chunks.back()].used < bytes) {
    BAREGPU_ASSIGN_OR_RETURN(uint32_t index, FreeChunk(bytes));
    chunks_[index].held = true;
    chunks_[index].used = 0;
    holder.chunks.push_back(index);
  }
  Chunk& chunk = chunks_[holder.chunks.back()];
  ArgsState args(chunk.memory.cpu() + chunk.used, chunk.memory.va() + chunk.used, bytes, buffers);
  chunk.used += bytes;
  std::memset(args.cpu(), 0, bytes);
  return args;
}

absl::StatusOr<uint32_t> ArgsPool::FreeChunk(uint64_t bytes) {
  const uint64_t done = completed();
  for (uint32_t i = 0; i < chunks_.size(); ++i) {
    if (!chunks_[i].held && chunks_[i].retire <= done && chunks_[i].memory.size() >= bytes) return i;
  }
  const uint64_t chunk_bytes = base::AlignUp(std::max(bytes, kChunkBytes), kChunkBytes);
  if (chunks_.size() < kMaxChunks) {
    BAREGPU_ASSIGN_OR_RETURN(Buffer memory, device_.allocator().alloc(chunk_bytes, {.kind = MemoryKind::kHost}));
    chunks_.push_back({.memory = memory});
    return static_cast<uint32_t>(chunks_.size() - 1);
  }
  // Full: the released chunk whose last reader was submitted first, once it has finished (bounded by the wait
  // timeout). One too small for these arguments is replaced by one that fits.
  std::optional<uint32_t> oldest;
  for (uint32_t i = 0; i < chunks_.size(); ++i) {
    if (!chunks_[i].held && (!oldest || chunks_[i].retire < chunks_[*oldest].retire)) oldest = i;
  }
  if (!oldest) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: the kernel arguments of launches recorded in queues fill all %d chunks of %d KiB; reset or free queues "
        "that have been submitted (their arguments are held until then)",
        device_.name(), kMaxChunks, kChunkBytes >> 10));
  }
  Chunk& chunk = chunks_[*oldest];
  BAREGPU_RETURN_IF_ERROR(fence_.wait(chunk.retire));
  if (chunk.memory.size() < bytes) {
    BAREGPU_RETURN_IF_ERROR(device_.allocator().free(chunk.memory));
    chunk.memory = Buffer();
    BAREGPU_ASSIGN_OR_RETURN(chunk.memory, device_.allocator().alloc(chunk_bytes, {.kind = MemoryKind::kHost}));
  }
  return *oldest;
}

absl::Status ArgsPool::StartFence() {
  BAREGPU_ASSIGN_OR_RETURN(fence_, device_.NewSignal(0));
  fence_queue_ = device_.NewComputeQueue();
  return absl::OkStatus();
}

absl::Status ArgsPool::Submitted(Holder& holder) {
  if (holder.chunks.empty()) return absl::OkStatus();
  CatchUpWithRecoveries();
  if (!fence_.valid()) BAREGPU_RETURN_IF_ERROR(StartFence());
  if (sequence_ == Signal::kMaxValue) {
    // The engines compare 32 bits: start the sequence over once every fence so far has landed.
    BAREGPU_RETURN_IF_ERROR(fence_.wait(sequence_));
    fence_.set_value(0);
    sequence_ = 0;
    for (Chunk& chunk : chunks_) chunk.retire = 0;
  }
  const uint64_t sequence = sequence_ + 1;
  fence_queue_->reset();
  fence_queue_->signal(fence_, sequence);
  BAREGPU_RETURN_IF_ERROR(fence_queue_->submit(device_));
  sequence_ = sequence;
  for (uint32_t index : holder.chunks) chunks_[index].retire = sequence;
  return absl::OkStatus();
}

void ArgsPool::Release(Holder& holder) {
  for (uint32_t index : holder.chunks) chunks_[index].held = false;
  holder.chunks.clear();
}

void ArgsPool::ForceCompletion() {
  if (fence_.valid()) fence_.set_value(sequence_);
}

void ArgsPool::Shutdown() {
  for (Chunk& chunk : chunks_) (void)device_.allocator().free(chunk.memory);
  chunks_.clear();
  fence_queue_.reset();
  if (fence_.valid()) device_.FreeSignal(fence_);
  fence_ = Signal();
}

}  // namespace hcq
