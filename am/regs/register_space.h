// Typed register access for one IP block instance over anything that reads and writes absolute dword
// addresses (a DwordSpace): the driver's MMIO path (later, over pci::Mmio with the discovered bases) or a fake
// register space in tests.
//
//   BAREGPU_ASSIGN_OR_RETURN(auto gc, (regs::IpRegisters<regs::Ip::kGc, Mmio>::Create(mmio, bases)));
//   gc.Write(regs::gc::CP_HQD_PQ_CONTROL{}.queue_size(7).rptr_block_size(5));
//   gc.Modify<regs::gc::CP_HQD_PQ_CONTROL>([](auto& r) { r.unord_dispatch(1); });
//
// A register of another IP block does not compile (`gc.Read<regs::mmhub::...>()`).
#ifndef BAREGPU_AM_REGS_REGISTER_SPACE_H_
#define BAREGPU_AM_REGS_REGISTER_SPACE_H_

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "am/regs/ip.h"
#include "am/regs/ip_bases.h"

namespace am::regs {

// Something that reads and writes 32-bit registers by absolute dword address.
template <typename T>
concept DwordSpace = requires(T& space, uint64_t dword_address, uint32_t value) {
  { space.ReadDword(dword_address) } -> std::convertible_to<uint32_t>;
  space.WriteDword(dword_address, value);
};

template <Ip kIp, DwordSpace Space>
class IpRegisters {
 public:
  static constexpr uint32_t kUnresolvedRead = 0xffffffff;

  // Binds to one instance of the IP block (a copy of its bases: no allocation); fails when the bases list no
  // segment for it.
  static absl::StatusOr<IpRegisters> Create(Space& space, const IpBases& bases, int instance = 0) {
    std::span<const std::optional<uint64_t>> segments = bases.SegmentsView(kIp, instance);
    if (segments.empty()) {
      return absl::NotFoundError(absl::StrFormat("no register bases for %s instance %d", IpName(kIp), instance));
    }
    return IpRegisters(space, instance, segments);
  }

  template <typename R>
  requires(R::kIp == kIp) R Read() {
    std::optional<uint64_t> address = AddressOf<R>();
    return R::FromRaw(address ? static_cast<uint32_t>(space_->ReadDword(*address)) : kUnresolvedRead);
  }

  template <typename R>
  requires(R::kIp == kIp) void Write(const R& reg) {
    if (std::optional<uint64_t> address = AddressOf<R>()) space_->WriteDword(*address, reg.raw());
  }

  // Read-modify-write: reads R, lets `change` set some of its fields, writes it back and returns what it wrote.
  template <typename R, typename Change>
  requires(R::kIp == kIp) R Modify(Change&& change) {
    R reg = Read<R>();
    change(reg);
    Write(reg);
    return reg;
  }

  // The absolute dword address of R, or nullopt when its segment has no base.
  template <typename R>
  requires(R::kIp == kIp) std::optional<uint64_t> AddressOf() {
    if (R::kSegment >= segment_count_ || !segments_[R::kSegment]) {
      if (status_.ok()) {
        status_ = absl::FailedPreconditionError(
            absl::StrFormat("%s instance %d: register %s is in segment %d, which has no base (reads give %#x, "
                            "writes are dropped)",
                            IpName(kIp), instance_, R::kName, R::kSegment, kUnresolvedRead));
      }
      return std::nullopt;
    }
    return *segments_[R::kSegment] + R::kOffset;
  }

  int instance() const { return instance_; }
  // The first access that could not be resolved (OK when all could): such accesses read all ones and write
  // nothing, as an unclaimed PCI read does, and are reported here rather than on every access.
  const absl::Status& status() const { return status_; }

 private:
  IpRegisters(Space& space, int instance, std::span<const std::optional<uint64_t>> segments)
      : space_(&space), instance_(instance), segment_count_(std::min<size_t>(segments.size(), segments_.size())) {
    std::copy_n(segments.begin(), segment_count_, segments_.begin());
  }

  Space* space_;
  int instance_;
  // IpBases::SetBase keeps every instance within kMaxSegments.
  std::array<std::optional<uint64_t>, IpBases::kMaxSegments> segments_{};
  size_t segment_count_;
  absl::Status status_;
};

}  // namespace am::regs

#endif  // BAREGPU_AM_REGS_REGISTER_SPACE_H_
