#include "hcq/interrupt_sleep.h"

#include <sys/epoll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "hcq/device.h"
#include "hcq/signal_writers.h"

namespace hcq {

InterruptSleep::~InterruptSleep() {
  while (peer_count_ > 0) DropPeer(peer_count_ - 1);
  if (counted_) device_.sleeping_waits_.fetch_sub(1, std::memory_order_seq_cst);
  if (holding_) device_.ReleaseCompletionInterrupts();
}

absl::Status InterruptSleep::Begin() {
  absl::StatusOr<int> fd = device_.CompletionEventFd();
  if (!fd.ok()) {
    device_.blind_waits_.fetch_add(1, std::memory_order_relaxed);
    return fd.status();
  }
  epoll_.Reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.valid()) return base::ErrnoError(errno, absl::StrCat(device_.name(), ": epoll for a sleeping wait"));
  // Edge-triggered: each addition to the count is reported once to every epoll registered on the eventfd, whatever
  // the count is, so no sleeper has to read (and so reset) it.
  epoll_event event{};
  event.events = EPOLLIN | EPOLLET;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, *fd, &event) != 0) {
    return base::ErrnoError(errno, absl::StrCat(device_.name(), ": registering the interrupt's eventfd with epoll"));
  }
  BAREGPU_RETURN_IF_ERROR(device_.HoldCompletionInterrupts());
  holding_ = true;
  std::array<Device*, SignalWriters::kMaxHeld> writers;
  ListenToPeers(std::span(writers).first(SignalWriters::Hold(device_, writers)));
  device_.wake_fd_.store(*fd, std::memory_order_release);
  // Counted before the caller's next read of its signal: a host write after that read sees this count
  // (Device::WakeSleepingWaits) and adds to the eventfd.
  device_.sleeping_waits_.fetch_add(1, std::memory_order_seq_cst);
  counted_ = true;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return absl::OkStatus();
}

void InterruptSleep::ListenToPeers(std::span<Device*> writers) {
  for (Device* writer : writers) {
    Peer& peer = peers_[peer_count_];
    peer.device = writer;
    peer.fd = -1;
    ++peer_count_;
    absl::StatusOr<int> fd = writer->CompletionEventFd();
    if (!fd.ok()) {  // a peer that cannot interrupt: its writes are noticed at the sleep's limit
      DropPeer(peer_count_ - 1);
      continue;
    }
    epoll_event event{};
    event.events = EPOLLIN | EPOLLET;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, *fd, &event) != 0) {
      DropPeer(peer_count_ - 1);
      continue;
    }
    if (!writer->HoldCompletionInterrupts().ok()) {
      (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, *fd, nullptr);
      DropPeer(peer_count_ - 1);
      continue;
    }
    peer.fd = *fd;  // registered and held: DropPeer undoes both
  }
}

void InterruptSleep::DropPeer(size_t i) {
  Peer& peer = peers_[i];
  if (peer.fd >= 0) {
    // Still open: the peer keeps its eventfds until it goes, and it waits for this release (SignalWriters::Forget).
    (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, peer.fd, nullptr);
    peer.device->ReleaseCompletionInterrupts();
  }
  SignalWriters::Release(*peer.device);
  peer = peers_[--peer_count_];
}

void InterruptSleep::DropClosingPeers() {
  for (size_t i = peer_count_; i-- > 0;) {
    if (SignalWriters::Closing(*peers_[i].device)) DropPeer(i);
  }
}

void InterruptSleep::Sleep(absl::Duration limit) {
  DropClosingPeers();
  device_.sleeps_.fetch_add(1, std::memory_order_relaxed);
  const absl::Duration bounded = std::clamp(limit, absl::ZeroDuration(), kMaxInterruptSleep);
  // epoll_wait counts milliseconds: a shorter limit rounds up (kMaxInterruptSleep is one).
  const int ms = static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(bounded, absl::Milliseconds(1))));
  epoll_event event{};
  const int ready = ::epoll_wait(epoll_.get(), &event, 1, ms);
  (ready > 0 ? device_.interrupt_wakes_ : device_.timer_wakes_).fetch_add(1, std::memory_order_relaxed);
  DropClosingPeers();
}

}  // namespace hcq
