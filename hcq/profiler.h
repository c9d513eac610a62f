// Profiling: when DeviceOptions::profile is set, the device's execs and copies are bracketed by timestamp
// commands into signals of their own; after the work completes the spans are collected and can be exported as
// Chrome trace JSON (chrome://tracing, Perfetto).
#ifndef BAREGPU_HCQ_PROFILER_H_
#define BAREGPU_HCQ_PROFILER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hcq/signal.h"

namespace hcq {

class Device;

struct ProfileEvent {
  std::string name;   // kernel name or "copy N bytes"
  std::string queue;  // "compute" or "copy"
  double start_us = 0, end_us = 0;
};

class Profiler {
 public:
  explicit Profiler(Device& device) : device_(device) {}
  ~Profiler();

  // A pair of signals to bracket one command with (queue.timestamp(start) ... queue.timestamp(end)); the span is
  // read when Collect() runs after the work finished.
  absl::StatusOr<std::pair<Signal, Signal>> Begin(std::string name, std::string queue);
  // Reads every finished span's timestamps and returns the signals to the pool.
  void Collect();
  // A span whose timestamps someone else read (a graph's entries, whose signals live as long as the graph).
  void Add(ProfileEvent event) { events_.push_back(std::move(event)); }
  const std::vector<ProfileEvent>& events() const { return events_; }
  // The events as a Chrome trace ("traceEvents", complete events in microseconds, one thread per queue).
  std::string ChromeTraceJson() const;

 private:
  struct Pending {
    ProfileEvent event;
    Signal start, end;
  };
  Device& device_;
  std::vector<Pending> pending_;
  std::vector<ProfileEvent> events_;
};

// A string as a JSON string literal (quotes, backslashes and control characters escaped).
std::string JsonString(const std::string& text);

}  // namespace hcq

#endif  // BAREGPU_HCQ_PROFILER_H_
