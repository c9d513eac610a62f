#include "pci/address.h"

#include "gtest/gtest.h"

namespace pci {
namespace {

TEST(AddressTest, ParsesLongAndShortForms) {
  auto a = Address::Parse("0000:03:00.0");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->bus, 3);
  EXPECT_EQ(a->ToString(), "0000:03:00.0");
  auto b = Address::Parse("c1:1f.7");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->domain, 0u);
  EXPECT_EQ(b->bus, 0xc1);
  EXPECT_EQ(b->device, 0x1f);
  EXPECT_EQ(b->function, 7);
  EXPECT_EQ(b->ToString(), "0000:c1:1f.7");
  EXPECT_EQ(Address::Parse("10000:00:01.0")->ToString(), "10000:00:01.0");  // VMD domains are wider
}

TEST(AddressTest, RejectsMalformedAddressesWithAnExample) {
  for (const char* bad : {"", "03:00", "0000:03:00", "0000:03:20.0", "0000:03:00.8", "0000:100:00.0", "zz:00.0",
                          "0000:03:00.0.1", "0000::00.0", "0000:03:00.+1", "sim:navi31"}) {
    auto parsed = Address::Parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(std::string(parsed.status().message()).find("e.g. 0000:03:00.0"), std::string::npos);
  }
}

TEST(AddressTest, OrdersByDomainBusDeviceFunction) {
  EXPECT_LT(*Address::Parse("0000:03:00.0"), *Address::Parse("0000:03:00.1"));
  EXPECT_LT(*Address::Parse("0000:03:1f.7"), *Address::Parse("0000:04:00.0"));
  EXPECT_LT(*Address::Parse("0000:ff:00.0"), *Address::Parse("0001:00:00.0"));
}

}  // namespace
}  // namespace pci
