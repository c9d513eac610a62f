// pci/dma_registry: reads inside one registered piece, nothing else.
#include "pci/dma_registry.h"

#include <cstdint>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace pci {
namespace {

TEST(DmaRegistryTest, ReadsInsideOnePieceOnly) {
  std::vector<uint8_t> first(4096), second(8192);
  for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < second.size(); ++i) second[i] = static_cast<uint8_t>(i * 3);
  DmaRegistry registry;
  registry.Add(0x10000, first);
  registry.Add(0x11000, second);  // right after the first, in device addresses only
  std::vector<uint8_t> out(16);
  ASSERT_TRUE(registry.Read("dev", 0x10ff0, out).ok());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], static_cast<uint8_t>(0xff0 + i));
  ASSERT_TRUE(registry.Read("dev", 0x11000 + 8176, out).ok());  // the last 16 bytes of the second
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], static_cast<uint8_t>((8176 + i) * 3));
  // Across the two pieces (their host memory is not contiguous), before, after, and past the end.
  for (uint64_t address : {uint64_t{0x10ff8}, uint64_t{0xfff0}, uint64_t{0x13000}, uint64_t{0x12ff8}}) {
    absl::Status s = registry.Read("dev", address, out);
    EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << std::hex << address;
    EXPECT_TRUE(absl::StrContains(s.message(), "dev: 16 bytes at device address")) << s;
  }
  registry.Remove(0x10000);
  EXPECT_EQ(registry.Read("dev", 0x10000, out).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(registry.Read("dev", 0x11000, out).ok());
  EXPECT_TRUE(registry.Read("dev", 0x11000, {}).ok());  // an empty read inside a piece
}

}  // namespace
}  // namespace pci
