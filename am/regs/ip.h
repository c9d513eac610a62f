// The IP blocks whose registers baregpu knows (Navi31: GC 11.0.0, MMHUB 3.0.0, MP0/MP1 13.0.0, NBIO 4.3.0,
// OSSSYS 6.0.0, HDP 6.0.0). Register addresses are relative to an IP block's segment bases (am/regs/ip_bases.h).
#ifndef BAREGPU_AM_REGS_IP_H_
#define BAREGPU_AM_REGS_IP_H_

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace am::regs {

enum class Ip : uint8_t { kGc, kMmhub, kMp0, kMp1, kNbio, kOsssys, kHdp };

inline constexpr std::array<Ip, 7> kAllIps = {Ip::kGc,   Ip::kMmhub,  Ip::kMp0, Ip::kMp1,
                                              Ip::kNbio, Ip::kOsssys, Ip::kHdp};
inline constexpr size_t kIpCount = kAllIps.size();

// "gc", "mmhub", "mp0", "mp1", "nbio", "osssys", "hdp": the names the CLI and typed namespaces use.
absl::string_view IpName(Ip ip);
// Parses a name as IpName gives it (any case); the error lists the valid names.
absl::StatusOr<Ip> ParseIp(absl::string_view name);

}  // namespace am::regs

#endif  // BAREGPU_AM_REGS_IP_H_
