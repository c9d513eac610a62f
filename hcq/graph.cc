#include "hcq/graph.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "hcq/device.h"
#include "hcq/program.h"

namespace hcq {

Graph::~Graph() {
  // The last run may still be running: in each segment the device's timeline signal (what Device::synchronize
  // waits for) comes before the handover signal, so the handovers say when the run's signals and kernel arguments
  // are free (hcq_bench's graph replay read freed memory under load before, session 14). Even then an engine reads
  // its indirect buffer past the handover (an SDMA IB's NOP padding: CI, session 17), so the queues' buffers are
  // retired behind a marker (hcq/retired_memory.h) rather than freed here.
  if (finalized_) {
    if (absl::Status waited = Wait(); !waited.ok()) {
      // The engines did not finish: their queues, signals and arguments stay allocated rather than freed under them.
      BAREGPU_LOG(kError, "hcq: a graph destroyed while its last run did not finish (%s): its queues are leaked",
                  waited.message());
      for (Segment& s : segments_) (void)s.queue.release();
      return;
    }
  }
  segments_.clear();
  for (Entry& e : entries_) {
    if (e.profile_start.valid()) e.device->FreeSignal(e.profile_start);
    if (e.profile_end.valid()) e.device->FreeSignal(e.profile_end);
  }
  for (PerDevice& d : devices_) {
    if (d.kernargs.valid()) (void)d.device->allocator().free(d.kernargs);
    if (d.signal.valid()) d.device->FreeSignal(d.signal);
  }
}

bool Graph::Overlaps(std::span<const std::pair<uint64_t, uint64_t>> a,
                     std::span<const std::pair<uint64_t, uint64_t>> b) {
  for (const auto& [begin_a, end_a] : a) {
    for (const auto& [begin_b, end_b] : b) {
      if (begin_a < end_b && begin_b < end_a) return true;
    }
  }
  return false;
}

Graph::PerDevice* Graph::Find(Device* device) {
  for (PerDevice& d : devices_) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

void Graph::AddKernel(const Program& program, std::span<const Buffer> buffers, std::span<const Value> values,
                      const Dims& global, const Dims& local) {
  Entry e{.device = &program.device(), .program = &program};
  for (const Buffer& b : buffers) {
    e.buffers.push_back(b.va());
    e.ranges.emplace_back(b.va(), b.va() + b.size());
  }
  e.values.assign(values.begin(), values.end());
  e.global = global;
  e.local = local;
  entries_.push_back(std::move(e));
}

void Graph::AddCopy(Device& device, uint64_t destination, uint64_t source, uint64_t size) {
  entries_.push_back({.device = &device,
                      .destination = destination,
                      .source = source,
                      .size = size,
                      .ranges = {{destination, destination + size}, {source, source + size}}});
}

absl::Status Graph::Finalize() {
  if (finalized_) return absl::FailedPreconditionError("graph finalized twice");
  if (entries_.empty()) return absl::FailedPreconditionError("a graph with no kernels or copies");
  // Per device: a handover signal and the kernel arguments of all its launches.
  for (const Entry& e : entries_) {
    if (Find(e.device) == nullptr) devices_.push_back({.device = e.device});
  }
  auto args_bytes = [](const Entry& e) {
    const uint64_t size = std::max<uint64_t>(e.program->args_size(), 8 * e.buffers.size() + 4 * e.values.size());
    return (size + 255) & ~uint64_t{255};
  };
  for (PerDevice& d : devices_) {
    BAREGPU_ASSIGN_OR_RETURN(d.signal, d.device->NewSignal(0));
    uint64_t bytes = 0;
    for (const Entry& e : entries_) {
      if (e.device == d.device && e.program != nullptr) bytes += args_bytes(e);
    }
    if (bytes > 0) {
      BAREGPU_ASSIGN_OR_RETURN(d.kernargs, d.device->allocator().alloc(bytes, {.kind = MemoryKind::kHost}));
      std::memset(d.kernargs.cpu(), 0, bytes);
    }
  }
  // Segments: maximal runs of one device's entries on one engine, in recorded order per device.
  std::vector<uint64_t> kernarg_used(devices_.size(), 0);
  std::vector<int> last_segment(devices_.size(), -1);
  const uint32_t device_vars = user_variables_;
  const uint32_t segment_vars = device_vars + 2 * static_cast<uint32_t>(devices_.size());
  auto device_index = [&](Device* device) { return static_cast<uint32_t>(Find(device) - devices_.data()); };
  std::vector<bool> last_is_copy(devices_.size(), false);
  for (Entry& e : entries_) {
    const uint32_t di = device_index(e.device);
    PerDevice& d = devices_[di];
    const bool is_copy = e.program == nullptr;
    if (last_segment[di] < 0 || last_is_copy[di] != is_copy || segments_[last_segment[di]].closed) {
      const int previous = last_segment[di];
      Segment s{.device = e.device, .index_on_device = d.segments++, .last_on_device = false};
      if (is_copy) {
        s.queue = e.device->NewCopyQueue();
      } else {
        s.queue = e.device->NewComputeQueue();
      }
      s.queue->set_profiling(false);
      segments_.push_back(std::move(s));
      last_segment[di] = static_cast<int>(segments_.size() - 1);
      last_is_copy[di] = is_copy;
      // Its start: the device's earlier work, or the previous segment of this graph on the device.
      HwQueue* q = segments_.back().queue.get();
      const Value wait_for = segments_.back().index_on_device == 0
                                 ? Value(Variable{device_vars + 2 * di})
                                 : Value(Variable{segment_vars + static_cast<uint32_t>(previous)});
      const Signal& wait_on = segments_.back().index_on_device == 0 ? d.device->timeline_signal() : d.signal;
      if (is_copy) {
        static_cast<CopyQueue*>(q)->wait(wait_on, wait_for);
      } else {
        static_cast<ComputeQueue*>(q)->wait(wait_on, wait_for).memory_barrier();
      }
    }
    Segment& current = segments_[last_segment[di]];
    HwQueue* q = current.queue.get();
    // Cross-device edges: wait for the latest segment of each other device that touched this entry's memory.
    for (size_t oi = 0; oi < devices_.size(); ++oi) {
      if (oi == di || last_segment[oi] < 0) continue;
      for (int si = last_segment[oi]; si >= 0; --si) {
        Segment& other = segments_[si];
        if (other.device != devices_[oi].device || !Overlaps(other.ranges, e.ranges)) continue;
        if (!devices_[oi].device->SignalsReachableFrom(*e.device)) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "graph entry %d on %s uses memory an earlier entry on %s used, but %s cannot reach %s's signals to wait "
              "for it: call %s.ShareSignalsWith(%s)",
              &e - entries_.data(), e.device->name(), other.device->name(), e.device->name(), other.device->name(),
              other.device->name(), e.device->name()));
        }
        const Value handover = Variable{segment_vars + static_cast<uint32_t>(si)};
        if (is_copy) {
          static_cast<CopyQueue*>(q)->wait(devices_[oi].signal, handover);
        } else {
          static_cast<ComputeQueue*>(q)->wait(devices_[oi].signal, handover).memory_barrier();
        }
        other.closed = true;
        break;  // earlier segments of that device are ordered before this one
      }
    }
    current.ranges.insert(current.ranges.end(), e.ranges.begin(), e.ranges.end());
    if (e.device->options().profile) {
      // The graph's own pair: a queue's profiler signals are recycled after one submission, these are replayed.
      BAREGPU_ASSIGN_OR_RETURN(e.profile_start, e.device->NewSignal());
      BAREGPU_ASSIGN_OR_RETURN(e.profile_end, e.device->NewSignal());
      profiled_ = true;
      if (is_copy) {
        static_cast<CopyQueue*>(q)->timestamp(e.profile_start);
      } else {
        static_cast<ComputeQueue*>(q)->timestamp(e.profile_start);
      }
    }
    if (is_copy) {
      static_cast<CopyQueue*>(q)->copy(e.destination, e.source, e.size);
    } else {
      const uint64_t bytes = args_bytes(e);
      auto args = std::make_unique<ArgsState>(d.kernargs.cpu() + kernarg_used[di], d.kernargs.va() + kernarg_used[di],
                                              bytes, static_cast<uint32_t>(e.buffers.size()));
      kernarg_used[di] += bytes;
      for (size_t i = 0; i < e.buffers.size(); ++i) args->set_buffer(static_cast<uint32_t>(i), e.buffers[i]);
      for (size_t i = 0; i < e.values.size(); ++i) args->set_value(static_cast<uint32_t>(i), e.values[i]);
      static_cast<ComputeQueue*>(q)->exec(*e.program, *args, e.global, e.local);
      args_.push_back(std::move(args));
    }
    if (e.profile_end.valid()) {
      if (is_copy) {
        static_cast<CopyQueue*>(q)->timestamp(e.profile_end);
      } else {
        static_cast<ComputeQueue*>(q)->timestamp(e.profile_end);
      }
    }
  }
  // Ends: a device's last segment signals its timeline; then each segment signals its handover value, last, so a
  // run whose handover arrived has finished with its queues and the next run may patch them.
  for (size_t i = 0; i < devices_.size(); ++i) segments_[last_segment[i]].last_on_device = true;
  for (size_t si = 0; si < segments_.size(); ++si) {
    Segment& s = segments_[si];
    const uint32_t di = device_index(s.device);
    const Value handover = Variable{segment_vars + static_cast<uint32_t>(si)};
    if (auto* copy = dynamic_cast<CopyQueue*>(s.queue.get())) {
      if (s.last_on_device) copy->signal(s.device->timeline_signal(), Variable{device_vars + 2 * di + 1});
      copy->signal(devices_[di].signal, handover);
    } else {
      auto* compute = static_cast<ComputeQueue*>(s.queue.get());
      if (s.last_on_device) compute->signal(s.device->timeline_signal(), Variable{device_vars + 2 * di + 1});
      compute->signal(devices_[di].signal, handover);
    }
    BAREGPU_RETURN_IF_ERROR(s.queue->bind(*s.device));
  }
  vals_.assign(segment_vars + segments_.size(), 0);
  finalized_ = true;
  return absl::OkStatus();
}

