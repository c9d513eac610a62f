// The seams inside the virtual AD102 (nv/sim): how BAR0 hands a unit its registers, what a falcon's ucode reaches on
// the priv bus, and the memory its DMA engine and the GSP model read and write.
//
// The BAR0 model (nv/sim/ad102) owns the 16 MiB register window and routes each unit's range to its Bar0Block; the
// falcon models (nv/sim/falcon_model) and the ucode models behind them (FWSEC, the booter, GSP-RM's protocol) never
// see the PCI side. Real hardware draws the same lines: the host's BAR0 accesses and a falcon's priv accesses go
// through one priv ring to the same registers; a falcon's DMA (FBIF) reaches FB or, with a system-memory target,
// the bus the function masters.
#ifndef BAREGPU_NV_SIM_BAR0_BLOCK_H_
#define BAREGPU_NV_SIM_BAR0_BLOCK_H_

#include <cstdint>
#include <span>

namespace nv::sim {

// One unit's registers: offsets are relative to the base the BAR0 model attached the block at.
class Bar0Block {
 public:
  virtual ~Bar0Block() = default;
  virtual uint32_t Read32(uint32_t offset) = 0;
  virtual void Write32(uint32_t offset, uint32_t value) = 0;
  // The chip was reset (a PCI function reset): the unit goes back to its power-on state. Called by the BAR0 model on
  // the thread that reset the function; a default for units that keep nothing.
  virtual void Reset() {}
};

// Every BAR0 register by absolute offset, as a falcon's ucode reaches them over the priv bus (FWSEC programming
// WPR2, the booter writing the GSP's registers). Accesses to units' blocks go through those blocks.
class PrivBus {
 public:
  virtual ~PrivBus() = default;
  virtual uint32_t Read32(uint32_t address) = 0;
  virtual void Write32(uint32_t address, uint32_t value) = 0;
};

// What bus-master engines of the chip reach. FB addresses are offsets into VRAM; system addresses are bus
// addresses, reaching only DMA buffers the driver mapped and only while bus mastering is on (pci::sim::DmaSpace).
// Every call returns false, transferring nothing, when any byte of the range is out of reach.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual bool ReadFb(uint64_t address, std::span<uint8_t> out) = 0;
  virtual bool WriteFb(uint64_t address, std::span<const uint8_t> data) = 0;
  virtual bool ReadSystem(uint64_t bus_address, std::span<uint8_t> out) = 0;
  virtual bool WriteSystem(uint64_t bus_address, std::span<const uint8_t> data) = 0;
};

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_BAR0_BLOCK_H_
