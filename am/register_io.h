// The driver's register space: BAR5 as an am::regs::DwordSpace (absolute dword addresses), with registers beyond
// the BAR reached through the RSMU index/data pair as amdgpu_device_indirect_rreg/wreg do on NBIO 4.3. Every
// access can be traced, and any access can be described with the register database's names and fields, so a
// bring-up log reads as "W GCVM_CONTEXT0_CNTL = 0x7 ENABLE_CONTEXT=1 PAGE_TABLE_DEPTH=3".
#ifndef BAREGPU_AM_REGISTER_IO_H_
#define BAREGPU_AM_REGISTER_IO_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "am/regs/ip_bases.h"
#include "pci/mmio.h"

namespace am {

class RegisterIo {
 public:
  using Tracer = std::function<void(bool write, uint64_t address, uint32_t value)>;

  RegisterIo(pci::Mmio bar5, const regs::IpBases& bases);

  uint32_t ReadDword(uint64_t address);
  void WriteDword(uint64_t address, uint32_t value);

  // Called after every access (nullptr: no tracing).
  void set_tracer(Tracer tracer) { tracer_ = std::move(tracer); }
  // "W GCVM_CONTEXT0_CNTL (GC, dword 0x...) = 0x... FIELD=v ..." for one access.
  std::string Describe(bool write, uint64_t address, uint32_t value) const;

  // Polls `address` until (value & mask) == expected. DeadlineExceeded names what was awaited, the register,
  // the expected and the last value seen.
  absl::Status WaitFor(uint64_t address, uint32_t mask, uint32_t expected, absl::Duration timeout,
                       absl::string_view what);
  // Polls `address` until it reads something other than `from` (amdgpu's psp_wait_for with check_changed, e.g. the
  // sOS's heartbeat in C2PMSG_81). DeadlineExceeded as WaitFor's.
  absl::Status WaitForChange(uint64_t address, uint32_t from, absl::Duration timeout, absl::string_view what);

  const regs::IpBases& bases() const { return bases_; }

 private:
  // The register's name from the database, else "dword 0x...".
  std::string NameOf(uint64_t address) const;

  pci::Mmio bar5_;
  const regs::IpBases& bases_;
  uint64_t rsmu_index_, rsmu_data_;
  Tracer tracer_;
};

}  // namespace am

#endif  // BAREGPU_AM_REGISTER_IO_H_
