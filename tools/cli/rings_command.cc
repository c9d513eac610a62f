// baregpu rings DEVICE [--queue=NAME] [--history=N]: every hardware queue's state as the engines hold it, in the
// manner of umr --ring: the compute HQDs of MEC1 (each selected with GRBM_GFX_CNTL, as soc21_grbm_select does) and
// the SDMA queues, their ring read through the VM at the ring's GPU address, and the packets between the read and
// write pointers (and the last ones before the read pointer) decoded, one level into indirect buffers.
#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "am/device.h"
#include "am/discovery.h"
#include "am/packet_decode.h"
#include "am/register_io.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "pci/register_sequence.h"
#include "tools/cli/command.h"
#include "tools/cli/device_access.h"
#include "tools/cli/gpu_memory.h"
#include "tools/cli/json.h"

namespace cli {
namespace {

namespace gc = am::regs::gc;
using am::DecodedPacket;
using am::DecodePm4;
using am::DecodeSdma;
using am::IndirectTarget;

// gfx_v11_0_sw_init for GC 11.0.0: one MEC of 4 pipes with 4 queues each (mec.num_pipe_per_mec,
// num_queue_per_pipe); the compute queues are on ME 1 (amdgpu's ring->me for MEC1).
constexpr uint32_t kComputeMe = 1;
constexpr uint32_t kPipes = 4;
constexpr uint32_t kQueuesPerPipe = 4;
// SDMA 6.0.0 on Navi31: two engines (discovery lists SDMA0 and SDMA1); baregpu and Linux's kernel queues use queue 0.
constexpr int kSdmaEngines = 2;
// CP_HQD_PQ_BASE/_HI and SDMAn_QUEUE0_RB_BASE hold address bits 47:8 (gfx_v11_0_compute_mqd_init: hqd_gpu_addr >> 8,
// sdma_v6_0_gfx_resume_instance: ring->gpu_addr >> 8; RB_BASE_HI takes bits 63:40).
constexpr int kRingBaseShift = 8;
constexpr int kSdmaBaseHiShift = 40;
// Packets of an indirect buffer shown before the rest is summarised.
constexpr size_t kMaxIbPackets = 256;
// --history's largest value: a ring holds at most 2^20 dwords (CP_HQD_PQ_CONTROL.QUEUE_SIZE), and a person reads
// far fewer.
constexpr uint64_t kMaxHistoryDwords = 4096;

std::string ComputeQueueName(uint32_t pipe, uint32_t queue) {
  // amdgpu's compute ring names (gfx_v11_0_compute_ring_init): "comp_ME.PIPE.QUEUE".
  return absl::StrFormat("comp_%d.%d.%d", kComputeMe, pipe, queue);
}
std::string SdmaQueueName(int engine) { return absl::StrFormat("sdma%d", engine); }  // sdma_v6_0_sw_init

enum class Engine { kCompute, kSdma };

struct Queue {
  std::string name;
  Engine engine = Engine::kCompute;
  uint32_t pipe = 0, queue = 0;  // compute
  int sdma = 0;                  // SDMA engine
};

std::vector<Queue> AllQueues() {
  std::vector<Queue> queues;
  for (uint32_t pipe = 0; pipe < kPipes; ++pipe) {
    for (uint32_t queue = 0; queue < kQueuesPerPipe; ++queue) {
      queues.push_back({ComputeQueueName(pipe, queue), Engine::kCompute, pipe, queue, 0});
    }
  }
  for (int e = 0; e < kSdmaEngines; ++e) queues.push_back({SdmaQueueName(e), Engine::kSdma, 0, 0, e});
  return queues;
}

// What one queue's registers say.
struct QueueState {
  bool active = false;
  uint32_t vmid = 0;
  uint64_t base = 0;         // GPU address of the ring
  uint64_t size_dwords = 0;  // ring size
  uint64_t rptr = 0, wptr = 0;
  uint64_t unit_bytes = 4;  // bytes per rptr/wptr unit: dwords (MEC) or bytes (SDMA)
  bool doorbell_enabled = false;
  uint32_t doorbell = 0;
  std::vector<std::pair<std::string, uint32_t>> registers;  // as read, in order
};

// The device's registers by database name (GC), recording each read for the printout.
class Registers {
 public:
  Registers(am::RegisterIo& io, const am::regs::IpBases& bases) : io_(io), bases_(bases) {}
  absl::StatusOr<uint32_t> Read(const std::string& name, QueueState* record) {
    BAREGPU_ASSIGN_OR_RETURN(uint64_t address, am::regs::ResolveAddress(bases_, name, am::regs::Ip::kGc));
    const uint32_t value = io_.ReadDword(address);
    if (record != nullptr) record->registers.emplace_back(name, value);
    return value;
  }

