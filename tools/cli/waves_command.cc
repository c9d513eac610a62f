// baregpu waves DEVICE [--lanes=0,1,...] [--halt]: the waves on the GPU, read as a debugger reads them on hardware
// (umr --waves, amdgpu's debugfs wave file): for every SE, SA, WGP and SIMD (GRBM_GFX_INDEX; on gfx11 the instance
// is (WGP << 2) | SIMD, gfx_v11_0_read_wave_data) and every wave slot, the SQ's indirect registers through
// SQ_IND_INDEX/SQ_IND_DATA: SQ_WAVE_STATUS (VALID: a wave is there), PC, EXEC, HW_ID1/2, GPR_ALLOC, the SGPRs and
// the VGPRs of the chosen lanes. With --halt the waves are halted first (SQ_CMD SETHALT, broadcast) and resumed
// after; without it nothing stops them, so a running wave's registers come from slightly different moments. Each
// group of reads is a register sequence (pci/register_sequence.h), which the holder of a device runs for an attached
// debugger under its own selection lock, putting the selections back: reading waves changes nothing.
//
// The instruction at each PC is read through the wave's VM context and disassembled with the gfx1100 decoder.
// That decoder lives in the virtual GPU's library (am/sim/isa), which the baregpu tool links already (`sim`);
// it is pure decoding, so moving it beside am/code_object.* would let a build without the virtual GPU have it.
#include <algorithm>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "am/device.h"
#include "am/discovery.h"
#include "am/register_io.h"
#include "am/regs/gc.h"
#include "am/regs/register_space.h"
#include "am/regs/sq_cmd_constants.h"
#include "am/regs/sq_ind_constants.h"
#include "am/regs/sq_wave_constants.h"
#include "am/regs/sq_wave_field_constants.h"
#include "am/sim/isa/decoder.h"
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
namespace sq = am::regs::sq;
using GcRegisters = am::regs::IpRegisters<am::regs::Ip::kGc, am::RegisterIo>;

// An RDNA WGP is two CUs of two SIMD32s each (SQ_WAVE_HW_ID1.SIMD_ID is 2 bits); gc_info counts CUs.
constexpr uint32_t kCusPerWgp = 2;
constexpr uint32_t kSimdsPerWgp = 4;
constexpr uint32_t kInstanceSimdBits = 2;  // GRBM_GFX_INDEX.INSTANCE_INDEX = (WGP << 2) | SIMD, as HW_ID1 bits 13:8
constexpr uint32_t kMaxLanes = 64;         // SQ_IND_INDEX.WORKITEM_ID is 6 bits
// The hardware registers read in one auto-increment burst: ixSQ_WAVE_MODE .. ixSQ_WAVE_IB_STS2.
constexpr uint32_t kHwRegsFirst = sq::ixSQ_WAVE_MODE;
constexpr uint32_t kHwRegsCount = sq::ixSQ_WAVE_IB_STS2 - sq::ixSQ_WAVE_MODE + 1;
// SGPRs as the indirect space holds them: SQIND_WAVE_SGPRS_OFFSET + n for operand code n up to EXEC_HI (0x27f).
constexpr uint32_t kSgprCodes = sq::ixSQ_WAVE_EXEC_HI - sq::SQIND_WAVE_SGPRS_OFFSET + 1;
constexpr uint32_t kUserSgprs = 106;  // s0..s105; 106/107 are VCC (RDNA3 ISA, scalar operand codes)
constexpr uint32_t kVccLo = 106;
constexpr uint32_t kM0 = sq::ixSQ_WAVE_M0 - sq::SQIND_WAVE_SGPRS_OFFSET;
// GPR_ALLOC.VGPR_SIZE counts granules of 8 VGPRs in wave32 and 4 in wave64, minus one, as COMPUTE_PGM_RSRC1.VGPRS
// (AMDGPUUsage, GRANULATED_WORKITEM_VGPR_COUNT on gfx10+); at most 256 VGPRs (SQIND_WAVE_VGPRS_SIZE / 4).
constexpr uint32_t kVgprGranuleWave32 = 8, kVgprGranuleWave64 = 4, kMaxVgprs = 256;
constexpr uint32_t kRegistersPerRow = 8;

