// MessagePack (https://github.com/msgpack/msgpack/blob/master/spec.md), decoding only: the format of AMDGPU code
// object metadata (NT_AMDGPU_METADATA notes, AMDGPUUsage "Code Object V3 to V6 Metadata"). Hand-written because
// the one user reads a few kilobytes at program load; the decoder is bounded for hostile input (nesting depth,
// counts checked against the bytes left, every read inside the buffer) and fuzzed.
#ifndef BAREGPU_BASE_MSGPACK_H_
#define BAREGPU_BASE_MSGPACK_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace base::msgpack {

struct MapEntry;

// One decoded value. Maps keep their entries in encoded order (keys of any kind, duplicates kept).
struct Value {
  enum class Kind { kNil, kBool, kInt, kFloat, kString, kBinary, kArray, kMap, kExtension };

  Kind kind = Kind::kNil;
  bool boolean = false;
  // kInt: the integer; `negative` when it is below zero (then `integer` holds it as int64_t bits).
  uint64_t integer = 0;
  bool negative = false;
  double real = 0;
  std::string bytes;  // kString, kBinary, kExtension (payload)
  std::vector<Value> array;
  std::vector<MapEntry> map;

  // The value of the first entry whose key is the string `key`; null when this is not a map or has no such key.
  const Value* Find(absl::string_view key) const;
  // A non-negative integer, or nothing.
  std::optional<uint64_t> AsUnsigned() const;
  // A string, or nothing.
  std::optional<absl::string_view> AsString() const;
};

struct MapEntry {
  Value key;
  Value value;
};

// What kind of value it is, for messages ("map", "unsigned integer"...).
absl::string_view KindName(const Value& value);

// The longest nesting Decode accepts (arrays and maps within each other).
inline constexpr int kMaxDepth = 32;

// Decodes exactly one value from `bytes`; trailing bytes, truncation, nesting beyond kMaxDepth and the reserved
// type 0xc1 are errors naming the byte offset.
absl::StatusOr<Value> Decode(std::span<const uint8_t> bytes);

}  // namespace base::msgpack

#endif  // BAREGPU_BASE_MSGPACK_H_
