#include "am/regs/ip_bases.h"

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace am::regs {

absl::Status IpBases::SetBase(Ip ip, int instance, int segment, uint64_t dword_base) {
  if (instance < 0 || instance >= kMaxInstances || segment < 0 || segment >= kMaxSegments) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s instance %d segment %d: out of range (instances 0..%d, segments 0..%d)", IpName(ip),
                        instance, segment, kMaxInstances - 1, kMaxSegments - 1));
  }
  std::vector<std::optional<uint64_t>>& segments = bases_[{ip, instance}];
  if (segments.size() <= static_cast<size_t>(segment)) segments.resize(segment + 1);
  segments[segment] = dword_base;
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> IpBases::Base(Ip ip, int instance, int segment) const {
  auto it = bases_.find({ip, instance});
  if (it == bases_.end()) {
    return absl::NotFoundError(absl::StrFormat(
        "no register bases for %s instance %d (the IP discovery table did not list it)", IpName(ip), instance));
  }
  if (segment < 0 || static_cast<size_t>(segment) >= it->second.size() || !it->second[segment]) {
    return absl::NotFoundError(absl::StrFormat("%s instance %d has no base for segment %d (it has %d segments)",
                                               IpName(ip), instance, segment, it->second.size()));
  }
  return *it->second[segment];
}

absl::StatusOr<uint64_t> IpBases::Resolve(Ip ip, int instance, int segment, uint32_t offset) const {
  BAREGPU_ASSIGN_OR_RETURN(uint64_t base, Base(ip, instance, segment));
  return base + offset;
}

std::vector<std::optional<uint64_t>> IpBases::Segments(Ip ip, int instance) const {
  auto it = bases_.find({ip, instance});
  return it == bases_.end() ? std::vector<std::optional<uint64_t>>{} : it->second;
}

std::span<const std::optional<uint64_t>> IpBases::SegmentsView(Ip ip, int instance) const {
  auto it = bases_.find({ip, instance});
  if (it == bases_.end()) return {};
  return it->second;
}

std::vector<int> IpBases::Instances(Ip ip) const {
  std::vector<int> instances;
  for (const auto& [key, segments] : bases_) {
    if (key.first == ip) instances.push_back(key.second);
  }
  return instances;
}

std::optional<SegmentLocation> IpBases::Locate(uint64_t dword_address) const {
  std::optional<SegmentLocation> best;
  uint64_t best_base = 0;
  for (const auto& [key, segments] : bases_) {
    for (size_t segment = 0; segment < segments.size(); ++segment) {
      const std::optional<uint64_t>& base = segments[segment];
      if (!base || *base > dword_address || (best && *base <= best_base)) continue;
      best = SegmentLocation{key.first, key.second, static_cast<int>(segment), dword_address - *base};
      best_base = *base;
    }
  }
  return best;
}

}  // namespace am::regs
