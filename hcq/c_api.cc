// The C API (hcq/hcq.h) over the C++ interface.
#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "hcq/args_pool.h"
#include "hcq/device.h"
#include "hcq/graph.h"
#include "hcq/hcq.h"
#include "hcq/program.h"

// Every object holds the device's shared state, so closing the device first is safe: close destroys the queues'
// and programs' C++ objects (which reference the device) and then the device, and whatever the caller frees later
// only releases its handle. Calls on one device are serialised by its mutex, except signal reads, writes and waits
// (atomic on the signal's memory, and a wait must not block other calls).
struct DeviceState {
  // Signal reads, writes and waits hold `wait_mu` shared instead of `mu`: a thread waiting for its work must not
  // hold up other threads' submits (with `mu` shared, every submit queued behind a waiting thread until its wait
  // ended: issue 23, defect 1). Close holds it exclusively, taken before `mu`, while it tears the device down, so it
  // waits for the waits in progress.
  base::Mutex wait_mu;
  hcq::Device* waitable ABSL_GUARDED_BY(wait_mu) = nullptr;  // the device while it is open
  base::Mutex mu;
  std::unique_ptr<hcq::Device> device ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<hcq_queue*> queues ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<hcq_program*> programs ABSL_GUARDED_BY(mu);
  // Graphs recording on this device: closing it releases their device resources first (they reach every device
  // of the graph, so close locks those too).
  absl::flat_hash_set<std::shared_ptr<struct GraphCore>> graphs ABSL_GUARDED_BY(mu);
  // hcq_queue_exec's kernel arguments, reclaimed as each queue's submissions complete (hcq/args_pool.h).
  std::unique_ptr<hcq::ArgsPool> args_pool ABSL_GUARDED_BY(mu);
};
using State = std::shared_ptr<DeviceState>;

struct hcq_device {
  State state;
  std::unique_ptr<hcq_signal> timeline;
};
// A buffer handle: an allocation or a view into one (hcq_buffer_view). The allocation is shared by the handle that
// allocated it and every view; the last of them to be freed frees it through the allocator. The shared_ptr's count
// changes only under the device's lock (alloc, view and free take it), so use_count() is exact there.
struct hcq_buffer {
  State state;
  hcq::Buffer buffer;                         // this handle's range
  std::shared_ptr<const hcq::Buffer> memory;  // the whole allocation
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
  std::deque<hcq::ArgsState> args;    // stable addresses until the queue is reset
  hcq::ArgsPool::Holder args_chunks;  // hcq_queue_exec's argument memory, from the device's pool
  absl::Status error;
  bool alive() const { return compute || copy; }
  hcq::HwQueue& queue() { return compute ? static_cast<hcq::HwQueue&>(*compute) : *copy; }
};
// What a graph handle and its devices share: the C++ graph, reset (by free or by a device's close) under the locks of
// every device it records on.
struct GraphCore {
  std::unique_ptr<hcq::Graph> graph;
  std::vector<std::shared_ptr<DeviceState>> states;  // the devices it records on, in address order
  absl::Status error;                                // the first bad entry, returned by finalize
};
struct hcq_graph {
  std::shared_ptr<GraphCore> core;
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
    case absl::StatusCode::kAborted:
      return HCQ_ERROR_DEVICE_FAULT;
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
    if constexpr (std::is_invocable_v<Body, hcq::Device&, hcq::ArgsPool&>) {
      body(*q->state->device, *q->state->args_pool);
    } else if constexpr (std::is_invocable_v<Body, hcq::Device&>) {
      body(*q->state->device);
    } else {
      body();
    }
  });
}

