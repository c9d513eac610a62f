// hcq::Program: a kernel loaded from a code object into device memory. Calling it fills kernel arguments (buffer
// addresses, then 32-bit values), submits an exec on the device's compute queue ordered by the timeline, and with
// wait returns the kernel's execution time in seconds (from GPU timestamps around it).
#ifndef BAREGPU_HCQ_PROGRAM_H_
#define BAREGPU_HCQ_PROGRAM_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hcq/buffer.h"
#include "hcq/hw_queue.h"

namespace hcq {

class Device;

// One explicit kernel argument as the code object's metadata places it in the kernarg segment.
struct ProgramArgument {
  uint32_t offset = 0, size = 0;
};

// What the code object's metadata says of a kernel's interface (nothing when it has no metadata).
struct ProgramMetadata {
  bool present = false;
  std::vector<ProgramArgument> arguments;    // the explicit ones (.args whose .value_kind is not hidden_*), in order
  std::array<uint32_t, 3> required_local{};  // .reqd_workgroup_size, or 0, 0, 0
};

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
  const ProgramMetadata& metadata() const { return metadata_; }

  // Whether `buffers` 64-bit addresses followed by `values` 32-bit values (ArgsState's layout, what operator() and
  // the C API's exec write) are the kernel's explicit arguments, when its metadata says what those are; the error
  // names the kernel, what it expects and what was given.
  absl::Status CheckArgumentLayout(size_t buffers, size_t values) const;
  // Whether constant workgroup sizes equal the kernel's reqd_work_group_size, when it has one (a variable size is
  // not known before submit).
  absl::Status CheckLocalSize(const Dims& local) const;

  // Runs the kernel; with `wait`, waits for it and returns its execution time in seconds, else 0.
  absl::StatusOr<double> operator()(std::span<const Buffer> buffers, const Dims& global, const Dims& local,
                                    std::span<const uint32_t> values = {}, bool wait = false);

 protected:
  Program(Device& device, std::string name, uint64_t kernarg_size, uint64_t args_size, ProgramMetadata metadata = {})
      : device_(device),
        name_(std::move(name)),
        kernarg_size_(kernarg_size),
        args_size_(args_size),
        metadata_(std::move(metadata)) {}

 private:
  Device& device_;
  std::string name_;
  uint64_t kernarg_size_;
  uint64_t args_size_;
  ProgramMetadata metadata_;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_PROGRAM_H_