absl::Status Graph::Wait() {
  for (const PerDevice& d : devices_) {
    if (d.runs > 0) BAREGPU_RETURN_IF_ERROR(d.signal.wait(d.runs * d.segments));
  }
  if (spans_pending_) RecordSpans();
  return absl::OkStatus();
}

void Graph::RecordSpans() {
  spans_pending_ = false;
  for (const Entry& e : entries_) {
    if (!e.profile_start.valid()) continue;
    ProfileEvent event{.name = e.program != nullptr ? e.program->name() : absl::StrFormat("copy %d bytes", e.size),
                       .queue = e.program != nullptr ? "compute" : "copy",
                       .start_us = e.profile_start.timestamp(),
                       .end_us = e.profile_end.timestamp()};
    e.device->profiler().Add(std::move(event));
  }
}

absl::Status Graph::Run(VarVals var_vals) {
  if (!finalized_) return absl::FailedPreconditionError("Graph::Run before Finalize");
  if (var_vals.size() < user_variables_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("graph run with %d values for %d variables", var_vals.size(), user_variables_));
  }
  // The bound queues are patched in place: the previous run must have left them (tinygrad's HCQGraph waits the
  // same way). When the caller already waited, this is one check of each graph signal.
  BAREGPU_RETURN_IF_ERROR(Wait());
  std::copy(var_vals.begin(), var_vals.begin() + user_variables_, vals_.begin());
  const uint32_t device_vars = user_variables_;
  const uint32_t segment_vars = device_vars + 2 * static_cast<uint32_t>(devices_.size());
  for (size_t di = 0; di < devices_.size(); ++di) {
    PerDevice& d = devices_[di];
    vals_[device_vars + 2 * di] = d.device->timeline_value() - 1;
    vals_[device_vars + 2 * di + 1] = d.device->next_timeline();
  }
  for (size_t si = 0; si < segments_.size(); ++si) {
    const Segment& s = segments_[si];
    PerDevice& d = *Find(s.device);
    vals_[segment_vars + si] = d.runs * d.segments + s.index_on_device + 1;
  }
  for (PerDevice& d : devices_) ++d.runs;
  spans_pending_ = profiled_;
  for (const Segment& s : segments_) BAREGPU_RETURN_IF_ERROR(s.queue->submit(*s.device, vals_));
  return absl::OkStatus();
}

}  // namespace hcq
