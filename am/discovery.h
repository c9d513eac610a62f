// IP discovery: what the GPU says it is. The driver reads the discovery binary from the top of VRAM (through
// BAR0, or MM_INDEX/MM_DATA when BAR0 is small), verifies signatures and checksums, and learns the IP blocks,
// their versions, instances and register segment bases, the GC configuration and what is harvested.
// Format: Linux include/discovery.h (am/regs/discovery.h). The table is untrusted input: every offset and count
// is checked against the binary before use.
#ifndef BAREGPU_AM_DISCOVERY_H_
#define BAREGPU_AM_DISCOVERY_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "am/regs/ip_bases.h"
#include "base/bits.h"
#include "pci/device.h"

namespace am {

// Absolute dword addresses that are the same on every SoC15 part, so discovery can use them before it knows
// any base (Linux amdgpu_discovery.c: mmRCC_CONFIG_MEMSIZE, mmMP0_SMN_C2PMSG_33, mmMM_INDEX, mmMM_INDEX_HI,
// mmMM_DATA).
inline constexpr uint64_t kRccConfigMemsizeDword = 0xde3;
inline constexpr uint64_t kMp0C2pmsg33Dword = 0x16061;
// C2PMSG_33 bit 31: the IFWI finished initialising (and placed the discovery table); amdgpu_discovery_read_binary
// _from_mem waits up to 2 s for it ("up to two second for IFWI init to complete on some dGPUs").
inline constexpr uint32_t kIfwiInitComplete = 0x80000000;
inline constexpr absl::Duration kIfwiInitTimeout = absl::Seconds(2);
inline constexpr uint64_t kMmIndexDword = 0x0;
inline constexpr uint64_t kMmDataDword = 0x1;
inline constexpr uint64_t kMmIndexHiDword = 0x6;
inline constexpr uint32_t kMmIndexAperture = 0x80000000;  // MM_INDEX bit 31: the index addresses VRAM
// The binary lies this far below the end of VRAM and is at most this large (amdgpu_discovery.h DISCOVERY_TMR_*).
inline constexpr uint64_t kDiscoveryOffsetFromTop = base::KiB(64);
inline constexpr uint64_t kDiscoveryMaxSize = base::KiB(10);

struct IpVersion {
  uint8_t major = 0, minor = 0, revision = 0;
  friend bool operator==(const IpVersion&, const IpVersion&) = default;
};

struct DiscoveredIp {
  uint16_t hw_id;
  uint8_t instance;
  IpVersion version;
  uint8_t harvest;                 // ip v1/v2 harvest bits; 0 on later versions
  std::vector<uint64_t> segments;  // dword bases
};

struct GcInfo {
  uint16_t version_major = 0, version_minor = 0;
  uint32_t num_se = 0;
  uint32_t num_sa_per_se = 0;
  uint32_t num_cu_per_sa = 0;  // v1: 2 * (wgp0 + wgp1) per SA
  uint32_t num_rb_per_se = 0;
  uint32_t num_gl2c = 0;
  uint32_t num_gprs = 0;
  uint32_t wave_size = 0;
  uint32_t max_waves_per_simd = 0;
  uint32_t lds_size_kib = 0;
  uint32_t total_cus() const { return num_se * num_sa_per_se * num_cu_per_sa; }
};

struct HarvestedIp {
  uint16_t hw_id;
  uint8_t instance;
};

struct Discovery {
  uint16_t binary_version_major = 0, binary_version_minor = 0;
  uint16_t ip_table_version = 0;
  std::vector<DiscoveredIp> ips;
  std::optional<GcInfo> gc;
  std::vector<HarvestedIp> harvested;

  // Version of the first instance of an IP block, by hardware id (am/regs/hw_id_constants.h).
  std::optional<IpVersion> VersionOf(uint16_t hw_id) const;
  // The bases of the IP blocks whose registers baregpu knows, for am::regs typed access.
  regs::IpBases Bases() const;
};

// Parses a discovery binary. `where` names its origin for messages ("sim:navi31 VRAM at 0x5fff0000").
absl::StatusOr<Discovery> ParseDiscovery(std::span<const uint8_t> binary, absl::string_view where);

// A hardware id's name as discovery.h spells it without _HWID ("GC", "SDMA0", "NBIF"), or "HWID 0x..".
std::string HwIdName(uint16_t hw_id);

// VRAM size from RCC_CONFIG_MEMSIZE (BAR5), then the binary from VRAM - 64 KiB (BAR0 when it reaches that far,
// else MM_INDEX/MM_DATA), parsed.
struct DeviceDiscovery {
  uint64_t vram_size = 0;
  uint64_t table_address = 0;  // VRAM offset of the binary
  bool through_mm_index = false;
  Discovery discovery;
};
absl::StatusOr<DeviceDiscovery> ReadDiscovery(pci::Device& device);

}  // namespace am

#endif  // BAREGPU_AM_DISCOVERY_H_
