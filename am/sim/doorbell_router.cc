#include "am/sim/doorbell_router.h"

#include <algorithm>

namespace am::sim {

bool DoorbellRouter::Drop() {
  uint64_t pending = drop_.load(std::memory_order_acquire);
  while (pending > 0) {
    if (drop_.compare_exchange_weak(pending, pending - 1, std::memory_order_acq_rel)) {
      dropped_.fetch_add(1, std::memory_order_acq_rel);
      return true;
    }
  }
  return false;
}

void DoorbellRouter::Write(uint64_t index, uint32_t value) {
  if (index >= slots_.size() || Drop()) return;
  slots_[index].store(value, std::memory_order_release);
  Fire(index, index);
}

void DoorbellRouter::Write64(uint64_t index, uint64_t value) {
  if (index + 1 >= slots_.size() || Drop()) return;
  slots_[index].store(static_cast<uint32_t>(value), std::memory_order_release);
  slots_[index + 1].store(static_cast<uint32_t>(value >> 32), std::memory_order_release);
  Fire(index, index + 1);
}

void DoorbellRouter::Fire(uint64_t first, uint64_t last) {
  // Listeners are copied out so that one may unsubscribe (or an engine stop) while another write is delivered.
  std::shared_ptr<Listener> fire[4];
  int count = 0;
  {
    base::ReaderMutexLock lock(&mu_);
    for (const Subscription& s : subscriptions_) {
      const uint64_t s_last = s.is_64bit ? s.index + 1 : s.index;
      if (s.index <= last && first <= s_last && count < 4) fire[count++] = s.listener;
    }
  }
  for (int i = 0; i < count; ++i) (*fire[i])();
}

uint32_t DoorbellRouter::Read(uint64_t index) const {
  return index < slots_.size() ? slots_[index].load(std::memory_order_acquire) : 0;
}

uint64_t DoorbellRouter::Read64(uint64_t index) const { return (uint64_t{Read(index + 1)} << 32) | Read(index); }

int DoorbellRouter::Subscribe(uint64_t index, bool is_64bit, Listener listener) {
  base::MutexLock lock(&mu_);
  const int token = next_token_++;
  subscriptions_.push_back({token, index, is_64bit, std::make_shared<Listener>(std::move(listener))});
  return token;
}

void DoorbellRouter::Unsubscribe(int token) {
  base::MutexLock lock(&mu_);
  std::erase_if(subscriptions_, [token](const Subscription& s) { return s.token == token; });
}

}  // namespace am::sim