// A command both kinds of queue have (wait, signal, timestamp): body(queue) on the compute or the copy queue.
template <typename Body>
void OnEitherQueue(hcq_queue* q, Body body) {
  QueueCommand(q, [&] { q->compute ? body(*q->compute) : body(*q->copy); });
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

// An hcq_value as a command argument: a constant, or a variable plus its addend.
hcq::Value ToValue(const hcq_value& v) {
  return v.is_variable != 0 ? hcq::Value(hcq::Variable{v.variable}, v.value) : hcq::Value(v.value);
}

// The kernel-argument segment's alignment: AMDGPUUsage's kernarg segment is at least 16-byte aligned (HSA's
// minimum for kernarg_segment_alignment), which the kernels' s_load of their arguments rely on.
constexpr uint64_t kArgsAlignment = 16;

// Locks every state of a graph in address order (GraphCore::states is sorted) and runs body(), unlocking after. The
// analysis cannot follow a run-time set of locks, hence the opt-out.
template <typename Body>
ABSL_NO_THREAD_SAFETY_ANALYSIS auto WithGraphDevices(const GraphCore& core, Body body) {
  for (const State& s : core.states) s->mu.Lock();
  struct Unlock {
    const GraphCore& core;
    ~Unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      for (auto it = core.states.rbegin(); it != core.states.rend(); ++it) (*it)->mu.Unlock();
    }
  } unlock{core};
  return body();
}

// Adds `state` to the graph's devices (kept sorted by address, for the lock order).
void AddGraphDevice(GraphCore& core, const State& state) {
  auto at = std::lower_bound(core.states.begin(), core.states.end(), state,
                             [](const State& a, const State& b) { return a.get() < b.get(); });
  if (at == core.states.end() || *at != state) core.states.insert(at, state);
}

// Releases the graph's device resources (its bound queues and kernel-argument memory) and forgets it on every
// device; the caller holds every device of the graph. The devices must still be open: a device's close runs this
// before it destroys the device.
ABSL_NO_THREAD_SAFETY_ANALYSIS void ReleaseGraph(const std::shared_ptr<GraphCore>& core) {
  core->graph.reset();
  for (const State& s : core->states) s->graphs.erase(core);
}

// Records into the graph under the lock of the device it records on (added to the graph's devices); a recording
// that cannot be made is kept for finalize.
template <typename Body>
void RecordGraph(hcq_graph* graph, const State& state, Body body) {
  if (graph == nullptr) return;
  GuardedVoid([&] {
    GraphCore& core = *graph->core;
    base::MutexLock lock(&state->mu);
    if (state->device == nullptr || core.graph == nullptr) {
      if (core.error.ok()) core.error = absl::FailedPreconditionError("the graph's (or the entry's) device was closed");
      return;
    }
    if (absl::Status recorded = body(*core.graph); !recorded.ok()) {
      if (core.error.ok()) core.error = recorded;
      return;
    }
    if (!std::binary_search(core.states.begin(), core.states.end(), state,
                            [](const State& a, const State& b) { return a.get() < b.get(); })) {
      AddGraphDevice(core, state);
      state->graphs.insert(graph->core);
    }
  });
}

// Finalize, run and wait: every device of the graph locked and open.
template <typename Body>
hcq_status OnGraph(hcq_graph* graph, Body body) {
  if (graph == nullptr) return Null("graph");
  return Guarded([&] {
    return WithGraphDevices(*graph->core, [&]() -> hcq_status {
      GraphCore& core = *graph->core;
      if (core.graph == nullptr) return Closed();
      if (!core.error.ok()) return Fail(core.error);
      return Result(body(*core.graph));
    });
  });
}

}  // namespace

namespace {

// A wait that timed out or ended with a device fault: the device resets its busy queues (under its lock, like every use
// of the argument pool, which catches up with the recovery before its next fence) so that the next submission runs, and
// the message says what was reset. The caller holds wait_mu shared, which keeps the device open.
absl::Status RecoverAfterTimeout(DeviceState& state, const absl::Status& wait) {
  if (!absl::IsDeadlineExceeded(wait) && !absl::IsAborted(wait)) return wait;
  base::MutexLock lock(&state.mu);
  if (state.device == nullptr) return wait;
  return state.device->RecoverAfter(wait);
}

}  // namespace

