// End to end on the virtual Navi31: every corpus kernel at -O0 and -O2 is loaded through the driver's memory
// manager, dispatched with PM4 on the driver's compute ring, and every output element is checked against a host
// reference on random inputs (fixed seeds). Outputs start as a canary so an element the kernel never wrote fails,
// and the slack past the last element must keep the canary. A kernel writing to an unmapped address must end in a
// decoded VM fault with the queue stopped.
//
// Kernels that fail because of a known interpreter gap are listed in kKnownGaps (with /work/notes/isa_gaps.md's
// entry) and run as DISABLED_ tests until the gap closes.
#include "tests/am/sim/isa/kernels/corpus.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/code_object.h"
#include "am/device.h"
#include "am/gfx.h"
#include "am/sim/navi31.h"
#include "am/va_allocator.h"
#include "base/bits.h"
#include "base/file.h"
#include "firmware/store.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/isa/dispatch.h"
#include "tests/am/sim/sim_state_dir.h"

namespace am::sim::testing {
namespace {

auto* const kStateDir = RegisterSimStateDir();

constexpr uint32_t kCanary = 0xa5a5a5a5;

// Kernels the interpreter cannot run yet, "FILE-OPT:KERNEL" -> the gap (see /work/notes/isa_gaps.md).
const std::vector<std::pair<std::string, std::string>> kKnownGaps = {};

// Explicit kernel arguments, each aligned to its size as the AMDGPU kernarg segment lays them out.
class Args {
 public:
  template <typename T>
  Args& Add(T value) {
    bytes_.resize((bytes_.size() + sizeof(T) - 1) / sizeof(T) * sizeof(T));
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
    return *this;
  }
  std::span<const uint8_t> bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// IEEE binary16 from a double with one round-to-nearest-even (the values here are exact in double, so this is the
// correctly rounded half result of the operation that produced them).
uint16_t DoubleToHalf(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (std::isnan(v)) return 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;  // past the largest half (65504) by half an ulp or more: infinity
  if (a < 0x1p-14) return sign | static_cast<uint16_t>(std::nearbyint(a * 0x1p24));  // subnormal: 2^-24 units
  int exponent;
  const double mantissa = std::frexp(a, &exponent);  // a = mantissa * 2^exponent, mantissa in [0.5, 1)
  int biased = exponent - 1 + 15;
  double fraction = std::nearbyint((2 * mantissa - 1) * 1024);
  if (fraction == 1024) {
    fraction = 0;
    ++biased;
  }
  if (biased >= 31) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(biased << 10) | static_cast<uint16_t>(fraction);
}

double HalfToDouble(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int fraction = h & 0x3ff;
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(fraction, -24);
  } else if (exponent == 31) {
    magnitude = fraction ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(1024 + fraction, exponent - 25);
  }
  return (h & 0x8000) ? -magnitude : magnitude;
}

// What one corpus case gets: the device, the loaded code object, its kernel, and a seeded generator.
struct CaseContext {
  KernelLauncher& launcher;
  uint64_t image_va;
  const CodeObject::Kernel& kernel;
  std::mt19937& random;

  absl::StatusOr<DeviceBuffer> Buffer(uint64_t bytes, uint32_t fill = kCanary) {
    BAREGPU_ASSIGN_OR_RETURN(DeviceBuffer b, launcher.Allocate(bytes));
    for (uint32_t& word : b.as<uint32_t>()) word = fill;
    return b;
  }
  absl::Status Launch(const Args& args, LaunchGeometry geometry) {
    return launcher.Launch(image_va, kernel, args.bytes(), geometry);
  }
};

// Checks words [begin, end) of `got` against `expected(i)`, and that [end, slack_end) kept the canary. Reports the
// first few mismatches with their index.
void ExpectWords(std::span<const uint32_t> got, size_t end, const std::function<uint32_t(size_t)>& expected) {
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const uint32_t want = i < end ? expected(i) : kCanary;
    if (got[i] != want && reported++ < 8) {
      ADD_FAILURE() << absl::StrFormat("word %d: expected %#010x, got %#010x%s", i, want, got[i],
                                       got[i] == kCanary ? " (never written)" : "");
    }
  }
  EXPECT_EQ(reported, 0) << "mismatching words in total";
}

template <typename T>
std::vector<T> Random(std::mt19937& random, size_t n, T low, T high) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> d(low, high);
    for (T& x : v) x = d(random);
  } else {
    std::uniform_int_distribution<T> d(low, high);
    for (T& x : v) x = d(random);
  }
  return v;
}

