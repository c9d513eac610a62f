#include "hcq/retired_memory.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "hcq/device.h"

namespace hcq {
namespace {

const char* EngineName(QueueEngine engine) { return engine == QueueEngine::kCopy ? "copy" : "compute"; }

}  // namespace

void RetiredMemory::Retire(QueueEngine engine, Buffer buffer) {
  if (!buffer.valid()) return;
  std::lock_guard lock(mu_);
  PerEngine& e = engines_[static_cast<size_t>(engine)];
  FreePassed(e);
  if (e.waiting.empty() && e.issued >= kRestartAfter) {
    // Every marker has passed and none is queued: the signal can start again.
    e.passed.set_value(0);
    e.issued = 0;
  }
  const uint32_t marker = e.issued + 1;
  if (absl::Status queued = QueueMarker(engine, e, marker); !queued.ok()) {
    BAREGPU_LOG(kError, "%s: memory at %#x the %s engine may still read is kept until the device closes: %s",
                device_.name(), buffer.va(), EngineName(engine), queued.message());
    kept_until_close_.push_back(std::move(buffer));
    return;
  }
  e.issued = marker;
  e.waiting.push_back({marker, std::move(buffer)});
}

absl::Status RetiredMemory::QueueMarker(QueueEngine engine, PerEngine& e, uint32_t marker) {
  if (!e.passed.valid()) {
    BAREGPU_ASSIGN_OR_RETURN(e.passed, device_.NewSignal(0));
  }
  if (engine == QueueEngine::kCopy) {
    if (e.queue == nullptr) e.queue = device_.NewCopyQueue();
    e.queue->reset();
    static_cast<CopyQueue&>(*e.queue).signal(e.passed, marker);
  } else {
    if (e.queue == nullptr) e.queue = device_.NewComputeQueue();
    e.queue->reset();
    static_cast<ComputeQueue&>(*e.queue).signal(e.passed, marker);
  }
  return e.queue->submit(device_);
}

void RetiredMemory::FreePassed(PerEngine& e) {
  if (e.waiting.empty()) return;
  const uint32_t passed = static_cast<uint32_t>(e.passed.value());
  // Markers stay below kRestartAfter + 1, far from wrapping: the signed difference orders them.
  while (!e.waiting.empty() && static_cast<int32_t>(passed - e.waiting.front().marker) >= 0) {
    (void)device_.allocator().free(e.waiting.front().buffer);
    e.waiting.pop_front();
  }
}

absl::Status RetiredMemory::WaitAll() {
  for (size_t i = 0; i < engines_.size(); ++i) {
    Signal passed;
    uint32_t last = 0;
    {
      std::lock_guard lock(mu_);
      if (engines_[i].waiting.empty()) continue;
      passed = engines_[i].passed;
      last = engines_[i].waiting.back().marker;
    }
    if (absl::Status waited = passed.wait(last); !waited.ok()) {
      return absl::Status(
          waited.code(),
          absl::StrFormat("%s: the %s engine's marker %d, which frees the memory it may still read: %s", device_.name(),
                          EngineName(static_cast<QueueEngine>(i)), last, waited.message()));
    }
    std::lock_guard lock(mu_);
    FreePassed(engines_[i]);
  }
  return absl::OkStatus();
}

void RetiredMemory::ForgetMarkers() {
  std::lock_guard lock(mu_);
  for (PerEngine& e : engines_) {
    if (e.waiting.empty()) continue;
    e.passed.set_value(e.issued);
    FreePassed(e);
  }
}

void RetiredMemory::Shutdown() {
  std::lock_guard lock(mu_);
  for (PerEngine& e : engines_) {
    for (Retired& r : e.waiting) (void)device_.allocator().free(r.buffer);
    e.waiting.clear();
    e.queue.reset();
    if (e.passed.valid()) device_.FreeSignal(e.passed);
    e.passed = Signal();
    e.issued = 0;
  }
  for (const Buffer& buffer : kept_until_close_) (void)device_.allocator().free(buffer);
  kept_until_close_.clear();
}

size_t RetiredMemory::pending() const {
  std::lock_guard lock(mu_);
  size_t count = kept_until_close_.size();
  for (const PerEngine& e : engines_) count += e.waiting.size();
  return count;
}

}  // namespace hcq
