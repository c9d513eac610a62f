// hcq::Graph (tinygrad's HCQGraph): a sequence of kernels and copies recorded once into bound queues per device
// and replayed with new variable values. Run() patches only what depends on variables (kernel arguments, launch
// dimensions, signal values) in place and submits each bound queue by reference, so a replay costs a few stores
// and a doorbell per queue, whatever the number of kernels.
//
// On each device the entries run in recorded order: a run of consecutive entries on one engine is one segment;
// segments hand over through a graph signal of the device. The first segment waits for the device's timeline and
// the last one signals it, so a replay is ordered with everything else submitted to that device.
//
// Across devices, an entry runs after every earlier entry of another device whose memory it shares (the ranges of
// its buffers, or a copy's source and destination, overlap), as tinygrad's HCQGraph orders by buffer: its queue
// waits for the handover signal of that entry's segment, which then closes (the other device's next entry starts a
// new segment, so two devices never wait on each other's unfinished segments). Entries that share no memory run
// side by side. Such a wait needs the other device's signals reachable (ShareSignalsWith);
// Finalize says so otherwise.
#ifndef BAREGPU_HCQ_GRAPH_H_
#define BAREGPU_HCQ_GRAPH_H_

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "hcq/args_state.h"
#include "hcq/buffer.h"
#include "hcq/hw_queue.h"
#include "hcq/signal.h"
#include "hcq/variable.h"

namespace hcq {

class Device;
class Program;

class Graph {
 public:
  // `variables`: how many user variables the recorded commands use (var_vals of Run has that many values).
  explicit Graph(uint32_t variables) : user_variables_(variables) {}
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Records a kernel launch; `values` become the 32-bit kernel arguments after the buffers.
  void AddKernel(const Program& program, std::span<const Buffer> buffers, std::span<const Value> values,
                 const Dims& global, const Dims& local);
  // Records a copy on `device`'s copy queue.
  void AddCopy(Device& device, uint64_t destination, uint64_t source, uint64_t size);
  // Builds and binds the queues.
  absl::Status Finalize();
  // Replays with `var_vals` (user_variables values). No allocation, no system call besides the devices' own
  // (unless a device profiles: then the previous run's spans are recorded first).
  absl::Status Run(VarVals var_vals);
  // Waits until the last run has finished with its queues (Run does this itself before patching them); on devices
  // with DeviceOptions::profile, adds that run's spans (one per kernel and copy) to the device's profiler.
  absl::Status Wait();
  // The kernels' and copies' count, and how many queues a run submits.
  size_t entries() const { return entries_.size(); }
  size_t queues() const { return segments_.size(); }

 private:
  struct Entry {
    Device* device;
    const Program* program = nullptr;  // null: a copy
    std::vector<uint64_t> buffers;
    std::vector<Value> values;
    Dims global{1, 1, 1}, local{1, 1, 1};
    uint64_t destination = 0, source = 0, size = 0;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [begin, end) of the memory it touches
    Signal profile_start, profile_end;                  // when its device profiles: timestamps around it
  };
  struct Segment {
    Device* device;
    std::unique_ptr<HwQueue> queue;
    uint32_t index_on_device;  // 0 = first segment of its device
    bool last_on_device;
    bool closed = false;  // another device waits for its end: later entries of its device go to a new segment
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // of its entries so far
  };
  struct PerDevice {
    Device* device;
    Signal signal;    // hands segments over
    Buffer kernargs;  // every kernel's arguments, graph-owned
    uint32_t segments = 0;
    uint64_t runs = 0;
  };
  PerDevice* Find(Device* device);
  void RecordSpans();
  static bool Overlaps(std::span<const std::pair<uint64_t, uint64_t>> a,
                       std::span<const std::pair<uint64_t, uint64_t>> b);

  uint32_t user_variables_;
  absl::Status error_;
  std::vector<Entry> entries_;
  std::vector<Segment> segments_;
  std::vector<PerDevice> devices_;
  std::vector<std::unique_ptr<ArgsState>> args_;
  std::vector<uint64_t> vals_;  // user values, then per device: timeline wait, timeline signal, segment base
  bool finalized_ = false;
  bool profiled_ = false;       // some entry's device profiles
  bool spans_pending_ = false;  // a run's profile spans are not recorded yet
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_GRAPH_H_
