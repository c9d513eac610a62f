#include "hcq/signal_writers.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "hcq/device.h"

namespace hcq {
namespace {

// What the registry knows of one device: the peers that may write its signals, and, as a writer, how many sleeping
// waits hold it and whether it is closing.
struct Entry {
  const Device* device = nullptr;
  std::vector<Device*> writers;
  uint32_t holders = 0;
  bool closing = false;
};

struct Registry {
  std::mutex mu;
  std::condition_variable released;  // a closing device's last holder let go
  std::vector<Entry> entries;        // guarded by mu; a handful of devices at most
  // Owner-writer pairs known; 0 lets a sleeping wait skip the mutex (most processes share no signals).
  std::atomic<size_t> pairs{0};
};

Registry& TheRegistry() {
  static auto* registry = new Registry;  // never destroyed: devices may close while the process exits
  return *registry;
}

Entry* Find(Registry& registry, const Device* device) {
  auto it = std::find_if(registry.entries.begin(), registry.entries.end(),
                         [device](const Entry& entry) { return entry.device == device; });
  return it == registry.entries.end() ? nullptr : &*it;
}

Entry& FindOrAdd(Registry& registry, const Device* device) {
  if (Entry* entry = Find(registry, device)) return *entry;
  registry.entries.push_back(Entry{.device = device});
  return registry.entries.back();
}

// How often a closing device wakes the waits that still hold it: each looks at Closing() when it wakes, and sleeps
// at most InterruptSleep::kMaxInterruptSleep anyway, so this only shortens a wake-up lost to a race.
constexpr auto kRewake = std::chrono::milliseconds(1);

void WakeHolders(Device& device) {
  absl::StatusOr<int> fd = device.CompletionEventFd();
  if (!fd.ok()) return;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(*fd, &one, sizeof(one));  // fails only at the count's maximum
}

}  // namespace

void SignalWriters::Add(Device& owner, Device& writer) {
  if (&owner == &writer) return;
  Registry& registry = TheRegistry();
  std::lock_guard lock(registry.mu);
  FindOrAdd(registry, &writer);  // holders are counted in the writer's entry
  std::vector<Device*>& writers = FindOrAdd(registry, &owner).writers;
  if (std::find(writers.begin(), writers.end(), &writer) != writers.end()) return;
  writers.push_back(&writer);
  registry.pairs.fetch_add(1, std::memory_order_release);
}

size_t SignalWriters::Hold(const Device& owner, std::span<Device*> out) {
  Registry& registry = TheRegistry();
  if (registry.pairs.load(std::memory_order_acquire) == 0) return 0;
  std::lock_guard lock(registry.mu);
  const Entry* entry = Find(registry, &owner);
  if (entry == nullptr) return 0;
  size_t held = 0;
  for (Device* writer : entry->writers) {
    if (held == out.size()) break;
    Entry* as_writer = Find(registry, writer);
    if (as_writer == nullptr || as_writer->closing) continue;
    ++as_writer->holders;
    out[held++] = writer;
  }
  return held;
}

void SignalWriters::Release(Device& writer) {
  Registry& registry = TheRegistry();
  std::lock_guard lock(registry.mu);
  Entry* entry = Find(registry, &writer);
  if (entry == nullptr || entry->holders == 0) return;
  if (--entry->holders == 0 && entry->closing) registry.released.notify_all();
}

bool SignalWriters::Closing(const Device& writer) {
  Registry& registry = TheRegistry();
  std::lock_guard lock(registry.mu);
  const Entry* entry = Find(registry, &writer);
  return entry != nullptr && entry->closing;
}

void SignalWriters::Forget(Device& device) {
  Registry& registry = TheRegistry();
  std::unique_lock lock(registry.mu);
  Entry* entry = Find(registry, &device);
  if (entry == nullptr) return;
  // No longer an owner: its writers list goes. No longer a writer: it leaves every other list.
  registry.pairs.fetch_sub(entry->writers.size(), std::memory_order_release);
  entry->writers.clear();
  for (Entry& other : registry.entries) {
    registry.pairs.fetch_sub(std::erase(other.writers, &device), std::memory_order_release);
  }
  entry->closing = true;
  while (Find(registry, &device)->holders > 0) {
    // The device's own calls are made without the registry's mutex (a holder calls into the device without it).
    lock.unlock();
    WakeHolders(device);
    lock.lock();
    registry.released.wait_for(lock, kRewake, [&] { return Find(registry, &device)->holders == 0; });
  }
  std::erase_if(registry.entries, [&](const Entry& e) { return e.device == &device; });
}

}  // namespace hcq
