// hcq::Program: a kernel loaded from a code object into device memory. Calling it fills kernel arguments (buffer
// addresses, then 32-bit values), submits an exec on the device's compute queue ordered by the timeline, and with
// wait returns the kernel's execution time in seconds (from GPU timestamps around it).
#ifndef BAREGPU_HCQ_PROGRAM_H_
#define BAREGPU_HCQ_PROGRAM_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "hcq/buffer.h"
#include "hcq/hw_queue.h"

namespace hcq {

class Device;

class Program {
 public:
  virtual ~Program() = default;
  Device& device() const { return device_; }
  const std::string& name() const { return name_; }
  // Bytes of kernel arguments the kernel reads (the code object's kernarg segment size, hidden arguments included).
  uint64_t kernarg_size() const { return kernarg_size_; }
  // Bytes of argument memory one launch needs (Device::NewArgs): the kernel arguments and whatever else the backend
  // places after them (an HSA dispatch packet for a kernel that reads one).
  uint64_t args_size() const { return args_size_; }

  // Runs the kernel; with `wait`, waits for it and returns its execution time in seconds, else 0.
  absl::StatusOr<double> operator()(std::span<const Buffer> buffers, const Dims& global, const Dims& local,
                                    std::span<const uint32_t> values = {}, bool wait = false);

 protected:
  Program(Device& device, std::string name, uint64_t kernarg_size, uint64_t args_size)
      : device_(device), name_(std::move(name)), kernarg_size_(kernarg_size), args_size_(args_size) {}

 private:
  Device& device_;
  std::string name_;
  uint64_t kernarg_size_;
  uint64_t args_size_;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_PROGRAM_H_
