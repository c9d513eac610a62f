// Segment base addresses of each IP block instance: absolute dword address = base[ip][instance][segment] +
// register offset. The bases come from the device's IP discovery table at run time; none is compiled in.
#ifndef BAREGPU_AM_REGS_IP_BASES_H_
#define BAREGPU_AM_REGS_IP_BASES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "am/regs/ip.h"

namespace am::regs {

// Where an absolute dword address falls: the IP block instance and segment with the highest base at or below it,
// and the offset from that base. For naming addresses the register database has no name for.
struct SegmentLocation {
  Ip ip;
  int instance;
  int segment;
  uint64_t offset;  // dwords from the segment's base
};

class IpBases {
 public:
  // Limits of what a discovery table can describe (it stores instance and base count in a byte); larger values
  // are rejected so that a corrupt table cannot make the map grow without bound.
  static constexpr int kMaxInstances = 16;
  static constexpr int kMaxSegments = 16;

  // Records one segment base (a dword address). Fails on an instance or segment outside the limits.
  absl::Status SetBase(Ip ip, int instance, int segment, uint64_t dword_base);

  // The base of one segment; NotFound names the IP, instance and segment when the table gave none.
  absl::StatusOr<uint64_t> Base(Ip ip, int instance, int segment) const;
  // Absolute dword address of a register.
  absl::StatusOr<uint64_t> Resolve(Ip ip, int instance, int segment, uint32_t offset) const;

  // The segment bases of one instance (index = segment; nullopt where none was set); empty if the instance
  // has none at all.
  std::vector<std::optional<uint64_t>> Segments(Ip ip, int instance) const;
  // The same without a copy (IpRegisters binds with it, allocating nothing); valid until the next SetBase.
  std::span<const std::optional<uint64_t>> SegmentsView(Ip ip, int instance) const;
  // The instances of an IP block that have at least one base.
  std::vector<int> Instances(Ip ip) const;
  // The segment whose base is the highest at or below `dword_address` (nullopt below every base). Bases of
  // different blocks interleave, so this names the nearest block, not necessarily the one that decodes the address.
  std::optional<SegmentLocation> Locate(uint64_t dword_address) const;
  bool empty() const { return bases_.empty(); }

 private:
  std::map<std::pair<Ip, int>, std::vector<std::optional<uint64_t>>> bases_;
};

}  // namespace am::regs

#endif  // BAREGPU_AM_REGS_IP_BASES_H_
