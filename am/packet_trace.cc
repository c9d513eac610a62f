#include "am/packet_trace.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/memory_manager.h"
#include "am/packet_decode.h"
#include "am/page_table.h"
#include "am/regs/vm_constants.h"

namespace am {
namespace {

// An indirect buffer is traced up to this many dwords (a queue's command buffer is a few hundred; a larger one is
// cut with a note rather than printed whole).
constexpr uint32_t kMaxTracedIbDwords = 4096;
constexpr uint64_t kPage = 4096;

// `count` dwords at GPU address `va` (VMID 0, the driver's page table), page by page: VRAM through BAR0, host memory
// through the device's DMA view.
absl::StatusOr<std::vector<uint32_t>> ReadGpuDwords(Device& device, uint64_t va, uint32_t count) {
  std::vector<uint32_t> dwords(count);
  for (uint64_t done = 0; done < count;) {
    const uint64_t at = va + done * 4;
    const PageTable::Translation t = device.memory().page_table().Walk(at);
    if (!t.valid) return absl::NotFoundError(absl::StrFormat("%#x is not mapped", at));
    const uint64_t n = std::min<uint64_t>(count - done, (kPage - (at & (kPage - 1))) / 4);
    std::span<uint8_t> out(reinterpret_cast<uint8_t*>(dwords.data() + done), n * 4);
    if (!t.steps.empty() && (t.steps.back().entry & regs::vm::AMDGPU_PTE_SYSTEM)) {
      if (absl::Status s = device.pci().ReadDmaMemory(t.address, out); !s.ok()) return s;
    } else {
      absl::StatusOr<std::span<uint8_t>> view = device.memory().CpuView(t.address, out.size());
      if (!view.ok()) return view.status();
      std::memcpy(out.data(), view->data(), out.size());
    }
    done += n;
  }
  return dwords;
}

DecodedPacket Decode(const RingFormat& format, std::span<const uint32_t> packet, const regs::IpBases& bases) {
  return &format == &kSdmaRingFormat ? DecodeSdma(packet) : DecodePm4(packet, bases);
}

// One line per packet of `dwords`; a packet whose length is unknown ends the list with the rest shown as its size.
// The indirect buffers named are collected when `indirects` is given (the ring's packets; an IB's own IBs are not
// followed, as `baregpu rings` follows one level).
void AppendPackets(std::string& out, const RingFormat& format, std::span<const uint32_t> dwords, uint64_t first,
                   const char* indent, const char* label, const regs::IpBases& bases,
                   std::vector<IndirectTarget>* indirects) {
  for (size_t at = 0; at < dwords.size();) {
    const DecodedPacket p = Decode(format, dwords.subspan(at), bases);
    absl::StrAppendFormat(&out, "%s[%s%5d] %s%s%s%s\n", indent, label, first + at * 4 / format.pointer_unit, p.name,
                          p.fields.empty() ? "" : " ", p.fields, p.truncated ? " (truncated)" : "");
    if (p.indirect.has_value() && indirects != nullptr) indirects->push_back(*p.indirect);
    if (p.dwords == 0) {
      absl::StrAppendFormat(&out, "%s  (%d more dwords: the packet's length is unknown)\n", indent,
                            dwords.size() - at - 1);
      return;
    }
    at += p.dwords;
  }
}

}  // namespace

std::string FormatWrittenPackets(Device& device, const Ring& ring, std::span<const uint32_t> packets, uint64_t at) {
  const RingFormat& format = ring.format();
  std::string out = absl::StrFormat("== %s: %s at %d %s: %d dwords\n", device.pci().name(), format.queue, at,
                                    format.unit_name, packets.size());
  // The ring's packets, each IB's packets under the ring's list (ring packets name at most one IB each here: HCQ
  // and the driver hand one IB per Write).
  std::vector<IndirectTarget> indirects;
  AppendPackets(out, format, packets, at, "  ", "", device.bases(), &indirects);
  for (const IndirectTarget& ib : indirects) {
    const uint32_t count = std::min(ib.dwords, kMaxTracedIbDwords);
    absl::StatusOr<std::vector<uint32_t>> dwords = ReadGpuDwords(device, ib.address, count);
    if (!dwords.ok()) {
      absl::StrAppendFormat(&out, "      (the indirect buffer at %#x cannot be read: %s)\n", ib.address,
                            dwords.status().message());
      continue;
    }
    absl::StrAppendFormat(&out, "    indirect buffer at %#x, %d dwords%s:\n", ib.address, ib.dwords,
                          count < ib.dwords ? absl::StrFormat(" (the first %d)", count) : "");
    AppendPackets(out, format, *dwords, 0, "      ", "ib ", device.bases(), nullptr);
  }
  return out;
}

Ring::Tracer PacketTracer(Device& device) {
  return [&device](const Ring& ring, std::span<const uint32_t> packets, uint64_t at) {
    const std::string text = FormatWrittenPackets(device, ring, packets, at);
    std::fwrite(text.data(), 1, text.size(), stderr);
  };
}

}  // namespace am
