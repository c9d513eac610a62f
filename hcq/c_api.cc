// The C API (hcq/hcq.h) over the C++ interface.
#include <algorithm>
#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "base/mutex.h"
#include "hcq/device.h"
#include "hcq/hcq.h"
#include "hcq/program.h"

// Every object holds the device's shared state, so closing the device first is safe: close destroys the queues'
// and programs' C++ objects (which reference the device) and then the device, and whatever the caller frees later
// only releases its handle. Calls on one device are serialised by its mutex, except signal reads, writes and waits
// (atomic on the signal's memory, and a wait must not block other calls).
struct DeviceState {
  base::Mutex mu;
  std::unique_ptr<hcq::Device> device ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<hcq_queue*> queues ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<hcq_program*> programs ABSL_GUARDED_BY(mu);
};
using State = std::shared_ptr<DeviceState>;

struct hcq_device {
  State state;
  std::unique_ptr<hcq_signal> timeline;
};
struct hcq_buffer {
  State state;
  hcq::Buffer buffer;
};
struct hcq_signal {
  State state;
  hcq::Signal signal;
  bool owned;
};
struct hcq_queue {
  State state;
  std::unique_ptr<hcq::ComputeQueue> compute;
  std::unique_ptr<hcq::CopyQueue> copy;
  std::deque<hcq::ArgsState> args;  // stable addresses until the queue is reset
  absl::Status error;
  bool alive() const { return compute || copy; }
  hcq::HwQueue& queue() { return compute ? static_cast<hcq::HwQueue&>(*compute) : *copy; }
};
struct hcq_program {
  State state;
  std::unique_ptr<hcq::Program> program;
};

namespace {

thread_local std::string last_error;

hcq_status Fail(const absl::Status& status) {
  last_error = status.ToString();
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return HCQ_OK;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return HCQ_ERROR_INVALID_ARGUMENT;
    case absl::StatusCode::kNotFound:
      return HCQ_ERROR_NOT_FOUND;
    case absl::StatusCode::kDeadlineExceeded:
      return HCQ_ERROR_TIMEOUT;
    case absl::StatusCode::kUnavailable:
      return HCQ_ERROR_UNAVAILABLE;
    case absl::StatusCode::kUnimplemented:
      return HCQ_ERROR_UNIMPLEMENTED;
    case absl::StatusCode::kResourceExhausted:
      return HCQ_ERROR_RESOURCE_EXHAUSTED;
    case absl::StatusCode::kFailedPrecondition:
      return HCQ_ERROR_FAILED_PRECONDITION;
    default:
      return HCQ_ERROR_INTERNAL;
  }
}
hcq_status Result(const absl::Status& status) { return status.ok() ? HCQ_OK : Fail(status); }
hcq_status Null(const char* what) { return Fail(absl::InvalidArgumentError(std::string(what) + " is NULL")); }
hcq_status Closed() {
  return Fail(absl::FailedPreconditionError("the device was closed; only freeing its objects is allowed now"));
}

void Record(hcq_queue* q, absl::Status status) {
  if (q->error.ok()) q->error = std::move(status);
}

// Runs `body`, turning any C++ exception into an error: none may cross the C boundary.
template <typename Body>
hcq_status Guarded(Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(absl::ResourceExhaustedError("out of host memory"));
  } catch (const std::exception& e) {
    return Fail(absl::InternalError(std::string("unexpected C++ exception: ") + e.what()));
  } catch (...) {
    return Fail(absl::InternalError("unexpected C++ exception"));
  }
}
template <typename Body>
void GuardedVoid(Body body) {
  (void)Guarded([&] {
    body();
    return HCQ_OK;
  });
}

// A queue command: the queue's device locked and alive, else the error is recorded for the next bind/submit. A body
// that takes the device gets it (so the thread-safety analysis sees it read under the lock).
template <typename Body>
void QueueCommand(hcq_queue* q, Body body) {
  if (q == nullptr) return;
  GuardedVoid([&] {
    base::MutexLock lock(&q->state->mu);
    if (!q->alive() || q->state->device == nullptr) {
      return Record(q, absl::FailedPreconditionError("the queue's device was closed"));
    }
    if constexpr (std::is_invocable_v<Body, hcq::Device&>) {
      body(*q->state->device);
    } else {
      body();
    }
  });
}

