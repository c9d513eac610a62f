#include "base/sha256.h"

#include <string>

#include "gtest/gtest.h"

namespace base {
namespace {

// Vectors from FIPS 180-4's examples (NIST CSRC "SHA256.pdf") and the long-message test of FIPS 180-2 appendix B.3.
TEST(Sha256Test, EmptyString) {
  EXPECT_EQ(Sha256::HexHash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Test, Abc) {
  EXPECT_EQ(Sha256::HexHash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, TwoBlockMessage) {
  EXPECT_EQ(Sha256::HexHash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, MillionAs) {
  EXPECT_EQ(Sha256::HexHash(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, PaddingBoundaries) {
  // 55 bytes fits the length in the same block, 56 needs a second one; values from sha256sum.
  EXPECT_EQ(Sha256::HexHash(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256::HexHash(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256::HexHash(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256Test, ChunkedUpdatesMatchOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7));
  for (size_t chunk : {1u, 3u, 63u, 64u, 65u, 999u}) {
    Sha256 sha;
    for (size_t off = 0; off < data.size(); off += chunk) sha.Update(absl::string_view(data).substr(off, chunk));
    EXPECT_EQ(Sha256::ToHex(sha.Finish()), Sha256::HexHash(data)) << "chunk " << chunk;
  }
}

}  // namespace
}  // namespace base
