#include "hcq/program.h"

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "hcq/device.h"

namespace hcq {

absl::StatusOr<double> Program::operator()(std::span<const Buffer> buffers, const Dims& global, const Dims& local,
                                           std::span<const uint32_t> values, bool wait) {
  Device& dev = device_;
  const uint64_t needed = 8 * buffers.size() + 4 * values.size();
  BAREGPU_ASSIGN_OR_RETURN(ArgsState args,
                           dev.NewArgs(std::max(args_size_, needed), static_cast<uint32_t>(buffers.size())));
  for (size_t i = 0; i < buffers.size(); ++i) args.set_buffer(static_cast<uint32_t>(i), buffers[i]);
  for (size_t i = 0; i < values.size(); ++i) args.set_value(static_cast<uint32_t>(i), uint64_t{values[i]});
  Signal start, end;
  if (wait) {
    BAREGPU_ASSIGN_OR_RETURN(start, dev.NewSignal());
    absl::StatusOr<Signal> made = dev.NewSignal();
    if (!made.ok()) {
      dev.FreeSignal(start);
      return made.status();
    }
    end = *made;
  }
  std::unique_ptr<ComputeQueue> queue = dev.NewComputeQueue();
  queue->wait(dev.timeline_signal(), dev.timeline_value() - 1).memory_barrier();
  if (wait) queue->timestamp(start);
  queue->exec(*this, args, global, local);
  if (wait) queue->timestamp(end);
  queue->signal(dev.timeline_signal(), dev.next_timeline());
  absl::Status submitted = queue->submit(dev);
  if (submitted.ok() && wait) submitted = dev.timeline_signal().wait(dev.timeline_value() - 1);
  double seconds = 0;
  if (wait) {
    seconds =
        static_cast<double>(end.timestamp_ticks() - start.timestamp_ticks()) / (Signal::kTicksPerMicrosecond * 1e6);
    dev.FreeSignal(start);
    dev.FreeSignal(end);
  }
  BAREGPU_RETURN_IF_ERROR(submitted);
  return seconds;
}

}  // namespace hcq
