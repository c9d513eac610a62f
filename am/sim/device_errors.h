// What the virtual GPU reports as device errors: malformed packets, engines that stopped, a dispatch with no
// shader executor. On the hardware these surface as interrupts and hung queues; the log says in words what a
// driver developer would otherwise dig out of status registers, and tests read it.
#ifndef BAREGPU_AM_SIM_DEVICE_ERRORS_H_
#define BAREGPU_AM_SIM_DEVICE_ERRORS_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace am::sim {

struct DeviceError {
  std::string model;  // "sdma0", "mec", "gmc", "psp", ...
  std::string message;
};

class DeviceErrorLog {
 public:
  void Report(std::string model, std::string message) {
    base::MutexLock lock(&mu_);
    errors_.push_back({std::move(model), std::move(message)});
  }
  std::vector<DeviceError> errors() const {
    base::ReaderMutexLock lock(&mu_);
    return errors_;
  }
  // The errors reported since `cursor` (an index into the log), advancing it.
  std::vector<DeviceError> Since(size_t& cursor) const {
    base::ReaderMutexLock lock(&mu_);
    if (cursor > errors_.size()) cursor = 0;  // cleared since
    std::vector<DeviceError> out(errors_.begin() + static_cast<std::ptrdiff_t>(cursor), errors_.end());
    cursor = errors_.size();
    return out;
  }
  void Clear() {
    base::MutexLock lock(&mu_);
    errors_.clear();
  }

 private:
  mutable base::Mutex mu_;
  std::vector<DeviceError> errors_ ABSL_GUARDED_BY(mu_);
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_DEVICE_ERRORS_H_
