// How the GPU translates a virtual address, read from the device itself: the GCHUB VM context's registers (page-table
// base, depth, range) and each level's entry, in VRAM or in system memory (pci::Device::ReadDmaMemory). Shared by
// `baregpu pt` (which prints the walk) and `baregpu mem` (which follows it to the bytes).
#ifndef BAREGPU_TOOLS_CLI_PAGE_WALK_H_
#define BAREGPU_TOOLS_CLI_PAGE_WALK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pci/device.h"

namespace cli {

struct VmContext {
  uint32_t vmid = 0;
  bool enabled = false;
  int depth = 0;
  uint32_t block_size = 0;  // PAGE_TABLE_BLOCK_SIZE
  uint64_t base = 0;        // PAGE_TABLE_BASE_ADDR, as the register holds it (flags included)
  uint64_t start = 0;       // first byte of the context's range
  uint64_t end = 0;         // last byte of it
};

struct WalkStep {
  std::string level;  // "PDB2", "PDB1", "PDB0", "PTB"
  uint64_t table = 0;
  bool table_in_system = false;
  uint64_t index = 0;
  uint64_t entries = 0;
  uint64_t entry = 0;
  bool leaf = false;
  std::string flags;  // decoded: "VALID SYSTEM READABLE ..."
};

struct Translation {
  bool system = false;     // a system (bus/IOVA) address; else a VRAM offset
  uint64_t address = 0;    // of the byte the VA names
  uint64_t page_size = 0;  // of the page that maps it (4 KiB, 2 MiB, 1 GiB ...)
};

struct PageWalk {
  VmContext context;
  std::vector<WalkStep> steps;
  std::optional<Translation> translation;  // nullopt: not mapped (outcome says why)
  std::string outcome;                     // "0x1000 -> VRAM 0x5000 (4 KiB page)", "not mapped: ..."
};

// Reads VM context `vmid`'s registers (0-15).
absl::StatusOr<VmContext> ReadVmContext(pci::Device& device, uint32_t vmid);

// Walks `va` through the context's tables. FailedPrecondition when the context is disabled, OutOfRange when `va`
// is outside its range (the GPU raises a range fault without walking); an unmapped address is a walk without a
// translation, not an error.
absl::StatusOr<PageWalk> WalkPageTable(pci::Device& device, const VmContext& context, uint64_t va);

// "4 KiB", "2 MiB", "1 GiB".
std::string PageSizeName(uint64_t bytes);

}  // namespace cli

#endif  // BAREGPU_TOOLS_CLI_PAGE_WALK_H_