// Locks two devices' states in address order (no lock-order inversion when two threads pair the same devices both
// ways) and runs body(a's device, b's device), null for a closed one. The analysis cannot follow a lock order chosen
// at run time, hence the opt-out.
template <typename Body>
ABSL_NO_THREAD_SAFETY_ANALYSIS hcq_status WithTwoDevices(DeviceState& a, DeviceState& b, Body body) {
  DeviceState* first = std::min(&a, &b);
  DeviceState* second = std::max(&a, &b);
  base::MutexLock lock_first(&first->mu);
  base::MutexLock lock_second(&second->mu);
  return body(a.device.get(), b.device.get());
}

}  // namespace

extern "C" {

const char* hcq_last_error(void) { return last_error.c_str(); }

hcq_status hcq_device_open(const char* name, hcq_device** device) {
  if (name == nullptr || device == nullptr) return Null("name or device");
  return Guarded([&] {
    auto opened = hcq::Device::Open(name);
    if (!opened.ok()) return Fail(opened.status());
    auto state = std::make_shared<DeviceState>();
    hcq::Device& d = **opened;
    {
      base::MutexLock lock(&state->mu);
      state->device = std::move(*opened);
    }
    *device = new hcq_device{state, std::make_unique<hcq_signal>(hcq_signal{state, d.timeline_signal(), false})};
    return HCQ_OK;
  });
}

void hcq_device_close(hcq_device* device) {
  if (device == nullptr) return;
  GuardedVoid([&] {
    {
      base::MutexLock lock(&device->state->mu);
      // What references the device goes first: queues (their bound buffers), programs (their images).
      for (hcq_queue* q : device->state->queues) q->compute.reset(), q->copy.reset(), q->args.clear();
      for (hcq_program* p : device->state->programs) p->program.reset();
      device->state->queues.clear();
      device->state->programs.clear();
      device->state->device.reset();
    }
    delete device;
  });
}

// The device behind a handle, locked; null (with the error set) when it was closed.
#define HCQ_LOCK_DEVICE(state, lock_name)  \
  base::MutexLock lock_name(&(state)->mu); \
  if ((state)->device == nullptr) return Closed()

hcq_status hcq_device_synchronize(hcq_device* device) {
  if (device == nullptr) return Null("device");
  return Guarded([&] {
    HCQ_LOCK_DEVICE(device->state, lock);
    hcq_status status = Result(device->state->device->synchronize());
    device->timeline->signal = device->state->device->timeline_signal();  // a rollover swaps it
    return status;
  });
}

hcq_signal* hcq_device_timeline_signal(hcq_device* device) { return device ? device->timeline.get() : nullptr; }
uint64_t hcq_device_timeline_value(const hcq_device* device) {
  if (device == nullptr) return 0;
  base::MutexLock lock(&device->state->mu);
  return device->state->device ? device->state->device->timeline_value() : 0;
}
uint64_t hcq_device_next_timeline(hcq_device* device) {
  if (device == nullptr) return 0;
  base::MutexLock lock(&device->state->mu);
  return device->state->device ? device->state->device->next_timeline() : 0;
}

hcq_status hcq_buffer_alloc(hcq_device* device, uint64_t size, int host, hcq_buffer** buffer) {
  if (device == nullptr || buffer == nullptr) return Null("device or buffer");
  return Guarded([&] {
    HCQ_LOCK_DEVICE(device->state, lock);
    auto made = device->state->device->allocator().alloc(
        size, {.kind = host ? hcq::MemoryKind::kHost : hcq::MemoryKind::kVram});
    if (!made.ok()) return Fail(made.status());
    *buffer = new hcq_buffer{device->state, *made};
    return HCQ_OK;
  });
}

void hcq_buffer_free(hcq_buffer* buffer) {
  if (buffer == nullptr) return;
  GuardedVoid([&] {
    {
      base::MutexLock lock(&buffer->state->mu);
      // After the device closed its memory is gone with it: only the handle is left to release.
      if (buffer->state->device != nullptr) (void)buffer->state->device->allocator().free(buffer->buffer);
    }
    delete buffer;
  });
}

uint64_t hcq_buffer_address(const hcq_buffer* buffer) { return buffer ? buffer->buffer.va() : 0; }
uint64_t hcq_buffer_size(const hcq_buffer* buffer) { return buffer ? buffer->buffer.size() : 0; }
void* hcq_buffer_cpu(const hcq_buffer* buffer) {
  if (buffer == nullptr) return nullptr;
  base::MutexLock lock(&buffer->state->mu);
  return buffer->state->device ? buffer->buffer.cpu() : nullptr;
}

hcq_status hcq_buffer_copyin(hcq_buffer* buffer, const void* data, uint64_t size) {
  if (buffer == nullptr || (data == nullptr && size != 0)) return Null("buffer or data");
  return Guarded([&] {
    HCQ_LOCK_DEVICE(buffer->state, lock);
    return Result(buffer->state->device->allocator().copyin(
        buffer->buffer, std::span<const uint8_t>(static_cast<const uint8_t*>(data), size)));
  });
}

hcq_status hcq_buffer_copyout(void* data, hcq_buffer* buffer, uint64_t size) {
  if (buffer == nullptr || (data == nullptr && size != 0)) return Null("buffer or data");
  return Guarded([&] {
    HCQ_LOCK_DEVICE(buffer->state, lock);
    return Result(buffer->state->device->allocator().copyout(std::span<uint8_t>(static_cast<uint8_t*>(data), size),
                                                             buffer->buffer));
  });
}

hcq_status hcq_buffer_map(hcq_device* device, const hcq_buffer* buffer) {
  if (device == nullptr || buffer == nullptr) return Null("device or buffer");
  return Guarded([&] {
    if (device->state == buffer->state) return Fail(absl::InvalidArgumentError("the buffer is the device's own"));
    return WithTwoDevices(*device->state, *buffer->state, [&](hcq::Device* importer, hcq::Device* owner) {
      if (importer == nullptr || owner == nullptr) return Closed();
      return Result(importer->allocator().map(buffer->buffer));
    });
  });
}

hcq_status hcq_device_share_signals(hcq_device* device, hcq_device* peer) {
  if (device == nullptr || peer == nullptr) return Null("device or peer");
  return Guarded([&] {
    if (device->state == peer->state) return HCQ_OK;  // a device always reaches its own signals
    return WithTwoDevices(*device->state, *peer->state, [&](hcq::Device* owner, hcq::Device* importer) {
      if (owner == nullptr || importer == nullptr) return Closed();
      return Result(owner->ShareSignalsWith(*importer));
    });
  });
}

hcq_status hcq_signal_new(hcq_device* device, uint64_t value, hcq_signal** signal) {
  if (device == nullptr || signal == nullptr) return Null("device or signal");
  return Guarded([&] {
    HCQ_LOCK_DEVICE(device->state, lock);
    auto made = device->state->device->NewSignal(value);
    if (!made.ok()) return Fail(made.status());
    *signal = new hcq_signal{device->state, *made, true};
    return HCQ_OK;
  });
}

void hcq_signal_free(hcq_signal* signal) {
  if (signal == nullptr || !signal->owned) return;
  GuardedVoid([&] {
    {
      base::MutexLock lock(&signal->state->mu);
      if (signal->state->device != nullptr) signal->state->device->FreeSignal(signal->signal);
    }
    delete signal;
  });
}

// Signal values live in the device's signal pool: after the device closed they read 0 and writes are dropped.
uint64_t hcq_signal_value(const hcq_signal* signal) {
  if (signal == nullptr) return 0;
  base::ReaderMutexLock lock(&signal->state->mu);
  return signal->state->device ? signal->signal.value() : 0;
}
void hcq_signal_set_value(hcq_signal* signal, uint64_t value) {
  if (signal == nullptr) return;
  base::ReaderMutexLock lock(&signal->state->mu);
  if (signal->state->device) signal->signal.set_value(value);
}
hcq_status hcq_signal_wait(const hcq_signal* signal, uint64_t value, uint64_t timeout_ms) {
  if (signal == nullptr) return Null("signal");
  return Guarded([&] {
    // Shared: other calls on the device go on while this thread waits; close waits for the wait to end.
    base::ReaderMutexLock lock(&signal->state->mu);
    if (signal->state->device == nullptr) return Closed();
    return Result(timeout_ms == 0 ? signal->signal.wait(value)
                                  : signal->signal.wait(value, absl::Milliseconds(static_cast<int64_t>(timeout_ms))));
  });
}
double hcq_signal_timestamp_us(const hcq_signal* signal) {
  if (signal == nullptr) return 0;
  base::ReaderMutexLock lock(&signal->state->mu);
  return signal->state->device ? signal->signal.timestamp() : 0;
}

static hcq_status NewQueue(hcq_device* device, hcq_queue** queue, bool compute) {
  if (device == nullptr || queue == nullptr) return Null("device or queue");
  return Guarded([&] {
    HCQ_LOCK_DEVICE(device->state, lock);
    hcq::Device& d = *device->state->device;
    auto* q = new hcq_queue{device->state,
                            compute ? d.NewComputeQueue() : nullptr,
                            compute ? nullptr : d.NewCopyQueue(),
                            {},
                            absl::OkStatus()};
    device->state->queues.insert(q);
    *queue = q;
    return HCQ_OK;
  });
}
hcq_status hcq_queue_new_compute(hcq_device* device, hcq_queue** queue) { return NewQueue(device, queue, true); }
hcq_status hcq_queue_new_copy(hcq_device* device, hcq_queue** queue) { return NewQueue(device, queue, false); }

void hcq_queue_free(hcq_queue* queue) {
  if (queue == nullptr) return;
  GuardedVoid([&] {
    {
      base::MutexLock lock(&queue->state->mu);
      queue->state->queues.erase(queue);
      queue->compute.reset();
      queue->copy.reset();
    }
    delete queue;
  });
}

void hcq_queue_reset(hcq_queue* queue) {
  QueueCommand(queue, [&] {
    queue->queue().reset();
    queue->args.clear();
  });
  if (queue != nullptr) queue->error = absl::OkStatus();
}

static void WaitOrSignal(hcq_queue* q, const hcq_signal* s, hcq::Value value, bool wait) {
  QueueCommand(q, [&] {
    if (s == nullptr) return Record(q, absl::InvalidArgumentError("signal is NULL"));
    if (q->compute) {
      wait ? q->compute->wait(s->signal, value) : q->compute->signal(s->signal, value);
    } else {
      wait ? q->copy->wait(s->signal, value) : q->copy->signal(s->signal, value);
    }
  });
}

void hcq_queue_wait(hcq_queue* q, const hcq_signal* s, uint64_t value) { WaitOrSignal(q, s, value, true); }
void hcq_queue_wait_var(hcq_queue* q, const hcq_signal* s, uint32_t v) { WaitOrSignal(q, s, hcq::Variable{v}, true); }
void hcq_queue_signal(hcq_queue* q, const hcq_signal* s, uint64_t value) { WaitOrSignal(q, s, value, false); }
void hcq_queue_signal_var(hcq_queue* q, const hcq_signal* s, uint32_t v) {
  WaitOrSignal(q, s, hcq::Variable{v}, false);
}

void hcq_queue_timestamp(hcq_queue* q, const hcq_signal* s) {
  QueueCommand(q, [&] {
    if (s == nullptr) return Record(q, absl::InvalidArgumentError("signal is NULL"));
    if (q->compute) {
      q->compute->timestamp(s->signal);
    } else {
      q->copy->timestamp(s->signal);
    }
  });
}

void hcq_queue_memory_barrier(hcq_queue* q) {
  QueueCommand(q, [&] {
    if (!q->compute) return Record(q, absl::InvalidArgumentError("memory_barrier on a copy queue"));
    q->compute->memory_barrier();
  });
}

void hcq_queue_copy(hcq_queue* q, uint64_t destination, uint64_t source, uint64_t size) {
  QueueCommand(q, [&] {
    if (!q->copy) return Record(q, absl::InvalidArgumentError("copy on a compute queue"));
    q->copy->copy(destination, source, size);
  });
}

// The buffers' addresses, or an error naming the first NULL element.
static absl::Status CheckBuffers(hcq_buffer* const* buffers, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (buffers[i] == nullptr) return absl::InvalidArgumentError("buffers[" + std::to_string(i) + "] is NULL");
  }
  return absl::OkStatus();
}