 private:
  am::RegisterIo& io_;
  const am::regs::IpBases& bases_;
};

absl::StatusOr<QueueState> ReadComputeQueue(pci::Device& device, const am::regs::IpBases& bases, const Queue& q) {
  // The HQD registers are banked per me/pipe/queue behind GRBM_GFX_CNTL (soc21_grbm_select): one register sequence
  // selects the queue and reads them, and puts the driver's selection back (attached, the holder runs it).
  constexpr const char* kNames[] = {"CP_HQD_ACTIVE",     "CP_HQD_VMID",       "CP_HQD_PQ_BASE",
                                    "CP_HQD_PQ_BASE_HI", "CP_HQD_PQ_CONTROL", "CP_HQD_PQ_RPTR",
                                    "CP_HQD_PQ_WPTR_LO", "CP_HQD_PQ_WPTR_HI", "CP_HQD_PQ_DOORBELL_CONTROL"};
  auto byte_offset = [&](const char* name) -> absl::StatusOr<uint32_t> {
    BAREGPU_ASSIGN_OR_RETURN(uint64_t dword, am::regs::ResolveAddress(bases, name, am::regs::Ip::kGc));
    return static_cast<uint32_t>(dword * 4);
  };
  BAREGPU_ASSIGN_OR_RETURN(uint32_t select, byte_offset("GRBM_GFX_CNTL"));
  std::vector<pci::RegisterStep> steps = {
      pci::RegisterStep::Select(select, gc::GRBM_GFX_CNTL{}.meid(kComputeMe).pipeid(q.pipe).queueid(q.queue).raw())};
  for (const char* name : kNames) {
    BAREGPU_ASSIGN_OR_RETURN(uint32_t offset, byte_offset(name));
    steps.push_back(pci::RegisterStep::Read(offset));
  }
  std::array<uint32_t, std::size(kNames)> v{};
  BAREGPU_RETURN_IF_ERROR(device.RunRegisterSequence(am::kRegisterBar, steps, v));
  QueueState s;
  for (size_t i = 0; i < v.size(); ++i) s.registers.emplace_back(kNames[i], v[i]);
  const auto [active, vmid, base_lo, base_hi, control, rptr, wptr_lo, wptr_hi, doorbell] = v;
  s.active = gc::CP_HQD_ACTIVE::FromRaw(active).active();
  s.vmid = gc::CP_HQD_VMID::FromRaw(vmid).vmid();
  s.base = ((uint64_t{base_hi} << 32) | base_lo) << kRingBaseShift;
  // gfx_v11_0_compute_mqd_init: QUEUE_SIZE = log2(ring dwords) - 1.
  s.size_dwords = uint64_t{2} << gc::CP_HQD_PQ_CONTROL::FromRaw(control).queue_size();
  s.rptr = rptr;
  s.wptr = (uint64_t{wptr_hi} << 32) | wptr_lo;
  s.unit_bytes = 4;
  const auto bell = gc::CP_HQD_PQ_DOORBELL_CONTROL::FromRaw(doorbell);
  s.doorbell_enabled = bell.doorbell_en();
  s.doorbell = bell.doorbell_offset();
  return s;
}

absl::StatusOr<QueueState> ReadSdmaQueue(Registers& regs, const Queue& q) {
  QueueState s;
  const std::string prefix = absl::StrFormat("SDMA%d_QUEUE0_", q.sdma);
  BAREGPU_ASSIGN_OR_RETURN(uint32_t cntl_raw, regs.Read(prefix + "RB_CNTL", &s));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t base_lo, regs.Read(prefix + "RB_BASE", &s));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t base_hi, regs.Read(prefix + "RB_BASE_HI", &s));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t rptr_lo, regs.Read(prefix + "RB_RPTR", &s));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t rptr_hi, regs.Read(prefix + "RB_RPTR_HI", &s));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t wptr_lo, regs.Read(prefix + "RB_WPTR", &s));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t wptr_hi, regs.Read(prefix + "RB_WPTR_HI", &s));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t doorbell, regs.Read(prefix + "DOORBELL", &s));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t doorbell_offset, regs.Read(prefix + "DOORBELL_OFFSET", &s));
  // SDMA1's registers have SDMA0's fields (sdma_v6_0_get_reg_offset only moves them).
  const auto cntl = gc::SDMA0_QUEUE0_RB_CNTL::FromRaw(cntl_raw);
  s.active = cntl.rb_enable();
  s.vmid = cntl.rb_vmid();
  s.base = (uint64_t{base_lo} << kRingBaseShift) |
           (uint64_t{gc::SDMA0_QUEUE0_RB_BASE_HI::FromRaw(base_hi).addr()} << kSdmaBaseHiShift);
  s.size_dwords = uint64_t{1} << cntl.rb_size();  // sdma_v6_0: RB_SIZE = log2(ring dwords)
  // The pointers count bytes and only grow (sdma_v6_0_ring_get_rptr/wptr shift the registers' value by 2 for dwords).
  s.rptr = (uint64_t{rptr_hi} << 32) | rptr_lo;
  s.wptr = (uint64_t{wptr_hi} << 32) | wptr_lo;
  s.unit_bytes = 1;
  s.doorbell_enabled = gc::SDMA0_QUEUE0_DOORBELL::FromRaw(doorbell).enable();
  s.doorbell = gc::SDMA0_QUEUE0_DOORBELL_OFFSET::FromRaw(doorbell_offset).offset();
  return s;
}

