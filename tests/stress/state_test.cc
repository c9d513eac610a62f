// Issue 23 (defect 7): random damage to each persistent file of a virtual device (header, VRAM, registers, model
// state, PCI configuration) after a clean close: bit flips, truncation, extension, zeroed ranges. Every case must end
// in a correct boot (checked with an SDMA copy) or a clean error naming the file and the fix; anything else is lost.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "am/device.h"
#include "am/memory_manager.h"
#include "am/sdma.h"
#include "gtest/gtest.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/stress/cli_process.h"
#include "tests/stress/stress_report.h"

namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

constexpr char kDevice[] = "sim:navi31:corrupt";
constexpr char kFileBase[] = "navi31-corrupt";
constexpr uint64_t kCopyBytes = 64 << 10;

enum class Damage { kBitFlip, kTruncate, kExtend, kZero };
constexpr Damage kDamages[] = {Damage::kBitFlip, Damage::kTruncate, Damage::kExtend, Damage::kZero};
const char* DamageName(Damage d) {
  switch (d) {
    case Damage::kBitFlip:
      return "bit flip";
    case Damage::kTruncate:
      return "truncation";
    case Damage::kExtend:
      return "extension";
    case Damage::kZero:
      return "zeroed range";
  }
  return "?";
}

// The extents the file holds data in (what a boot wrote), from SEEK_DATA/SEEK_HOLE.
std::vector<std::pair<off_t, off_t>> DataExtents(int fd, off_t size) {
  std::vector<std::pair<off_t, off_t>> extents;
  for (off_t at = 0; at < size;) {
    const off_t data = ::lseek(fd, at, SEEK_DATA);
    if (data < 0) break;
    off_t hole = ::lseek(fd, data, SEEK_HOLE);
    if (hole < 0) hole = size;
    extents.emplace_back(data, hole);
    at = hole;
  }
  return extents;
}

// An offset that matters more often than not: three times in four inside data the device wrote, else anywhere.
off_t PickOffset(int fd, off_t size, std::mt19937_64& rng) {
  const std::vector<std::pair<off_t, off_t>> extents = DataExtents(fd, size);
  if (extents.empty() || rng() % 4 == 0) return static_cast<off_t>(rng() % static_cast<uint64_t>(size));
  const auto& [from, to] = extents[rng() % extents.size()];
  return from + static_cast<off_t>(rng() % static_cast<uint64_t>(to - from));
}

std::string Apply(const std::string& path, Damage damage, std::mt19937_64& rng) {
  const int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) return "cannot open " + path;
  struct stat st;
  ::fstat(fd, &st);
  const off_t size = st.st_size;
  std::string what;
  switch (damage) {
    case Damage::kBitFlip: {
      const off_t at = PickOffset(fd, size, rng);
      uint8_t byte = 0;
      (void)::pread(fd, &byte, 1, at);
      const int bit = static_cast<int>(rng() % 8);
      byte ^= static_cast<uint8_t>(1u << bit);
      (void)::pwrite(fd, &byte, 1, at);
      what = absl::StrCat("bit ", bit, " of byte ", at);
      break;
    }
    case Damage::kTruncate: {
      const off_t to = static_cast<off_t>(rng() % static_cast<uint64_t>(size));
      (void)::ftruncate(fd, to);
      what = absl::StrCat("to ", to, " bytes");
      break;
    }
    case Damage::kExtend: {
      const off_t by = 1 + static_cast<off_t>(rng() % (1 << 20));
      (void)::ftruncate(fd, size + by);
      what = absl::StrCat("by ", by, " bytes");
      break;
    }
    case Damage::kZero: {
      const off_t at = PickOffset(fd, size, rng);
      const off_t bytes = std::min<off_t>(size - at, 1 + static_cast<off_t>(rng() % (64 << 10)));
      const std::vector<uint8_t> zeros(static_cast<size_t>(bytes), 0);
      (void)::pwrite(fd, zeros.data(), zeros.size(), at);
      what = absl::StrCat(bytes, " bytes at ", at);
      break;
    }
  }
  ::close(fd);
  return what;
}

// One SDMA copy on the booted device, in a forked child (the test process never holds the device).
int CopyOnce() {
  auto device = am::Device::Open(kDevice);
  if (!device.ok() || !(*device)->Boot().ok()) return 10;
  am::MemoryManager& memory = (*device)->memory();
  auto source = memory.AllocVram(kCopyBytes, 4096);
  auto destination = memory.AllocVram(kCopyBytes, 4096);
  if (!source.ok() || !destination.ok()) return 11;
  std::memset(memory.CpuView(*source, kCopyBytes)->data(), 0x5a, kCopyBytes);
  std::memset(memory.CpuView(*destination, kCopyBytes)->data(), 0, kCopyBytes);
  if (!(*device)->sdma().Copy((*device)->McAddress(*destination), (*device)->McAddress(*source), kCopyBytes).ok()) {
    return 12;
  }
  if (!(*device)->sdma().WaitIdle().ok()) return 13;
  return std::memcmp(memory.CpuView(*source, kCopyBytes)->data(), memory.CpuView(*destination, kCopyBytes)->data(),
                     kCopyBytes) == 0
             ? 0
             : 14;
}

TEST(StateStress, DamagedFilesBootCorrectlyOrFailNamingTheFileAndTheFix) {
  std::mt19937_64 rng(2307);  // fixed seed
  const uint64_t rounds = 3 * stress::Scale();
  uint64_t tried = 0, survived = 0, errors = 0, detected = 0;
  for (const char* file : {"state", "vram", "regs", "model", "pci"}) {
    for (Damage damage : kDamages) {
      for (uint64_t round = 0; round < rounds; ++round) {
        ASSERT_EQ(stress::RunBaregpu({"boot", kDevice}).exit_status, 0);  // booted and closed cleanly
        const std::string path = absl::StrCat(kStateDir->dir(), "/", kFileBase, ".", file);
        const std::string what = Apply(path, damage, rng);
        ++tried;
        const std::string label = absl::StrCat(file, " ", DamageName(damage), " (", what, ")");
        stress::Outcome boot = stress::RunBaregpu({"boot", kDevice});
        if (boot.exit_status == 0) {
          detected += absl::StrContains(boot.err, "treated as powered off");
          stress::Child copy(::fork());
          if (copy.pid() == 0) ::_exit(CopyOnce());
          const stress::Outcome copied = copy.Wait(std::chrono::seconds(60));
          if (copied.exit_status == 0) {
            ++survived;
          } else {
            ADD_FAILURE() << label << ": booted, but a copy then failed (status " << copied.exit_status << ")";
          }
        } else if (!boot.hung && absl::StrContains(boot.err, absl::StrCat(kFileBase, ".")) &&
                   absl::StrContains(boot.err, "baregpu sim reset")) {
          ++survived;  // a clean error naming the file and the fix
          ++errors;
        } else {
          ADD_FAILURE() << label << ": " << (boot.hung ? "hung" : "an error that names neither file nor fix: ")
                        << boot.err;
        }
        // Whatever happened, the next round starts from a good device.
        ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(kDevice).ok());
      }
    }
  }
  stress::Report("damaged persistent state files (5 files x 4 kinds of damage)", tried, survived, tried - survived);
  std::printf("  (%llu booted after the damage was detected and the device powered off, %llu ended in a named error)\n",
              static_cast<unsigned long long>(detected), static_cast<unsigned long long>(errors));
  EXPECT_EQ(survived, tried);
}

}  // namespace
