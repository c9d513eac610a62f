#include "am/sim/persistent_state.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/am/sim/sim_state_dir.h"

namespace am::sim {
namespace {

auto* const kStateDir = testing::RegisterSimStateDir();

const std::vector<StateRegion> kRegions = {{"vram", 1 << 20}, {"regs", 64 << 10}};

TEST(PersistentStateTest, FirstOpenIsColdAndZeroFilled) {
  auto state = PersistentState::Open("sim:test:cold", kRegions);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_TRUE((*state)->cold());
  ASSERT_EQ((*state)->region(0).size(), 1u << 20);
  for (uint8_t b : (*state)->region(1)) ASSERT_EQ(b, 0);
  EXPECT_TRUE(absl::StartsWith((*state)->path_prefix(), kStateDir->dir()));
}

TEST(PersistentStateTest, StateOutlivesTheOpenThatWroteIt) {
  {
    auto state = PersistentState::Open("sim:test:warm", kRegions);
    ASSERT_TRUE(state.ok());
    (*state)->region(0)[12345] = 0xab;
    (*state)->region(1)[7] = 0xcd;
  }
  auto again = PersistentState::Open("sim:test:warm", kRegions);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE((*again)->cold());
  EXPECT_EQ((*again)->region(0)[12345], 0xab);
  EXPECT_EQ((*again)->region(1)[7], 0xcd);
}

TEST(PersistentStateTest, OneHolderAtATime) {
  auto first = PersistentState::Open("sim:test:busy", kRegions);
  ASSERT_TRUE(first.ok());
  auto second = PersistentState::Open("sim:test:busy", kRegions);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(second.status().message(), std::to_string(::getpid()))) << second.status();
  EXPECT_FALSE(PersistentState::PowerCycle("sim:test:busy").ok());  // no power cycle under a running driver
  first->reset();
  EXPECT_TRUE(PersistentState::Open("sim:test:busy", kRegions).ok());
}

TEST(PersistentStateTest, PowerCycleDiscardsTheState) {
  {
    auto state = PersistentState::Open("sim:test:cycle", kRegions);
    ASSERT_TRUE(state.ok());
    (*state)->region(0)[0] = 1;
  }
  ASSERT_TRUE(PersistentState::PowerCycle("sim:test:cycle").ok());
  auto again = PersistentState::Open("sim:test:cycle", kRegions);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)->cold());
  EXPECT_EQ((*again)->region(0)[0], 0);
  EXPECT_TRUE(PersistentState::PowerCycle("sim:test:never-opened").ok());
}

TEST(PersistentStateTest, InstancesAreSeparate) {
  auto a = PersistentState::Open("sim:test:0", kRegions);
  auto b = PersistentState::Open("sim:test:1", kRegions);
  ASSERT_TRUE(a.ok() && b.ok());
  (*a)->region(0)[0] = 5;
  EXPECT_EQ((*b)->region(0)[0], 0);
}

TEST(PersistentStateTest, AStateFileOfTheWrongSizeSaysHowToReset) {
  { ASSERT_TRUE(PersistentState::Open("sim:test:resized", kRegions).ok()); }
  auto bigger = PersistentState::Open("sim:test:resized", {{"vram", 2 << 20}, {"regs", 64 << 10}});
  ASSERT_FALSE(bigger.ok());
  EXPECT_EQ(bigger.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(bigger.status().message(), "baregpu sim reset sim:test:resized"));
}

}  // namespace
}  // namespace am::sim