void hcq_queue_exec(hcq_queue* q, const hcq_program* program, hcq_buffer* const* buffers, size_t buffer_count,
                    const uint32_t* values, size_t value_count, const uint32_t global[3], const uint32_t local[3]) {
  QueueCommand(q, [&](hcq::Device& device) {
    if (!q->compute) return Record(q, absl::InvalidArgumentError("exec on a copy queue"));
    if (program == nullptr || global == nullptr || local == nullptr || (buffer_count && !buffers) ||
        (value_count && !values)) {
      return Record(q, absl::InvalidArgumentError("exec with a NULL program, dimension or argument array"));
    }
    if (absl::Status ok = CheckBuffers(buffers, buffer_count); !ok.ok()) return Record(q, ok);
    if (program->state != q->state || program->program == nullptr) {
      return Record(q, absl::InvalidArgumentError("exec of a program of another (or a closed) device"));
    }
    const hcq::Program& p = *program->program;
    auto args = device.NewArgs(std::max<uint64_t>(p.args_size(), 8 * buffer_count + 4 * value_count),
                               static_cast<uint32_t>(buffer_count));
    if (!args.ok()) return Record(q, args.status());
    q->args.push_back(*args);
    hcq::ArgsState& a = q->args.back();
    for (size_t i = 0; i < buffer_count; ++i) a.set_buffer(static_cast<uint32_t>(i), buffers[i]->buffer);
    for (size_t i = 0; i < value_count; ++i) a.set_value(static_cast<uint32_t>(i), uint64_t{values[i]});
    q->compute->exec(p, a, {uint64_t{global[0]}, uint64_t{global[1]}, uint64_t{global[2]}},
                     {uint64_t{local[0]}, uint64_t{local[1]}, uint64_t{local[2]}});
  });
}