// One wave as the indirect registers showed it.
struct WaveRead {
  uint32_t se, sa, wgp, simd, slot;
  uint32_t mode, status, trapsts, gpr_alloc, hw_id1, hw_id2, ib_sts2;
  uint64_t pc;
  std::vector<uint32_t> sgpr;                                    // operand codes 0..127
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> vgpr;  // (lane, VGPRs)
  std::string instruction;                                       // disassembly at PC, or why there is none
  bool wave64() const { return (ib_sts2 & sq::SQ_WAVE_IB_STS2__WAVE64_MASK) != 0; }
  uint64_t exec() const {
    const uint64_t lo = sgpr[sq::ixSQ_WAVE_EXEC_LO - sq::SQIND_WAVE_SGPRS_OFFSET];
    return wave64() ? lo | uint64_t{sgpr[sq::ixSQ_WAVE_EXEC_HI - sq::SQIND_WAVE_SGPRS_OFFSET]} << 32 : lo;
  }
  uint32_t vmid() const { return (hw_id2 & sq::SQ_WAVE_HW_ID2__VM_ID_MASK) >> sq::SQ_WAVE_HW_ID2__VM_ID__SHIFT; }
  uint32_t vgprs() const {
    const uint32_t size =
        (gpr_alloc & sq::SQ_WAVE_GPR_ALLOC__VGPR_SIZE_MASK) >> sq::SQ_WAVE_GPR_ALLOC__VGPR_SIZE__SHIFT;
    return std::min(kMaxVgprs, (size + 1) * (wave64() ? kVgprGranuleWave64 : kVgprGranuleWave32));
  }
};

std::vector<std::string> StateWords(uint32_t status) {
  std::vector<std::string> words;
  if (status & sq::SQ_WAVE_STATUS__HALT_MASK) words.push_back("halted");
  if (status & sq::SQ_WAVE_STATUS__FATAL_HALT_MASK) words.push_back("fatal-halted");
  if (status & sq::SQ_WAVE_STATUS__TRAP_MASK) words.push_back("trapped");
  if (status & sq::SQ_WAVE_STATUS__IN_BARRIER_MASK) words.push_back("at barrier");
  if (words.empty()) words.push_back("running");
  return words;
}

// The instruction at `pc` in VM context `vmid`, in LLVM's syntax.
std::string DisassembleAt(GpuMemoryReader& memory, uint32_t vmid, uint64_t pc, bool wave64) {
  absl::StatusOr<std::vector<uint32_t>> words = memory.ReadDwords(vmid, pc, am::sim::isa::kMaxInstructionDwords);
  if (!words.ok()) return absl::StrCat("(not readable: ", words.status().message(), ")");
  absl::StatusOr<am::sim::isa::Instruction> inst = am::sim::isa::Decode(*words);
  if (!inst.ok()) return absl::StrCat("(", inst.status().message(), ")");
  return am::sim::isa::Disassemble(*inst, wave64);
}

absl::StatusOr<std::vector<uint32_t>> ParseLanes(const Invocation& inv) {
  std::optional<std::string> text = inv.value("lanes");
  if (!text.has_value()) return std::vector<uint32_t>{0};
  std::vector<uint32_t> lanes;
  for (absl::string_view part : absl::StrSplit(*text, ',')) {
    uint32_t lane = 0;
    if (!absl::SimpleAtoi(part, &lane) || lane >= kMaxLanes) {
      return inv.UsageError(absl::StrCat("--lanes=", base::Printable(*text),
                                         ": give lane numbers 0 to 63 separated by commas (--lanes=0,1,31)"));
    }
    if (std::find(lanes.begin(), lanes.end(), lane) == lanes.end()) lanes.push_back(lane);
  }
  return lanes;
}

// The registers a wave read goes through, as BAR5 byte offsets.
struct SelectionOffsets {
  uint32_t gfx_index, ind_index, ind_data;
};