template <typename T>
absl::StatusOr<DeviceBuffer> Upload(CaseContext& c, const std::vector<T>& values) {
  BAREGPU_ASSIGN_OR_RETURN(DeviceBuffer b, c.Buffer(values.size() * sizeof(T)));
  std::memcpy(b.cpu.data(), values.data(), values.size() * sizeof(T));
  return b;
}

#define ASSIGN_OR_FAIL(lhs, expr)                  \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

void VectorAdd(CaseContext& c) {
  const uint32_t n = 1000, groups = (n + 63) / 64;  // the last workgroup is partly past n
  const std::vector<float> a = Random<float>(c.random, n, -100, 100), b = Random<float>(c.random, n, -100, 100);
  ASSIGN_OR_FAIL(da, Upload(c, a));
  ASSIGN_OR_FAIL(db, Upload(c, b));
  ASSIGN_OR_FAIL(dc, c.Buffer((groups * 64 + 64) * 4));
  absl::Status launched = c.Launch(Args().Add(da.va).Add(db.va).Add(dc.va).Add(n), {{groups, 1, 1}, {64, 1, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  ExpectWords(dc.as<uint32_t>().first(groups * 64 + 64), n, [&](size_t i) { return FloatBits(a[i] + b[i]); });
}

void Saxpy(CaseContext& c) {
  const uint32_t n = 1500, groups = (n + 127) / 128;
  const float alpha = 1.75f;
  const std::vector<float> x = Random<float>(c.random, n, -10, 10), y = Random<float>(c.random, n, -10, 10);
  ASSIGN_OR_FAIL(dx, Upload(c, x));
  ASSIGN_OR_FAIL(dy, c.Buffer((groups * 128 + 64) * 4));
  std::memcpy(dy.cpu.data(), y.data(), n * 4);
  absl::Status launched = c.Launch(Args().Add(alpha).Add(dx.va).Add(dy.va).Add(n), {{groups, 1, 1}, {128, 1, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  ExpectWords(dy.as<uint32_t>().first(groups * 128 + 64), n,
              [&](size_t i) { return FloatBits(std::fmaf(alpha, x[i], y[i])); });
}

void Fill(CaseContext& c) {
  const uint32_t width = 100, height = 37, value = 0x12340000;
  const uint32_t groups_x = (width + 15) / 16, groups_y = (height + 7) / 8;
  ASSIGN_OR_FAIL(out, c.Buffer((width * height + 256) * 4));
  absl::Status launched =
      c.Launch(Args().Add(out.va).Add(width).Add(height).Add(value), {{groups_x, groups_y, 1}, {16, 8, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  ExpectWords(out.as<uint32_t>().first(width * height + 256), width * height, [&](size_t i) {
    const uint32_t x = i % width, y = i / width;
    return value + ((y << 16) | x);
  });
}

void Grid3d(CaseContext& c) {
  const uint32_t width = 10, height = 7, depth = 5, salt = 0x5a000000;
  const std::array<uint32_t, 3> groups = {(width + 3) / 4, (height + 3) / 4, (depth + 3) / 4};
  const uint32_t elements = width * height * depth;
  ASSIGN_OR_FAIL(out, c.Buffer((elements + 64) * 4));
  absl::Status launched = c.Launch(Args().Add(out.va).Add(width).Add(height).Add(depth).Add(salt), {groups, {4, 4, 4}});
  ASSERT_TRUE(launched.ok()) << launched;
  ExpectWords(out.as<uint32_t>().first(elements + 64), elements, [&](size_t i) {
    const uint32_t x = i % width, y = i / width % height, z = i / (width * height);
    return (x | (y << 10) | (z << 20)) ^ salt;
  });
}

// Launch dimensions read from the hidden arguments and the dispatch packet (launch_dims.cl's record layout).
void LaunchDims(CaseContext& c) {
  constexpr uint32_t kRecordWords = 12, kSalt = 0x3c000000;
  const std::array<uint32_t, 3> groups = {3, 2, 2}, size = {8, 4, 2};
  const uint32_t records = groups[0] * groups[1] * groups[2];
  ASSIGN_OR_FAIL(out, c.Buffer((records + 4) * kRecordWords * 4));
  absl::Status launched = c.Launch(Args().Add(out.va).Add(kSalt), {groups, size});
  ASSERT_TRUE(launched.ok()) << launched;
  const uint32_t expected[kRecordWords] = {
      groups[0],           groups[1],           groups[2],           size[0], size[1],  size[2], 3,
      groups[0] * size[0], groups[1] * size[1], groups[2] * size[2], size[0], 1 ^ kSalt};
  ExpectWords(out.as<uint32_t>().first((records + 4) * kRecordWords), records * kRecordWords,
              [&](size_t i) { return expected[i % kRecordWords]; });
}

void Int64(CaseContext& c) {
  const uint32_t n = 300, groups = (n + 63) / 64;
  const std::vector<uint64_t> a = Random<uint64_t>(c.random, n, 0, UINT64_MAX),
                              b = Random<uint64_t>(c.random, n, 0, UINT64_MAX);
  ASSIGN_OR_FAIL(da, Upload(c, a));
  ASSIGN_OR_FAIL(db, Upload(c, b));
  ASSIGN_OR_FAIL(out, c.Buffer((4 * n + 16) * 8));
  absl::Status launched = c.Launch(Args().Add(da.va).Add(db.va).Add(out.va).Add(n), {{groups, 1, 1}, {64, 1, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  std::vector<uint64_t> expected;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t x = a[i], y = b[i];
    expected.push_back(x * y + (x >> 7));
    expected.push_back(static_cast<uint64_t>(static_cast<int64_t>(x) / (static_cast<int64_t>(y >> 1) | 1)));
    expected.push_back(x % ((y >> 32) | 1));
    expected.push_back(static_cast<int64_t>(x) < static_cast<int64_t>(y) ? (x << 13) | (x >> 51) : (x ^ y) - (y << 3));
  }
  ExpectWords(out.as<uint32_t>().first((4 * n + 16) * 2), 8 * n,
              [&](size_t i) { return static_cast<uint32_t>(expected[i / 2] >> (32 * (i % 2))); });
}

void Reduction(CaseContext& c) {
  const uint32_t n = 256 * 6 + 100, groups = (n + 255) / 256;
  const std::vector<uint32_t> in = Random<uint32_t>(c.random, n, 0, UINT32_MAX);
  ASSIGN_OR_FAIL(din, Upload(c, in));
  ASSIGN_OR_FAIL(partial, c.Buffer((groups + 16) * 4));
  absl::Status launched = c.Launch(Args().Add(din.va).Add(partial.va).Add(n), {{groups, 1, 1}, {256, 1, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  ExpectWords(partial.as<uint32_t>().first(groups + 16), groups, [&](size_t g) {
    uint32_t sum = 0;
    for (size_t i = g * 256; i < std::min<size_t>(n, (g + 1) * 256); ++i) sum += in[i];
    return sum;
  });
}

void Matmul(CaseContext& c) {
  const uint32_t m = 32, n = 48, k = 64;
  const std::vector<float> a = Random<float>(c.random, m * k, -1, 1), b = Random<float>(c.random, k * n, -1, 1);
  ASSIGN_OR_FAIL(da, Upload(c, a));
  ASSIGN_OR_FAIL(db, Upload(c, b));
  ASSIGN_OR_FAIL(dc, c.Buffer((m * n + 64) * 4));
  absl::Status launched =
      c.Launch(Args().Add(da.va).Add(db.va).Add(dc.va).Add(m).Add(n).Add(k), {{n / 16, m / 16, 1}, {16, 16, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  ExpectWords(dc.as<uint32_t>().first(m * n + 64), m * n, [&](size_t i) {
    const size_t row = i / n, col = i % n;
    float acc = 0;
    for (size_t j = 0; j < k; ++j) acc = std::fmaf(a[row * k + j], b[j * n + col], acc);
    return FloatBits(acc);
  });
}

void Histogram(CaseContext& c) {
  const uint32_t n = 3000, groups = (n + 511) / 512;  // 128 work-items, 4 elements each
  const std::vector<uint32_t> in = Random<uint32_t>(c.random, n, 0, UINT32_MAX);
  ASSIGN_OR_FAIL(din, Upload(c, in));
  ASSIGN_OR_FAIL(bins, c.Buffer(64 * 4, 0));
  ASSIGN_OR_FAIL(largest, c.Buffer(4, 0));
  absl::Status launched =
      c.Launch(Args().Add(din.va).Add(bins.va).Add(largest.va).Add(n), {{groups, 1, 1}, {128, 1, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  std::vector<uint32_t> expected(64, 0);
  uint32_t max = 0;
  for (uint32_t v : in) {
    ++expected[v % 64];
    max = std::max(max, v);
  }
  ExpectWords(bins.as<uint32_t>().first(64), 64, [&](size_t i) { return expected[i]; });
  EXPECT_EQ(largest.as<uint32_t>()[0], max);
}

void Divergence(CaseContext& c) {
  const uint32_t n = 500, groups = (n + 63) / 64;
  const std::vector<uint32_t> in = Random<uint32_t>(c.random, n, 0, UINT32_MAX);
  ASSIGN_OR_FAIL(din, Upload(c, in));
  ASSIGN_OR_FAIL(out, c.Buffer((groups * 64 + 64) * 4));
  absl::Status launched = c.Launch(Args().Add(din.va).Add(out.va).Add(n), {{groups, 1, 1}, {64, 1, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  ExpectWords(out.as<uint32_t>().first(groups * 64 + 64), n, [&](size_t i) -> uint32_t {
    const uint32_t x = in[i];
    uint32_t v = x % 1000 + 1, steps = 0;
    while (v != 1 && steps < 300) {
      v = (v & 1) ? 3 * v + 1 : v >> 1;
      ++steps;
    }
    switch (x & 3) {
      case 0:
        return steps * 7;
      case 1:
        return (i & 1) ? steps ^ x : steps + (x >> 8);
      case 2:
        return x / (steps + 1);
      default:
        return steps < 20 ? 0xffffffffu : x - steps;
    }
  });
}

std::vector<uint16_t> RandomHalves(std::mt19937& random, size_t n) {
  std::vector<uint16_t> v;
  for (float f : Random<float>(random, n, -8, 8)) v.push_back(DoubleToHalf(f));
  return v;
}

void HalfOps(CaseContext& c) {
  const uint32_t n = 700, groups = (n + 63) / 64;
  const std::vector<uint16_t> a = RandomHalves(c.random, n), b = RandomHalves(c.random, n);
  ASSIGN_OR_FAIL(da, Upload(c, a));
  ASSIGN_OR_FAIL(db, Upload(c, b));
  ASSIGN_OR_FAIL(out, c.Buffer((n + 64) * 2));
  ASSIGN_OR_FAIL(wide, c.Buffer((n + 64) * 4));
  absl::Status launched =
      c.Launch(Args().Add(da.va).Add(db.va).Add(out.va).Add(wide.va).Add(n), {{groups, 1, 1}, {64, 1, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  std::vector<uint16_t> result;
  for (uint32_t i = 0; i < n; ++i) {
    const double x = HalfToDouble(a[i]), y = HalfToDouble(b[i]);
    const double product = HalfToDouble(DoubleToHalf(x * y));
    const double sum = HalfToDouble(DoubleToHalf(product + x));
    result.push_back(sum > y ? DoubleToHalf(sum) : DoubleToHalf(y - x));
  }
  result.resize(n + (n % 2), static_cast<uint16_t>(kCanary));  // an odd count leaves half a word of canary
  ExpectWords(out.as<uint32_t>().first((n + 64) / 2), (n + 1) / 2,
              [&](size_t i) { return result[2 * i] | (uint32_t{result[2 * i + 1]} << 16); });
  ExpectWords(wide.as<uint32_t>().first(n + 64), n,
              [&](size_t i) { return FloatBits(static_cast<float>(HalfToDouble(result[i])) * 3.0f); });
}

void Half2Ops(CaseContext& c) {
  const uint32_t n = 400, groups = (n + 63) / 64;  // half2 elements
  const std::vector<uint16_t> a = RandomHalves(c.random, 2 * n), b = RandomHalves(c.random, 2 * n);
  ASSIGN_OR_FAIL(da, Upload(c, a));
  ASSIGN_OR_FAIL(db, Upload(c, b));
  ASSIGN_OR_FAIL(out, c.Buffer((n + 64) * 4));
  absl::Status launched = c.Launch(Args().Add(da.va).Add(db.va).Add(out.va).Add(n), {{groups, 1, 1}, {64, 1, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  auto lane = [&](size_t j) {
    const double x = HalfToDouble(a[j]), y = HalfToDouble(b[j]);
    return uint32_t{DoubleToHalf(HalfToDouble(DoubleToHalf(x * y)) - y)};
  };
  ExpectWords(out.as<uint32_t>().first(n + 64), n, [&](size_t i) { return lane(2 * i) | (lane(2 * i + 1) << 16); });
}

void Scratch(CaseContext& c) {
  const uint32_t n = 600, groups = (n + 63) / 64;
  const std::vector<uint32_t> in = Random<uint32_t>(c.random, n, 0, UINT32_MAX);
  ASSIGN_OR_FAIL(din, Upload(c, in));
  ASSIGN_OR_FAIL(out, c.Buffer((groups * 64 + 64) * 4));
  absl::Status launched = c.Launch(Args().Add(din.va).Add(out.va).Add(n), {{groups, 1, 1}, {64, 1, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  ExpectWords(out.as<uint32_t>().first(groups * 64 + 64), n, [&](size_t i) {
    const uint32_t x = in[i];
    uint32_t slots[48];
    for (uint32_t j = 0; j < 48; ++j) slots[j] = x * (j + 1) ^ (j << 24);
    const uint32_t first = x % 48, second = (x >> 8) % 48;
    slots[first] += slots[second];
    return slots[first] ^ slots[(first + second) % 48];
  });
}

void GenericPointers(CaseContext& c) {
  const uint32_t n = 600, groups = (n + 63) / 64;  // the last workgroup has lanes past n (they still fill the tile)
  const std::vector<uint32_t> in = Random<uint32_t>(c.random, n, 0, UINT32_MAX);
  ASSIGN_OR_FAIL(din, Upload(c, in));
  ASSIGN_OR_FAIL(out, c.Buffer((groups * 64 + 64) * 4));
  absl::Status launched = c.Launch(Args().Add(din.va).Add(out.va).Add(n), {{groups, 1, 1}, {64, 1, 1}});
  ASSERT_TRUE(launched.ok()) << launched;
  ExpectWords(out.as<uint32_t>().first(groups * 64 + 64), n, [&](size_t i) {
    const size_t mirrored = i / 64 * 64 + 63 - i % 64;  // the work-item whose tile entry lane i reads
    const uint32_t x = in[i], y = mirrored < n ? in[mirrored] : 0;
    return (y * 3 + 1) + (x ^ ((x & 3) << 8));
  });
}

struct CorpusCase {
  std::string file;    // corpus name (the code object is FILE-OPT.co)
  std::string kernel;  // kernel symbol
  std::string opt;
  void (*run)(CaseContext&);
};

void PrintTo(const CorpusCase& c, std::ostream* os) { *os << c.file << "-" << c.opt << ":" << c.kernel; }

std::vector<CorpusCase> AllCases() {
  const std::vector<CorpusCase> kernels = {
      {"vector_add", "vector_add", "", VectorAdd},
      {"vector_add_wave64", "vector_add", "", VectorAdd},
      {"saxpy", "saxpy", "", Saxpy},
      {"fill", "fill", "", Fill},
      {"grid3d", "grid3d", "", Grid3d},
      {"int64", "int64_ops", "", Int64},
      {"reduction", "reduce_sum", "", Reduction},
      {"matmul", "matmul", "", Matmul},
      {"histogram", "histogram", "", Histogram},
      {"divergence", "divergence", "", Divergence},
      {"half", "half_ops", "", HalfOps},
      {"half", "half2_ops", "", Half2Ops},
      {"scratch", "scratch", "", Scratch},
      {"generic", "generic_pointers", "", GenericPointers},
      {"launch_dims", "launch_dims", "", LaunchDims},
      {"launch_dims_v4", "launch_dims", "", LaunchDims},
  };
  std::vector<CorpusCase> cases;
  for (const char* opt : {"O0", "O2"}) {
    for (CorpusCase c : kernels) {
      c.opt = opt;
      cases.push_back(c);
    }
  }
  return cases;
}

// A freshly power-cycled, booted virtual Navi31 per test.
class BootedNavi31 : public ::testing::Test {
 protected:
  virtual DeviceOptions Options() const { return {}; }
  void SetUp() override {
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(kDevice).ok());
    auto pci = pci::Open(kDevice);
    ASSERT_TRUE(pci.ok()) << pci.status();
    sim_ = static_cast<Navi31*>(pci->get());
    auto device = Device::Open(std::move(*pci), Options());
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    ASSERT_TRUE(device_->Boot().ok());
    launcher_ = std::make_unique<KernelLauncher>(*device_);
    ProbeShaderExecutor();
  }

  // Until issue 7's interpreter is wired into the virtual Navi31, a dispatch reaches the CP and stops there with
  // "no shader executor". A dispatch in which every lane is masked off (vector_add with n = 0) tells which it is;
  // without an executor the test is skipped, after checking that the PM4 named the program it loaded.
  void ProbeShaderExecutor() {
    absl::StatusOr<CodeObject> object = LoadCorpus("vector_add-O2");
    ASSERT_TRUE(object.ok()) << object.status();
    absl::StatusOr<uint64_t> image_va = launcher_->Load(*object);
    ASSERT_TRUE(image_va.ok()) << image_va.status();
    const CodeObject::Kernel& kernel = **object->FindKernel("vector_add");
    absl::Status probe = launcher_->Launch(
        *image_va, kernel, Args().Add(uint64_t{0}).Add(uint64_t{0}).Add(uint64_t{0}).Add(uint32_t{0}).bytes(),
        {{1, 1, 1}, {64, 1, 1}});
    if (probe.ok()) return;
    const std::string errors = DeviceErrors();
    ASSERT_TRUE(NoShaderExecutor()) << probe << "; device errors: " << errors;
    ASSERT_TRUE(absl::StrContains(
        errors, absl::StrFormat("DISPATCH_DIRECT 1x1x1 of the program at %#x", *image_va + kernel.entry_offset)))
        << errors;
    GTEST_SKIP() << "no shader executor in this virtual Navi31 yet: " << errors;
  }
  void TearDown() override {
    // The engines stop before the memory they may still read goes, as hcq's close does (amdgpu's hw_fini): a
    // launch ends at the fault's interrupt, which the GMC posts before the engine reads the dummy page the fetch
    // was redirected to, and the device's destructor frees that page (a read of the unmapped page under load: an
    // ASan SEGV in CodeMappedWithoutExecuteFaultsOnTheFirstInstructionFetch, session 18). am::Device's own
    // destructor stops nothing: it is what a killed driver leaves (tests/am/engine_startup_test.cc).
    if (device_ != nullptr) {
      absl::Status stopped = device_->StopQueues();
      EXPECT_TRUE(stopped.ok()) << stopped;
    }
    launcher_.reset();
    device_.reset();
  }

  absl::StatusOr<CodeObject> LoadCorpus(const std::string& stem) {
    BAREGPU_ASSIGN_OR_RETURN(std::string bytes, base::ReadFile(std::string(kCorpusDir) + "/" + stem + ".co"));
    return CodeObject::Parse(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), stem + ".co");
  }

  // The device's error log in one line (what the virtual GPU refused and why).
  std::string DeviceErrors() const {
    std::string all;
    for (const DeviceError& e : sim_->errors().errors()) absl::StrAppend(&all, "[", e.model, "] ", e.message, "; ");
    return all;
  }
  bool NoShaderExecutor() const { return absl::StrContains(DeviceErrors(), "no shader executor"); }

  static constexpr char kDevice[] = "sim:navi31:isa-corpus";
  Navi31* sim_ = nullptr;  // owned by device_
  std::unique_ptr<Device> device_;
  std::unique_ptr<KernelLauncher> launcher_;
};

class CorpusTest : public BootedNavi31, public ::testing::WithParamInterface<CorpusCase> {};

TEST_P(CorpusTest, MatchesTheHostReference) {
  const CorpusCase& param = GetParam();
  const std::string stem = param.file + "-" + param.opt;
  absl::StatusOr<CodeObject> object = LoadCorpus(stem);
  ASSERT_TRUE(object.ok()) << object.status();
  absl::StatusOr<const CodeObject::Kernel*> kernel = object->FindKernel(param.kernel);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  absl::StatusOr<uint64_t> image_va = launcher_->Load(*object);
  ASSERT_TRUE(image_va.ok()) << image_va.status();
  std::mt19937 random(static_cast<uint32_t>(std::hash<std::string>()(stem + param.kernel) & 0xffffffff));
  CaseContext context{*launcher_, *image_va, **kernel, random};
  param.run(context);
  if (HasFailure()) ADD_FAILURE() << "device errors: " << DeviceErrors();
}

INSTANTIATE_TEST_SUITE_P(Kernels, CorpusTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<CorpusCase>& info) {
                           const CorpusCase& c = info.param;
                           const std::string stem = c.file + "-" + c.opt;
                           std::string name = c.kernel + "_" + c.file + "_" + c.opt;
                           for (const auto& [gap, reason] : kKnownGaps) {
                             if (gap == stem + ":" + c.kernel) name = "DISABLED_" + name;
                           }
                           return name;
                         });

// Every kernel in the corpus has a case above (a new kernel without a host reference is a gap in the test).
TEST(CorpusCoverageTest, EveryCorpusKernelHasAHostReference) {
  std::set<std::string> covered;
  for (const CorpusCase& c : AllCases()) covered.insert(c.file + "-" + c.opt + ":" + c.kernel);
  for (const CorpusEntry& entry : kCorpusEntries) {
    absl::StatusOr<std::string> bytes = base::ReadFile(entry.code_object_path());
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    absl::StatusOr<CodeObject> object =
        CodeObject::Parse(std::span(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), entry.stem());
    ASSERT_TRUE(object.ok()) << object.status();
    for (const CodeObject::Kernel& kernel : object->kernels()) {
      EXPECT_TRUE(covered.count(entry.stem() + ":" + kernel.name)) << entry.stem() << ":" << kernel.name;
    }
  }
}

// With amdgpu's vm_fault_stop=2 (no redirect to the dummy page; with the default the stores land there, B13).
class VmFaultTest : public BootedNavi31 {
 protected:
  DeviceOptions Options() const override { return {.vm_fault_stop = true}; }
};

// The fill kernel pointed at an address that is reserved but mapped nowhere: the first store faults, the fault is
// decoded from the interrupt ring, the fence never lands and the queue stops there.
TEST_F(VmFaultTest, AKernelWritingToAnUnmappedAddressFaultsAndStopsTheQueue) {
  absl::StatusOr<CodeObject> object = LoadCorpus("fill-O2");
  ASSERT_TRUE(object.ok()) << object.status();
  absl::StatusOr<uint64_t> image_va = launcher_->Load(*object);
  ASSERT_TRUE(image_va.ok()) << image_va.status();
  absl::StatusOr<uint64_t> unmapped = VaAllocator::Global().Allocate(base::MiB(2), base::MiB(2));
  ASSERT_TRUE(unmapped.ok()) << unmapped.status();
  absl::Status launched =
      launcher_->Launch(*image_va, **object->FindKernel("fill"),
                        Args().Add(*unmapped).Add(uint32_t{64}).Add(uint32_t{8}).Add(uint32_t{1}).bytes(),
                        {{4, 1, 1}, {16, 8, 1}}, absl::Seconds(10));
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.code(), absl::StatusCode::kAborted) << launched;
  // Work-item (0, 0) stores to the first byte of the reserved range.
  bool fault_seen = false;
  for (const IhEvent& event : launcher_->events()) {
    if (!IsPageFault(event)) continue;
    fault_seen = true;
    EXPECT_TRUE(absl::StrContains(event.description, absl::StrFormat("%#x", *unmapped))) << event.description;
    EXPECT_TRUE(absl::StrContains(event.description, "write")) << event.description;
  }
  EXPECT_TRUE(fault_seen) << launched;
  EXPECT_EQ(launcher_->fence_value(), launcher_->last_sequence() - 1) << "the faulting dispatch's fence landed";
  EXPECT_FALSE(device_->gfx().idle()) << "the queue went on past the faulting dispatch";
  EXPECT_FALSE(DeviceErrors().empty());
  ASSERT_TRUE(VaAllocator::Global().Free(*unmapped).ok());
}

using ShaderMemoryTest = BootedNavi31;

// B9, the driver before issue 16: SH_MEM_CONFIG/SH_MEM_BASES of the queue's VMID left at their power-on values.
// Both apertures are then at 0, so the generic-pointer kernel's first FLAT access to its LDS tile is in both and the
// dispatch stops with a decoded memory violation. (With what am::Gfx programs, the corpus case
// generic_pointers_generic_O0/O2 passes.)
TEST_F(ShaderMemoryTest, GenericPointersFaultWithTheAperturesAtTheirPowerOnValues) {
  auto gc = device_->Regs<regs::Ip::kGc>();
  gc.Write(regs::gc::GRBM_GFX_CNTL{}.vmid(0));
  gc.Write(regs::gc::SH_MEM_CONFIG::FromRaw(regs::gc::SH_MEM_CONFIG::kDefault));
  gc.Write(regs::gc::SH_MEM_BASES::FromRaw(regs::gc::SH_MEM_BASES::kDefault));
  ASSERT_TRUE(gc.status().ok()) << gc.status();
  absl::StatusOr<CodeObject> object = LoadCorpus("generic-O2");
  ASSERT_TRUE(object.ok()) << object.status();
  absl::StatusOr<uint64_t> image_va = launcher_->Load(*object);
  ASSERT_TRUE(image_va.ok()) << image_va.status();
  absl::StatusOr<DeviceBuffer> in = launcher_->Allocate(64 * 4);
  ASSERT_TRUE(in.ok()) << in.status();
  absl::StatusOr<DeviceBuffer> out = launcher_->Allocate(64 * 4);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::Status launched = launcher_->Launch(*image_va, **object->FindKernel("generic_pointers"),
                                            Args().Add(in->va).Add(out->va).Add(uint32_t{64}).bytes(),
                                            {{1, 1, 1}, {64, 1, 1}}, absl::Seconds(10));
  ASSERT_FALSE(launched.ok());
  const std::string errors = DeviceErrors();
  EXPECT_TRUE(absl::StrContains(errors, "in both the shared and the private aperture")) << errors;
  EXPECT_TRUE(absl::StrContains(errors, "SH_MEM_BASES of VMID 0 is 0")) << errors;
}

// B10, the driver before issue 16: the code object's image mapped without the EXECUTABLE bit. The SQ's first
// instruction fetch is an execute permission fault, decoded from the interrupt ring; the same image mapped
// executable (KernelLauncher::Load, hcq's LoadProgram) runs: every corpus case.
TEST_F(ShaderMemoryTest, CodeMappedWithoutExecuteFaultsOnTheFirstInstructionFetch) {
  absl::StatusOr<CodeObject> object = LoadCorpus("fill-O2");
  ASSERT_TRUE(object.ok()) << object.status();
  absl::StatusOr<DeviceBuffer> image =
      launcher_->Allocate(CodeBytesWithPrefetchGuard(object->image().size()), /*executable=*/false);
  ASSERT_TRUE(image.ok()) << image.status();
  std::memcpy(image->cpu.data(), object->image().data(), object->image().size());
  absl::StatusOr<DeviceBuffer> out = launcher_->Allocate(64 * 8 * 4);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::Status launched =
      launcher_->Launch(image->va, **object->FindKernel("fill"),
                        Args().Add(out->va).Add(uint32_t{64}).Add(uint32_t{8}).Add(uint32_t{1}).bytes(),
                        {{4, 1, 1}, {16, 8, 1}}, absl::Seconds(10));
  ASSERT_FALSE(launched.ok());
  const std::string errors = DeviceErrors();
  EXPECT_TRUE(absl::StrContains(errors, "instruction fetch fault")) << errors;
  EXPECT_TRUE(absl::StrContains(errors, "page is not executable")) << errors;
  bool fault_seen = false;
  for (const IhEvent& event : launcher_->events()) fault_seen |= IsPageFault(event);
  EXPECT_TRUE(fault_seen) << launched;
}

}  // namespace
}  // namespace am::sim::testing
