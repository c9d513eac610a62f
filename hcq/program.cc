#include "hcq/program.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "hcq/device.h"

namespace hcq {

namespace {

// ArgsState's layout (hcq/args_state.h): buffer addresses, then 32-bit values.
constexpr uint32_t kBufferArgumentBytes = 8;
constexpr uint32_t kValueArgumentBytes = 4;

std::string Describe(const Value& v) {
  if (!v.is_variable()) return absl::StrCat(v.constant());
  return v.addend() == 0 ? absl::StrCat("variable ", v.variable())
                         : absl::StrCat("(variable ", v.variable(), " + ", v.addend(), ")");
}

}  // namespace

absl::Status Program::CheckArgumentLayout(size_t buffers, size_t values) const {
  if (!metadata_.present) return absl::OkStatus();
  const std::vector<ProgramArgument>& expected = metadata_.arguments;
  auto describe = [&] {
    std::string text;
    for (const ProgramArgument& a : expected) {
      absl::StrAppendFormat(&text, "%s%d bytes at %d", text.empty() ? "" : ", ", a.size, a.offset);
    }
    return text.empty() ? std::string("none") : text;
  };
  if (expected.size() != buffers + values) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s takes %d explicit arguments (%s), given %d buffers and %d values", name_, expected.size(),
                        describe(), buffers, values));
  }
  uint32_t offset = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const uint32_t size = i < buffers ? kBufferArgumentBytes : kValueArgumentBytes;
    if (expected[i].offset != offset || expected[i].size != size) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: argument %d is %d bytes at offset %d, but %d buffers and %d values put a %d-byte %s at offset %d (its "
          "arguments: %s)",
          name_, i, expected[i].size, expected[i].offset, buffers, values, size, i < buffers ? "address" : "value",
          offset, describe()));
    }
    offset += size;
  }
  return absl::OkStatus();
}

absl::Status Program::CheckLocalSize(const Dims& local) const {
  const std::array<uint32_t, 3>& required = metadata_.required_local;
  if (required[0] == 0) return absl::OkStatus();
  for (int d = 0; d < 3; ++d) {
    if (!local[d].is_variable() && local[d].constant() != required[d]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s requires workgroups of %d x %d x %d work-items (reqd_work_group_size), given %s x %s x %s", name_,
          required[0], required[1], required[2], Describe(local[0]), Describe(local[1]), Describe(local[2])));
    }
  }
  return absl::OkStatus();
}

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
  if (submitted.ok() && wait) submitted = dev.RecoverAfter(dev.timeline_signal().wait(dev.timeline_value() - 1));
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
