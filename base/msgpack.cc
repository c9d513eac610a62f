#include "base/msgpack.h"

#include <bit>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace base::msgpack {
namespace {

// Every decoded value costs memory; a forged input of one-byte values must not turn kilobytes into gigabytes.
// Real AMDGPU metadata has a few thousand values.
constexpr uint64_t kMaxValues = uint64_t{1} << 18;

class Decoder {
 public:
  explicit Decoder(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  absl::StatusOr<Value> Run() {
    Value value;
    BAREGPU_RETURN_IF_ERROR(Read(value, 0));
    if (at_ != bytes_.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("msgpack: %d bytes left after the value that ends at offset %d", bytes_.size() - at_, at_));
    }
    return value;
  }

 private:
  absl::Status Truncated(uint64_t start, uint8_t type, uint64_t needed) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("msgpack: the value of type %#04x at offset %d needs %d more bytes, %d are left", type, start,
                        needed, bytes_.size() - at_));
  }

  // Big-endian unsigned integer of `size` bytes (1, 2, 4 or 8).
  absl::StatusOr<uint64_t> Unsigned(uint64_t start, uint8_t type, size_t size) {
    if (bytes_.size() - at_ < size) return Truncated(start, type, size);
    uint64_t value = 0;
    for (size_t i = 0; i < size; ++i) value = value << 8 | bytes_[at_ + i];
    at_ += size;
    return value;
  }

  absl::Status Bytes(uint64_t start, uint8_t type, uint64_t size, std::string& out) {
    if (bytes_.size() - at_ < size) return Truncated(start, type, size);
    out.assign(reinterpret_cast<const char*>(bytes_.data() + at_), size);
    at_ += size;
    return absl::OkStatus();
  }

  absl::Status Read(Value& value, int depth) {
    if (++values_ > kMaxValues) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "msgpack: more than %d values (at offset %d); metadata is never that large", kMaxValues, at_));
    }
    const uint64_t start = at_;
    if (at_ >= bytes_.size()) {
      return absl::InvalidArgumentError(absl::StrFormat("msgpack: a value expected at offset %d, past the end", at_));
    }
    const uint8_t type = bytes_[at_++];
    if (type <= 0x7f) return Integer(value, type);                      // positive fixint
    if (type >= 0xe0) return Signed(value, static_cast<int8_t>(type));  // negative fixint
    if (type <= 0x8f) return Map(value, start, type, type & 0x0f, depth);
    if (type <= 0x9f) return Array(value, start, type, type & 0x0f, depth);
    if (type <= 0xbf) {
      value.kind = Value::Kind::kString;
      return Bytes(start, type, type & 0x1f, value.bytes);
    }
    switch (type) {
      case 0xc0:
        value.kind = Value::Kind::kNil;
        return absl::OkStatus();
      case 0xc2:
      case 0xc3:
        value.kind = Value::Kind::kBool;
        value.boolean = type == 0xc3;
        return absl::OkStatus();
      case 0xc4:
      case 0xc5:
      case 0xc6:  // bin 8/16/32
        return LengthPrefixed(value, start, type, 0xc4, Value::Kind::kBinary);
      case 0xc7:
      case 0xc8:
      case 0xc9: {  // ext 8/16/32: size, type byte, payload
        BAREGPU_ASSIGN_OR_RETURN(uint64_t size, Unsigned(start, type, size_t{1} << (type - 0xc7)));
        return Extension(value, start, type, size);
      }
      case 0xca: {
        BAREGPU_ASSIGN_OR_RETURN(uint64_t bits, Unsigned(start, type, 4));
        value.kind = Value::Kind::kFloat;
        value.real = std::bit_cast<float>(static_cast<uint32_t>(bits));
        return absl::OkStatus();
      }
      case 0xcb: {
        BAREGPU_ASSIGN_OR_RETURN(uint64_t bits, Unsigned(start, type, 8));
        value.kind = Value::Kind::kFloat;
        value.real = std::bit_cast<double>(bits);
        return absl::OkStatus();
      }
      case 0xcc:
      case 0xcd:
      case 0xce:
      case 0xcf: {  // uint 8/16/32/64
        BAREGPU_ASSIGN_OR_RETURN(uint64_t integer, Unsigned(start, type, size_t{1} << (type - 0xcc)));
        return Integer(value, integer);
      }
      case 0xd0:
      case 0xd1:
      case 0xd2:
      case 0xd3: {  // int 8/16/32/64: sign-extend from the encoded width
        const size_t size = size_t{1} << (type - 0xd0);
        BAREGPU_ASSIGN_OR_RETURN(uint64_t bits, Unsigned(start, type, size));
        const int shift = 64 - 8 * static_cast<int>(size);
        return Signed(value, static_cast<int64_t>(bits << shift) >> shift);
      }
      case 0xd4:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:  // fixext 1/2/4/8/16
        return Extension(value, start, type, uint64_t{1} << (type - 0xd4));
      case 0xd9:
      case 0xda:
      case 0xdb:  // str 8/16/32
        return LengthPrefixed(value, start, type, 0xd9, Value::Kind::kString);
      case 0xdc:
      case 0xdd: {
        BAREGPU_ASSIGN_OR_RETURN(uint64_t count, Unsigned(start, type, type == 0xdc ? 2 : 4));
        return Array(value, start, type, count, depth);
      }
      case 0xde:
      case 0xdf: {
        BAREGPU_ASSIGN_OR_RETURN(uint64_t count, Unsigned(start, type, type == 0xde ? 2 : 4));
        return Map(value, start, type, count, depth);
      }
      default:  // 0xc1
        return absl::InvalidArgumentError(
            absl::StrFormat("msgpack: type byte %#04x at offset %d is reserved and never used", type, start));
    }
  }

  static absl::Status Integer(Value& value, uint64_t integer) {
    value.kind = Value::Kind::kInt;
    value.integer = integer;
    return absl::OkStatus();
  }
  static absl::Status Signed(Value& value, int64_t integer) {
    value.kind = Value::Kind::kInt;
    value.integer = static_cast<uint64_t>(integer);
    value.negative = integer < 0;
    return absl::OkStatus();
  }

  // bin and str: a length of 1, 2 or 4 bytes (by the type's place after `family`, its 8-bit form), then the bytes.
  absl::Status LengthPrefixed(Value& value, uint64_t start, uint8_t type, uint8_t family, Value::Kind kind) {
    BAREGPU_ASSIGN_OR_RETURN(uint64_t size, Unsigned(start, type, size_t{1} << (type - family)));
    value.kind = kind;
    return Bytes(start, type, size, value.bytes);
  }

  absl::Status Extension(Value& value, uint64_t start, uint8_t type, uint64_t size) {
    if (bytes_.size() - at_ < 1) return Truncated(start, type, 1);
    ++at_;  // the application's extension type; nothing here defines one
    value.kind = Value::Kind::kExtension;
    return Bytes(start, type, size, value.bytes);
  }

  absl::Status Nest(uint64_t start, uint8_t type, uint64_t count, uint64_t min_bytes, int depth) const {
    if (depth >= kMaxDepth) {
      return absl::InvalidArgumentError(
          absl::StrFormat("msgpack: the container at offset %d nests deeper than %d levels", start, kMaxDepth));
    }
    // Each element takes at least one byte: a count the input cannot hold is refused before anything is decoded.
    if (count > (bytes_.size() - at_) / min_bytes) return Truncated(start, type, count * min_bytes);
    return absl::OkStatus();
  }

  absl::Status Array(Value& value, uint64_t start, uint8_t type, uint64_t count, int depth) {
    BAREGPU_RETURN_IF_ERROR(Nest(start, type, count, 1, depth));
    value.kind = Value::Kind::kArray;
    for (uint64_t i = 0; i < count; ++i) BAREGPU_RETURN_IF_ERROR(Read(value.array.emplace_back(), depth + 1));
    return absl::OkStatus();
  }

  absl::Status Map(Value& value, uint64_t start, uint8_t type, uint64_t count, int depth) {
    BAREGPU_RETURN_IF_ERROR(Nest(start, type, count, 2, depth));
    value.kind = Value::Kind::kMap;
    for (uint64_t i = 0; i < count; ++i) {
      auto& [key, element] = value.map.emplace_back();
      BAREGPU_RETURN_IF_ERROR(Read(key, depth + 1));
      BAREGPU_RETURN_IF_ERROR(Read(element, depth + 1));
    }
    return absl::OkStatus();
  }

  std::span<const uint8_t> bytes_;
  uint64_t at_ = 0;
  uint64_t values_ = 0;
};

}  // namespace

