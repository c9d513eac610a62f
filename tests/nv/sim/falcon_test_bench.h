// A small stand-in for the virtual AD102's BAR0 until nv/sim/ad102 lands: the GSP and SEC2 FalconModels at their
// bases, FWSEC behind the GSP, and in-memory registers for what FWSEC and the driver touch outside the falcons (WPR2,
// the PBUS scratch registers, the FWSEC fuse, the PROM window serving the virtual VBIOS). FB and one system-memory
// range are in-memory too. pci::Mmio::Trapped over it gives the driver its BAR0; the models reach the same
// registers through it as their PrivBus.
#ifndef BAREGPU_TESTS_NV_SIM_FALCON_TEST_BENCH_H_
#define BAREGPU_TESTS_NV_SIM_FALCON_TEST_BENCH_H_

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "firmware/nv/virtual_vbios.h"
#include "nv/regs/ad102.h"
#include "nv/regs/known_registers.h"
#include "nv/sim/falcon_model.h"
#include "nv/sim/fwsec_model.h"
#include "pci/mmio.h"

namespace nv::sim::testing {

// FB as 4 KiB pages allocated on first write (unwritten pages read 0), and one system-memory range at a bus address.
class TestDeviceMemory : public DeviceMemory {
 public:
  static constexpr uint64_t kPage = 4096;

  TestDeviceMemory(uint64_t fb_size, uint64_t system_base, uint64_t system_size)
      : fb_size_(fb_size), system_base_(system_base), system_(system_size) {}

  bool ReadFb(uint64_t address, std::span<uint8_t> out) override {
    if (address > fb_size_ || out.size() > fb_size_ - address) return false;
    for (size_t i = 0; i < out.size(); ++i) {
      const auto it = fb_.find((address + i) / kPage);
      out[i] = it == fb_.end() ? 0 : it->second[(address + i) % kPage];
    }
    return true;
  }
  bool WriteFb(uint64_t address, std::span<const uint8_t> data) override {
    if (address > fb_size_ || data.size() > fb_size_ - address) return false;
    for (size_t i = 0; i < data.size(); ++i) {
      std::vector<uint8_t>& page = fb_[(address + i) / kPage];
      if (page.empty()) page.resize(kPage);
      page[(address + i) % kPage] = data[i];
    }
    return true;
  }
  bool ReadSystem(uint64_t bus_address, std::span<uint8_t> out) override {
    if (!InSystem(bus_address, out.size())) return false;
    std::memcpy(out.data(), system_.data() + (bus_address - system_base_), out.size());
    return true;
  }
  bool WriteSystem(uint64_t bus_address, std::span<const uint8_t> data) override {
    if (!InSystem(bus_address, data.size())) return false;
    std::memcpy(system_.data() + (bus_address - system_base_), data.data(), data.size());
    return true;
  }

  uint64_t fb_size() const { return fb_size_; }
  uint64_t system_base() const { return system_base_; }

 private:
  bool InSystem(uint64_t address, uint64_t size) const {
    return address >= system_base_ && address - system_base_ <= system_.size() &&
           size <= system_.size() - (address - system_base_);
  }

  uint64_t fb_size_;
  uint64_t system_base_;
  std::vector<uint8_t> system_;
  std::map<uint64_t, std::vector<uint8_t>> fb_;
};

class FalconTestBench : public pci::MmioHandler, public PrivBus {
 public:
  // NVIDIA's BAR0 is the 16 MiB register window (nv/sim/bar0_block.h).
  static constexpr uint64_t kBar0Size = 16 << 20;
  // 256 MiB of FB: enough room for FRTS below the top, small enough for sparse pages.
  static constexpr uint64_t kFbSize = 256ull << 20;
  static constexpr uint64_t kSystemBase = 0x100'0000'0000;  // 1 TiB: address >> 8 needs DMATRFBASE1
  static constexpr uint64_t kSystemSize = 1 << 20;

  explicit FalconTestBench(uint32_t fuse = firmware::nv::kVirtualAd102FwsecFuseRegister)
      : memory_(kFbSize, kSystemBase, kSystemSize),
        gsp_(Ad102GspFalcon(), *this, memory_),
        sec2_(Ad102Sec2Falcon(), *this, memory_),
        fuse_(fuse) {
    gsp_.AddHsUcodeModel(std::make_unique<FwsecModel>(kFbSize));
    absl::StatusOr<std::string> rom = firmware::nv::BuildVirtualVbios("ad102");
    if (rom.ok()) rom_ = *rom;
  }

  pci::Mmio bar0() { return pci::Mmio::Trapped(this, kBar0Size); }
  FalconModel& gsp() { return gsp_; }
  FalconModel& sec2() { return sec2_; }
  TestDeviceMemory& memory() { return memory_; }
  const std::string& rom() const { return rom_; }
  void set_rom(std::string rom) { rom_ = std::move(rom); }
  uint32_t Register(uint32_t address) const {
    const auto it = registers_.find(address);
    return it == registers_.end() ? 0 : it->second;
  }
  void SetRegister(uint32_t address, uint32_t value) { registers_[address] = value; }

  // pci::MmioHandler (the driver) and PrivBus (the ucode) reach the same registers.
  uint32_t Read32(uint64_t offset) override { return Read(static_cast<uint32_t>(offset)); }
  void Write32(uint64_t offset, uint32_t value) override { Write(static_cast<uint32_t>(offset), value); }
  uint32_t Read32(uint32_t address) override { return Read(address); }
  void Write32(uint32_t address, uint32_t value) override { Write(address, value); }

 private:
  FalconModel* FalconAt(uint32_t address) {
    if (address - regs::ad102::kGsp.falcon < kFalconWindowSize) return &gsp_;
    if (address - regs::ad102::kSec2.falcon < kFalconWindowSize) return &sec2_;
    return nullptr;
  }
  static const regs::known::KnownRegister& Known(const char* name) {
    for (const regs::known::KnownRegister& r : regs::known::kRegisters) {
      if (std::strcmp(r.name, name) == 0) return r;
    }
    return regs::known::kRegisters[0];
  }

  uint32_t Read(uint32_t address) {
    if (FalconModel* falcon = FalconAt(address)) return falcon->Read32(address - falcon->identity().bases.falcon);
    const regs::known::KnownRegister& prom = Known("PROM_DATA");
    if (address >= prom.offset && address < prom.offset + prom.count * prom.stride) {
      const uint64_t at = address - prom.offset;
      uint32_t word = 0;
      if (at + 4 <= rom_.size()) std::memcpy(&word, rom_.data() + at, 4);
      return word;
    }
    const regs::known::KnownRegister& fuse = Known("FUSE_UCODE_VERSION_ENGINE_ID_BIT10");
    if (address == fuse.offset) return fuse_;
    return Register(address);
  }
  void Write(uint32_t address, uint32_t value) {
    if (FalconModel* falcon = FalconAt(address)) {
      return falcon->Write32(address - falcon->identity().bases.falcon, value);
    }
    registers_[address] = value;
  }

  TestDeviceMemory memory_;
  FalconModel gsp_;
  FalconModel sec2_;
  uint32_t fuse_;
  std::string rom_;
  std::map<uint32_t, uint32_t> registers_;
};

}  // namespace nv::sim::testing

#endif  // BAREGPU_TESTS_NV_SIM_FALCON_TEST_BENCH_H_
