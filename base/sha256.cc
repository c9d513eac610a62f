#include "base/sha256.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace base {
namespace {

// Round constants and initial state: FIPS 180-4 sections 4.2.2 and 5.3.3.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};
constexpr std::array<uint32_t, 8> kInitial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                              0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void CompressPortable(std::array<uint32_t, 8>& state, const uint8_t* block) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = uint32_t{block[4 * i]} << 24 | uint32_t{block[4 * i + 1]} << 16 | uint32_t{block[4 * i + 2]} << 8 |
           uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t t1 = h + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

#if defined(__x86_64__)
// CPUID leaf 7 EBX bit 29 (SHA), leaf 1 ECX bits 9 (SSSE3: PSHUFB) and 19 (SSE4.1: PBLENDW), as the Intel SDM
// lists them.
bool CpuHasShaExtensions() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool ssse3 = (ecx >> 9) & 1, sse41 = (ecx >> 19) & 1;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return ssse3 && sse41 && ((ebx >> 29) & 1);
}

// The SHA extensions keep the eight working variables in two registers, {A, B, E, F} and {C, D, G, H}, A and C in
// the top lanes (Intel SDM, SHA256RNDS2). SHA256RNDS2 runs two rounds on the low two lanes of its message operand
// (W + K already added); SHA256MSG1 and SHA256MSG2 extend the message schedule four words at a time.
__attribute__((target("sha,sse4.1,ssse3"))) void CompressShaExtensions(std::array<uint32_t, 8>& state,
                                                                       const uint8_t* data, size_t blocks) {
  // Each 32-bit word is big-endian in the message: reverse the bytes within every lane.
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  const __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0]));  // lanes A B C D
  const __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4]));  // lanes E F G H
  const __m128i badc = _mm_shuffle_epi32(abcd, 0xb1);                                 // B A D C
  const __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1b);                                 // H G F E
  __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);                                      // F E B A
  __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xf0);                                   // H G D C
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i w[4];  // the schedule's last sixteen words, four to a register: w[g % 4] holds words 4g .. 4g + 3
    for (int g = 0; g < 16; ++g) {
      __m128i& words = w[g % 4];
      if (g < 4) {
        words = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * g)), byte_swap);
      } else {
        // W[t] = sigma1(W[t-2]) + W[t-7] + sigma0(W[t-15]) + W[t-16]: MSG1 gives W[t-16] + sigma0(W[t-15]), the
        // aligned pair gives W[t-7], MSG2 adds sigma1(W[t-2]) (using the first two new words for the last two).
        const __m128i t7 = _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4);
        words = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(words, w[(g + 1) % 4]), t7), w[(g + 3) % 4]);
      }
      const __m128i wk = _mm_add_epi32(words, _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kRound[4 * g])));
      // Two rounds shift the variables by two: the new {A, B, E, F} lands in the register that held {C, D, G, H}
      // and the old {A, B, E, F} is the new {C, D, G, H}; the second pair of rounds swaps them back.
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);                           // rounds 4g, 4g + 1
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0e));  // rounds 4g + 2, 4g + 3
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1b);  // A B E F
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);  // G H C D
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), _mm_blend_epi16(feba, dchg, 0xf0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), _mm_alignr_epi8(dchg, feba, 8));
}
#endif

}  // namespace

bool Sha256::Supported(Engine engine) {
  if (engine == Engine::kPortable) return true;
#if defined(__x86_64__)
  static const bool has_sha = CpuHasShaExtensions();
  return has_sha;
#else
  return false;
#endif
}

Sha256::Sha256() : Sha256(Engine::kShaExtensions) {}

Sha256::Sha256(Engine engine) : engine_(Supported(engine) ? engine : Engine::kPortable), state_(kInitial) {}

void Sha256::Compress(const uint8_t* data, size_t blocks) {
#if defined(__x86_64__)
  if (engine_ == Engine::kShaExtensions) return CompressShaExtensions(state_, data, blocks);
#endif
  for (; blocks > 0; --blocks, data += 64) CompressPortable(state_, data);
}

void Sha256::Update(absl::string_view data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  total_bytes_ += n;
  if (buffered_ > 0) {
    const size_t take = std::min(n, sizeof(buffer_) - buffered_);
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    n -= take;
    if (buffered_ < sizeof(buffer_)) return;
    Compress(buffer_, 1);
    buffered_ = 0;
  }
  if (const size_t blocks = n / 64; blocks > 0) {
    Compress(p, blocks);
    p += blocks * 64;
    n -= blocks * 64;
  }
  if (n > 0) {
    std::memcpy(buffer_, p, n);
    buffered_ = n;
  }
}

Sha256::Digest Sha256::Finish() {
  // Padding: a 1 bit, zeros up to 56 mod 64, then the message length in bits, big-endian (FIPS 180-4 5.1.1).
  const uint64_t bits = total_bytes_ * 8;
  uint8_t pad[72] = {0x80};
  const size_t pad_len = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int i = 0; i < 8; ++i) pad[pad_len + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  Update(absl::string_view(reinterpret_cast<const char*>(pad), pad_len + 8));
  Digest digest;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) digest[4 * i + j] = static_cast<uint8_t>(state_[i] >> (24 - 8 * j));
  }
  return digest;
}

Sha256::Digest Sha256::Hash(absl::string_view data) {
  Sha256 sha;
  sha.Update(data);
  return sha.Finish();
}

std::string Sha256::ToHex(const Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (uint8_t byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xf]);
  }
  return hex;
}

std::string Sha256::HexHash(absl::string_view data) { return ToHex(Hash(data)); }

}  // namespace base
