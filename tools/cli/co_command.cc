// baregpu co: a gfx1100 code object as a launcher sees it. Each kernel's descriptor (entry, COMPUTE_PGM_RSRC1/2/3,
// the user SGPRs it enables, LDS, scratch, wave size), its arguments from the metadata note with what a launch
// puts in each hidden one, the argument memory a launch needs (am::ImplicitArguments), and with --disassemble its
// code in LLVM syntax (the interpreter's decoder, checked against llvm-objdump-19 on the test corpus).
#include <algorithm>
#include <cstring>
#include <ostream>
#include <span>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "am/code_object.h"
#include "am/implicit_arguments.h"
#include "am/sim/isa/decoder.h"
#include "base/file.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "tools/cli/command.h"
#include "tools/cli/json.h"

namespace cli {
namespace {

// Code objects are kilobytes to a few MiB; the parser refuses images over 256 MiB anyway.
constexpr size_t kMaxCodeObjectBytes = size_t{512} << 20;

// AMDGPUUsage "SGPR Register Set Up Order": the user SGPRs a descriptor can enable, in that order.
constexpr std::pair<uint16_t, const char*> kUserSgprs[] = {
    {am::KernelDescriptor::kEnableSgprPrivateSegmentBuffer, "private_segment_buffer"},
    {am::KernelDescriptor::kEnableSgprDispatchPtr, "dispatch_ptr"},
    {am::KernelDescriptor::kEnableSgprQueuePtr, "queue_ptr"},
    {am::KernelDescriptor::kEnableSgprKernargSegmentPtr, "kernarg_segment_ptr"},
    {am::KernelDescriptor::kEnableSgprDispatchId, "dispatch_id"},
    {am::KernelDescriptor::kEnableSgprFlatScratchInit, "flat_scratch_init"},
    {am::KernelDescriptor::kEnableSgprPrivateSegmentSize, "private_segment_size"},
};

std::vector<std::string> UserSgprs(const am::KernelDescriptor& d) {
  std::vector<std::string> names;
  for (const auto& [bit, name] : kUserSgprs) {
    if (d.has(bit)) names.push_back(name);
  }
  return names;
}

// What a launch puts in an argument: the caller's value, a launch dimension baregpu fills, or zero.
std::string Source(const am::CodeObject::Kernel::Argument& argument, const am::ImplicitArguments& implicit) {
  if (!absl::StartsWith(argument.value_kind, "hidden_")) return "caller";
  for (const am::ImplicitArguments::Field& field : implicit.fields()) {
    if (field.offset == argument.offset) return "launch";
  }
  return "zero";
}

struct Line {
  uint64_t offset;
  std::vector<uint32_t> words;
  std::string text;
};

// The kernel's code, instruction by instruction; a word the decoder does not know is shown as data and skipped.
std::vector<Line> Disassemble(const am::CodeObject& object, const am::CodeObject::Kernel& kernel) {
  std::vector<Line> lines;
  const std::vector<uint8_t>& image = object.image();
  const uint64_t end = std::min<uint64_t>(kernel.entry_offset + kernel.code_size, image.size());
  std::vector<uint32_t> words((end - kernel.entry_offset) / 4);
  std::memcpy(words.data(), image.data() + kernel.entry_offset, words.size() * 4);
  for (size_t at = 0; at < words.size();) {
    std::span<const uint32_t> rest = std::span<const uint32_t>(words).subspan(at);
    absl::StatusOr<am::sim::isa::Instruction> inst = am::sim::isa::Decode(rest);
    const size_t length = inst.ok() ? inst->dwords : 1;
    Line line{kernel.entry_offset + 4 * at, {rest.begin(), rest.begin() + length}, ""};
    line.text = inst.ok() ? am::sim::isa::Disassemble(*inst, !kernel.wave32())
                          : absl::StrFormat(".long 0x%08x ; %s", rest[0], inst.status().message());
    lines.push_back(std::move(line));
    at += length;
  }
  return lines;
}

std::string Words(const std::vector<uint32_t>& words) {
  std::vector<std::string> hex;
  for (uint32_t w : words) hex.push_back(absl::StrFormat("%08X", w));
  return absl::StrJoin(hex, " ");
}

Json KernelJson(const am::CodeObject& object, const am::CodeObject::Kernel& k, bool disassemble) {
  const am::KernelDescriptor& d = k.descriptor;
  const am::ImplicitArguments implicit = am::ImplicitArguments::For(k);
  Json arguments = Json::array();
  for (const auto& a : k.arguments) {
    arguments.push_back(
        {{"offset", a.offset}, {"size", a.size}, {"value_kind", a.value_kind}, {"source", Source(a, implicit)}});
  }
  Json kernel{{"name", k.name},
              {"descriptor_offset", Hex(k.descriptor_offset)},
              {"entry_offset", Hex(k.entry_offset)},
              {"code_size", k.code_size},
              {"wave_size", k.wave_size()},
              {"compute_pgm_rsrc1", Hex(d.compute_pgm_rsrc1, 8)},
              {"compute_pgm_rsrc2", Hex(d.compute_pgm_rsrc2, 8)},
              {"compute_pgm_rsrc3", Hex(d.compute_pgm_rsrc3, 8)},
              {"user_sgprs", UserSgprs(d)},
              {"lds_bytes", k.lds_size()},
              {"scratch_bytes_per_work_item", k.scratch_size()},
              {"kernarg_size", k.kernarg_size()},
              {"launch_argument_bytes", implicit.size()},
              {"dispatch_packet_offset",
               implicit.has_dispatch_packet() ? Json(implicit.dispatch_packet_offset()) : Json(nullptr)},
              {"arguments", arguments}};
  if (disassemble) {
    Json code = Json::array();
    for (const Line& line : Disassemble(object, k)) {
      code.push_back({{"offset", Hex(line.offset)}, {"words", Words(line.words)}, {"text", line.text}});
    }
    kernel["code"] = code;
  }
  return kernel;
}

void PrintKernel(std::ostream& out, const am::CodeObject& object, const am::CodeObject::Kernel& k, bool disassemble) {
  const am::KernelDescriptor& d = k.descriptor;
  const am::ImplicitArguments implicit = am::ImplicitArguments::For(k);
  out << absl::StrFormat("\nkernel %s: wave%d, entry %#x (%d bytes of code), descriptor %#x\n", base::Printable(k.name),
                         k.wave_size(), k.entry_offset, k.code_size, k.descriptor_offset);
  out << absl::StrFormat("  COMPUTE_PGM_RSRC1 0x%08x  RSRC2 0x%08x  RSRC3 0x%08x\n", d.compute_pgm_rsrc1,
                         d.compute_pgm_rsrc2, d.compute_pgm_rsrc3);
  const std::vector<std::string> sgprs = UserSgprs(d);
  out << "  user SGPRs: " << (sgprs.empty() ? "none" : absl::StrJoin(sgprs, ", ")) << "\n";
  out << absl::StrFormat("  LDS %d bytes, scratch %d bytes per work-item\n", k.lds_size(), k.scratch_size());
  out << absl::StrFormat("  kernel arguments %d bytes; a launch needs %d bytes%s\n", k.kernarg_size(), implicit.size(),
                         implicit.has_dispatch_packet()
                             ? absl::StrFormat(" (dispatch packet at +%d)", implicit.dispatch_packet_offset())
                             : "");
  if (k.arguments.empty()) {
    out << "  arguments: none listed (no metadata for this kernel)\n";
  } else {
    out << absl::StrFormat("  %8s %6s  %-28s %s\n", "offset", "size", "value_kind", "filled by");
    for (const auto& a : k.arguments) {
      out << absl::StrFormat("  %8d %6d  %-28s %s\n", a.offset, a.size, base::Printable(a.value_kind),
                             Source(a, implicit));
    }
  }
  if (!disassemble) return;
  out << "  code:\n";
  for (const Line& line : Disassemble(object, k)) {
    out << absl::StrFormat("  %06x: %-56s // %s\n", line.offset, line.text, Words(line.words));
  }
}

absl::Status RunCo(Invocation& inv) {
  BAREGPU_ASSIGN_OR_RETURN(std::string path, inv.Positional(0, "a code object file (.co, .hsaco)"));
  if (inv.positional().size() > 1) return inv.UsageError("'baregpu co' takes one code object file");
  BAREGPU_ASSIGN_OR_RETURN(std::string bytes, base::ReadFile(path, kMaxCodeObjectBytes));
  BAREGPU_ASSIGN_OR_RETURN(
      am::CodeObject object,
      am::CodeObject::Parse({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, base::Printable(path)));
  std::vector<const am::CodeObject::Kernel*> kernels;
  if (std::optional<std::string> name = inv.value("kernel")) {
    BAREGPU_ASSIGN_OR_RETURN(const am::CodeObject::Kernel* kernel, object.FindKernel(*name));
    kernels.push_back(kernel);
  } else {
    for (const am::CodeObject::Kernel& kernel : object.kernels()) kernels.push_back(&kernel);
  }
  const bool disassemble = inv.has("disassemble");
  // Code object V4 is EI_ABIVERSION 2 (ELFABIVERSION_AMDGPU_HSA_V4), and each later version adds one.
  const int version = object.abi_version() + 2;
  if (inv.json()) {
    Json list = Json::array();
    for (const am::CodeObject::Kernel* k : kernels) list.push_back(KernelJson(object, *k, disassemble));
    PrintJson(inv.out(), Json{{"file", path},
                              {"target", std::string(object.target())},
                              {"code_object_version", version},
                              {"image_bytes", object.image().size()},
                              {"image_alignment", object.image_alignment()},
                              {"kernels", list}});
    return absl::OkStatus();
  }
  inv.out() << absl::StrFormat("%s: %s code object V%d, image %d bytes (%#x-aligned), %d kernel%s\n",
                               base::Printable(path), base::Printable(object.target()), version, object.image().size(),
                               object.image_alignment(), object.kernels().size(),
                               object.kernels().size() == 1 ? "" : "s");
  for (const am::CodeObject::Kernel* k : kernels) PrintKernel(inv.out(), object, *k, disassemble);
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(
    kCoRegistered,
    Command{"co",
            "inspect a gfx1100 code object: kernels, descriptors, arguments, disassembly",
            "baregpu co FILE [--kernel=NAME] [--disassemble] [--json]",
            "Parses an AMDGPU HSA code object (clang -target amdgcn-amd-amdhsa -mcpu=gfx1100, linked with ld.lld, or\n"
            "the unlinked relocatable object, as tinygrad's compiler writes it) as\n"
            "hcq loads it: each kernel's descriptor, the user SGPRs it expects, LDS and scratch, its arguments from\n"
            "the metadata note with what fills each one (the caller, the launch: hidden block counts, group sizes,\n"
            "grid dimensions; or zero), and the argument memory a launch needs. A malformed or foreign file is an\n"
            "error naming the field and its offset.",
            {{"json", false, "print a JSON document"},
             {"kernel", true, "only this kernel"},
             {"disassemble", false, "print each kernel's code in LLVM syntax"}},
            RunCo});

}  // namespace
}  // namespace cli