// Reads every valid wave slot. Each step is one register sequence (pci::Device::RunRegisterSequence: the selections
// are put back after it, and attached it is one round trip to the holder): the slots' status words of one SIMD, then
// per valid wave its hardware registers and SGPRs, then the chosen lanes' VGPRs (their count is in GPR_ALLOC).
absl::StatusOr<std::vector<WaveRead>> ReadWaves(pci::Device& device, const SelectionOffsets& at, const am::GcInfo& info,
                                                const std::vector<uint32_t>& lanes) {
  using Step = pci::RegisterStep;
  std::vector<WaveRead> waves;
  const uint32_t wgps = info.num_cu_per_sa / kCusPerWgp;
  auto run = [&](const std::vector<Step>& steps, size_t reads) -> absl::StatusOr<std::vector<uint32_t>> {
    std::vector<uint32_t> values(reads);
    BAREGPU_RETURN_IF_ERROR(device.RunRegisterSequence(am::kRegisterBar, steps, values));
    return values;
  };
  auto index = [&](uint32_t slot, uint32_t ix, uint32_t lane, bool increment) {
    return Step::Select(
        at.ind_index, gc::SQ_IND_INDEX{}.wave_id(slot).index(ix).workitem_id(lane).auto_incr(increment ? 1 : 0).raw());
  };
  for (uint32_t se = 0; se < info.num_se; ++se) {
    for (uint32_t sa = 0; sa < info.num_sa_per_se; ++sa) {
      for (uint32_t wgp = 0; wgp < wgps; ++wgp) {
        for (uint32_t simd = 0; simd < kSimdsPerWgp; ++simd) {
          const Step select = Step::Select(
              at.gfx_index,
              gc::GRBM_GFX_INDEX{}.se_index(se).sa_index(sa).instance_index((wgp << kInstanceSimdBits) | simd).raw());
          std::vector<Step> status_steps = {select};
          for (uint32_t slot = 0; slot < info.max_waves_per_simd; ++slot) {
            status_steps.push_back(index(slot, sq::ixSQ_WAVE_STATUS, 0, false));
            status_steps.push_back(Step::Read(at.ind_data));
          }
          BAREGPU_ASSIGN_OR_RETURN(std::vector<uint32_t> statuses, run(status_steps, info.max_waves_per_simd));
          for (uint32_t slot = 0; slot < info.max_waves_per_simd; ++slot) {
            if (!(statuses[slot] & sq::SQ_WAVE_STATUS__VALID_MASK)) continue;
            // One burst per group, each a consistent copy on the virtual GPU (the index write takes it).
            BAREGPU_ASSIGN_OR_RETURN(
                std::vector<uint32_t> regs,
                run({select, index(slot, kHwRegsFirst, 0, true), Step::Read(at.ind_data, kHwRegsCount),
                     index(slot, sq::SQIND_WAVE_SGPRS_OFFSET, 0, true), Step::Read(at.ind_data, kSgprCodes)},
                    kHwRegsCount + kSgprCodes));
            auto hw = [&](uint32_t ix) { return regs[ix - kHwRegsFirst]; };
            WaveRead w{se,
                       sa,
                       wgp,
                       simd,
                       slot,
                       hw(sq::ixSQ_WAVE_MODE),
                       hw(sq::ixSQ_WAVE_STATUS),
                       hw(sq::ixSQ_WAVE_TRAPSTS),
                       hw(sq::ixSQ_WAVE_GPR_ALLOC),
                       hw(sq::ixSQ_WAVE_HW_ID1),
                       hw(sq::ixSQ_WAVE_HW_ID2),
                       hw(sq::ixSQ_WAVE_IB_STS2),
                       hw(sq::ixSQ_WAVE_PC_LO) | uint64_t{hw(sq::ixSQ_WAVE_PC_HI)} << 32,
                       std::vector<uint32_t>(regs.begin() + kHwRegsCount, regs.end()),
                       {},
                       ""};
            std::vector<Step> vgpr_steps = {select};
            std::vector<uint32_t> shown;
            for (uint32_t lane : lanes) {
              if (lane >= (w.wave64() ? 64u : 32u)) continue;  // a wave32 has lanes 0..31
              shown.push_back(lane);
              vgpr_steps.push_back(index(slot, sq::SQIND_WAVE_VGPRS_OFFSET, lane, true));
              vgpr_steps.push_back(Step::Read(at.ind_data, w.vgprs()));
            }
            if (!shown.empty()) {
              BAREGPU_ASSIGN_OR_RETURN(std::vector<uint32_t> vgprs, run(vgpr_steps, shown.size() * w.vgprs()));
              for (size_t i = 0; i < shown.size(); ++i) {
                w.vgpr.emplace_back(shown[i], std::vector<uint32_t>(vgprs.begin() + i * w.vgprs(),
                                                                    vgprs.begin() + (i + 1) * w.vgprs()));
              }
            }
            waves.push_back(std::move(w));
          }
        }
      }
    }
  }
  return waves;
}

// SQ_CMD SETHALT to every wave (GRBM_GFX_INDEX broadcasting), as umr halts them before reading.
void SetHaltAll(GcRegisters& g, bool halt) {
  g.Write(gc::GRBM_GFX_INDEX{}.se_broadcast_writes(1).sa_broadcast_writes(1).instance_broadcast_writes(1));
  g.Write(gc::SQ_CMD{}.cmd(sq::SQ_IND_CMD_CMD_SETHALT).mode(sq::SQ_IND_CMD_MODE_BROADCAST).data(halt ? 1 : 0));
}

