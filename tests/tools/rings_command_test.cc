// `baregpu rings DEVICE`: queues a driver left stuck (a wait that never ends, then more work), read by a second
// process from the engines' registers and the rings in VRAM, with the packets decoded and indirect buffers followed.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "am/device.h"
#include "am/discovery.h"
#include "am/gfx.h"
#include "am/memory_manager.h"
#include "am/register_io.h"
#include "am/regs/gc.h"
#include "am/regs/pm4_packets.h"
#include "am/regs/sdma_packets.h"
#include "am/ring.h"
#include "am/sdma.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

namespace pm4 = am::regs::pm4;
namespace sdma = am::regs::sdma;
using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

constexpr absl::Duration kWriteTimeout = absl::Seconds(5);

const am::regs::gc::GRBM_GFX_CNTL kLeftSelection = am::regs::gc::GRBM_GFX_CNTL{}.meid(1).pipeid(2).queueid(3);

struct StuckQueues {
  uint64_t ib_va = 0;
  uint64_t fence = 0;
};

// Boots `name` and leaves both kernel queues waiting on a dword that stays 0, with packets behind the wait: the
// compute queue an INDIRECT_BUFFER (in VRAM mapped at a VA: its IB holds a WRITE_DATA and a RELEASE_MEM) and a
// RELEASE_MEM; the SDMA queue a COPY_LINEAR and a FENCE.
StuckQueues LeaveStuckQueues(const std::string& name) {
  StuckQueues stuck;
  EXPECT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  auto device = am::Device::Open(name);
  EXPECT_TRUE(device.ok()) << device.status();
  if (!device.ok()) return stuck;
  am::Device& dev = **device;
  EXPECT_TRUE(dev.Boot().ok());
  auto vram = dev.memory().AllocVram(base::MiB(2), base::MiB(2));
  EXPECT_TRUE(vram.ok()) << vram.status();
  auto va = dev.memory().MapVram(*vram, base::MiB(2));
  EXPECT_TRUE(va.ok()) << va.status();
  auto cpu = dev.memory().CpuView(*vram, base::MiB(2));
  EXPECT_TRUE(cpu.ok()) << cpu.status();
  std::memset(cpu->data(), 0, 4096);
  const uint64_t never = *va;  // stays 0: both waits wait for 1
  stuck.fence = *va + 0x100;   // what the packets behind the waits would write
  stuck.ib_va = *va + 0x1000;  // the IB

  std::vector<uint32_t> ib;
  const auto write = pm4::WriteData::Header(pm4::WriteData::kDstMemory, stuck.fence, 1);
  ib.insert(ib.end(), write.begin(), write.end());
  ib.push_back(0x1234);
  const auto release = pm4::ReleaseMem::Encode(stuck.fence + 8, pm4::ReleaseData::kLow32, 7);
  ib.insert(ib.end(), release.begin(), release.end());
  std::memcpy(cpu->data() + 0x1000, ib.data(), ib.size() * 4);

  std::vector<uint32_t> compute;
  const auto wait = pm4::WaitMemory::Encode(never, 1);
  const auto indirect = pm4::IndirectBuffer::Encode(stuck.ib_va, static_cast<uint32_t>(ib.size()));
  compute.insert(compute.end(), wait.begin(), wait.end());
  compute.insert(compute.end(), indirect.begin(), indirect.end());
  compute.insert(compute.end(), release.begin(), release.end());
  EXPECT_TRUE(dev.gfx().ring().Write(compute, kWriteTimeout).ok());
  // The MEC takes the doorbell on its own thread and mirrors the write pointer into CP_HQD_PQ_WPTR_LO, where the
  // next process finds it: wait for that before closing, or the packets are not the queue's yet.
  auto gc_regs = dev.Regs<am::regs::Ip::kGc>();
  gc_regs.Write(am::regs::gc::GRBM_GFX_CNTL{}.meid(1).pipeid(0).queueid(0));
  const absl::Time deadline = absl::Now() + kWriteTimeout;
  while (gc_regs.Read<am::regs::gc::CP_HQD_PQ_WPTR_LO>().raw() != compute.size() && absl::Now() < deadline) {
    absl::SleepFor(absl::Microseconds(100));
  }
  EXPECT_EQ(gc_regs.Read<am::regs::gc::CP_HQD_PQ_WPTR_LO>().raw(), compute.size());

  std::vector<uint32_t> copy;
  const auto poll = sdma::EncodePollMemory(never, 1);
  const auto linear = sdma::EncodeCopyLinear(stuck.fence + 0x40, stuck.fence, 64);
  const auto fence = sdma::EncodeFence(stuck.fence + 0x80, 9);
  copy.insert(copy.end(), poll.begin(), poll.end());
  copy.insert(copy.end(), linear.begin(), linear.end());
  copy.insert(copy.end(), fence.begin(), fence.end());
  EXPECT_TRUE(dev.sdma().ring().Write(copy, kWriteTimeout).ok());
  // A selection another tool (or the driver, mid-sequence) left: `rings` must put it back.
  dev.Regs<am::regs::Ip::kGc>().Write(kLeftSelection);
  return stuck;
}

