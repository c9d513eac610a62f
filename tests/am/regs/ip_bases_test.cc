#include "am/regs/ip_bases.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace am::regs {
namespace {

using ::testing::HasSubstr;

TEST(IpBasesTest, ResolvesBasePlusOffset) {
  IpBases bases;
  ASSERT_TRUE(bases.SetBase(Ip::kGc, 0, 1, 0xa000).ok());
  auto address = bases.Resolve(Ip::kGc, 0, 1, 0x900);
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(*address, 0xa900u);
  EXPECT_EQ(bases.Instances(Ip::kGc), std::vector<int>{0});
  EXPECT_TRUE(bases.Instances(Ip::kHdp).empty());
}

TEST(IpBasesTest, MissingBaseIsAnErrorNamingIt) {
  IpBases bases;
  ASSERT_TRUE(bases.SetBase(Ip::kMmhub, 0, 0, 0x1a000).ok());
  auto no_ip = bases.Base(Ip::kHdp, 0, 0);
  ASSERT_FALSE(no_ip.ok());
  EXPECT_EQ(no_ip.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(no_ip.status().message()), HasSubstr("hdp instance 0"));
  auto no_segment = bases.Base(Ip::kMmhub, 0, 2);
  ASSERT_FALSE(no_segment.ok());
  EXPECT_THAT(std::string(no_segment.status().message()), HasSubstr("mmhub instance 0 has no base for segment 2"));
}

TEST(IpBasesTest, RejectsOutOfRangeInstanceOrSegment) {
  IpBases bases;
  EXPECT_FALSE(bases.SetBase(Ip::kGc, IpBases::kMaxInstances, 0, 1).ok());
  EXPECT_FALSE(bases.SetBase(Ip::kGc, 0, IpBases::kMaxSegments, 1).ok());
  EXPECT_FALSE(bases.SetBase(Ip::kGc, -1, 0, 1).ok());
  EXPECT_TRUE(bases.empty());
}

}  // namespace
}  // namespace am::regs
