// Hardware command queues. A queue is built by chaining commands into a command buffer in the device's own packet
// format, then submitted: copied into the device's ring, or, once bound, put in device memory once and submitted
// by an indirect-buffer packet. Commands may take variables (hcq/variable.h); submit patches their values in
// place. The command buffer keeps its capacity across reset(), so a warmed-up queue builds and submits without
// allocating; a device's queues are submitted from one thread at a time.
//
// Building never fails on the spot: a bad command (an exec with a program of another device...) is remembered and
// returned by the next bind or submit.
#ifndef BAREGPU_HCQ_HW_QUEUE_H_
#define BAREGPU_HCQ_HW_QUEUE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "hcq/buffer.h"
#include "hcq/signal.h"
#include "hcq/variable.h"

namespace hcq {

class ArgsState;
class Device;
class Program;

using Dims = std::array<Value, 3>;

// Which of a device's engines a queue runs on (the ring its submissions go to).
enum class QueueEngine { kCompute, kCopy };

class HwQueue {
 public:
  virtual ~HwQueue();
  HwQueue(const HwQueue&) = delete;
  HwQueue& operator=(const HwQueue&) = delete;

  // Puts the command buffer into `device`'s memory once; later submits to that device only reference it.
  absl::Status bind(Device& device);
  // Puts the queue on `device`; var_vals gives the variables' values for this submission. A bound queue is
  // patched in place: resubmit it with other values only after its previous submission ran (as Graph does).
  absl::Status submit(Device& device, VarVals var_vals = {});
  // Forgets every command (keeping capacity) and the binding. A binding that was submitted is retired, not freed:
  // the engine may still be reading it (hcq/retired_memory.h); so is it when the queue is rebound or destroyed.
  void reset();

  // A queue is one thread's at a time (hcq/device.h says what else is). Building, binding, submitting and resetting
  // hold the queue for the calling thread; in a library built without NDEBUG a second thread that enters while another
  // holds it aborts the process with a message naming the queue's device, instead of interleaving commands silently. A
  // caller may hold it across several calls (nested holds by one thread are fine).
  class UseScope {
   public:
    explicit UseScope(const HwQueue& queue);
    ~UseScope();
    UseScope(const UseScope&) = delete;
    UseScope& operator=(const UseScope&) = delete;

   private:
    const HwQueue& queue_;
    bool outer_;
  };

  // Bracket execs and copies with profiler timestamps (DeviceOptions::profile by default). Graphs turn it off for
  // their bound queues (a span's signals are read and recycled after one submission) and bracket each entry with
  // signals of their own instead.
  void set_profiling(bool on) { profiling_ = on; }

  // What the engines need of an address given to wait_at/signal_at (a 32-bit value: WAIT_REG_MEM and RELEASE_MEM
  // DATA_SEL 1 take a dword address, bits 1:0 being WAIT_REG_MEM's swap field; SDMA FENCE and POLL_REGMEM write and
  // read a dword) and to timestamp_at (64 bits: RELEASE_MEM DATA_SEL 3, SDMA TIMESTAMP's write_addr_31_3).
  static constexpr uint64_t kSignalAlignment = 4;
  static constexpr uint64_t kTimestampAlignment = 8;
  std::span<const uint32_t> dwords() const { return commands_; }
  const std::vector<Patch>& patches() const { return patches_; }
  bool bound() const { return bound_.valid(); }
  Device& device() const { return device_; }

 protected:
  HwQueue(Device& device, QueueEngine engine);

  void WaitCommand(const Signal& signal, Value value);
  void SignalCommand(const Signal& signal, Value value);
  void TimestampCommand(const Signal& signal);
  // The same by address (a constant, or a variable patched at submit): a signal is its value's address, a timestamp
  // the address of 64 bits. A constant address that is not aligned (kSignalAlignment, kTimestampAlignment) fails the
  // next bind/submit; a variable one fails the submit whose value misaligns it.
  void WaitAtCommand(Value address, Value value);
  void SignalAtCommand(Value address, Value value);
  void TimestampAtCommand(Value address);