std::string RegisterRows(const std::string& prefix, const std::vector<uint32_t>& values, uint32_t count,
                         const std::string& indent) {
  std::string out;
  for (uint32_t first = 0; first < count; first += kRegistersPerRow) {
    const uint32_t last = std::min(count, first + kRegistersPerRow) - 1;
    std::vector<std::string> words;
    for (uint32_t i = first; i <= last; ++i) words.push_back(absl::StrFormat("%08x", values[i]));
    absl::StrAppendFormat(&out, "%s%-9s %s\n", indent, absl::StrFormat("%s%d-%s%d", prefix, first, prefix, last),
                          absl::StrJoin(words, " "));
  }
  return out;
}

Json HexArray(const std::vector<uint32_t>& values, size_t count) {
  Json out = Json::array();
  for (size_t i = 0; i < count && i < values.size(); ++i) out.push_back(Hex(values[i]));
  return out;
}

absl::Status RunWaves(Invocation& inv) {
  if (inv.positional().size() != 1) return inv.UsageError("usage: baregpu waves DEVICE [--lanes=0,1,...] [--halt]");
  BAREGPU_ASSIGN_OR_RETURN(std::vector<uint32_t> lanes, ParseLanes(inv));
  const bool halt = inv.has("halt");
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> device, OpenForInspection(inv, inv.positional()[0]));
  // Reading needs only selections, which a register sequence puts back; halting is a command to the SQ.
  if (halt)
    BAREGPU_RETURN_IF_ERROR(CheckWriteAllowed(inv, *device, "halt every wave (SQ_CMD SETHALT) and resume them"));
  BAREGPU_ASSIGN_OR_RETURN(am::DeviceDiscovery found, am::ReadDiscovery(*device));
  if (!found.discovery.gc.has_value()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: its discovery table has no gc_info, so the shader engines cannot be enumerated", device->name()));
  }
  const am::GcInfo info = *found.discovery.gc;
  const am::regs::IpBases bases = found.discovery.Bases();
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio bar5, device->MapMmio(am::kRegisterBar));
  am::RegisterIo io(bar5, bases);
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> vram, device->MapMemory(0));
  BAREGPU_ASSIGN_OR_RETURN(GcRegisters g, GcRegisters::Create(io, bases));
  GpuMemoryReader memory(*device, io, bases, vram);

  const SelectionOffsets offsets{static_cast<uint32_t>(*g.AddressOf<gc::GRBM_GFX_INDEX>() * 4),
                                 static_cast<uint32_t>(*g.AddressOf<gc::SQ_IND_INDEX>() * 4),
                                 static_cast<uint32_t>(*g.AddressOf<gc::SQ_IND_DATA>() * 4)};
  BAREGPU_RETURN_IF_ERROR(g.status());
  // Halting broadcasts through GRBM_GFX_INDEX, which is the driver's (gfx_v11_0 leaves it broadcasting): it is put
  // back after the resume.
  const gc::GRBM_GFX_INDEX saved = g.Read<gc::GRBM_GFX_INDEX>();
  if (halt) SetHaltAll(g, true);
  absl::StatusOr<std::vector<WaveRead>> read = ReadWaves(*device, offsets, info, lanes);
  if (halt) {
    SetHaltAll(g, false);
    g.Write(saved);
  }
  BAREGPU_RETURN_IF_ERROR(g.status());
  BAREGPU_ASSIGN_OR_RETURN(std::vector<WaveRead> waves, std::move(read));
  for (WaveRead& w : waves) w.instruction = DisassembleAt(memory, w.vmid(), w.pc, w.wave64());

  std::ostream& out = inv.out();
  if (inv.json()) {
    Json list = Json::array();
    for (const WaveRead& w : waves) {
      Json vgprs = Json::object();
      for (const auto& [lane, values] : w.vgpr) vgprs[absl::StrCat(lane)] = HexArray(values, values.size());
      list.push_back({{"se", w.se},
                      {"sa", w.sa},
                      {"wgp", w.wgp},
                      {"simd", w.simd},
                      {"slot", w.slot},
                      {"pc", Hex(w.pc)},
                      {"instruction", w.instruction},
                      {"exec", Hex(w.exec())},
                      {"status", Hex(w.status)},
                      {"state", StateWords(w.status)},
                      {"wave64", w.wave64()},
                      {"vmid", w.vmid()},
                      {"hw_id1", Hex(w.hw_id1)},
                      {"hw_id2", Hex(w.hw_id2)},
                      {"mode", Hex(w.mode)},
                      {"trapsts", Hex(w.trapsts)},
                      {"m0", Hex(w.sgpr[kM0])},
                      {"vcc", Hex(w.sgpr[kVccLo] | (w.wave64() ? uint64_t{w.sgpr[kVccLo + 1]} << 32 : 0))},
                      {"sgprs", HexArray(w.sgpr, kUserSgprs)},
                      {"vgprs", vgprs}});
    }
    PrintJson(out, Json{{"device", device->name()}, {"halted", halt}, {"waves", list}});
    return absl::OkStatus();
  }
  if (waves.empty()) {
    out << device->name() << ": no waves\n";
    return absl::OkStatus();
  }
  for (const WaveRead& w : waves) {
    const uint32_t me = (w.hw_id2 & sq::SQ_WAVE_HW_ID2__ME_ID_MASK) >> sq::SQ_WAVE_HW_ID2__ME_ID__SHIFT;
    const uint32_t pipe = (w.hw_id2 & sq::SQ_WAVE_HW_ID2__PIPE_ID_MASK) >> sq::SQ_WAVE_HW_ID2__PIPE_ID__SHIFT;
    const uint32_t queue = (w.hw_id2 & sq::SQ_WAVE_HW_ID2__QUEUE_ID_MASK) >> sq::SQ_WAVE_HW_ID2__QUEUE_ID__SHIFT;
    out << absl::StrFormat("SE%d SA%d WGP%d SIMD%d wave %d: %s, PC %#x  %s\n", w.se, w.sa, w.wgp, w.simd, w.slot,
                           absl::StrJoin(StateWords(w.status), ", "), w.pc, w.instruction);
    out << absl::StrFormat("  EXEC %#0*x  STATUS %#010x  %s, vmid %d, queue comp_%d.%d.%d, %d VGPRs\n",
                           w.wave64() ? 18 : 10, w.exec(), w.status, w.wave64() ? "wave64" : "wave32", w.vmid(), me,
                           pipe, queue, w.vgprs());
    out << absl::StrFormat("  M0 %08x  VCC %08x\n", w.sgpr[kM0], w.sgpr[kVccLo]);
    // The SGPRs up to the last row with a non-zero one (a kernel uses the low ones; the rest read 0).
    uint32_t shown = kRegistersPerRow;
    for (uint32_t i = 0; i < kUserSgprs; ++i) {
      if (w.sgpr[i] != 0) shown = std::max(shown, std::min(kUserSgprs, (i / kRegistersPerRow + 1) * kRegistersPerRow));
    }
    out << RegisterRows("s", w.sgpr, shown, "  ");
    if (shown < kUserSgprs) out << absl::StrFormat("  s%d-s%d all 0\n", shown, kUserSgprs - 1);
    for (const auto& [lane, values] : w.vgpr) {
      out << absl::StrFormat("  lane %d:\n", lane) << RegisterRows("v", values, values.size(), "    ");
    }
  }
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(
    kWavesRegistered,
    Command{
        "waves",
        "show the waves running on the GPU: PC and instruction, EXEC, state, SGPRs, VGPRs",
        "baregpu waves DEVICE [--lanes=0,1,...] [--halt] [--json]",
        "Reads every wave slot of every SE, SA, WGP and SIMD through the SQ's indirect registers (SQ_IND_INDEX / "
        "SQ_IND_DATA, as umr --waves and amdgpu's debugfs do; GRBM_GFX_INDEX is put back after). For each wave: "
        "where it runs, its state (running, halted, trapped, at barrier), PC with the instruction there, EXEC, "
        "M0, VCC, s0-s105 and v0.. of the chosen lanes (--lanes, default 0; lanes past a wave32's 31 are "
        "skipped). --halt halts every wave (SQ_CMD SETHALT) while they are read, then resumes them; without it "
        "the waves run on and each group of registers is a copy from a slightly different moment. On a device another "
        "process holds, waves attaches to its debug endpoint and the holder runs each group of reads (selections "
        "put back after it), so no --force is needed; --halt needs it.\n"
        "JSON: {device, halted, waves: [{se, sa, wgp, simd, slot, pc, instruction, exec, status, state: [..], "
        "wave64, vmid, hw_id1, hw_id2, mode, trapsts, m0, vcc, sgprs: [s0..s105], vgprs: {LANE: [v0..]}}]}.",
        {{"json", false, "print the waves as JSON"},
         ForceOptionSpec(),
         {"lanes", true, "lanes whose VGPRs to show, e.g. 0,1,31 (0-63)"},
         {"halt", false, "halt the waves while reading them, resume after"}},
        RunWaves});

}  // namespace
}  // namespace cli
