#include "hcq/profiler.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "hcq/device.h"

namespace hcq {

Profiler::~Profiler() = default;

absl::StatusOr<std::pair<Signal, Signal>> Profiler::Begin(std::string name, std::string queue) {
  BAREGPU_ASSIGN_OR_RETURN(Signal start, device_.NewSignal());
  absl::StatusOr<Signal> end = device_.NewSignal();
  if (!end.ok()) {
    device_.FreeSignal(start);
    return end.status();
  }
  pending_.push_back({{std::move(name), std::move(queue)}, start, *end});
  return std::make_pair(start, *end);
}

void Profiler::Collect() {
  for (Pending& p : pending_) {
    p.event.start_us = p.start.timestamp();
    p.event.end_us = p.end.timestamp();
    events_.push_back(std::move(p.event));
    device_.FreeSignal(p.start);
    device_.FreeSignal(p.end);
  }
  pending_.clear();
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string Profiler::ChromeTraceJson() const {
  std::string out = "{\"traceEvents\":[";
  const std::string process = JsonString(device_.name());
  bool first = true;
  for (const char* queue : {"compute", "copy"}) {
    absl::StrAppend(&out, first ? "" : ",", "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", process,
                    ",\"tid\":", JsonString(queue), ",\"args\":{\"name\":", JsonString(queue), "}}");
    first = false;
  }
  for (const ProfileEvent& e : events_) {
    absl::StrAppend(&out, ",{\"ph\":\"X\",\"name\":", JsonString(e.name), ",\"pid\":", process,
                    ",\"tid\":", JsonString(e.queue),
                    absl::StrFormat(",\"ts\":%.3f,\"dur\":%.3f}", e.start_us, e.end_us - e.start_us));
  }
  return out + "]}";
}

}  // namespace hcq
