// baregpu mem DEVICE read VA | read --phys=OFFSET | write VA VALUE... --force: GPU memory as the GPU sees it, through
// the VM context's page tables (tools/cli/page_walk.h), with each page's translation shown: a VRAM offset (read
// through BAR0) or a system bus address (host memory the device reaches, pci::Device::ReadDmaMemory). A device
// another process holds is reached through its debug endpoint (tools/cli/device_access.h).
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "tools/cli/command.h"
#include "tools/cli/device_access.h"
#include "tools/cli/json.h"
#include "tools/cli/page_walk.h"

namespace cli {
namespace {

constexpr uint64_t kDefaultBytes = 64;
// A dump is for reading: a megabyte is 65536 lines already.
constexpr uint64_t kMaxBytes = uint64_t{1} << 20;
constexpr uint64_t kBytesPerLine = 16;
constexpr uint64_t kTranslationPage = 4096;  // the smallest GPU page: a range is translated page by page
constexpr uint32_t kMaxVmid = 15;

enum class Element { kU8, kU32, kU64, kF32 };

struct ElementType {
  Element element;
  absl::string_view name;
  uint64_t bytes;
};
constexpr ElementType kElementTypes[] = {
    {Element::kU8, "u8", 1}, {Element::kU32, "u32", 4}, {Element::kU64, "u64", 8}, {Element::kF32, "f32", 4}};

absl::StatusOr<uint64_t> ParseAddress(const Invocation& inv, absl::string_view text, absl::string_view what) {
  uint64_t value = 0;
  if (!absl::StartsWithIgnoreCase(text, "0x") || !absl::SimpleHexAtoi(text.substr(2), &value)) {
    return inv.UsageError(
        absl::StrFormat("%s is not %s; write it in hex (0x7f0000001000)", base::Printable(text), what));
  }
  return value;
}

// One contiguous piece of the range: the bytes [offset, offset + size) of the dump live at `target`.
struct Piece {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t va = 0;
  Translation target;
};

Json PieceJson(const Piece& p, bool with_va) {
  Json j = {{"offset", p.offset},
            {"bytes", p.size},
            {"target", p.target.system ? "system" : "vram"},
            {"address", Hex(p.target.address)},
            {"page_size", p.target.page_size}};
  if (with_va) j["va"] = Hex(p.va);
  return j;
}

std::string PieceText(const Piece& p, bool with_va) {
  const std::string where = absl::StrFormat("%s 0x%x", p.target.system ? "system" : "VRAM", p.target.address);
  if (!with_va) return absl::StrFormat("  %s, %d bytes\n", where, p.size);
  return absl::StrFormat("  0x%x -> %s (%s page), %d bytes\n", p.va, where, PageSizeName(p.target.page_size), p.size);
}

// Splits [va, va + size) into pieces that each lie in one page, translated.
absl::StatusOr<std::vector<Piece>> Translate(pci::Device& device, const VmContext& context, uint64_t va,
                                             uint64_t size) {
  std::vector<Piece> pieces;
  for (uint64_t done = 0; done < size;) {
    const uint64_t at = va + done;
    BAREGPU_ASSIGN_OR_RETURN(const PageWalk walk, WalkPageTable(device, context, at));
    if (!walk.translation.has_value()) {
      return absl::NotFoundError(
          absl::StrFormat("0x%x (byte %d of the range) is %s; `baregpu pt %s walk 0x%x --vmid=%d` shows the walk", at,
                          done, walk.outcome, device.name(), at, context.vmid));
    }
    const uint64_t page = std::max(walk.translation->page_size, kTranslationPage);
    const uint64_t in_page = std::min(size - done, page - (at & (page - 1)));
    Piece piece{done, in_page, at, *walk.translation};
    // Consecutive pages that land side by side are shown as one piece.
    if (!pieces.empty() && pieces.back().target.system == piece.target.system &&
        pieces.back().target.address + pieces.back().size == piece.target.address) {
      pieces.back().size += in_page;
    } else {
      pieces.push_back(piece);
    }
    done += in_page;
  }
  return pieces;
}

absl::Status ReadPiece(pci::Device& device, std::span<uint8_t> vram, const Piece& p, std::span<uint8_t> out) {
  if (p.target.system) return device.ReadDmaMemory(p.target.address, out);
  if (p.target.address > vram.size() || vram.size() - p.target.address < p.size) {
    return absl::OutOfRangeError(absl::StrFormat("VRAM 0x%x..0x%x is beyond what BAR0 shows (0x%x bytes)",
                                                 p.target.address, p.target.address + p.size, vram.size()));
  }
  std::memcpy(out.data(), vram.data() + p.target.address, p.size);
  return absl::OkStatus();
}

std::string FormatElement(const ElementType& type, const uint8_t* at) {
  switch (type.element) {
    case Element::kU8:
      return absl::StrFormat("0x%02x", *at);
    case Element::kU32: {
      uint32_t v;
      std::memcpy(&v, at, sizeof(v));
      return absl::StrFormat("0x%08x", v);
    }
    case Element::kU64: {
      uint64_t v;
      std::memcpy(&v, at, sizeof(v));
      return absl::StrFormat("0x%016x", v);
    }
    case Element::kF32: {
      float v;
      std::memcpy(&v, at, sizeof(v));
      return absl::StrFormat("%g", v);
    }
  }
  return "";
}

void HexDump(std::ostream& out, uint64_t base, std::span<const uint8_t> data) {
  for (uint64_t line = 0; line < data.size(); line += kBytesPerLine) {
    std::string hex, ascii;
    for (uint64_t i = 0; i < kBytesPerLine; ++i) {
      if (line + i < data.size()) {
        const uint8_t b = data[line + i];
        absl::StrAppend(&hex, absl::StrFormat("%02x ", b));
        ascii.push_back(absl::ascii_isprint(b) ? static_cast<char>(b) : '.');
      } else {
        absl::StrAppend(&hex, "   ");
      }
      if (i == kBytesPerLine / 2 - 1) hex.push_back(' ');
    }
    out << absl::StrFormat("0x%012x  %s |%s|\n", base + line, hex, ascii);
  }
}

absl::StatusOr<std::vector<uint8_t>> ParseValues(const Invocation& inv, const ElementType& type,
                                                 std::span<const std::string> texts) {
  std::vector<uint8_t> bytes;
  for (const std::string& text : texts) {
    uint8_t encoded[sizeof(uint64_t)] = {};
    if (type.element == Element::kF32) {
      float f;
      if (!absl::SimpleAtof(text, &f)) return inv.UsageError(absl::StrCat(base::Printable(text), " is not a number"));
      std::memcpy(encoded, &f, sizeof(f));
    } else {
      uint64_t v = 0;
      const bool ok =
          absl::StartsWithIgnoreCase(text, "0x") ? absl::SimpleHexAtoi(text.substr(2), &v) : absl::SimpleAtoi(text, &v);
      const uint64_t limit =
          type.bytes == 8 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << (8 * type.bytes)) - 1;
      if (!ok || v > limit) {
        return inv.UsageError(absl::StrFormat("%s is not a %s value (hex 0x... or decimal, at most %#x)",
                                              base::Printable(text), type.name, limit));
      }
      std::memcpy(encoded, &v, type.bytes);  // little-endian, as the GPU stores it
    }
    bytes.insert(bytes.end(), encoded, encoded + type.bytes);
  }
  return bytes;
}

absl::Status RunMem(Invocation& inv) {
  const std::vector<std::string>& args = inv.positional();
  constexpr absl::string_view kUsage =
      "usage: baregpu mem DEVICE read VA [--bytes=N] [--as=u8|u32|u64|f32] [--vmid=N] | read --phys=OFFSET "
      "[--bytes=N] | write VA VALUE... --force [--as=TYPE] | write --phys=OFFSET VALUE... --force";
  if (args.size() < 2 || (args[1] != "read" && args[1] != "write")) return inv.UsageError(kUsage);
  const bool write = args[1] == "write";
  const std::optional<std::string> phys_text = inv.value("phys");
  // The values of a write follow its VA, or the action itself with --phys.
  const size_t first_value = phys_text ? 2 : 3;
  if (write ? args.size() <= first_value : args.size() != first_value) return inv.UsageError(kUsage);
  const ElementType* type = &kElementTypes[0];
  if (std::optional<std::string> as = inv.value("as")) {
    type = nullptr;
    for (const ElementType& t : kElementTypes) {
      if (t.name == *as) type = &t;
    }
    if (type == nullptr)
      return inv.UsageError(absl::StrCat("--as takes u8, u32, u64 or f32, not ", base::Printable(*as)));
  } else if (write) {
    type = &kElementTypes[1];  // a write of plain numbers means dwords, as `regs write` does
  }
  uint64_t size = kDefaultBytes;
  if (std::optional<std::string> text = inv.value("bytes")) {
    if (!absl::SimpleAtoi(*text, &size) || size == 0 || size > kMaxBytes) {
      return inv.UsageError(absl::StrFormat("--bytes takes 1 to %d", kMaxBytes));
    }
  }
  uint32_t vmid = 0;
  if (std::optional<std::string> text = inv.value("vmid")) {
    if (!absl::SimpleAtoi(*text, &vmid) || vmid > kMaxVmid) return inv.UsageError("--vmid takes 0 to 15");
  }
  std::vector<uint8_t> new_bytes;
  if (write) {
    BAREGPU_ASSIGN_OR_RETURN(new_bytes,
                             ParseValues(inv, *type, std::span<const std::string>(args).subspan(first_value)));
    size = new_bytes.size();
    if (size > kMaxBytes) return inv.UsageError(absl::StrFormat("a write of %d bytes; at most %d", size, kMaxBytes));
    if (!inv.has(kForceOption)) {
      return inv.UsageError(absl::StrFormat(
          "writing GPU memory changes what the device and its user see: add --force to write %d bytes at %s", size,
          base::Printable(phys_text ? *phys_text : args[2])));
    }
  } else if (size % type->bytes != 0) {
    return inv.UsageError(absl::StrFormat("--bytes=%d is not a whole number of %s", size, type->name));
  }

  uint64_t start = 0;
  if (phys_text) {
    BAREGPU_ASSIGN_OR_RETURN(start, ParseAddress(inv, *phys_text, "a VRAM offset"));
  } else {
    BAREGPU_ASSIGN_OR_RETURN(start, ParseAddress(inv, args[2], "a GPU address"));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> device, OpenForInspection(inv, args[0]));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> vram, device->MapMemory(0));
  std::vector<Piece> pieces;
  if (phys_text) {
    pieces.push_back(Piece{0, size, 0, Translation{false, start, 0}});
  } else {
    BAREGPU_ASSIGN_OR_RETURN(const VmContext context, ReadVmContext(*device, vmid));
    BAREGPU_ASSIGN_OR_RETURN(pieces, Translate(*device, context, start, size));
  }
  std::vector<uint8_t> data(size);
  for (const Piece& p : pieces) {
    BAREGPU_RETURN_IF_ERROR(ReadPiece(*device, vram, p, std::span<uint8_t>(data).subspan(p.offset, p.size)));
  }
  const bool with_va = !phys_text.has_value();
  std::ostream& out = inv.out();
  // Where the access was, as both documents (read and write) start.
  Json where = {{"device", device->name()}};
  if (with_va) {
    where["vmid"] = vmid;
    where["va"] = Hex(start);
  } else {
    where["phys"] = Hex(start);
  }

