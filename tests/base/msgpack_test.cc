#include "base/msgpack.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace base::msgpack {
namespace {

absl::StatusOr<Value> DecodeBytes(std::initializer_list<uint8_t> bytes) {
  const std::vector<uint8_t> data(bytes);
  return Decode(data);
}

// Encodings written out by hand from the MessagePack specification.
TEST(MsgpackTest, DecodesAMapOfStringsIntegersAndAnArray) {
  // {"a": 1, "b": [true, nil, -1]}
  auto value = DecodeBytes({0x82, 0xa1, 'a', 0x01, 0xa1, 'b', 0x93, 0xc3, 0xc0, 0xff});
  ASSERT_TRUE(value.ok()) << value.status();
  ASSERT_EQ(value->kind, Value::Kind::kMap);
  ASSERT_NE(value->Find("a"), nullptr);
  EXPECT_EQ(value->Find("a")->AsUnsigned(), 1u);
  const Value* b = value->Find("b");
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->array.size(), 3u);
  EXPECT_EQ(b->array[0].kind, Value::Kind::kBool);
  EXPECT_TRUE(b->array[0].boolean);
  EXPECT_EQ(b->array[1].kind, Value::Kind::kNil);
  EXPECT_TRUE(b->array[2].negative);
  EXPECT_EQ(static_cast<int64_t>(b->array[2].integer), -1);
  EXPECT_EQ(b->array[2].AsUnsigned(), std::nullopt);
  EXPECT_EQ(value->Find("c"), nullptr);
}

TEST(MsgpackTest, DecodesEveryIntegerWidthBigEndian) {
  EXPECT_EQ(DecodeBytes({0xcc, 0xfe})->AsUnsigned(), 0xfeu);
  EXPECT_EQ(DecodeBytes({0xcd, 0x12, 0x34})->AsUnsigned(), 0x1234u);
  EXPECT_EQ(DecodeBytes({0xce, 0x12, 0x34, 0x56, 0x78})->AsUnsigned(), 0x12345678u);
  EXPECT_EQ(DecodeBytes({0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe})->AsUnsigned(), ~uint64_t{1});
  EXPECT_EQ(static_cast<int64_t>(DecodeBytes({0xd0, 0x80})->integer), -128);
  EXPECT_EQ(static_cast<int64_t>(DecodeBytes({0xd1, 0xff, 0x00})->integer), -256);
  EXPECT_EQ(static_cast<int64_t>(DecodeBytes({0xd2, 0x80, 0, 0, 0})->integer), INT32_MIN);
  auto positive = DecodeBytes({0xd1, 0x01, 0x00});  // int16 256: signed encoding of a positive number
  EXPECT_EQ(positive->AsUnsigned(), 256u);
  EXPECT_EQ(static_cast<int64_t>(DecodeBytes({0xe0})->integer), -32);
}

TEST(MsgpackTest, DecodesStringsBinaryFloatsAndExtensions) {
  EXPECT_EQ(DecodeBytes({0xd9, 0x03, 'x', 'y', 'z'})->AsString(), "xyz");
  EXPECT_EQ(DecodeBytes({0xda, 0x00, 0x01, 'q'})->AsString(), "q");
  auto binary = DecodeBytes({0xc4, 0x02, 0x00, 0xff});
  EXPECT_EQ(binary->kind, Value::Kind::kBinary);
  EXPECT_EQ(binary->bytes, std::string("\0\xff", 2));
  EXPECT_EQ(DecodeBytes({0xca, 0x3f, 0x80, 0x00, 0x00})->real, 1.0);
  EXPECT_EQ(DecodeBytes({0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0})->real, 1.5);
  auto ext = DecodeBytes({0xd5, 0x07, 0xaa, 0xbb});  // fixext 2, type 7
  EXPECT_EQ(ext->kind, Value::Kind::kExtension);
  EXPECT_EQ(ext->bytes, "\xaa\xbb");
  // array16 and map16 counts.
  EXPECT_EQ(DecodeBytes({0xdc, 0x00, 0x02, 0x01, 0x02})->array.size(), 2u);
  EXPECT_EQ(DecodeBytes({0xde, 0x00, 0x01, 0xa0, 0xc0})->map.size(), 1u);
}

