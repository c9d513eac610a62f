#include "am/regs/ip.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace am::regs {

absl::string_view IpName(Ip ip) {
  switch (ip) {
    case Ip::kGc:
      return "gc";
    case Ip::kMmhub:
      return "mmhub";
    case Ip::kMp0:
      return "mp0";
    case Ip::kMp1:
      return "mp1";
    case Ip::kNbio:
      return "nbio";
    case Ip::kOsssys:
      return "osssys";
    case Ip::kHdp:
      return "hdp";
  }
  return "unknown";
}

absl::StatusOr<Ip> ParseIp(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (Ip ip : kAllIps) {
    if (IpName(ip) == lower) return ip;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown IP block '", name, "'; expected one of gc, mmhub, mp0, mp1, nbio, osssys, hdp"));
}

}  // namespace am::regs