// "QUEUE_SIZE=9 RPTR_BLOCK_SIZE=5": a register's non-zero fields by the database's names.
std::string NonZeroFields(const std::string& name, uint32_t value) {
  absl::StatusOr<am::regs::RegisterInfo> reg = am::regs::Lookup(name, am::regs::Ip::kGc);
  if (!reg.ok()) return "";
  std::vector<std::string> fields;
  for (const am::regs::DecodedField& f : am::regs::Decode(*reg, value)) {
    if (f.value != 0) fields.push_back(absl::StrFormat("%s=%#x", f.field.name, f.value));
  }
  return absl::StrJoin(fields, " ");
}

// One packet of a stream at dword `offset` of the ring (or of its IB), as printed and as JSON.
struct PacketLine {
  uint64_t offset;
  DecodedPacket packet;
  std::vector<uint32_t> raw;
  std::optional<std::vector<PacketLine>> ib;  // the IB's packets, when it was followed
  std::string ib_error;                       // why the IB could not be read
};

using Decoder = DecodedPacket (*)(std::span<const uint32_t>, const am::regs::IpBases&);
DecodedPacket DecodeSdmaPacket(std::span<const uint32_t> p, const am::regs::IpBases&) { return DecodeSdma(p); }

// Splits `dwords` into packets from index `from`; a packet of unknown length ends the walk (the rest is shown
// raw as one line). `offset_base` is the first dword's offset in the ring (for the printout).
std::vector<PacketLine> Split(std::span<const uint32_t> dwords, size_t from, uint64_t offset_base, Decoder decode,
                              const am::regs::IpBases& bases, size_t max_packets = SIZE_MAX) {
  std::vector<PacketLine> lines;
  size_t at = from;
  while (at < dwords.size() && lines.size() < max_packets) {
    DecodedPacket packet = decode(dwords.subspan(at), bases);
    const size_t length = packet.dwords == 0 ? dwords.size() - at : std::min<size_t>(packet.dwords, dwords.size() - at);
    lines.push_back({offset_base + at, std::move(packet),
                     std::vector<uint32_t>(dwords.begin() + at, dwords.begin() + at + length), std::nullopt, ""});
    at += length;
  }
  return lines;
}

