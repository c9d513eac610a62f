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

void DoorbellRouter::Write(uint64_t index, uint32_t value, DoorbellPort port) {
  if (root_ != this) return root_->Write(index, value, port);
  if (index >= slots_.size() || Drop()) return;
  slots_[index].store(value, std::memory_order_release);
  Fire(index, index, port);
}

void DoorbellRouter::Write64(uint64_t index, uint64_t value, DoorbellPort port) {
  if (root_ != this) return root_->Write64(index, value, port);
  if (index + 1 >= slots_.size() || Drop()) return;
  slots_[index].store(static_cast<uint32_t>(value), std::memory_order_release);
  slots_[index + 1].store(static_cast<uint32_t>(value >> 32), std::memory_order_release);
  Fire(index, index + 1, port);
}

void DoorbellRouter::Fire(uint64_t first, uint64_t last, DoorbellPort port) {
  const SubscriptionList* list = active_.load(std::memory_order_acquire);
  if (list == nullptr) return;
  for (const Subscription& s : *list) {
    if (port != DoorbellPort::kAny && s.port != DoorbellPort::kAny && s.port != port) continue;
    const uint64_t s_last = s.is_64bit ? s.index + 1 : s.index;
    if (s.index <= last && first <= s_last) (*s.listener)();
  }
}

void DoorbellRouter::Publish(SubscriptionList list) {
  lists_.push_back(std::make_unique<const SubscriptionList>(std::move(list)));
  active_.store(lists_.back().get(), std::memory_order_release);
}

uint32_t DoorbellRouter::Read(uint64_t index) const {
  if (root_ != this) return root_->Read(index);
  return index < slots_.size() ? slots_[index].load(std::memory_order_acquire) : 0;
}

uint64_t DoorbellRouter::Read64(uint64_t index) const { return (uint64_t{Read(index + 1)} << 32) | Read(index); }

int DoorbellRouter::Subscribe(uint64_t index, bool is_64bit, Listener listener) {
  if (root_ != this) return root_->SubscribeBehind(port_, index, is_64bit, std::move(listener));
  return SubscribeBehind(DoorbellPort::kAny, index, is_64bit, std::move(listener));
}

int DoorbellRouter::SubscribeBehind(DoorbellPort port, uint64_t index, bool is_64bit, Listener listener) {
  base::MutexLock lock(&mu_);
  const int token = next_token_++;
  listeners_.push_back(std::make_unique<Listener>(std::move(listener)));
  const SubscriptionList* current = active_.load(std::memory_order_relaxed);
  SubscriptionList list = current != nullptr ? *current : SubscriptionList();
  list.push_back({token, index, is_64bit, port, listeners_.back().get()});
  Publish(std::move(list));
  return token;
}

void DoorbellRouter::Unsubscribe(int token) {
  if (root_ != this) return root_->Unsubscribe(token);
  base::MutexLock lock(&mu_);
  const SubscriptionList* current = active_.load(std::memory_order_relaxed);
  if (current == nullptr) return;
  SubscriptionList list = *current;
  std::erase_if(list, [token](const Subscription& s) { return s.token == token; });
  Publish(std::move(list));
}

}  // namespace am::sim