  if (write) {
    BAREGPU_RETURN_IF_ERROR(CheckWriteAllowed(inv, *device, absl::StrFormat("write %d bytes at 0x%x", size, start)));
    for (const Piece& p : pieces) {
      if (p.target.system) {
        return absl::UnimplementedError(absl::StrFormat(
            "0x%x maps system memory at 0x%x: baregpu writes only VRAM (host memory is its holder's to change)", p.va,
            p.target.address));
      }
    }
    Json changes = Json::array();
    for (const Piece& p : pieces) {
      std::memcpy(vram.data() + p.target.address, new_bytes.data() + p.offset, p.size);
    }
    for (uint64_t i = 0; i < size; i += type->bytes) {
      const std::string before = FormatElement(*type, data.data() + i);
      const std::string after = FormatElement(*type, new_bytes.data() + i);
      if (inv.json()) {
        changes.push_back({{"address", Hex(start + i)}, {"old", before}, {"new", after}});
      } else {
        out << absl::StrFormat("0x%x: %s -> %s\n", start + i, before, after);
      }
    }
    Json translations = Json::array();
    for (const Piece& p : pieces) translations.push_back(PieceJson(p, with_va));
    if (inv.json()) {
      Json doc = where;
      doc["as"] = std::string(type->name);
      doc["translations"] = translations;
      doc["changes"] = changes;
      SetJsonSchema("baregpu.mem.write/1");
      PrintJson(out, doc);
    } else {
      for (const Piece& p : pieces) out << PieceText(p, with_va);
    }
    return absl::OkStatus();
  }

