#include "nv/gsp/queue_element.h"

#include <cstring>

namespace nv::gsp {

void ElementChecksum::Add(std::span<const uint8_t> bytes) {
  size_t i = 0;
  // Bytes up to the next word boundary go in one by one, at their place in the (little-endian) word.
  while (i < bytes.size() && position_ % 8 != 0) {
    sum_ ^= uint64_t{bytes[i]} << (8 * (position_ % 8));
    ++i;
    ++position_;
  }
  for (; i + 8 <= bytes.size(); i += 8, position_ += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, sizeof(word));  // the message's words are little-endian, as x86-64's
    sum_ ^= word;
  }
  for (; i < bytes.size(); ++i, ++position_) sum_ ^= uint64_t{bytes[i]} << (8 * (position_ % 8));
}

}  // namespace nv::gsp
