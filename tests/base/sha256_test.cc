#include "base/sha256.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace base {
namespace {

std::string HexOf(Sha256::Engine engine, absl::string_view data) {
  Sha256 sha(engine);
  sha.Update(data);
  return Sha256::ToHex(sha.Finish());
}

// Every known answer through each engine: the portable code and, where this CPU has them, the SHA extensions (a
// machine without them skips that half and says so).
class Sha256EngineTest : public testing::TestWithParam<Sha256::Engine> {
 protected:
  void SetUp() override {
    if (!Sha256::Supported(GetParam())) GTEST_SKIP() << "this CPU has no SHA extensions";
    ASSERT_EQ(Sha256(GetParam()).engine(), GetParam());
  }
  std::string Hex(absl::string_view data) { return HexOf(GetParam(), data); }
};

// Vectors from FIPS 180-4's examples (NIST CSRC "SHA256.pdf") and the long-message test of FIPS 180-2 appendix B.3.
TEST_P(Sha256EngineTest, EmptyString) {
  EXPECT_EQ(Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_P(Sha256EngineTest, Abc) {
  EXPECT_EQ(Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_P(Sha256EngineTest, TwoBlockMessage) {
  EXPECT_EQ(Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_P(Sha256EngineTest, MillionAs) {
  EXPECT_EQ(Hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_P(Sha256EngineTest, PaddingBoundaries) {
  // 55 bytes fits the length in the same block, 56 needs a second one; values from sha256sum.
  EXPECT_EQ(Hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_P(Sha256EngineTest, ChunkedUpdatesMatchOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7));
  for (size_t chunk : {1u, 3u, 63u, 64u, 65u, 999u}) {
    Sha256 sha(GetParam());
    for (size_t off = 0; off < data.size(); off += chunk) sha.Update(absl::string_view(data).substr(off, chunk));
    EXPECT_EQ(Sha256::ToHex(sha.Finish()), Hex(data)) << "chunk " << chunk;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, Sha256EngineTest,
                         testing::Values(Sha256::Engine::kPortable, Sha256::Engine::kShaExtensions),
                         [](const auto& info) {
                           return info.param == Sha256::Engine::kPortable ? "Portable" : "ShaExtensions";
                         });

// The two engines agree on every length from 0 to three blocks and a half, on bytes from a seeded generator, fed
// whole and in uneven pieces.
TEST(Sha256Test, TheEnginesAgreeOnEveryLength) {
  if (!Sha256::Supported(Sha256::Engine::kShaExtensions)) GTEST_SKIP() << "this CPU has no SHA extensions";
  std::mt19937 random(24);
  for (size_t length = 0; length <= 224; ++length) {
    std::string data(length, '\0');
    for (char& c : data) c = static_cast<char>(random());
    ASSERT_EQ(HexOf(Sha256::Engine::kShaExtensions, data), HexOf(Sha256::Engine::kPortable, data)) << length;
    Sha256 pieces(Sha256::Engine::kShaExtensions);
    for (size_t off = 0; off < length; off += 1 + off % 70)
      pieces.Update(absl::string_view(data).substr(off, 1 + off % 70));
    ASSERT_EQ(Sha256::ToHex(pieces.Finish()), HexOf(Sha256::Engine::kPortable, data)) << length;
  }
}

// The default is the fastest engine the CPU has, and the static helpers use it.
TEST(Sha256Test, TheDefaultIsTheFastestSupportedEngine) {
  const Sha256::Engine expected =
      Sha256::Supported(Sha256::Engine::kShaExtensions) ? Sha256::Engine::kShaExtensions : Sha256::Engine::kPortable;
  EXPECT_EQ(Sha256().engine(), expected);
  EXPECT_EQ(Sha256::HexHash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace base
