#include "am/discovery.h"

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "am/regs/discovery.h"
#include "am/regs/hw_id_constants.h"
#include "base/status_macros.h"
#include "pci/virtual_registry.h"

namespace am {
namespace {

namespace d = regs::discovery;

struct HwIdEntry {
  uint32_t hw_id;
  const char* name;
  std::optional<regs::Ip> ip;  // the register database's block, where baregpu has one
};
constexpr HwIdEntry kHwIds[] = {
    {d::GC_HWID, "GC", regs::Ip::kGc},       {d::MMHUB_HWID, "MMHUB", regs::Ip::kMmhub},
    {d::MP0_HWID, "MP0", regs::Ip::kMp0},    {d::MP1_HWID, "MP1", regs::Ip::kMp1},
    {d::NBIF_HWID, "NBIF", regs::Ip::kNbio}, {d::OSSSYS_HWID, "OSSSYS", regs::Ip::kOsssys},
    {d::HDP_HWID, "HDP", regs::Ip::kHdp},    {d::SDMA0_HWID, "SDMA0", std::nullopt},
    {d::SDMA1_HWID, "SDMA1", std::nullopt},  {d::ATHUB_HWID, "ATHUB", std::nullopt},
    {d::UMC_HWID, "UMC", std::nullopt},      {d::VCN_HWID, "VCN", std::nullopt},
    {d::DMU_HWID, "DMU", std::nullopt},      {d::DCI_HWID, "DCI", std::nullopt},
    {d::DF_HWID, "DF", std::nullopt},        {d::SMUIO_HWID, "SMUIO", std::nullopt},
    {d::THM_HWID, "THM", std::nullopt},      {d::CLKA_HWID, "CLKA", std::nullopt},
    {d::PCIE_HWID, "PCIE", std::nullopt},
};

// Bounds-checked reads from the untrusted binary; errors name the field, offset and limit.
class Reader {
 public:
  Reader(std::span<const uint8_t> data, absl::string_view where) : data_(data), where_(where) {}

  template <typename T>
  absl::StatusOr<T> Read(size_t offset, absl::string_view what) const {
    if (offset > data_.size() || data_.size() - offset < sizeof(T)) {
      return absl::DataLossError(
          absl::StrFormat("%s: discovery %s (%d bytes at offset %#x) lies outside the %d-byte binary", where_, what,
                          sizeof(T), offset, data_.size()));
    }
    T value;
    std::memcpy(&value, data_.data() + offset, sizeof(T));
    return value;
  }

  absl::Status VerifyChecksum(size_t offset, size_t size, uint16_t expected, absl::string_view what) const {
    if (offset > data_.size() || data_.size() - offset < size) {
      return absl::DataLossError(
          absl::StrFormat("%s: discovery %s (%d bytes at offset %#x) lies outside the "
                          "%d-byte binary",
                          where_, what, size, offset, data_.size()));
    }
    uint16_t sum = 0;
    for (size_t i = 0; i < size; ++i) sum = static_cast<uint16_t>(sum + data_[offset + i]);
    if (sum != expected) {
      return absl::DataLossError(absl::StrFormat(
          "%s: discovery %s checksum is %#06x, the header says %#06x: the table is corrupt (VRAM not initialised "
          "by the GPU's firmware, or overwritten)",
          where_, what, sum, expected));
    }
    return absl::OkStatus();
  }

  absl::string_view where() const { return where_; }

