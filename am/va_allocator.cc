#include "am/va_allocator.h"

#include <algorithm>

namespace am {
namespace {

constexpr uint64_t kHugePage = uint64_t{2} << 20;
constexpr uint64_t kFragment = uint64_t{64} << 10;

}  // namespace

VaAllocator& VaAllocator::Global() {
  static VaAllocator* const allocator = new VaAllocator(kStart, kEnd);
  return *allocator;
}

absl::StatusOr<uint64_t> VaAllocator::Allocate(uint64_t size, uint64_t alignment) {
  const uint64_t natural = size >= kHugePage ? kHugePage : size >= kFragment ? kFragment : kPageSize;
  base::MutexLock lock(&mu_);
  return tlsf_.Allocate(size, std::max(alignment, natural));
}

absl::Status VaAllocator::Free(uint64_t va) {
  base::MutexLock lock(&mu_);
  return tlsf_.Free(va);
}

uint64_t VaAllocator::free_bytes() const {
  base::ReaderMutexLock lock(&mu_);
  return tlsf_.free_bytes();
}

}  // namespace am