hcq_status hcq_queue_bind(hcq_queue* q) {
  if (q == nullptr) return Null("queue");
  return Guarded([&] {
    HCQ_LOCK_DEVICE(q->state, lock);
    if (!q->error.ok()) return Fail(q->error);
    return Result(q->queue().bind(*q->state->device));
  });
}

hcq_status hcq_queue_submit(hcq_queue* q, const uint64_t* values, size_t value_count) {
  if (q == nullptr) return Null("queue");
  return Guarded([&] {
    HCQ_LOCK_DEVICE(q->state, lock);
    if (!q->error.ok()) return Fail(q->error);
    return Result(q->queue().submit(*q->state->device, hcq::VarVals(values, values ? value_count : 0)));
  });
}

hcq_status hcq_program_load(hcq_device* device, const void* code_object, size_t size, const char* kernel,
                            hcq_program** program) {
  if (device == nullptr || code_object == nullptr || kernel == nullptr || program == nullptr) {
    return Null("device, code object, kernel or program");
  }
  return Guarded([&] {
    HCQ_LOCK_DEVICE(device->state, lock);
    auto loaded = device->state->device->LoadProgram(
        std::span<const uint8_t>(static_cast<const uint8_t*>(code_object), size), kernel);
    if (!loaded.ok()) return Fail(loaded.status());
    auto* p = new hcq_program{device->state, std::move(*loaded)};
    device->state->programs.insert(p);
    *program = p;
    return HCQ_OK;
  });
}

