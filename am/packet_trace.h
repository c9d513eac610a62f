// BAREGPU_TRACE=packets: every packet a ring is given (am::Ring::Write, by the driver's blocks and by HCQ), decoded as
// `baregpu rings` decodes them (am/packet_decode.h), to stderr, with the packets of each indirect buffer it hands the
// engine (one level, read through the device's page table), as tinygrad's AM_DEBUG prints what it submits.
#ifndef BAREGPU_AM_PACKET_TRACE_H_
#define BAREGPU_AM_PACKET_TRACE_H_

#include <cstdint>
#include <span>
#include <string>

#include "am/ring.h"

namespace am {

class Device;

// The lines one Write gives: "== DEVICE: QUEUE at WPTR UNIT: N packets", then "  [  at] NAME fields" per packet and,
// under an indirect buffer, "      [ib   at] NAME fields" per packet of it (or why it could not be read).
std::string FormatWrittenPackets(Device& device, const Ring& ring, std::span<const uint32_t> packets, uint64_t at);

// A Ring::Tracer that writes FormatWrittenPackets to stderr, one write per call; `device` must outlive the ring.
Ring::Tracer PacketTracer(Device& device);

}  // namespace am

#endif  // BAREGPU_AM_PACKET_TRACE_H_
