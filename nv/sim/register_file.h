// The virtual AD102's own registers in BAR0: the ones the chip model answers itself (identity, the GC6 island's
// scratch words, WPR2, fuses), each claimed with its power-on value and which bits each side may write. Storage is the
// device's persistent register region, one dword per BAR0 dword, so a later process finds what the last one left.
//
// Who may write what is the hardware's priv-level protection in miniature: the host's BAR0 accesses run at priv level
// 0, a falcon's heavy-secure ucode (FWSEC, the booter) higher, so registers such as WPR2's bounds change only over the
// priv bus. A register nobody claimed is not here: the BAR0 model answers it as unclaimed priv space.
#ifndef BAREGPU_NV_SIM_REGISTER_FILE_H_
#define BAREGPU_NV_SIM_REGISTER_FILE_H_

#include <cstdint>
#include <optional>
#include <span>

#include "absl/container/flat_hash_map.h"

namespace nv::sim {

// Where an access comes from.
enum class PrivSource {
  kHost,    // BAR0, from the CPU (priv level 0)
  kFalcon,  // the priv bus, from a falcon's ucode
};

class RegisterFile {
 public:
  struct Register {
    const char* name;        // NVIDIA's name (nv/regs), or known_registers.h's descriptive one
    uint32_t power_on;       // after power-on and the VBIOS's devinit
    uint32_t host_writable;  // bits a BAR0 write changes
    uint32_t priv_writable;  // bits a falcon's priv write changes
  };
  enum class WriteResult {
    kStored,     // every bit written
    kProtected,  // some written bits are not the source's to change: those kept their value
    kUnclaimed,  // no register here
  };

  // `storage`: one dword per BAR0 dword (its size bounds the addresses).
  explicit RegisterFile(std::span<uint32_t> storage) : storage_(storage) {}

  // During construction only (lookups take no lock). A second claim of an address replaces the first.
  void Claim(uint32_t address, const Register& reg);
  const Register* Find(uint32_t address) const;

  // nullopt when no register is claimed at `address` (a BAR0 byte address, dword aligned).
  std::optional<uint32_t> Read(uint32_t address) const;
  WriteResult Write(uint32_t address, uint32_t value, PrivSource source);
  // Every claimed register to its power-on value.
  void PowerOn();

 private:
  std::span<uint32_t> storage_;
  absl::flat_hash_map<uint32_t, Register> registers_;
};

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_REGISTER_FILE_H_