 private:
  std::span<const uint8_t> data_;
  absl::string_view where_;
};

absl::Status ParseIpTable(const Reader& reader, size_t offset, Discovery& out) {
  BAREGPU_ASSIGN_OR_RETURN(auto header, reader.Read<d::IpDiscoveryHeader>(offset, "IP discovery header"));
  if (header.signature != d::DISCOVERY_TABLE_SIGNATURE) {
    return absl::DataLossError(absl::StrFormat("%s: IP discovery table signature is %#x, expected %#x", reader.where(),
                                               header.signature, d::DISCOVERY_TABLE_SIGNATURE));
  }
  if (header.version < 1 || header.version > 4) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s: IP discovery table version %d is not supported (versions 1 to 4 are)", reader.where(), header.version));
  }
  out.ip_table_version = header.version;
  const bool bases_64 = header.version == 4 && header.base_addr_64_bit();
  if (header.num_dies > 16) {
    return absl::DataLossError(
        absl::StrFormat("%s: IP discovery table lists %d dies; the format allows 16", reader.where(), header.num_dies));
  }
  for (int die = 0; die < header.num_dies; ++die) {
    size_t at = header.die_info[die].die_offset;
    BAREGPU_ASSIGN_OR_RETURN(auto die_header, reader.Read<d::DieHeader>(at, absl::StrFormat("die %d header", die)));
    at += sizeof(d::DieHeader);
    for (int i = 0; i < die_header.num_ips; ++i) {
      // Every entry version shares the first 8 bytes (hw_id, instance, base count, major, minor, revision, ...).
      BAREGPU_ASSIGN_OR_RETURN(auto ip, reader.Read<d::IpV4>(at, absl::StrFormat("die %d IP entry %d", die, i)));
      DiscoveredIp entry{ip.hw_id, ip.instance_number, {ip.major, ip.minor, ip.revision}, 0, {}};
      if (header.version <= 2) entry.harvest = ip.sub_revision_and_variant & 0xf;
      at += sizeof(d::IpV4);
      for (int b = 0; b < ip.num_base_address; ++b) {
        if (bases_64) {
          BAREGPU_ASSIGN_OR_RETURN(uint64_t base, reader.Read<uint64_t>(at, "IP base address"));
          entry.segments.push_back(base);
          at += 8;
        } else {
          BAREGPU_ASSIGN_OR_RETURN(uint32_t base, reader.Read<uint32_t>(at, "IP base address"));
          entry.segments.push_back(base);
          at += 4;
        }
      }
      out.ips.push_back(std::move(entry));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseGcTable(const Reader& reader, size_t offset, Discovery& out) {
  BAREGPU_ASSIGN_OR_RETURN(auto header, reader.Read<d::GpuInfoHeader>(offset, "GC info header"));
  if (header.table_id != d::GC_TABLE_ID) {
    return absl::DataLossError(
        absl::StrFormat("%s: GC info table id is %#x, expected %#x", reader.where(), header.table_id, d::GC_TABLE_ID));
  }
  GcInfo gc;
  gc.version_major = header.version_major;
  gc.version_minor = header.version_minor;
  if (header.version_major == 1) {
    BAREGPU_ASSIGN_OR_RETURN(auto info, reader.Read<d::GcInfoV1_0>(offset, "GC info v1"));
    gc.num_se = info.gc_num_se;
    gc.num_sa_per_se = info.gc_num_sa_per_se;
    gc.num_cu_per_sa = 2 * (info.gc_num_wgp0_per_sa + info.gc_num_wgp1_per_sa);
    gc.num_rb_per_se = info.gc_num_rb_per_se;
    gc.num_gl2c = info.gc_num_gl2c;
    gc.num_gprs = info.gc_num_gprs;
    gc.wave_size = info.gc_wave_size;
    gc.max_waves_per_simd = info.gc_max_waves_per_simd;
    gc.lds_size_kib = info.gc_lds_size;
  } else if (header.version_major == 2) {
    BAREGPU_ASSIGN_OR_RETURN(auto info, reader.Read<d::GcInfoV2_0>(offset, "GC info v2"));
    gc.num_se = info.gc_num_se;
    gc.num_sa_per_se = info.gc_num_sh_per_se;
    gc.num_cu_per_sa = info.gc_num_cu_per_sh;
    gc.num_rb_per_se = info.gc_num_rb_per_se;
    gc.num_gl2c = info.gc_num_tccs;
    gc.num_gprs = info.gc_num_gprs;
    gc.wave_size = info.gc_wave_size;
    gc.max_waves_per_simd = info.gc_max_waves_per_simd;
    gc.lds_size_kib = info.gc_lds_size;
  } else {
    return absl::UnimplementedError(absl::StrFormat("%s: GC info version %d.%d is not supported (1.x and 2.x are)",
                                                    reader.where(), header.version_major, header.version_minor));
  }
  out.gc = gc;
  return absl::OkStatus();
}

absl::Status ParseHarvestTable(const Reader& reader, size_t offset, Discovery& out) {
  BAREGPU_ASSIGN_OR_RETURN(auto table, reader.Read<d::HarvestTable>(offset, "harvest table"));
  if (table.header.signature != d::HARVEST_TABLE_SIGNATURE) {
    return absl::DataLossError(absl::StrFormat("%s: harvest table signature is %#x, expected %#x", reader.where(),
                                               table.header.signature, d::HARVEST_TABLE_SIGNATURE));
  }
  for (const d::HarvestInfo& info : table.list) {
    if (info.hw_id == 0) break;  // the list ends at the first empty entry
    out.harvested.push_back({info.hw_id, info.number_instance});
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<IpVersion> Discovery::VersionOf(uint16_t hw_id) const {
  for (const DiscoveredIp& ip : ips) {
    if (ip.hw_id == hw_id) return ip.version;
  }
  return std::nullopt;
}

regs::IpBases Discovery::Bases() const {
  regs::IpBases bases;
  for (const DiscoveredIp& ip : ips) {
    for (const HwIdEntry& known : kHwIds) {
      if (known.hw_id != ip.hw_id || !known.ip) continue;
      for (size_t segment = 0; segment < ip.segments.size(); ++segment) {
        (void)bases.SetBase(*known.ip, ip.instance, static_cast<int>(segment), ip.segments[segment]);
      }
    }
  }
  return bases;
}

std::string HwIdName(uint16_t hw_id) {
  for (const HwIdEntry& known : kHwIds) {
    if (known.hw_id == hw_id) return known.name;
  }
  return absl::StrFormat("HWID %#x", hw_id);
}

absl::StatusOr<Discovery> ParseDiscovery(std::span<const uint8_t> binary, absl::string_view where) {
  Reader reader(binary, where);
  BAREGPU_ASSIGN_OR_RETURN(auto header, reader.Read<d::BinaryHeader>(0, "binary header"));
  if (header.binary_signature != d::BINARY_SIGNATURE) {
    return absl::DataLossError(absl::StrFormat(
        "%s: no IP discovery binary (signature %#x, expected %#x): VRAM size wrong, or the GPU's firmware did not "
        "run (is the GPU powered and out of reset?)",
        where, header.binary_signature, d::BINARY_SIGNATURE));
  }
  const size_t summed_from = offsetof(d::BinaryHeader, binary_checksum) + sizeof(header.binary_checksum);
  if (header.binary_size < summed_from) {
    return absl::DataLossError(
        absl::StrFormat("%s: discovery binary size %d is smaller than its header", where, header.binary_size));
  }
  BAREGPU_RETURN_IF_ERROR(
      reader.VerifyChecksum(summed_from, header.binary_size - summed_from, header.binary_checksum, "binary"));
  Discovery out;
  out.binary_version_major = header.version_major;
  out.binary_version_minor = header.version_minor;

  const d::TableInfo& ip_info = header.table_list[d::IP_DISCOVERY];
  BAREGPU_ASSIGN_OR_RETURN(auto ip_header, reader.Read<d::IpDiscoveryHeader>(ip_info.offset, "IP discovery header"));
  BAREGPU_RETURN_IF_ERROR(
      reader.VerifyChecksum(ip_info.offset, ip_header.size, ip_info.checksum, "IP discovery table"));
  BAREGPU_RETURN_IF_ERROR(ParseIpTable(reader, ip_info.offset, out));

  if (const d::TableInfo& gc_info = header.table_list[d::GC]; gc_info.offset != 0) {
    BAREGPU_ASSIGN_OR_RETURN(auto gc_header, reader.Read<d::GpuInfoHeader>(gc_info.offset, "GC info header"));
    BAREGPU_RETURN_IF_ERROR(reader.VerifyChecksum(gc_info.offset, gc_header.size, gc_info.checksum, "GC info table"));
    BAREGPU_RETURN_IF_ERROR(ParseGcTable(reader, gc_info.offset, out));
  }
  if (const d::TableInfo& harvest = header.table_list[d::HARVEST_INFO]; harvest.offset != 0) {
    BAREGPU_RETURN_IF_ERROR(
        reader.VerifyChecksum(harvest.offset, sizeof(d::HarvestTable), harvest.checksum, "harvest table"));
    BAREGPU_RETURN_IF_ERROR(ParseHarvestTable(reader, harvest.offset, out));
  }
  return out;
}

absl::StatusOr<DeviceDiscovery> ReadDiscovery(pci::Device& device) {
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio registers, device.MapMmio(5));
  DeviceDiscovery result;
  const uint32_t memsize_mib = registers.Read32(kRccConfigMemsizeDword * 4);
  if (memsize_mib == 0 || memsize_mib == pci::Mmio::kUnclaimedRead) {
    // No driver path recovers from here (the reset needs the SMU, which discovery finds): say what does.
    const std::string fix =
        absl::StartsWith(device.name(), pci::kVirtualPrefix)
            ? absl::StrFormat("power-cycle it with `baregpu sim reset %s`", device.name())
            : absl::StrFormat("reset it from the host (echo 1 > /sys/bus/pci/devices/%s/reset) or power-cycle it",
                              device.name());
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: RCC_CONFIG_MEMSIZE reads %#x: the GPU reports no VRAM (is it powered, and is BAR5 its "
                        "register BAR?); %s",
                        device.name(), memsize_mib, fix));
  }
  result.vram_size = uint64_t{memsize_mib} << 20;
  // A hot-plugged card may still be initialising: wait for the IFWI as amdgpu does, and read the table anyway once
  // the wait is over (as amdgpu does too); a parse failure then says the IFWI was not done.
  uint32_t ifwi = registers.Read32(kMp0C2pmsg33Dword * 4);
  for (const absl::Time deadline = absl::Now() + kIfwiInitTimeout;
       (ifwi & kIfwiInitComplete) == 0 && absl::Now() < deadline; ifwi = registers.Read32(kMp0C2pmsg33Dword * 4)) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  result.table_address = result.vram_size - kDiscoveryOffsetFromTop;
  std::vector<uint8_t> binary(kDiscoveryMaxSize);
  auto vram = device.MapMemory(0);
  if (vram.ok() && vram->size() >= result.table_address + kDiscoveryMaxSize) {
    std::memcpy(binary.data(), vram->data() + result.table_address, binary.size());
  } else {
    // Small BAR: read VRAM a dword at a time through the MM_INDEX/MM_DATA window (amdgpu_device_mm_access).
    result.through_mm_index = true;
    for (size_t i = 0; i < binary.size(); i += 4) {
      const uint64_t address = result.table_address + i;
      registers.Write32(kMmIndexDword * 4, static_cast<uint32_t>(address) | kMmIndexAperture);
      registers.Write32(kMmIndexHiDword * 4, static_cast<uint32_t>(address >> 31));
      const uint32_t value = registers.Read32(kMmDataDword * 4);
      std::memcpy(binary.data() + i, &value, 4);
    }
  }
  absl::StatusOr<Discovery> parsed =
      ParseDiscovery(binary, absl::StrFormat("%s VRAM at %#x", device.name(), result.table_address));
  if (!parsed.ok() && (ifwi & kIfwiInitComplete) == 0) {
    return absl::Status(parsed.status().code(),
                        absl::StrFormat("%s (MP0_SMN_C2PMSG_33 = %#x: the IFWI had not finished initialising after %s)",
                                        parsed.status().message(), ifwi, absl::FormatDuration(kIfwiInitTimeout)));
  }
  BAREGPU_RETURN_IF_ERROR(parsed.status());
  result.discovery = *std::move(parsed);
  return result;
}

}  // namespace am