void hcq_program_free(hcq_program* program) {
  if (program == nullptr) return;
  GuardedVoid([&] {
    {
      base::MutexLock lock(&program->state->mu);
      program->state->programs.erase(program);
      program->program.reset();
    }
    delete program;
  });
}
uint64_t hcq_program_kernarg_size(const hcq_program* program) {
  if (program == nullptr) return 0;
  base::MutexLock lock(&program->state->mu);
  return program->program ? program->program->kernarg_size() : 0;
}

hcq_status hcq_program_run(hcq_program* program, hcq_buffer* const* buffers, size_t buffer_count,
                           const uint32_t* values, size_t value_count, const uint32_t global[3],
                           const uint32_t local[3], int wait, double* seconds) {
  if (program == nullptr || global == nullptr || local == nullptr || (buffer_count && !buffers) ||
      (value_count && !values)) {
    return Null("program, dimensions or argument arrays");
  }
  return Guarded([&] {
    if (absl::Status ok = CheckBuffers(buffers, buffer_count); !ok.ok()) return Fail(ok);
    HCQ_LOCK_DEVICE(program->state, lock);
    if (program->program == nullptr) return Closed();
    std::vector<hcq::Buffer> list;
    for (size_t i = 0; i < buffer_count; ++i) list.push_back(buffers[i]->buffer);
    auto time = (*program->program)(list, {uint64_t{global[0]}, uint64_t{global[1]}, uint64_t{global[2]}},
                                    {uint64_t{local[0]}, uint64_t{local[1]}, uint64_t{local[2]}},
                                    std::span<const uint32_t>(values, values ? value_count : 0), wait != 0);
    if (!time.ok()) return Fail(time.status());
    if (seconds != nullptr) *seconds = *time;
    return HCQ_OK;
  });
}

}  // extern "C"
