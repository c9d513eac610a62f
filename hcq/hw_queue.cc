#include "hcq/hw_queue.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "hcq/args_state.h"
#include "hcq/device.h"

namespace hcq {

HwQueue::HwQueue(Device& device, QueueEngine engine)
    : device_(device), engine_(engine), profiling_(device.options().profile) {
  // Room for a typical graph's worth of commands, so building rarely grows the buffers at all.
  commands_.reserve(1024);
  patches_.reserve(64);
  args_.reserve(16);
}

HwQueue::UseScope::UseScope(const HwQueue& queue) : queue_(queue), outer_(false) {
#ifndef NDEBUG
  std::thread::id expected{};
  const std::thread::id self = std::this_thread::get_id();
  if (queue_.user_.compare_exchange_strong(expected, self, std::memory_order_acquire)) {
    outer_ = true;
  } else if (expected != self) {
    // Two threads inside one queue interleave (or lose) commands: stop here, where the misuse is, not later with
    // a corrupt ring.
    std::fprintf(stderr,
                 "hcq: a queue of %s is used by two threads at once; a queue is one thread's at a time (give each "
                 "thread its own queue, or serialise; the C API serialises for you)\n",
                 queue_.device_.name().c_str());
    std::abort();
  }
#endif
}

HwQueue::UseScope::~UseScope() {
#ifndef NDEBUG
  if (outer_) queue_.user_.store(std::thread::id{}, std::memory_order_release);
#endif
}

HwQueue::~HwQueue() { DropBinding(); }

void HwQueue::DropBinding() {
  if (!bound_.valid()) return;
  if (bound_submitted_) {
    device_.retired_memory().Retire(engine_, std::move(bound_));
  } else {
    (void)device_.allocator().free(bound_);
  }
  bound_ = Buffer();
  bound_submitted_ = false;
}

void HwQueue::reset() {
  UseScope use(*this);
  commands_.clear();
  patches_.clear();
  args_.clear();
  error_ = absl::OkStatus();
  DropBinding();
}

uint32_t HwQueue::Emit(std::initializer_list<uint32_t> dwords) {
  UseScope use(*this);
  const uint32_t offset = static_cast<uint32_t>(commands_.size());
  commands_.insert(commands_.end(), dwords);
  return offset;
}

uint32_t HwQueue::Emit(std::span<const uint32_t> dwords) {
  UseScope use(*this);
  const uint32_t offset = static_cast<uint32_t>(commands_.size());
  commands_.insert(commands_.end(), dwords.begin(), dwords.end());
  return offset;
}

void HwQueue::Set(uint32_t offset, Value value) {
  if (value.is_variable()) {
    patches_.push_back({.variable = value.variable(), .offset = offset, .addend = value.addend()});
  } else {
    commands_[offset] = static_cast<uint32_t>(value.constant());
  }
}

void HwQueue::PatchAddress(uint32_t lo, uint32_t hi, Value address, uint64_t alignment) {
  if (!address.is_variable()) return;
  patches_.push_back(
      {.variable = address.variable(), .offset = lo, .addend = address.addend(), .align_mask = alignment - 1});
  patches_.push_back({.variable = address.variable(), .offset = hi, .shift = 32, .addend = address.addend()});
}

void HwQueue::AddArgs(ArgsState* args) { args_.push_back(args); }

namespace {

absl::Status CheckSignalValue(const char* command, const Value& value) {
  if (value.is_variable() || value.constant() <= Signal::kMaxValue) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s with value %d: signal values are 32 bits (at most %d)", command,
                                                    value.constant(), Signal::kMaxValue));
}

absl::Status CheckAddress(const char* command, const Value& address, uint64_t alignment) {
  if (address.is_variable() || address.constant() % alignment == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s at address %#x: the address must be %d-byte aligned", command,
                                                    address.constant(), alignment));
}

}  // namespace