// Where in `dwords` a walk of whole packets starts that ends exactly at its end: the earliest such index, or
// dwords.size() when none does (the history then shows no packet, only raw dwords).
size_t FirstBoundaryEndingAtEnd(std::span<const uint32_t> dwords, Decoder decode, const am::regs::IpBases& bases) {
  for (size_t start = 0; start < dwords.size(); ++start) {
    size_t at = start;
    while (at < dwords.size()) {
      const uint32_t length = decode(dwords.subspan(at), bases).dwords;
      if (length == 0) break;
      at += length;
    }
    if (at == dwords.size()) return start;
  }
  return dwords.size();
}

// `count` dwords of the ring from ring dword `start`, wrapping.
std::vector<uint32_t> RingSlice(const std::vector<uint32_t>& ring, uint64_t start, uint64_t count) {
  std::vector<uint32_t> out(count);
  for (uint64_t i = 0; i < count; ++i) out[i] = ring[(start + i) % ring.size()];
  return out;
}

void FollowIndirectBuffers(std::vector<PacketLine>& lines, GpuMemoryReader& memory, uint32_t queue_vmid, Decoder decode,
                           const am::regs::IpBases& bases) {
  for (PacketLine& line : lines) {
    if (!line.packet.indirect.has_value() || line.packet.truncated) continue;
    const IndirectTarget& ib = *line.packet.indirect;
    absl::StatusOr<std::vector<uint32_t>> dwords =
        memory.ReadDwords(ib.vmid.value_or(queue_vmid), ib.address, ib.dwords);
    if (!dwords.ok()) {
      line.ib_error = std::string(dwords.status().message());
      continue;
    }
    line.ib = Split(*dwords, 0, 0, decode, bases, kMaxIbPackets);  // one level: IBs inside are not followed
  }
}

Json PacketsJson(const std::vector<PacketLine>& lines) {
  Json out = Json::array();
  for (const PacketLine& line : lines) {
    Json raw = Json::array();
    for (uint32_t d : line.raw) raw.push_back(Hex(d, 8));
    Json p = {{"offset", line.offset},        {"name", line.packet.name},           {"dwords", line.packet.dwords},
              {"fields", line.packet.fields}, {"truncated", line.packet.truncated}, {"raw", raw}};
    if (line.ib.has_value()) p["ib"] = PacketsJson(*line.ib);
    if (!line.ib_error.empty()) p["ib_error"] = line.ib_error;
    out.push_back(std::move(p));
  }
  return out;
}

void PrintPackets(std::ostream& out, const std::vector<PacketLine>& lines, const std::string& indent,
                  const char* where) {
  for (const PacketLine& line : lines) {
    out << absl::StrFormat("%s[%s%5d] %s%s%s%s\n", indent, where, line.offset, line.packet.name,
                           line.packet.fields.empty() ? "" : "  ", line.packet.fields,
                           line.packet.truncated ? "  (cut off: the stream ends inside the packet)" : "");
    if (line.ib.has_value()) PrintPackets(out, *line.ib, indent + "    ", "IB +");
    if (!line.ib_error.empty()) out << indent << "    IB not readable: " << line.ib_error << "\n";
  }
}

struct Options {
  std::optional<std::string> queue;
  uint64_t history = 0;
};

absl::StatusOr<Options> ParseOptions(const Invocation& inv, const std::vector<Queue>& queues) {
  Options options;
  if (std::optional<std::string> name = inv.value("queue")) {
    const bool known = std::any_of(queues.begin(), queues.end(), [&](const Queue& q) { return q.name == *name; });
    if (!known) {
      std::vector<std::string> names;
      for (const Queue& q : queues) names.push_back(q.name);
      return inv.UsageError(absl::StrCat("--queue=", base::Printable(*name), ": no such queue; the queues are ",
                                         absl::StrJoin(names, ", ")));
    }
    options.queue = *name;
  }
  if (std::optional<std::string> text = inv.value("history")) {
    if (!absl::SimpleAtoi(*text, &options.history) || options.history > kMaxHistoryDwords) {
      return inv.UsageError(absl::StrFormat("--history takes a number of dwords, 0 to %d", kMaxHistoryDwords));
    }
  }
  return options;
}

