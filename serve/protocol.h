// tinygrad's remote PCI protocol, as its client speaks it (tinygrad/runtime/support/system.py: RemoteCmd,
// RemotePCIDevice._rpc, _bulk_write, alloc_sysmem; APLRemotePCIDevice.alloc_sysmem for MAP_SYSMEM_FD).
//
// Every request is a 33-byte little-endian header (struct '<BIIQQQ': command, device index, BAR or sysmem handle,
// three arguments), followed by a payload for PROBE, MMIO_WRITE and SYSMEM_WRITE. Every request but the two
// posted writes gets a 17-byte reply ('<BQQ': status, two values); status 0 may be followed by data (PROBE's
// device list, MAP_SYSMEM's page addresses, the bytes of a read), any other status by an error text of the
// first value's length. MAP_SYSMEM_FD's reply carries a memfd in SCM_RIGHTS (Unix sockets only).
//
// baregpu adds two commands after tinygrad's (whose client never sends them, so it is unaffected), for a debugger
// attached to a process's debug endpoint (serve/debug_endpoint.h):
//   MAP_BAR_FD (13): BAR in the BAR field. Reply (status 0, offset, size) with a file descriptor in SCM_RIGHTS whose
//     bytes [offset, offset + size) are the BAR's memory (pci::Device::ShareMemory): a live view, mapped by the client.
//   DMA_READ (14): args (device address, size). Reply (status 0, 0, 0) and `size` bytes: the host memory the device
//     reaches at that address (pci::Device::ReadDmaMemory), which is what GPU page tables point at for host buffers.
//   REGISTER_SEQUENCE (15): BAR in the BAR field, args (step count); payload: that many 12-byte steps, each three
//     little-endian u32 (kind: 0 select, 1 read; byte offset; value or read count) as pci::RegisterStep. The holder
//     runs them under its register-sequence lock (pci::Device::RunRegisterSequence), refusing a select of a register
//     its driver did not declare a selection register. Reply (status 0, dwords read, 0) and those dwords. A step count
//     over pci::kMaxRegisterSteps closes the connection (its payload is not read).
//   HOLDER_STATUS (16): reply (status 0, length, 0) and a JSON document of that length: what the holder's driver says
//     of the device it drives (firmware, metrics, memory use: serve/debug_endpoint.h's holder_status).

#ifndef BAREGPU_SERVE_PROTOCOL_H_
#define BAREGPU_SERVE_PROTOCOL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "pci/register_sequence.h"

namespace serve {

// RemoteCmd, in its order (the values are range(13)), then baregpu's additions.
enum class Command : uint8_t {
  kProbe = 0,
  kMapBar = 1,
  kMapSysmemFd = 2,
  kCfgRead = 3,
  kCfgWrite = 4,
  kReset = 5,
  kMmioRead = 6,
  kMmioWrite = 7,
  kMapSysmem = 8,
  kSysmemRead = 9,
  kSysmemWrite = 10,
  kResizeBar = 11,
  kPing = 12,
  // baregpu's additions (above).
  kMapBarFd = 13,
  kDmaRead = 14,
  kRegisterSequence = 15,
  kHolderStatus = 16,
};
inline constexpr int kCommandCount = 17;
// tinygrad's RemoteCmd has range(13): every command below this value is tinygrad's.
inline constexpr int kTinygradCommandCount = 13;

// "MMIO_READ", or nullopt for a byte that is no command.
std::optional<absl::string_view> CommandName(uint8_t command);
// Posted writes: the client sends them without waiting for a reply, so none is sent.
bool IsPostedWrite(Command command);

inline constexpr size_t kRequestHeaderSize = 1 + 4 + 4 + 8 + 8 + 8;  // '<BIIQQQ'
inline constexpr size_t kReplyHeaderSize = 1 + 8 + 8;                // '<BQQ'
// tinygrad's REMOTE default port (RemotePCIDevice.remote_list).
inline constexpr uint16_t kDefaultPort = 6667;
// REGISTER_SEQUENCE's step on the wire: kind, offset, value (u32 each).
inline constexpr size_t kRegisterStepSize = 12;

struct Request {
  uint8_t command = 0;  // raw: an unknown value is answered with an error, not dropped
  uint32_t device = 0;
  uint32_t bar = 0;  // BAR index, or a sysmem handle for SYSMEM_READ/SYSMEM_WRITE
  std::array<uint64_t, 3> args{};

  static Request Decode(const std::array<uint8_t, kRequestHeaderSize>& bytes);
  std::array<uint8_t, kRequestHeaderSize> Encode() const;
};

enum class ReplyStatus : uint8_t { kOk = 0, kError = 1 };

struct Reply {
  ReplyStatus status = ReplyStatus::kOk;
  uint64_t value0 = 0;
  uint64_t value1 = 0;

  static Reply Decode(const std::array<uint8_t, kReplyHeaderSize>& bytes);
  std::array<uint8_t, kReplyHeaderSize> Encode() const;
};

// REGISTER_SEQUENCE's payload. Decoding keeps a step's kind as sent (CheckRegisterSequence refuses unknown kinds);
// `bytes` must hold whole steps.
std::vector<uint8_t> EncodeRegisterSteps(std::span<const pci::RegisterStep> steps);
std::vector<pci::RegisterStep> DecodeRegisterSteps(std::span<const uint8_t> bytes);

}  // namespace serve

#endif  // BAREGPU_SERVE_PROTOCOL_H_