void HwQueue::WaitCommand(const Signal& signal, Value value) {
  if (!signal.valid()) return Fail(absl::InvalidArgumentError("wait on an unallocated signal"));
  WaitAtCommand(signal.value_address(), value);
}

void HwQueue::SignalCommand(const Signal& signal, Value value) {
  if (!signal.valid()) return Fail(absl::InvalidArgumentError("signal of an unallocated signal"));
  SignalAtCommand(signal.value_address(), value);
}

void HwQueue::TimestampCommand(const Signal& signal) {
  if (!signal.valid()) return Fail(absl::InvalidArgumentError("timestamp into an unallocated signal"));
  TimestampAtCommand(signal.timestamp_address());
}

void HwQueue::WaitAtCommand(Value address, Value value) {
  if (absl::Status ok = CheckSignalValue("wait", value); !ok.ok()) return Fail(ok);
  if (absl::Status ok = CheckAddress("wait", address, kSignalAlignment); !ok.ok()) return Fail(ok);
  EmitWait(address, value);
}

void HwQueue::SignalAtCommand(Value address, Value value) {
  if (absl::Status ok = CheckSignalValue("signal", value); !ok.ok()) return Fail(ok);
  if (absl::Status ok = CheckAddress("signal", address, kSignalAlignment); !ok.ok()) return Fail(ok);
  EmitSignal(address, value);
}

void HwQueue::TimestampAtCommand(Value address) {
  if (absl::Status ok = CheckAddress("timestamp", address, kTimestampAlignment); !ok.ok()) return Fail(ok);
  EmitTimestamp(address);
}

absl::Status HwQueue::bind(Device& device) {
  UseScope use(*this);
  BAREGPU_RETURN_IF_ERROR(error_);
  if (&device != &device_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a queue of %s cannot be bound to %s", device_.name(), device.name()));
  }
  if (commands_.empty()) return absl::FailedPreconditionError("bind of an empty queue");
  DropBinding();
  BAREGPU_RETURN_IF_ERROR(PrepareBind());
  // Host memory: patched by the CPU at every submit without an HDP flush.
  BAREGPU_ASSIGN_OR_RETURN(bound_, device_.allocator().alloc(commands_.size() * 4, {.kind = MemoryKind::kHost}));
  std::memcpy(bound_.cpu(), commands_.data(), commands_.size() * 4);
  return absl::OkStatus();
}

absl::Status HwQueue::submit(Device& device, VarVals var_vals) {
  UseScope use(*this);
  if (!error_.ok()) return error_;
  if (&device != &device_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a queue of %s cannot be submitted to %s", device_.name(), device.name()));
  }
  uint32_t* bound = reinterpret_cast<uint32_t*>(bound_.cpu());
  for (const Patch& patch : patches_) {
    if (patch.variable >= var_vals.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("submit to %s: the queue uses variable %d but var_vals has %d values", device_.name(),
                          patch.variable, var_vals.size()));
    }
    const uint64_t full = var_vals[patch.variable] + patch.addend;
    if ((full & patch.align_mask) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "submit to %s: variable %d = %#x (+ %#x) gives address %#x, which is not %d-byte aligned", device_.name(),
          patch.variable, var_vals[patch.variable], patch.addend, full, patch.align_mask + 1));
    }
    const uint32_t value = static_cast<uint32_t>(full >> patch.shift);
    commands_[patch.offset] = value;
    if (bound != nullptr) std::atomic_ref<uint32_t>(bound[patch.offset]).store(value, std::memory_order_relaxed);
  }
  for (const ArgsState* args : args_) {
    if (!args->Apply(var_vals)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("submit to %s: a kernel argument uses a variable beyond var_vals (%d values)", device_.name(),
                          var_vals.size()));
    }
  }
  if (bound != nullptr) {
    bound_submitted_ = true;
    return WriteIndirect(bound_.va(), static_cast<uint32_t>(commands_.size()));
  }
  return WriteRing(commands_);
}

}  // namespace hcq
