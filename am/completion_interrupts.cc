#include "am/completion_interrupts.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/gfx.h"
#include "am/sdma.h"
#include "base/file.h"
#include "base/log.h"
#include "base/status_macros.h"

namespace am {

CompletionInterrupts::~CompletionInterrupts() {
  base::MutexLock lock(&mu_);
  if (enabled_.has_value() && enabled_->ok()) {
    if (absl::Status disabled = device_.pci().DisableInterrupts(); !disabled.ok()) {
      BAREGPU_LOG(kWarn, "%s: disabling the MSI: %s", device_.pci().name(), disabled.message());
    }
  }
}

absl::Status CompletionInterrupts::Enable() {
  absl::StatusOr<std::vector<int>> fds = device_.pci().EnableInterrupts(1);
  if (!fds.ok()) {
    return absl::Status(fds.status().code(),
                        absl::StrCat("the device's interrupt (waits poll instead): ", fds.status().message()));
  }
  if (fds->empty()) {
    return absl::InternalError(absl::StrCat(device_.pci().name(), ": enabling its interrupt gave no eventfd"));
  }
  base::ScopedFd copy(::fcntl(fds->front(), F_DUPFD_CLOEXEC, 0));
  if (!copy.valid()) return base::ErrnoError(errno, absl::StrCat(device_.pci().name(), ": duplicating its eventfd"));
  if (fd_.valid()) retired_.push_back(std::move(fd_));
  fd_ = std::move(copy);
  return absl::OkStatus();
}

absl::StatusOr<int> CompletionInterrupts::EventFd() {
  base::MutexLock lock(&mu_);
  if (!enabled_.has_value()) enabled_ = Enable();
  if (!enabled_->ok()) return *enabled_;
  return fd_.get();
}

absl::Status CompletionInterrupts::AfterBoot() {
  base::MutexLock lock(&mu_);
  if (enabled_.has_value() && enabled_->ok()) {
    enabled_ = Enable();
    BAREGPU_RETURN_IF_ERROR(*enabled_);
  }
  return holders_ > 0 ? SetSources(true) : absl::OkStatus();
}

absl::Status CompletionInterrupts::SetSources(bool enable) {
  BAREGPU_RETURN_IF_ERROR(device_.gfx().SetEndOfPipeInterrupt(enable));
  return device_.sdma().SetTrapInterrupt(enable);
}

absl::Status CompletionInterrupts::Hold() {
  {
    base::MutexLock lock(&mu_);
    if (holders_ == 0) {
      if (fd_.valid()) {
        // Nobody sleeps on it: what it counted so far was for waiters that are gone. A waiter's epoll reports it
        // ready once if its count is not 0 when it registers; cleared, the first report is a new interrupt.
        uint64_t count = 0;
        [[maybe_unused]] const ssize_t n = ::read(fd_.get(), &count, sizeof(count));  // EAGAIN when already 0
      }
      BAREGPU_RETURN_IF_ERROR(SetSources(true));
    }
    ++holders_;
  }
  // The enables are read back (the device holds them); this orders them before the caller's next load of its
  // signal, against the engines' fence between writing a signal and reading the enable.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return absl::OkStatus();
}

void CompletionInterrupts::Release() {
  base::MutexLock lock(&mu_);
  if (holders_ == 0 || --holders_ != 0) return;
  if (absl::Status off = SetSources(false); !off.ok()) {
    BAREGPU_LOG(kWarn, "%s: turning the completion interrupts off: %s", device_.pci().name(), off.message());
  }
}

int CompletionInterrupts::holders() const {
  base::MutexLock lock(&mu_);
  return holders_;
}

}  // namespace am
