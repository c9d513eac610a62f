// Lookup in the full register database. Expected values are read off the Linux 6.12 headers.
#include "am/regs/database.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace am::regs {
namespace {

using ::testing::HasSubstr;

TEST(DatabaseTest, HoldsEveryIpBlock) {
  std::set<Ip> seen;
  for (const RegisterInfo& reg : AllRegisters()) seen.insert(reg.ip());
  EXPECT_EQ(seen.size(), kIpCount);
  // gc_11_0_0_offset.h alone has 5493 registers with a BASE_IDX (one, GFX_IMU_FUSESTRAP, lacks it).
  EXPECT_GT(AllRegisters().size(), 11000u);
}

TEST(DatabaseTest, LookupByNameGivesSegmentOffsetAndFields) {
  auto reg = Lookup("CP_HQD_PQ_CONTROL");
  ASSERT_TRUE(reg.ok()) << reg.status();
  EXPECT_EQ(reg->ip(), Ip::kGc);
  EXPECT_EQ(reg->segment(), 0);
  EXPECT_EQ(reg->offset(), 0x1fbau);
  ASSERT_EQ(reg->field_count(), 17u);
  EXPECT_EQ(reg->field(0).name, "QUEUE_SIZE");
  EXPECT_EQ(reg->field(0).mask, 0x3fu);
  EXPECT_EQ(reg->field(16).name, "KMD_QUEUE");
  EXPECT_EQ(reg->field(16).shift, 31);
  EXPECT_THAT(std::string(reg->source()), HasSubstr("gc_11_0_0"));
}

TEST(DatabaseTest, LookupAcceptsAnyCaseAndTheKernelsRegPrefix) {
  auto a = Lookup("ih_rb_cntl");
  auto b = Lookup("regIH_RB_CNTL");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->ip(), Ip::kOsssys);
  EXPECT_EQ(a->offset(), 0x80u);
}

TEST(DatabaseTest, MpRegistersAreSplitIntoMp0AndMp1) {
  auto psp = Lookup("MP0_SMN_C2PMSG_64");
  auto smu = Lookup("MP1_SMN_C2PMSG_66");
  ASSERT_TRUE(psp.ok() && smu.ok());
  EXPECT_EQ(psp->ip(), Ip::kMp0);
  EXPECT_EQ(psp->offset(), 0x80u);
  EXPECT_EQ(smu->ip(), Ip::kMp1);
}

TEST(DatabaseTest, LookupWithTheWrongIpFails) {
  auto reg = Lookup("CP_HQD_PQ_CONTROL", Ip::kMmhub);
  ASSERT_FALSE(reg.ok());
  EXPECT_EQ(reg.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(reg.status().message()), HasSubstr("in mmhub"));
}

TEST(DatabaseTest, UnknownNameSuggestsSimilarOnes) {
  auto reg = Lookup("HQD_PQ_CONTROL");
  ASSERT_FALSE(reg.ok());
  EXPECT_THAT(std::string(reg.status().message()), HasSubstr("CP_HQD_PQ_CONTROL"));
  auto nothing = Lookup("NO_SUCH_REGISTER_ANYWHERE");
  ASSERT_FALSE(nothing.ok());
  EXPECT_THAT(std::string(nothing.status().message()), HasSubstr("baregpu regs find"));
}

TEST(DatabaseTest, SearchFindsBySubstringInAnyCase) {
  std::vector<RegisterInfo> found = Search("hqd_pq_control");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].name(), "CP_HQD_PQ_CONTROL");
  std::vector<RegisterInfo> faults = Search("L2_PROTECTION_FAULT_STATUS");
  std::set<std::string> names;
  for (const RegisterInfo& r : faults) names.insert(std::string(IpName(r.ip())) + " " + std::string(r.name()));
  EXPECT_TRUE(names.count("gc GCVM_L2_PROTECTION_FAULT_STATUS"));
  EXPECT_TRUE(names.count("mmhub MMVM_L2_PROTECTION_FAULT_STATUS"));
  EXPECT_EQ(Search("L2_PROTECTION_FAULT_STATUS", Ip::kMmhub).size(), Search("MMVM_L2_PROTECTION_FAULT_STATUS").size());
}

TEST(DatabaseTest, FindByAddressUsesTheBases) {
  IpBases bases;
  ASSERT_TRUE(bases.SetBase(Ip::kGc, 0, 0, 0x1260).ok());
  ASSERT_TRUE(bases.SetBase(Ip::kGc, 0, 1, 0xa000).ok());
  std::vector<AddressMatch> at = FindByAddress(bases, 0x1260 + 0x1fba);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0].reg.name(), "CP_HQD_PQ_CONTROL");
  EXPECT_EQ(at[0].instance, 0);
  std::vector<AddressMatch> grbm = FindByAddress(bases, 0xa000 + 0x900);
  ASSERT_EQ(grbm.size(), 1u);
  EXPECT_EQ(grbm[0].reg.name(), "GRBM_GFX_CNTL");
  // Without bases for an IP block none of its registers has an address.
  EXPECT_TRUE(FindByAddress(IpBases(), 0x1260 + 0x1fba).empty());
}

TEST(DatabaseTest, DecodeSplitsAValueIntoFields) {
  auto reg = Lookup("GRBM_GFX_CNTL");
  ASSERT_TRUE(reg.ok());
  std::vector<DecodedField> fields = Decode(*reg, (3u << 0) | (2u << 2) | (0xau << 4) | (7u << 8) | (5u << 11));
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(fields[0].field.name, "PIPEID");
  EXPECT_EQ(fields[0].value, 3u);
  EXPECT_EQ(fields[2].field.name, "VMID");
  EXPECT_EQ(fields[2].value, 0xau);
  EXPECT_EQ(fields[4].field.name, "CTXID");
  EXPECT_EQ(fields[4].value, 5u);
}

TEST(DatabaseTest, EveryFieldMaskIsNonZeroAndNamesAreUniquePerIp) {
  std::set<std::pair<Ip, std::string>> names;
  for (const RegisterInfo& reg : AllRegisters()) {
    EXPECT_TRUE(names.insert({reg.ip(), std::string(reg.name())}).second) << reg.name();
    for (const FieldInfo& f : reg.fields()) EXPECT_NE(f.mask, 0u) << reg.name() << "." << f.name;
  }
}

}  // namespace
}  // namespace am::regs