  // The backend's encodings. An address is a constant, or a variable the backend patches with PatchAddress.
  virtual void EmitWait(Value address, Value value) = 0;
  virtual void EmitSignal(Value address, Value value) = 0;
  virtual void EmitTimestamp(Value address) = 0;
  // Writes `dwords` into the device's ring (unbound queues) or an indirect-buffer packet for `bound`.
  virtual absl::Status WriteRing(std::span<const uint32_t> dwords) = 0;
  virtual absl::Status WriteIndirect(uint64_t va, uint32_t dwords) = 0;
  // Bound command buffers: the address alignment and the dword granularity the engine wants.
  virtual uint32_t bind_alignment() const { return 256; }
  // Before a bind copies the commands: pad them as the engine wants, check they fit its indirect buffers.
  virtual absl::Status PrepareBind() { return absl::OkStatus(); }

  // Appends dwords; returns the offset of the first.
  uint32_t Emit(std::initializer_list<uint32_t> dwords);
  uint32_t Emit(std::span<const uint32_t> dwords);
  // The dword at `offset` takes `value`: written now when constant, recorded when a variable.
  void Set(uint32_t offset, Value value);
  // A 64-bit address in the dwords at `lo` and `hi`: nothing to do for a constant (the encoder wrote it), two patches
  // (low and high half) for a variable; the low one checks `alignment` at submit.
  void PatchAddress(uint32_t lo, uint32_t hi, Value address, uint64_t alignment);
  void Fail(absl::Status status) {
    if (error_.ok()) error_ = std::move(status);
  }
  void AddArgs(ArgsState* args);
  // Lets go of the bound buffer: retired when it was submitted, freed otherwise.
  void DropBinding();

  Device& device_;
  std::vector<uint32_t> commands_;
  std::vector<Patch> patches_;
  std::vector<ArgsState*> args_;
  absl::Status error_;
  Buffer bound_;
  bool bound_submitted_ = false;  // an indirect-buffer packet for bound_ went to the ring
  QueueEngine engine_;
  bool profiling_;
  // The thread holding the queue (UseScope), none when free. Present in every build (the layout of an installed
  // class must not depend on the user's NDEBUG); the library's own build decides whether it is checked.
  mutable std::atomic<std::thread::id> user_{};
};

class ComputeQueue : public HwQueue {
 public:
  ComputeQueue& wait(const Signal& signal, Value value) { return WaitCommand(signal, value), *this; }
  ComputeQueue& signal(const Signal& signal, Value value) { return SignalCommand(signal, value), *this; }
  ComputeQueue& timestamp(const Signal& signal) { return TimestampCommand(signal), *this; }
  // By address, for signal slots the caller lays out (hcq.h: the 32-bit value at +0, the timestamp at +8) and for
  // addresses known only at submit.
  ComputeQueue& wait_at(Value address, Value value) { return WaitAtCommand(address, value), *this; }
  ComputeQueue& signal_at(Value address, Value value) { return SignalAtCommand(address, value), *this; }
  ComputeQueue& timestamp_at(Value address) { return TimestampAtCommand(address), *this; }
  // Runs `program` over global (workgroups) x local (threads per workgroup) with `args` as kernel arguments.
  virtual ComputeQueue& exec(const Program& program, ArgsState& args, const Dims& global, const Dims& local) = 0;
  // Makes host writes visible to the GPU and GPU caches coherent before the next command.
  virtual ComputeQueue& memory_barrier() = 0;

 protected:
  explicit ComputeQueue(Device& device) : HwQueue(device, QueueEngine::kCompute) {}
};

class CopyQueue : public HwQueue {
 public:
  CopyQueue& wait(const Signal& signal, Value value) { return WaitCommand(signal, value), *this; }
  CopyQueue& signal(const Signal& signal, Value value) { return SignalCommand(signal, value), *this; }
  CopyQueue& timestamp(const Signal& signal) { return TimestampCommand(signal), *this; }
  CopyQueue& wait_at(Value address, Value value) { return WaitAtCommand(address, value), *this; }
  CopyQueue& signal_at(Value address, Value value) { return SignalAtCommand(address, value), *this; }
  CopyQueue& timestamp_at(Value address) { return TimestampAtCommand(address), *this; }
  // Copies `size` bytes between device addresses, split into the engine's largest packets. Either address may be a
  // variable (each packet then patches it with the bytes copied before it as addend).
  virtual CopyQueue& copy(Value destination, Value source, uint64_t size) = 0;

 protected:
  explicit CopyQueue(Device& device) : HwQueue(device, QueueEngine::kCopy) {}
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_HW_QUEUE_H_
