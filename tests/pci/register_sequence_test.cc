// pci/register_sequence: what a sequence may hold, and that running one reads in order and puts every selection back,
// on a register window whose accesses are recorded.
#include "pci/register_sequence.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "pci/mmio.h"

namespace pci {
namespace {

constexpr uint64_t kBarSize = 0x1000;
constexpr uint32_t kIndex = 0x10, kBank = 0x14, kData = 0x18;

// Registers as a map, except kData, which reads the value at kIndex (bank kBank) and then advances kIndex: an
// auto-incrementing indirect port behind a bank selection, as SQ_IND_INDEX/SQ_IND_DATA under GRBM_GFX_INDEX.
class RecordingRegisters final : public MmioHandler {
 public:
  uint32_t Read32(uint64_t offset) override {
    log.push_back(absl::StrFormat("R %#x", offset));
    if (offset == kData) return values[kBank] * 1000 + values[kIndex]++;
    return values[offset];
  }
  void Write32(uint64_t offset, uint32_t value) override {
    log.push_back(absl::StrFormat("W %#x=%d", offset, value));
    values[offset] = value;
  }
  std::map<uint64_t, uint32_t> values;
  std::vector<std::string> log;
};

TEST(RegisterSequenceTest, ReadsInOrderAndPutsTheSelectionsBackLastFirst) {
  RecordingRegisters registers;
  registers.values = {{kIndex, 7}, {kBank, 1}};
  const Mmio mmio = Mmio::Trapped(&registers, kBarSize);
  const std::vector<RegisterStep> steps = {RegisterStep::Select(kBank, 2), RegisterStep::Select(kIndex, 0),
                                           RegisterStep::Read(kData, 3), RegisterStep::Select(kIndex, 10),
                                           RegisterStep::Read(kData)};
  auto reads = CheckRegisterSequence(steps, kBarSize);
  ASSERT_TRUE(reads.ok()) << reads.status();
  ASSERT_EQ(*reads, 4u);
  std::vector<uint32_t> out(*reads);
  RunRegisterSequence(mmio, steps, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{2000, 2001, 2002, 2010}));
  // Each selected register is read once, before its first write, and written back in the reverse order.
  EXPECT_EQ(registers.log, (std::vector<std::string>{"R 0x14", "W 0x14=2", "R 0x10", "W 0x10=0", "R 0x18", "R 0x18",
                                                     "R 0x18", "W 0x10=10", "R 0x18", "W 0x10=7", "W 0x14=1"}));
  EXPECT_EQ(registers.values[kIndex], 7u);
  EXPECT_EQ(registers.values[kBank], 1u);
}

TEST(RegisterSequenceTest, RefusesWhatIsNotASequence) {
  auto refused = [](const std::vector<RegisterStep>& steps, const std::string& words) {
    absl::StatusOr<size_t> r = CheckRegisterSequence(steps, kBarSize);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(r.status().message(), words)) << r.status();
  };
  refused({RegisterStep::Read(2)}, "offset 0x2");
  refused({RegisterStep::Read(kBarSize)}, "inside the BAR");
  refused({RegisterStep::Read(kBarSize - 2)}, "inside the BAR");
  refused({RegisterStep::Read(0, 0)}, "at least once");
  refused({RegisterStep::Read(0, kMaxRegisterSequenceReads), RegisterStep::Read(4)}, "in all");
  refused({RegisterStep{static_cast<RegisterStep::Kind>(2), 0, 0}}, "kind 2");
  refused(std::vector<RegisterStep>(kMaxRegisterSteps + 1, RegisterStep::Read(0)), "at most");
  std::vector<RegisterStep> many;
  for (uint32_t i = 0; i <= kMaxSelectedRegisters; ++i) many.push_back(RegisterStep::Select(4 * i, 0));
  refused(many, "selects a 17th register");
  // The limits themselves are fine, as is selecting one register many times.
  const std::vector<RegisterStep> most_reads = {RegisterStep::Read(0, kMaxRegisterSequenceReads)};
  EXPECT_EQ(*CheckRegisterSequence(most_reads, kBarSize), kMaxRegisterSequenceReads);
  EXPECT_EQ(*CheckRegisterSequence(std::vector<RegisterStep>(kMaxRegisterSteps, RegisterStep::Select(0, 1)), kBarSize),
            0u);
  EXPECT_EQ(*CheckRegisterSequence(std::vector<RegisterStep>{}, kBarSize), 0u);
}

}  // namespace
}  // namespace pci