const Value* Value::Find(absl::string_view key) const {
  if (kind != Kind::kMap) return nullptr;
  for (const auto& [k, v] : map) {
    if (k.kind == Kind::kString && k.bytes == key) return &v;
  }
  return nullptr;
}

std::optional<uint64_t> Value::AsUnsigned() const {
  if (kind != Kind::kInt || negative) return std::nullopt;
  return integer;
}

std::optional<absl::string_view> Value::AsString() const {
  if (kind != Kind::kString) return std::nullopt;
  return bytes;
}

absl::string_view KindName(const Value& value) {
  switch (value.kind) {
    case Value::Kind::kNil:
      return "nil";
    case Value::Kind::kBool:
      return "boolean";
    case Value::Kind::kInt:
      return value.negative ? "negative integer" : "unsigned integer";
    case Value::Kind::kFloat:
      return "float";
    case Value::Kind::kString:
      return "string";
    case Value::Kind::kBinary:
      return "binary";
    case Value::Kind::kArray:
      return "array";
    case Value::Kind::kMap:
      return "map";
    case Value::Kind::kExtension:
      return "extension";
  }
  return "unknown";
}

absl::StatusOr<Value> Decode(std::span<const uint8_t> bytes) { return Decoder(bytes).Run(); }

}  // namespace base::msgpack