extern "C" {

const char* hcq_last_error(void) { return last_error.c_str(); }

uint32_t hcq_api_version(void) { return HCQ_API_VERSION; }

hcq_status hcq_device_open(const char* name, hcq_device** device) { return hcq_device_open_flags(name, 0, device); }

hcq_status hcq_device_open_flags(const char* name, uint32_t flags, hcq_device** device) {
  if (name == nullptr || device == nullptr) return Null("name or device");
  constexpr uint32_t kKnownFlags = HCQ_DEVICE_PROFILE;
  if ((flags & ~kKnownFlags) != 0) {
    return Fail(absl::InvalidArgumentError(absl::StrFormat(
        "hcq_device_open_flags(%s): unknown flag bits %#x (known: %#x)", name, flags & ~kKnownFlags, kKnownFlags)));
  }
  return Guarded([&] {
    hcq::DeviceOptions options;
    options.profile = (flags & HCQ_DEVICE_PROFILE) != 0;
    auto opened = hcq::Device::Open(name, options);
    if (!opened.ok()) return Fail(opened.status());
    auto state = std::make_shared<DeviceState>();
    hcq::Device& d = **opened;
    {
      base::MutexLock lock(&state->mu);
      state->device = std::move(*opened);
      state->args_pool = std::make_unique<hcq::ArgsPool>(*state->device);
    }
    {
      base::MutexLock lock(&state->wait_mu);
      state->waitable = &d;
    }
    *device = new hcq_device{state, std::make_unique<hcq_signal>(hcq_signal{state, d.timeline_signal(), false})};
    return HCQ_OK;
  });
}

void hcq_device_close(hcq_device* device) {
  if (device == nullptr) return;
  GuardedVoid([&] {
    // Graphs first, under the locks of all their devices (taken in address order, so not under this one's).
    std::vector<std::shared_ptr<GraphCore>> graphs;
    {
      base::MutexLock lock(&device->state->mu);
      graphs.assign(device->state->graphs.begin(), device->state->graphs.end());
    }
    for (const std::shared_ptr<GraphCore>& core : graphs) WithGraphDevices(*core, [&] { ReleaseGraph(core); });
    {
      base::MutexLock wait_lock(&device->state->wait_mu);  // after the waits in progress
      device->state->waitable = nullptr;
      base::MutexLock lock(&device->state->mu);
      // What references the device goes first: queues (their bound buffers), programs (their images).
      for (hcq_queue* q : device->state->queues) {
        q->compute.reset(), q->copy.reset(), q->args.clear(), q->args_chunks.chunks.clear();
      }
      for (hcq_program* p : device->state->programs) p->program.reset();
      device->state->args_pool.reset();  // its memory goes with the device's, after the engines stopped
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

hcq_status hcq_device_get_properties(hcq_device* device, hcq_device_properties* properties) {
  if (device == nullptr || properties == nullptr) return Null("device or properties");
  if (properties->struct_size < sizeof(hcq_device_properties)) {
    return Fail(absl::InvalidArgumentError(absl::StrFormat(
        "hcq_device_get_properties: struct_size is %d, API %d.%d's hcq_device_properties has %d bytes (set "
        "struct_size = sizeof(hcq_device_properties))",
        properties->struct_size, HCQ_API_VERSION_MAJOR, HCQ_API_VERSION_MINOR, sizeof(hcq_device_properties))));
  }
  return Guarded([&] {
    HCQ_LOCK_DEVICE(device->state, lock);
    const hcq::Device& d = *device->state->device;
    const hcq::DeviceProperties p = d.properties();
    hcq_device_properties out{};
    out.struct_size = properties->struct_size;
    // NUL-terminated, truncated to the field (`out` starts zeroed, so the last byte stays 0).
    std::memcpy(out.name, d.name().data(), std::min(d.name().size(), sizeof(out.name) - 1));
    std::memcpy(out.arch, p.arch.data(), std::min(p.arch.size(), sizeof(out.arch) - 1));
    out.gfx_target_version = p.gfx_target_version;
    out.shader_engines = p.shader_engines;
    out.shader_arrays_per_engine = p.shader_arrays_per_engine;
    out.compute_units = p.compute_units;
    out.simds_per_cu = p.simds_per_cu;
    out.wave_size = p.wave_size;
    out.max_waves_per_simd = p.max_waves_per_simd;
    out.lds_bytes = p.lds_bytes;
    out.vram_bytes = p.vram_bytes;
    out.visible_vram_bytes = p.visible_vram_bytes;
    out.gc_version = p.gc_version;
    out.sdma_version = p.sdma_version;
    out.mmhub_version = p.mmhub_version;
    out.mp0_version = p.mp0_version;
    out.mp1_version = p.mp1_version;
    out.nbio_version = p.nbio_version;
    out.ih_version = p.ih_version;
    out.hdp_version = p.hdp_version;
    out.timestamp_hz = p.timestamp_hz;
    // Only this API's struct: a caller built against a later minor keeps its newer fields as they were.
    std::memcpy(properties, &out, sizeof(out));
    return HCQ_OK;
  });
}

hcq_status hcq_device_profile_json(hcq_device* device, char* out, size_t capacity, size_t* length) {
  if (device == nullptr || length == nullptr || (out == nullptr && capacity != 0)) {
    return Null("device, length or out (with a non-zero capacity)");
  }
  return Guarded([&] {
    HCQ_LOCK_DEVICE(device->state, lock);
    // The spans synchronize() collected (it reads them once the timeline says the work ran); spans of work not yet
    // synchronized are not read here, since their timestamps may not have been written.
    const std::string json = device->state->device->profiler().ChromeTraceJson();
    *length = json.size();
    if (capacity < json.size() + 1) {
      return Fail(absl::ResourceExhaustedError(absl::StrFormat(
          "hcq_device_profile_json: the trace has %d bytes (and a NUL), the capacity is %d", json.size(), capacity)));
    }
    std::memcpy(out, json.c_str(), json.size() + 1);
    return HCQ_OK;
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
    *buffer = new hcq_buffer{device->state, *made, std::make_shared<const hcq::Buffer>(*made)};
    return HCQ_OK;
  });
}

void hcq_buffer_free(hcq_buffer* buffer) {
  if (buffer == nullptr) return;
  GuardedVoid([&] {
    {
      base::MutexLock lock(&buffer->state->mu);
      // After the device closed its memory is gone with it: only the handle is left to release. Before, the last
      // handle of the allocation (the buffer or one of its views) frees it.
      if (buffer->state->device != nullptr && buffer->memory.use_count() == 1) {
        (void)buffer->state->device->allocator().free(*buffer->memory);
      }
      buffer->memory.reset();
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

hcq_status hcq_buffer_view(hcq_buffer* buffer, uint64_t offset, uint64_t size, hcq_buffer** view) {
  if (buffer == nullptr || view == nullptr) return Null("buffer or view");
  return Guarded([&] {
    HCQ_LOCK_DEVICE(buffer->state, lock);
    const uint64_t have = buffer->buffer.size();
    // Written so that offset + size cannot overflow.
    if (size == 0 || offset > have || size > have - offset) {
      return Fail(absl::InvalidArgumentError(
          absl::StrFormat("hcq_buffer_view: [%d, %d + %d) is %s of the %d-byte buffer", offset, offset, size,
                          size == 0 ? "an empty view" : "not inside", have)));
    }
    *view = new hcq_buffer{buffer->state, buffer->buffer.offset(offset, size), buffer->memory};
    return HCQ_OK;
  });
}

hcq_status hcq_buffer_wait(hcq_buffer* buffer, uint64_t offset, uint64_t value, uint64_t timeout_ms) {
  if (buffer == nullptr) return Null("buffer");
  return Guarded([&] {
    // As hcq_signal_wait: not under the device's lock.
    base::ReaderMutexLock lock(&buffer->state->wait_mu);
    if (buffer->state->waitable == nullptr) return Closed();
    const hcq::Buffer& b = buffer->buffer;
    if (offset % sizeof(uint32_t) != 0 || offset > b.size() || b.size() - offset < sizeof(uint32_t)) {
      return Fail(absl::InvalidArgumentError(
          absl::StrFormat("hcq_buffer_wait: offset %d is not a 4-byte aligned signal value inside the %d-byte buffer",
                          offset, b.size())));
    }
    if (value > hcq::Signal::kMaxValue) {
      return Fail(absl::InvalidArgumentError(absl::StrFormat(
          "hcq_buffer_wait for %d: signal values are 32 bits (at most %d)", value, hcq::Signal::kMaxValue)));
    }
    if (b.cpu() == nullptr) {
      return Fail(absl::FailedPreconditionError("hcq_buffer_wait: the CPU cannot map the buffer"));
    }
    const hcq::Signal signal(buffer->state->waitable, b.va() + offset, b.cpu() + offset,
                             b.base()->spec.kind == hcq::MemoryKind::kVram);
    return Result(RecoverAfterTimeout(
        *buffer->state, timeout_ms == 0 ? signal.wait(value)
                                        : signal.wait(value, absl::Milliseconds(static_cast<int64_t>(timeout_ms)))));
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
  base::ReaderMutexLock lock(&signal->state->wait_mu);
  return signal->state->waitable ? signal->signal.value() : 0;
}
void hcq_signal_set_value(hcq_signal* signal, uint64_t value) {
  if (signal == nullptr) return;
  base::ReaderMutexLock lock(&signal->state->wait_mu);
  if (signal->state->waitable) signal->signal.set_value(value);
}
hcq_status hcq_signal_wait(const hcq_signal* signal, uint64_t value, uint64_t timeout_ms) {
  if (signal == nullptr) return Null("signal");
  return Guarded([&] {
    // Not under the device's lock: other calls on the device go on while this thread waits; close waits for it.
    base::ReaderMutexLock lock(&signal->state->wait_mu);
    if (signal->state->waitable == nullptr) return Closed();
    return Result(RecoverAfterTimeout(
        *signal->state, timeout_ms == 0
                            ? signal->signal.wait(value)
                            : signal->signal.wait(value, absl::Milliseconds(static_cast<int64_t>(timeout_ms)))));
  });
}
double hcq_signal_timestamp_us(const hcq_signal* signal) {
  if (signal == nullptr) return 0;
  base::ReaderMutexLock lock(&signal->state->wait_mu);
  return signal->state->waitable ? signal->signal.timestamp() : 0;
}

static hcq_status NewQueue(hcq_device* device, hcq_queue** queue, bool compute) {
  if (device == nullptr || queue == nullptr) return Null("device or queue");
  return Guarded([&] {
    HCQ_LOCK_DEVICE(device->state, lock);
    hcq::Device& d = *device->state->device;
    auto* q = new hcq_queue{
        device->state,   compute ? d.NewComputeQueue() : nullptr, compute ? nullptr : d.NewCopyQueue(), {}, {},
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
      if (queue->state->args_pool) queue->state->args_pool->Release(queue->args_chunks);
    }
    delete queue;
  });
}

void hcq_queue_reset(hcq_queue* queue) {
  QueueCommand(queue, [&](hcq::Device&, hcq::ArgsPool& pool) {
    queue->queue().reset();
    queue->args.clear();
    pool.Release(queue->args_chunks);
  });
  if (queue != nullptr) queue->error = absl::OkStatus();
}

static void WaitOrSignal(hcq_queue* q, const hcq_signal* s, hcq::Value value, bool wait) {
  OnEitherQueue(q, [&](auto& queue) {
    if (s == nullptr) return Record(q, absl::InvalidArgumentError("signal is NULL"));
    wait ? queue.wait(s->signal, value) : queue.signal(s->signal, value);
  });
}

void hcq_queue_wait(hcq_queue* q, const hcq_signal* s, uint64_t value) { WaitOrSignal(q, s, value, true); }
void hcq_queue_wait_var(hcq_queue* q, const hcq_signal* s, uint32_t v) { WaitOrSignal(q, s, hcq::Variable{v}, true); }
void hcq_queue_signal(hcq_queue* q, const hcq_signal* s, uint64_t value) { WaitOrSignal(q, s, value, false); }
void hcq_queue_signal_var(hcq_queue* q, const hcq_signal* s, uint32_t v) {
  WaitOrSignal(q, s, hcq::Variable{v}, false);
}

void hcq_queue_timestamp(hcq_queue* q, const hcq_signal* s) {
  OnEitherQueue(q, [&](auto& queue) {
    if (s == nullptr) return Record(q, absl::InvalidArgumentError("signal is NULL"));
    queue.timestamp(s->signal);
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

void hcq_queue_wait_at(hcq_queue* q, hcq_value address, hcq_value value) {
  OnEitherQueue(q, [&](auto& queue) { queue.wait_at(ToValue(address), ToValue(value)); });
}

void hcq_queue_signal_at(hcq_queue* q, hcq_value address, hcq_value value) {
  OnEitherQueue(q, [&](auto& queue) { queue.signal_at(ToValue(address), ToValue(value)); });
}

void hcq_queue_timestamp_at(hcq_queue* q, hcq_value address) {
  OnEitherQueue(q, [&](auto& queue) { queue.timestamp_at(ToValue(address)); });
}

void hcq_queue_copy_at(hcq_queue* q, hcq_value destination, hcq_value source, uint64_t size) {
  QueueCommand(q, [&] {
    if (!q->copy) return Record(q, absl::InvalidArgumentError("copy_at on a compute queue"));
    q->copy->copy(ToValue(destination), ToValue(source), size);
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
  QueueCommand(q, [&](hcq::Device&, hcq::ArgsPool& pool) {
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
    const hcq::Dims global_dims{uint64_t{global[0]}, uint64_t{global[1]}, uint64_t{global[2]}};
    const hcq::Dims local_dims{uint64_t{local[0]}, uint64_t{local[1]}, uint64_t{local[2]}};
    if (absl::Status ok = p.CheckArgumentLayout(buffer_count, value_count); !ok.ok()) return Record(q, ok);
    if (absl::Status ok = p.CheckLocalSize(local_dims); !ok.ok()) return Record(q, ok);
    auto args = pool.Take(q->args_chunks, std::max<uint64_t>(p.args_size(), 8 * buffer_count + 4 * value_count),
                          static_cast<uint32_t>(buffer_count));
    if (!args.ok()) return Record(q, args.status());
    q->args.push_back(*args);
    hcq::ArgsState& a = q->args.back();
    for (size_t i = 0; i < buffer_count; ++i) a.set_buffer(static_cast<uint32_t>(i), buffers[i]->buffer);
    for (size_t i = 0; i < value_count; ++i) a.set_value(static_cast<uint32_t>(i), uint64_t{values[i]});
    q->compute->exec(p, a, global_dims, local_dims);
  });
}

void hcq_queue_exec_at(hcq_queue* q, const hcq_program* program, hcq_buffer* args, uint64_t args_offset,
                       const hcq_value global[3], const hcq_value local[3]) {
  QueueCommand(q, [&] {
    if (!q->compute) return Record(q, absl::InvalidArgumentError("exec_at on a copy queue"));
    if (program == nullptr || args == nullptr || global == nullptr || local == nullptr) {
      return Record(q, absl::InvalidArgumentError("exec_at with a NULL program, argument buffer or dimension array"));
    }
    if (program->state != q->state || program->program == nullptr) {
      return Record(q, absl::InvalidArgumentError("exec_at of a program of another (or a closed) device"));
    }
    const hcq::Program& p = *program->program;
    if (args->state != q->state) {
      return Record(q, absl::InvalidArgumentError(
                           absl::StrFormat("exec_at of %s with an argument buffer of another device", p.name())));
    }
    const hcq::Buffer& memory = args->buffer;
    // The queue writes the hidden arguments and the dispatch packet through the CPU.
    if (memory.cpu() == nullptr) {
      return Record(q, absl::InvalidArgumentError(absl::StrFormat(
                           "exec_at of %s: the argument buffer at %#x is not CPU-visible", p.name(), memory.va())));
    }
    if (args_offset % kArgsAlignment != 0) {
      return Record(q,
                    absl::InvalidArgumentError(absl::StrFormat("exec_at of %s: args_offset %d is not %d-byte aligned",
                                                               p.name(), args_offset, kArgsAlignment)));
    }
    if (args_offset > memory.size() || p.args_size() > memory.size() - args_offset) {
      return Record(q, absl::InvalidArgumentError(absl::StrFormat(
                           "exec_at of %s: %d bytes of arguments at offset %d run past the %d-byte argument buffer",
                           p.name(), p.args_size(), args_offset, memory.size())));
    }
    const hcq::Dims global_dims{ToValue(global[0]), ToValue(global[1]), ToValue(global[2])};
    const hcq::Dims local_dims{ToValue(local[0]), ToValue(local[1]), ToValue(local[2])};
    if (absl::Status ok = p.CheckLocalSize(local_dims); !ok.ok()) return Record(q, ok);
    // The queue owns the launch's argument state until it is reset (the caller owns the memory).
    q->args.emplace_back(memory.cpu() + args_offset, memory.va() + args_offset, p.args_size(), 0);
    q->compute->exec(p, q->args.back(), global_dims, local_dims);
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
    absl::Status submitted = q->queue().submit(*q->state->device, hcq::VarVals(values, values ? value_count : 0));
    if (!submitted.ok()) return Fail(submitted);
    // The launches' arguments stay the queue's until a fence behind this submission lands.
    return Result(q->state->args_pool->Submitted(q->args_chunks));
  });
}

hcq_status hcq_graph_new(uint32_t variables, hcq_graph** graph) {
  if (graph == nullptr) return Null("graph");
  return Guarded([&] {
    auto core = std::make_shared<GraphCore>();
    core->graph = std::make_unique<hcq::Graph>(variables);
    *graph = new hcq_graph{std::move(core)};
    return HCQ_OK;
  });
}

void hcq_graph_free(hcq_graph* graph) {
  if (graph == nullptr) return;
  GuardedVoid([&] {
    WithGraphDevices(*graph->core, [&] { ReleaseGraph(graph->core); });
    delete graph;
  });
}

void hcq_graph_add_kernel(hcq_graph* graph, const hcq_program* program, hcq_buffer* const* buffers, size_t buffer_count,
                          const hcq_value* values, size_t value_count, const hcq_value global[3],
                          const hcq_value local[3]) {
  if (graph == nullptr) return;
  if (program == nullptr || global == nullptr || local == nullptr || (buffer_count && !buffers) ||
      (value_count && !values)) {
    if (graph->core->error.ok()) {
      graph->core->error = absl::InvalidArgumentError("add_kernel with a NULL program, dimension or argument array");
    }
    return;
  }
  RecordGraph(graph, program->state, [&](hcq::Graph& g) {
    BAREGPU_RETURN_IF_ERROR(CheckBuffers(buffers, buffer_count));
    if (program->program == nullptr) return absl::FailedPreconditionError("add_kernel of a freed program");
    const hcq::Dims local_dims{ToValue(local[0]), ToValue(local[1]), ToValue(local[2])};
    BAREGPU_RETURN_IF_ERROR(program->program->CheckArgumentLayout(buffer_count, value_count));
    BAREGPU_RETURN_IF_ERROR(program->program->CheckLocalSize(local_dims));
    std::vector<hcq::Buffer> list;
    for (size_t i = 0; i < buffer_count; ++i) list.push_back(buffers[i]->buffer);
    std::vector<hcq::Value> vals;
    for (size_t i = 0; i < value_count; ++i) vals.push_back(ToValue(values[i]));
    g.AddKernel(*program->program, list, vals, {ToValue(global[0]), ToValue(global[1]), ToValue(global[2])},
                local_dims);
    return absl::OkStatus();
  });
}

void hcq_graph_add_copy(hcq_graph* graph, hcq_device* device, uint64_t destination, uint64_t source, uint64_t size) {
  if (graph == nullptr) return;
  if (device == nullptr) {
    if (graph->core->error.ok()) graph->core->error = absl::InvalidArgumentError("add_copy with a NULL device");
    return;
  }
  RecordGraph(graph, device->state, [&](hcq::Graph& g) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    g.AddCopy(*device->state->device, destination, source, size);
    return absl::OkStatus();
  });
}

hcq_status hcq_graph_finalize(hcq_graph* graph) {
  return OnGraph(graph, [](hcq::Graph& g) { return g.Finalize(); });
}

hcq_status hcq_graph_run(hcq_graph* graph, const uint64_t* values, size_t value_count) {
  if (values == nullptr && value_count != 0) return Null("values");
  return OnGraph(graph, [&](hcq::Graph& g) { return g.Run(hcq::VarVals(values, values ? value_count : 0)); });
}

hcq_status hcq_graph_wait(hcq_graph* graph) {
  return OnGraph(graph, [](hcq::Graph& g) { return g.Wait(); });
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

uint64_t hcq_program_args_size(const hcq_program* program) {
  if (program == nullptr) return 0;
  base::MutexLock lock(&program->state->mu);
  return program->program ? program->program->args_size() : 0;
}

hcq_status hcq_program_arguments(const hcq_program* program, uint32_t* offsets, uint32_t* sizes, size_t capacity,
                                 size_t* count) {
  if (program == nullptr || count == nullptr || (capacity != 0 && (offsets == nullptr || sizes == nullptr))) {
    return Null("program, count, offsets or sizes (with a non-zero capacity)");
  }
  return Guarded([&] {
    base::MutexLock lock(&program->state->mu);
    if (program->program == nullptr) return Closed();
    const std::vector<hcq::ProgramArgument>& arguments = program->program->metadata().arguments;
    *count = arguments.size();
    for (size_t i = 0; i < std::min(capacity, arguments.size()); ++i) {
      offsets[i] = arguments[i].offset;
      sizes[i] = arguments[i].size;
    }
    return HCQ_OK;
  });
}

hcq_status hcq_program_required_local(const hcq_program* program, uint32_t local[3]) {
  if (program == nullptr || local == nullptr) return Null("program or local");
  return Guarded([&] {
    base::MutexLock lock(&program->state->mu);
    if (program->program == nullptr) return Closed();
    const std::array<uint32_t, 3>& required = program->program->metadata().required_local;
    std::copy(required.begin(), required.end(), local);
    return HCQ_OK;
  });
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
    const hcq::Program& p = *program->program;
    const hcq::Dims global_dims{uint64_t{global[0]}, uint64_t{global[1]}, uint64_t{global[2]}};
    const hcq::Dims local_dims{uint64_t{local[0]}, uint64_t{local[1]}, uint64_t{local[2]}};
    if (absl::Status ok = p.CheckArgumentLayout(buffer_count, value_count); !ok.ok()) return Fail(ok);
    if (absl::Status ok = p.CheckLocalSize(local_dims); !ok.ok()) return Fail(ok);
    std::vector<hcq::Buffer> list;
    for (size_t i = 0; i < buffer_count; ++i) list.push_back(buffers[i]->buffer);
    auto time = (*program->program)(list, global_dims, local_dims,
                                    std::span<const uint32_t>(values, values ? value_count : 0), wait != 0);
    if (!time.ok()) return Fail(time.status());
    if (seconds != nullptr) *seconds = *time;
    return HCQ_OK;
  });
}

}  // extern "C"