TEST(MsgpackTest, BadInputIsRefusedWithItsOffset) {
  auto truncated = DecodeBytes({0x92, 0x01, 0xa5, 'a', 'b'});
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("offset 2 needs 5 more bytes, 2 are left"), std::string::npos)
      << truncated.status();

  auto reserved = DecodeBytes({0x91, 0xc1});
  ASSERT_FALSE(reserved.ok());
  EXPECT_NE(reserved.status().message().find("0xc1 at offset 1 is reserved"), std::string::npos) << reserved.status();

  auto trailing = DecodeBytes({0x01, 0x02});
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.status().message().find("1 bytes left"), std::string::npos) << trailing.status();

  EXPECT_FALSE(DecodeBytes({}).ok());
  // A count the input cannot hold is refused before anything is allocated for it.
  auto huge = DecodeBytes({0xdd, 0xff, 0xff, 0xff, 0xff, 0x01});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("needs 4294967295 more bytes"), std::string::npos) << huge.status();
  EXPECT_FALSE(DecodeBytes({0xdf, 0x00, 0x00, 0x00, 0x01, 0xc0}).ok());
}

TEST(MsgpackTest, NestingIsBounded) {
  std::vector<uint8_t> deep(kMaxDepth, 0x91);  // kMaxDepth arrays in each other, then one value
  deep.push_back(0x00);
  EXPECT_TRUE(Decode(deep).ok());
  deep.insert(deep.begin(), 0x91);
  auto too_deep = Decode(deep);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(too_deep.status().message().find("deeper than"), std::string::npos) << too_deep.status();
}

TEST(MsgpackTest, EveryProperPrefixOfAValueIsRefused) {
  const std::vector<uint8_t> full = {0x83, 0xa4, 'n',  'a',  'm',  'e',  0xd9, 0x02, 'k',  '0',  0xa4, 'a',
                                     'r',  'g',  's',  0x92, 0x82, 0xa3, 'o',  'f',  'f',  0x00, 0xa4, 's',
                                     'i',  'z',  'e',  0x08, 0x81, 0xa3, 'o',  'f',  'f',  0xcd, 0x01, 0x00,
                                     0xa1, 'v',  0xcb, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18};
  ASSERT_TRUE(Decode(full).ok()) << Decode(full).status();
  for (size_t n = 0; n < full.size(); ++n) {
    EXPECT_FALSE(Decode(std::span(full).first(n)).ok()) << n;
  }
}

// Random bytes and random mutations of a valid value: every outcome is a value or an error, never a crash or a
// read outside the input (the sanitizer builds check the latter).
TEST(MsgpackTest, RandomInputNeverCrashes) {
  std::mt19937_64 random(20261203);
  const std::vector<uint8_t> valid = {0x82, 0xa1, 'a',  0x93, 0x01, 0xcd, 0x01, 0x02, 0xd9, 0x01, 'z', 0xa1, 'b', 0xdc,
                                      0x00, 0x02, 0xc3, 0x81, 0xa0, 0xcb, 0,    0,    0,    0,    0,   0,    0,   0};
  int decoded = 0;
  for (int round = 0; round < 20000; ++round) {
    std::vector<uint8_t> bytes;
    if (round % 2 == 0) {
      bytes.resize(random() % 64);
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(random());
    } else {
      bytes = valid;
      for (int flips = 1 + static_cast<int>(random() % 4); flips > 0; --flips) {
        bytes[random() % bytes.size()] = static_cast<uint8_t>(random());
      }
    }
    decoded += Decode(bytes).ok() ? 1 : 0;
  }
  EXPECT_GT(decoded, 0);  // some mutations stay valid: the decoder is not refusing everything
}

}  // namespace
}  // namespace base::msgpack
