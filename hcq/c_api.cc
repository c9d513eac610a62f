// The C API (hcq/hcq.h) over the C++ interface.
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hcq/device.h"
#include "hcq/hcq.h"
#include "hcq/program.h"

struct hcq_device {
  std::unique_ptr<hcq::Device> device;
  std::unique_ptr<hcq_signal> timeline;
};
struct hcq_buffer {
  hcq::Device* device;
  hcq::Buffer buffer;
};
struct hcq_signal {
  hcq::Signal signal;
  bool owned;
};
struct hcq_queue {
  hcq::Device* device;
  std::unique_ptr<hcq::ComputeQueue> compute;
  std::unique_ptr<hcq::CopyQueue> copy;
  std::deque<hcq::ArgsState> args;  // stable addresses until the queue is reset
  absl::Status error;
  hcq::HwQueue& queue() { return compute ? static_cast<hcq::HwQueue&>(*compute) : *copy; }
};
struct hcq_program {
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

void Record(hcq_queue* q, absl::Status status) {
  if (q->error.ok()) q->error = std::move(status);
}

}  // namespace

extern "C" {

const char* hcq_last_error(void) { return last_error.c_str(); }

hcq_status hcq_device_open(const char* name, hcq_device** device) {
  if (name == nullptr || device == nullptr) return Null("name or device");
  auto opened = hcq::Device::Open(name);
  if (!opened.ok()) return Fail(opened.status());
  auto* d = new hcq_device{std::move(*opened), nullptr};
  d->timeline = std::make_unique<hcq_signal>(hcq_signal{d->device->timeline_signal(), false});
  *device = d;
  return HCQ_OK;
}

void hcq_device_close(hcq_device* device) { delete device; }

hcq_status hcq_device_synchronize(hcq_device* device) {
  if (device == nullptr) return Null("device");
  hcq_status status = Result(device->device->synchronize());
  device->timeline->signal = device->device->timeline_signal();  // a rollover swaps it
  return status;
}

hcq_signal* hcq_device_timeline_signal(hcq_device* device) { return device ? device->timeline.get() : nullptr; }
uint64_t hcq_device_timeline_value(const hcq_device* device) { return device ? device->device->timeline_value() : 0; }
uint64_t hcq_device_next_timeline(hcq_device* device) { return device ? device->device->next_timeline() : 0; }

hcq_status hcq_buffer_alloc(hcq_device* device, uint64_t size, int host, hcq_buffer** buffer) {
  if (device == nullptr || buffer == nullptr) return Null("device or buffer");
  auto made = device->device->allocator().alloc(size, {.kind = host ? hcq::MemoryKind::kHost : hcq::MemoryKind::kVram});
  if (!made.ok()) return Fail(made.status());
  *buffer = new hcq_buffer{device->device.get(), *made};
  return HCQ_OK;
}

void hcq_buffer_free(hcq_buffer* buffer) {
  if (buffer == nullptr) return;
  (void)buffer->device->allocator().free(buffer->buffer);
  delete buffer;
}

uint64_t hcq_buffer_address(const hcq_buffer* buffer) { return buffer ? buffer->buffer.va() : 0; }
uint64_t hcq_buffer_size(const hcq_buffer* buffer) { return buffer ? buffer->buffer.size() : 0; }
void* hcq_buffer_cpu(const hcq_buffer* buffer) { return buffer ? buffer->buffer.cpu() : nullptr; }

hcq_status hcq_buffer_copyin(hcq_buffer* buffer, const void* data, uint64_t size) {
  if (buffer == nullptr || (data == nullptr && size != 0)) return Null("buffer or data");
  return Result(buffer->device->allocator().copyin(buffer->buffer,
                                                   std::span<const uint8_t>(static_cast<const uint8_t*>(data), size)));
}

hcq_status hcq_buffer_copyout(void* data, hcq_buffer* buffer, uint64_t size) {
  if (buffer == nullptr || (data == nullptr && size != 0)) return Null("buffer or data");
  return Result(
      buffer->device->allocator().copyout(std::span<uint8_t>(static_cast<uint8_t*>(data), size), buffer->buffer));
}

hcq_status hcq_buffer_map(hcq_device* device, const hcq_buffer* buffer) {
  if (device == nullptr || buffer == nullptr) return Null("device or buffer");
  return Result(device->device->allocator().map(buffer->buffer));
}

hcq_status hcq_device_share_signals(hcq_device* device, hcq_device* peer) {
  if (device == nullptr || peer == nullptr) return Null("device or peer");
  return Result(device->device->ShareSignalsWith(*peer->device));
}

hcq_status hcq_signal_new(hcq_device* device, uint64_t value, hcq_signal** signal) {
  if (device == nullptr || signal == nullptr) return Null("device or signal");
  auto made = device->device->NewSignal(value);
  if (!made.ok()) return Fail(made.status());
  *signal = new hcq_signal{*made, true};
  return HCQ_OK;
}

void hcq_signal_free(hcq_signal* signal) {
  if (signal == nullptr || !signal->owned) return;
  signal->signal.device()->FreeSignal(signal->signal);
  delete signal;
}

uint64_t hcq_signal_value(const hcq_signal* signal) { return signal ? signal->signal.value() : 0; }
void hcq_signal_set_value(hcq_signal* signal, uint64_t value) {
  if (signal != nullptr) signal->signal.set_value(value);
}
hcq_status hcq_signal_wait(const hcq_signal* signal, uint64_t value, uint64_t timeout_ms) {
  if (signal == nullptr) return Null("signal");
  return Result(timeout_ms == 0 ? signal->signal.wait(value)
                                : signal->signal.wait(value, absl::Milliseconds(static_cast<int64_t>(timeout_ms))));
}
double hcq_signal_timestamp_us(const hcq_signal* signal) { return signal ? signal->signal.timestamp() : 0; }

hcq_status hcq_queue_new_compute(hcq_device* device, hcq_queue** queue) {
  if (device == nullptr || queue == nullptr) return Null("device or queue");
  *queue = new hcq_queue{device->device.get(), device->device->NewComputeQueue(), nullptr, {}, absl::OkStatus()};
  return HCQ_OK;
}

hcq_status hcq_queue_new_copy(hcq_device* device, hcq_queue** queue) {
  if (device == nullptr || queue == nullptr) return Null("device or queue");
  *queue = new hcq_queue{device->device.get(), nullptr, device->device->NewCopyQueue(), {}, absl::OkStatus()};
  return HCQ_OK;
}

void hcq_queue_free(hcq_queue* queue) { delete queue; }

void hcq_queue_reset(hcq_queue* queue) {
  if (queue == nullptr) return;
  queue->queue().reset();
  queue->args.clear();
  queue->error = absl::OkStatus();
}

static void WaitOrSignal(hcq_queue* q, const hcq_signal* s, hcq::Value value, bool wait) {
  if (q == nullptr) return;
  if (s == nullptr) return Record(q, absl::InvalidArgumentError("signal is NULL"));
  if (q->compute) {
    wait ? q->compute->wait(s->signal, value) : q->compute->signal(s->signal, value);
  } else {
    wait ? q->copy->wait(s->signal, value) : q->copy->signal(s->signal, value);
  }
}

void hcq_queue_wait(hcq_queue* q, const hcq_signal* s, uint64_t value) { WaitOrSignal(q, s, value, true); }
void hcq_queue_wait_var(hcq_queue* q, const hcq_signal* s, uint32_t v) { WaitOrSignal(q, s, hcq::Variable{v}, true); }
void hcq_queue_signal(hcq_queue* q, const hcq_signal* s, uint64_t value) { WaitOrSignal(q, s, value, false); }
void hcq_queue_signal_var(hcq_queue* q, const hcq_signal* s, uint32_t v) {
  WaitOrSignal(q, s, hcq::Variable{v}, false);
}

void hcq_queue_timestamp(hcq_queue* q, const hcq_signal* s) {
  if (q == nullptr) return;
  if (s == nullptr) return Record(q, absl::InvalidArgumentError("signal is NULL"));
  if (q->compute) {
    q->compute->timestamp(s->signal);
  } else {
    q->copy->timestamp(s->signal);
  }
}

void hcq_queue_memory_barrier(hcq_queue* q) {
  if (q == nullptr) return;
  if (!q->compute) return Record(q, absl::InvalidArgumentError("memory_barrier on a copy queue"));
  q->compute->memory_barrier();
}

void hcq_queue_copy(hcq_queue* q, uint64_t destination, uint64_t source, uint64_t size) {
  if (q == nullptr) return;
  if (!q->copy) return Record(q, absl::InvalidArgumentError("copy on a compute queue"));
  q->copy->copy(destination, source, size);
}

void hcq_queue_exec(hcq_queue* q, const hcq_program* program, hcq_buffer* const* buffers, size_t buffer_count,
                    const uint32_t* values, size_t value_count, const uint32_t global[3], const uint32_t local[3]) {
  if (q == nullptr) return;
  if (!q->compute) return Record(q, absl::InvalidArgumentError("exec on a copy queue"));
  if (program == nullptr || global == nullptr || local == nullptr || (buffer_count && !buffers) ||
      (value_count && !values)) {
    return Record(q, absl::InvalidArgumentError("exec with a NULL program, dimension or argument array"));
  }
  const hcq::Program& p = *program->program;
  auto args = q->device->NewArgs(std::max<uint64_t>(p.args_size(), 8 * buffer_count + 4 * value_count),
                                 static_cast<uint32_t>(buffer_count));
  if (!args.ok()) return Record(q, args.status());
  q->args.push_back(*args);
  hcq::ArgsState& a = q->args.back();
  for (size_t i = 0; i < buffer_count; ++i) a.set_buffer(static_cast<uint32_t>(i), buffers[i]->buffer);
  for (size_t i = 0; i < value_count; ++i) a.set_value(static_cast<uint32_t>(i), uint64_t{values[i]});
  q->compute->exec(p, a, {uint64_t{global[0]}, uint64_t{global[1]}, uint64_t{global[2]}},
                   {uint64_t{local[0]}, uint64_t{local[1]}, uint64_t{local[2]}});
}

hcq_status hcq_queue_bind(hcq_queue* q) {
  if (q == nullptr) return Null("queue");
  if (!q->error.ok()) return Fail(q->error);
  return Result(q->queue().bind(*q->device));
}

hcq_status hcq_queue_submit(hcq_queue* q, const uint64_t* values, size_t value_count) {
  if (q == nullptr) return Null("queue");
  if (!q->error.ok()) return Fail(q->error);
  return Result(q->queue().submit(*q->device, hcq::VarVals(values, values ? value_count : 0)));
}

hcq_status hcq_program_load(hcq_device* device, const void* code_object, size_t size, const char* kernel,
                            hcq_program** program) {
  if (device == nullptr || code_object == nullptr || kernel == nullptr || program == nullptr) {
    return Null("device, code object, kernel or program");
  }
  auto loaded =
      device->device->LoadProgram(std::span<const uint8_t>(static_cast<const uint8_t*>(code_object), size), kernel);
  if (!loaded.ok()) return Fail(loaded.status());
  *program = new hcq_program{std::move(*loaded)};
  return HCQ_OK;
}

void hcq_program_free(hcq_program* program) { delete program; }
uint64_t hcq_program_kernarg_size(const hcq_program* program) { return program ? program->program->kernarg_size() : 0; }

hcq_status hcq_program_run(hcq_program* program, hcq_buffer* const* buffers, size_t buffer_count,
                           const uint32_t* values, size_t value_count, const uint32_t global[3],
                           const uint32_t local[3], int wait, double* seconds) {
  if (program == nullptr || global == nullptr || local == nullptr || (buffer_count && !buffers) ||
      (value_count && !values)) {
    return Null("program, dimensions or argument arrays");
  }
  std::vector<hcq::Buffer> list;
  for (size_t i = 0; i < buffer_count; ++i) list.push_back(buffers[i]->buffer);
  auto time = (*program->program)(list, {uint64_t{global[0]}, uint64_t{global[1]}, uint64_t{global[2]}},
                                  {uint64_t{local[0]}, uint64_t{local[1]}, uint64_t{local[2]}},
                                  std::span<const uint32_t>(values, values ? value_count : 0), wait != 0);
  if (!time.ok()) return Fail(time.status());
  if (seconds != nullptr) *seconds = *time;
  return HCQ_OK;
}

}  // extern "C"
