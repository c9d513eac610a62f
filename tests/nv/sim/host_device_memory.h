// Test support: the memory a virtual GPU's DMA reaches, as host buffers at bus addresses the test chooses, and a
// GSP message-queue shared region laid out in such memory with its pages scattered over the bus (so that only the
// page table says where each is).
#ifndef BAREGPU_TESTS_NV_SIM_HOST_DEVICE_MEMORY_H_
#define BAREGPU_TESTS_NV_SIM_HOST_DEVICE_MEMORY_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <vector>

#include "nv/sim/bar0_block.h"

namespace nv::sim::testing {

// System memory only (no FB), mapped in 4 KiB pages. A 4-byte access at a 4-byte aligned address is one atomic
// access (acquire for reads, release for writes), as a device's DMA of a queue pointer is one transaction; this
// also makes the accesses of a model on another thread visible to ThreadSanitizer as synchronisation.
class HostDeviceMemory : public DeviceMemory {
 public:
  static constexpr uint64_t kPage = 0x1000;

  void MapPage(uint64_t bus_address, uint8_t* host) { pages_[bus_address] = host; }
  void UnmapPage(uint64_t bus_address) { pages_.erase(bus_address); }

  bool ReadFb(uint64_t, std::span<uint8_t>) override { return false; }
  bool WriteFb(uint64_t, std::span<const uint8_t>) override { return false; }

  bool ReadSystem(uint64_t bus_address, std::span<uint8_t> out) override {
    if (!Reaches(bus_address, out.size())) return false;
    if (out.size() == 4 && bus_address % 4 == 0) {
      const uint32_t v =
          std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(Host(bus_address))).load(std::memory_order_acquire);
      std::memcpy(out.data(), &v, 4);
      return true;
    }
    for (size_t done = 0; done < out.size();) {
      const size_t n = std::min<uint64_t>(out.size() - done, kPage - (bus_address + done) % kPage);
      std::memcpy(out.data() + done, Host(bus_address + done), n);
      done += n;
    }
    return true;
  }

  bool WriteSystem(uint64_t bus_address, std::span<const uint8_t> data) override {
    if (!Reaches(bus_address, data.size())) return false;
    if (data.size() == 4 && bus_address % 4 == 0) {
      uint32_t v;
      std::memcpy(&v, data.data(), 4);
      std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(Host(bus_address))).store(v, std::memory_order_release);
      return true;
    }
    for (size_t done = 0; done < data.size();) {
      const size_t n = std::min<uint64_t>(data.size() - done, kPage - (bus_address + done) % kPage);
      std::memcpy(Host(bus_address + done), data.data() + done, n);
      done += n;
    }
    return true;
  }

 private:
  bool Reaches(uint64_t bus_address, uint64_t size) const {
    if (bus_address + size < bus_address) return false;
    for (uint64_t page = bus_address / kPage * kPage; page < bus_address + size; page += kPage) {
      if (!pages_.contains(page)) return false;
    }
    return true;
  }
  uint8_t* Host(uint64_t bus_address) const { return pages_.at(bus_address / kPage * kPage) + bus_address % kPage; }

  std::map<uint64_t, uint8_t*> pages_;
};

// `pages` 4 KiB pages of host memory (8-byte aligned), page i at bus address kBase + (pages - 1 - i) * 4 KiB +
// a gap: descending and non-contiguous, so a reader that assumes contiguity reads the wrong page.
struct ScatteredRegion {
  static constexpr uint64_t kBase = 0x7'0000'0000;

  explicit ScatteredRegion(uint64_t pages) : words(pages * HostDeviceMemory::kPage / 8) {
    for (uint64_t i = 0; i < pages; ++i) bus.push_back(kBase + (pages - 1 - i) * 2 * HostDeviceMemory::kPage);
  }
  void MapInto(HostDeviceMemory& memory) {
    for (size_t i = 0; i < bus.size(); ++i) memory.MapPage(bus[i], bytes().data() + i * HostDeviceMemory::kPage);
  }
  std::span<uint8_t> bytes() { return std::span(reinterpret_cast<uint8_t*>(words.data()), words.size() * 8); }
  uint32_t Word32(uint64_t offset) const {
    uint32_t v;
    std::memcpy(&v, reinterpret_cast<const uint8_t*>(words.data()) + offset, 4);
    return v;
  }
  void SetWord32(uint64_t offset, uint32_t v) { std::memcpy(reinterpret_cast<uint8_t*>(words.data()) + offset, &v, 4); }

  std::vector<uint64_t> words;
  std::vector<uint64_t> bus;
};

}  // namespace nv::sim::testing

#endif  // BAREGPU_TESTS_NV_SIM_HOST_DEVICE_MEMORY_H_