  if (inv.json()) {
    Json translations = Json::array();
    for (const Piece& p : pieces) translations.push_back(PieceJson(p, with_va));
    Json values = Json::array();
    for (uint64_t i = 0; i < size; i += type->bytes) values.push_back(FormatElement(*type, data.data() + i));
    std::string hex;
    for (uint8_t b : data) absl::StrAppend(&hex, absl::StrFormat("%02x", b));
    Json doc = where;
    doc["bytes"] = size;
    doc["as"] = std::string(type->name);
    doc["translations"] = translations;
    doc["hex"] = hex;
    doc["values"] = values;
    SetJsonSchema("baregpu.mem.read/1");
    PrintJson(out, doc);
    return absl::OkStatus();
  }
  out << absl::StrFormat("%s %s 0x%x, %d bytes:\n", device->name(),
                         with_va ? absl::StrFormat("VM context %d", vmid) : "VRAM offset", start, size);
  for (const Piece& p : pieces) out << PieceText(p, with_va);
  if (type->element == Element::kU8) {
    HexDump(out, start, data);
    return absl::OkStatus();
  }
  const uint64_t per_line = kBytesPerLine / type->bytes;
  for (uint64_t i = 0; i < size; i += kBytesPerLine) {
    std::string line = absl::StrFormat("0x%012x ", start + i);
    for (uint64_t k = 0; k < per_line && i + k * type->bytes < size; ++k) {
      absl::StrAppend(&line, " ", FormatElement(*type, data.data() + i + k * type->bytes));
    }
    out << line << "\n";
  }
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(
    kMemRegistered,
    Command{
        "mem",
        "read or write GPU memory through the device's page tables",
        "baregpu mem DEVICE read VA [--bytes=N] [--as=u8|u32|u64|f32] [--vmid=N] [--json]\n"
        "       baregpu mem DEVICE read --phys=OFFSET [--bytes=N] [--as=TYPE] [--json]\n"
        "       baregpu mem DEVICE write VA VALUE... --force [--as=TYPE] [--vmid=N] [--json]",
        "Translates VA through GCHUB VM context N's page tables (as `baregpu pt` walks them), page by page, and\n"
        "shows each page's target (a VRAM offset, or a system bus address for host memory), then the bytes: a hex\n"
        "dump (address, 16 bytes, ASCII) or, with --as, typed values. --phys reads VRAM at an offset, untranslated.\n"
        "write stores VALUEs (of --as, default u32, little-endian) at VA in VRAM and prints old -> new; it always\n"
        "needs --force. A device another process holds is reached through its debug endpoint.\n"
        "JSON (read): device, vmid and va (or phys), bytes, as, translations [{offset, bytes, target: vram|system,\n"
        "address, page_size, va}], hex (the bytes), values (per --as). JSON (write): device, vmid, va, as,\n"
        "translations, changes [{address, old, new}].",
        {{"json", false, "print a JSON document"},
         {"bytes", true, "how many bytes to read (default 64, at most 1 MiB)"},
         {"as", true, "u8 (hex dump, the default for read), u32, u64 or f32"},
         {"vmid", true, "VM context (0-15, default 0)"},
         {"phys", true, "read or write VRAM at this offset instead of a virtual address"},
         ForceOptionSpec()},
        RunMem});

}  // namespace
}  // namespace cli