absl::Status RunRings(Invocation& inv) {
  if (inv.positional().size() != 1) {
    return inv.UsageError("usage: baregpu rings DEVICE [--queue=NAME] [--history=N] [--json]");
  }
  const std::vector<Queue> queues = AllQueues();
  BAREGPU_ASSIGN_OR_RETURN(Options options, ParseOptions(inv, queues));
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> device, OpenForInspection(inv, inv.positional()[0]));
  BAREGPU_ASSIGN_OR_RETURN(am::DeviceDiscovery found, am::ReadDiscovery(*device));
  const am::regs::IpBases bases = found.discovery.Bases();
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio bar5, device->MapMmio(am::kRegisterBar));
  am::RegisterIo io(bar5, bases);
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> vram, device->MapMemory(0));
  GpuMemoryReader memory(*device, io, bases, vram);
  Registers regs(io, bases);

  std::ostream& out = inv.out();
  Json json_queues = Json::array();
  for (const Queue& q : queues) {
    if (options.queue.has_value() && q.name != *options.queue) continue;
    BAREGPU_ASSIGN_OR_RETURN(
        QueueState s, q.engine == Engine::kCompute ? ReadComputeQueue(*device, bases, q) : ReadSdmaQueue(regs, q));
    const Decoder decode = q.engine == Engine::kCompute ? DecodePm4 : DecodeSdmaPacket;
    const char* unit = s.unit_bytes == 4 ? "dwords" : "bytes";
    Json j = {{"name", q.name},
              {"engine", q.engine == Engine::kCompute ? "compute" : "sdma"},
              {"active", s.active},
              {"vmid", s.vmid},
              {"ring", Hex(s.base)},
              {"size_dwords", s.size_dwords},
              {"rptr", s.rptr},
              {"wptr", s.wptr},
              {"pointer_unit", unit},
              {"doorbell", s.doorbell},
              {"doorbell_enabled", s.doorbell_enabled}};
    Json registers = Json::object();
    for (const auto& [name, value] : s.registers) registers[name] = Hex(value);
    j["registers"] = registers;
    // An inactive queue with nothing programmed is one line; a listed queue always shows its registers.
    const bool show = s.active || options.queue.has_value();
    if (!inv.json()) {
      out << absl::StrFormat("%s: %s, vmid %d, ring %#x (%d dwords), rptr %d wptr %d (%s), doorbell %d%s\n", q.name,
                             s.active ? "active" : "inactive", s.vmid, s.base, s.size_dwords, s.rptr, s.wptr, unit,
                             s.doorbell, s.doorbell_enabled ? "" : " (disabled)");
      if (show) {
        for (const auto& [name, value] : s.registers) {
          out << absl::StrFormat("  %-28s 0x%08x  %s\n", name, value, NonZeroFields(name, value));
        }
      }
    }
    if (!show) {
      json_queues.push_back(std::move(j));
      continue;
    }

    // The pointers in ring dwords: the MEC's rptr is already wrapped to the ring, its wptr and SDMA's both grow.
    const uint64_t size = s.size_dwords;
    const uint64_t rptr_dword = (s.rptr * s.unit_bytes / 4) % size;
    const uint64_t pending_units = q.engine == Engine::kCompute ? (s.wptr - s.rptr) & (size - 1) : s.wptr - s.rptr;
    const uint64_t pending = pending_units * s.unit_bytes / 4;
    std::string error;
    if (q.engine == Engine::kSdma && (s.wptr < s.rptr || pending > size)) {
      error = absl::StrFormat("wptr %d is not within one ring (%d bytes) ahead of rptr %d: the pointers are malformed",
                              s.wptr, size * 4, s.rptr);
    }
    absl::StatusOr<std::vector<uint32_t>> ring =
        error.empty() ? memory.ReadDwords(s.vmid, s.base, size) : absl::InternalError(error);
    if (!ring.ok()) {
      const std::string why =
          absl::StrFormat("ring at %#x (vmid %d) not readable: %s", s.base, s.vmid, ring.status().message());
      j["error"] = why;
      if (!inv.json()) out << "  " << why << "\n";
      json_queues.push_back(std::move(j));
      continue;
    }
    const std::vector<uint32_t> pending_dwords = RingSlice(*ring, rptr_dword, pending);
    std::vector<PacketLine> pending_lines = Split(pending_dwords, 0, rptr_dword, decode, bases);
    for (PacketLine& line : pending_lines) line.offset %= size;
    FollowIndirectBuffers(pending_lines, memory, s.vmid, decode, bases);

    std::vector<PacketLine> history_lines;
    uint64_t undecoded_history = 0;
    if (options.history > 0) {
      const uint64_t count = std::min(options.history, size);
      const uint64_t first = (rptr_dword + size - count) % size;
      const std::vector<uint32_t> before = RingSlice(*ring, first, count);
      const size_t boundary = FirstBoundaryEndingAtEnd(before, decode, bases);
      undecoded_history = boundary;
      history_lines = Split(before, boundary, first, decode, bases);
      for (PacketLine& line : history_lines) line.offset %= size;
      FollowIndirectBuffers(history_lines, memory, s.vmid, decode, bases);
    }
    j["pending"] = PacketsJson(pending_lines);
    if (options.history > 0) {
      j["history"] = PacketsJson(history_lines);
      j["history_undecoded_dwords"] = undecoded_history;
    }
    if (!inv.json()) {
      if (options.history > 0) {
        out << absl::StrFormat(
            "  last %d dwords before rptr%s:\n", std::min(options.history, size),
            undecoded_history == 0
                ? ""
                : absl::StrFormat(" (the first %d do not end on a packet boundary; not decoded)", undecoded_history));
        PrintPackets(out, history_lines, "    ", "");
      }
      out << absl::StrFormat("  pending: %d dwords%s\n", pending, pending == 0 ? " (idle)" : "");
      PrintPackets(out, pending_lines, "    ", "");
    }
    json_queues.push_back(std::move(j));
  }
  if (inv.json()) PrintJson(out, Json{{"device", device->name()}, {"queues", json_queues}});
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(
    kRingsRegistered,
    Command{"rings",
            "show the hardware queues: registers, ring contents and decoded packets",
            "baregpu rings DEVICE [--queue=NAME] [--history=N] [--json]",
            "Reads each compute queue of MEC1 (comp_1.PIPE.QUEUE, selected with GRBM_GFX_CNTL and restored) and "
            "SDMA queue 0 of each engine (sdma0, sdma1): active, VMID, ring address and size, read and write pointers, "
            "doorbell, with the registers' fields. For an active queue (or the one --queue names) it reads the ring "
            "through the VM and decodes the packets between the read and write pointers, following each indirect "
            "buffer one level. --history=N also decodes the N dwords before the read pointer, from the first packet "
            "boundary that ends exactly at it. It writes nothing: on a device another process holds, it attaches to "
            "the holder's debug endpoint, which runs each queue's selection and reads and puts the selection back.\n"
            "JSON: {device, queues: [{name, engine, active, vmid, ring, size_dwords, rptr, wptr, pointer_unit, "
            "doorbell, doorbell_enabled, registers: {NAME: value}, pending: [packet], history: [packet], "
            "history_undecoded_dwords, error}]}; packet = {offset (ring dword), name, dwords, fields, truncated, raw, "
            "ib: [packet], ib_error}.",
            {{"json", false, "print the queues as JSON"},
             {"queue", true, "only this queue (comp_1.P.Q, sdma0, sdma1)"},
             {"history", true, "also decode the last N dwords before the read pointer"}},
            RunRings});

}  // namespace
}  // namespace cli
