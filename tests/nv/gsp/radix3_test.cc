// The radix3 table's level sizes worked out by hand (4 KiB pages of 512 u64 entries: nouveau nvkm_gsp_radix3_sg),
// and its contents for chosen bus addresses.
#include "nv/gsp/radix3.h"

#include <string>
#include <vector>

#include "base/file.h"
#include "firmware/nv/gsp_elf.h"
#include "gtest/gtest.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace nv::gsp {
namespace {

TEST(Radix3Test, GeometryOfSmallImages) {
  // One page: 1 image page, 8 bytes of level 2 -> 1 page.
  absl::StatusOr<Radix3Geometry> g = Radix3GeometryFor(0x1000);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->image_pages, 1u);
  EXPECT_EQ(g->level2_pages, 1u);
  EXPECT_EQ(g->level1_pages, 1u);
  EXPECT_EQ(g->level0_pages, 1u);
  // 0x1001 bytes: 2 pages (the partial one is mapped too).
  g = Radix3GeometryFor(0x1001);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->image_pages, 2u);
  EXPECT_EQ(g->level2_pages, 1u);
  // 2 MiB = 512 pages: 512 * 8 = 4096 bytes, exactly one level-2 page.
  g = Radix3GeometryFor(0x200000);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->image_pages, 512u);
  EXPECT_EQ(g->level2_pages, 1u);
  // One more page: 513 * 8 = 4104 bytes -> 2 level-2 pages.
  g = Radix3GeometryFor(0x201000);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->image_pages, 513u);
  EXPECT_EQ(g->level2_pages, 2u);
}

TEST(Radix3Test, GeometryOfTheReal535Image) {
  // .fwimage of gsp-535.113.01.bin is 0x2448000 bytes (readelf -S): 0x2448000 / 0x1000 = 0x2448 = 9288 pages;
  // level 2: 9288 * 8 = 74304 bytes = 18.14 pages -> 19; level 1: 19 entries in its one page.
  absl::StatusOr<Radix3Geometry> g = Radix3GeometryFor(0x2448000);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->image_pages, 9288u);
  EXPECT_EQ(g->level2_pages, 19u);
  EXPECT_EQ(g->level1_pages, 1u);
  EXPECT_EQ(g->level0_pages, 1u);
}

TEST(Radix3Test, TheCachedGspImageHasThatSize) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string path = root + "/nvidia/ad102/gsp/gsp-535.113.01.bin";
  absl::StatusOr<std::string> data = base::ReadFile(path);
  ASSERT_TRUE(data.ok()) << data.status();
  absl::StatusOr<firmware::nv::GspImage> image = firmware::nv::ParseGspImage(path, *data);
  ASSERT_TRUE(image.ok()) << image.status();
  const firmware::nv::ElfSection* fwimage = image->Find(".fwimage");
  ASSERT_NE(fwimage, nullptr);
  ASSERT_EQ(fwimage->size, 0x2448000u);  // readelf -S -W: .fwimage PROGBITS off 0x40 size 0x2448000
  absl::StatusOr<Radix3Geometry> g = Radix3GeometryFor(fwimage->size);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->level2_pages, 19u);
}

TEST(Radix3Test, LimitIsOneLevel1Page) {
  // 512 level-2 pages of 512 entries: 262144 pages = 1 GiB.
  absl::StatusOr<Radix3Geometry> g = Radix3GeometryFor(uint64_t{1} << 30);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->image_pages, 262144u);
  EXPECT_EQ(g->level2_pages, 512u);
  g = Radix3GeometryFor((uint64_t{1} << 30) + 1);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("1 GiB"), absl::string_view::npos) << g.status();
  EXPECT_FALSE(Radix3GeometryFor(0).ok());
}

TEST(Radix3Test, LevelsPointAtTheNextLevel) {
  // 513 image pages at 0x100000000 + i * 0x3000 (scattered), level 2 in two pages, level 1 at 0x5000.
  std::vector<uint64_t> image_pages;
  for (uint64_t i = 0; i < 513; ++i) image_pages.push_back(0x100000000 + i * 0x3000);
  const std::vector<uint64_t> level2_pages = {0x7000, 0x2000};
  absl::StatusOr<Radix3Table> t = BuildRadix3(0x201000, image_pages, level2_pages, 0x5000);
  ASSERT_TRUE(t.ok()) << t.status();
  // Each level is whole pages of 512 entries.
  ASSERT_EQ(t->level0.size(), 512u);
  ASSERT_EQ(t->level1.size(), 512u);
  ASSERT_EQ(t->level2.size(), 1024u);
  EXPECT_EQ(t->level0[0], 0x5000u);
  EXPECT_EQ(t->level0[1], 0u);
  EXPECT_EQ(t->level1[0], 0x7000u);
  EXPECT_EQ(t->level1[1], 0x2000u);
  EXPECT_EQ(t->level1[2], 0u);
  EXPECT_EQ(t->level2[0], 0x100000000u);
  EXPECT_EQ(t->level2[511], 0x100000000u + 511 * 0x3000);  // last entry of level-2 page 0 (0x7000)
  EXPECT_EQ(t->level2[512], 0x100000000u + 512 * 0x3000);  // first and only entry used of page 1 (0x2000)
  EXPECT_EQ(t->level2[513], 0u);
  EXPECT_EQ(t->level2[1023], 0u);
}

TEST(Radix3Test, RejectsWrongCountsAndUnalignedPages) {
  const std::vector<uint64_t> one_page = {0x10000};
  const std::vector<uint64_t> level2 = {0x20000};
  EXPECT_TRUE(BuildRadix3(0x1000, one_page, level2, 0x30000).ok());
  // Two image pages needed for 0x1001 bytes, one given.
  absl::StatusOr<Radix3Table> t = BuildRadix3(0x1001, one_page, level2, 0x30000);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  // An unaligned image page names itself.
  const std::vector<uint64_t> unaligned = {0x10800};
  t = BuildRadix3(0x1000, unaligned, level2, 0x30000);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("image_pages[0]"), absl::string_view::npos) << t.status();
  EXPECT_FALSE(BuildRadix3(0x1000, one_page, level2, 0x30008).ok());
}

}  // namespace
}  // namespace nv::gsp