TEST(RingsCommandTest, ShowsThePacketsBehindAStuckWaitAndFollowsTheIndirectBuffer) {
  const StuckQueues stuck = LeaveStuckQueues("sim:navi31:rings");
  auto r = RunBaregpu({"rings", "sim:navi31:rings"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "comp_1.0.0: active")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "comp_1.0.1: inactive")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "WAIT_REG_MEM  wait until mem")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrFormat("INDIRECT_BUFFER  addr=%#x dwords=13", stuck.ib_va))) << r.out;
  EXPECT_TRUE(absl::StrContains(
      r.out, absl::StrFormat("[IB +    0] WRITE_DATA  dst_sel=5 addr=%#x data=00001234", stuck.fence)))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "[IB +    5] RELEASE_MEM")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "sdma0: active")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "POLL_REGMEM")) << r.out;
  EXPECT_TRUE(absl::StrContains(
      r.out, absl::StrFormat("COPY_LINEAR  bytes=64 src=%#x dst=%#x", stuck.fence, stuck.fence + 0x40)))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrFormat("FENCE  addr=%#x data=0x9", stuck.fence + 0x80))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "QUEUE_SIZE=")) << r.out;  // registers decoded by the database
  auto j = RunBaregpu({"rings", "sim:navi31:rings", "--queue=comp_1.0.0", "--json"});
  ASSERT_EQ(j.exit_status, 0) << j.err;
  auto json = nlohmann::json::parse(j.out);
  ASSERT_EQ(json["queues"].size(), 1u);
  const auto& queue = json["queues"][0];
  EXPECT_EQ(queue["name"], "comp_1.0.0");
  EXPECT_EQ(queue["active"], true);
  ASSERT_EQ(queue["pending"].size(), 3u) << j.out;
  EXPECT_EQ(queue["pending"][0]["name"], "WAIT_REG_MEM");
  EXPECT_EQ(queue["pending"][1]["name"], "INDIRECT_BUFFER");
  ASSERT_TRUE(queue["pending"][1].contains("ib")) << j.out;
  ASSERT_EQ(queue["pending"][1]["ib"].size(), 2u) << j.out;
  EXPECT_EQ(queue["pending"][1]["ib"][0]["name"], "WRITE_DATA");
  EXPECT_EQ(queue["pending"][2]["name"], "RELEASE_MEM");

  // The selection the device had before is back (read without am::Device, whose open sets up memory anew).
  auto device = pci::Open("sim:navi31:rings");
  ASSERT_TRUE(device.ok()) << device.status();
  auto found = am::ReadDiscovery(**device);
  ASSERT_TRUE(found.ok()) << found.status();
  const am::regs::IpBases bases = found->discovery.Bases();
  auto bar5 = (*device)->MapMmio(5);
  ASSERT_TRUE(bar5.ok()) << bar5.status();
  am::RegisterIo io(*bar5, bases);
  EXPECT_EQ(io.ReadDword(*bases.Resolve(am::regs::Ip::kGc, 0, am::regs::gc::GRBM_GFX_CNTL::kSegment,
                                        am::regs::gc::GRBM_GFX_CNTL::kOffset)),
            kLeftSelection.raw());
}

TEST(RingsCommandTest, HistoryDecodesThePacketsBeforeTheReadPointer) {
  const std::string name = "sim:navi31:rings2";
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  {
    auto device = am::Device::Open(name);
    ASSERT_TRUE(device.ok()) << device.status();
    ASSERT_TRUE((*device)->Boot().ok());
    // Two fences the engine runs at once (to VRAM it can write), so they end up before the read pointer.
    auto vram = (*device)->memory().AllocVram(4096, 4096);
    ASSERT_TRUE(vram.ok());
    const uint64_t target = (*device)->McAddress(*vram);
    const auto first = sdma::EncodeFence(target, 1), second = sdma::EncodeFence(target + 4, 2);
    std::vector<uint32_t> fences(first.begin(), first.end());
    fences.insert(fences.end(), second.begin(), second.end());
    ASSERT_TRUE((*device)->sdma().ring().Write(fences, kWriteTimeout).ok());
    ASSERT_TRUE((*device)->sdma().WaitIdle(kWriteTimeout).ok());
  }
  auto r = RunBaregpu({"rings", "sim:navi31:rings2", "--queue=sdma0", "--history=8"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "last 8 dwords before rptr")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "data=0x1")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "data=0x2")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "pending: 0 dwords (idle)")) << r.out;
}

TEST(RingsCommandTest, BadOptionsAreUsageErrors) {
  auto bad_queue = RunBaregpu({"rings", "sim:navi31:rings3", "--queue=comp_9.9.9"});
  EXPECT_EQ(bad_queue.exit_status, 2);
  EXPECT_TRUE(absl::StrContains(bad_queue.err, "no such queue; the queues are comp_1.0.0")) << bad_queue.err;
  EXPECT_EQ(RunBaregpu({"rings", "sim:navi31:rings3", "--history=many"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"rings", "sim:navi31:rings3", "--history=99999999"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"rings"}).exit_status, 2);
  auto help = RunBaregpu({"rings", "--help"});
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_TRUE(absl::StrContains(help.out, "--history")) << help.out;
}

TEST(RingsCommandTest, AColdDeviceHasNoActiveQueue) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:rings4").ok());
  auto r = RunBaregpu({"rings", "sim:navi31:rings4"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_FALSE(absl::StrContains(r.out, ": active")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "sdma1: inactive")) << r.out;
}

}  // namespace
}  // namespace cli
