// The driver's register space: BAR5 as an am::regs::DwordSpace (absolute dword addresses), with registers beyond
// the BAR reached through the RSMU index/data pair as amdgpu_device_indirect_rreg/wreg do on NBIO 4.3. Every
// access can be traced, and any access can be described with the register database's names and fields, so a
// bring-up log reads as "W GCVM_CONTEXT0_CNTL = 0x7 ENABLE_CONTEXT=1 PAGE_TABLE_DEPTH=3".
#ifndef BAREGPU_AM_REGISTER_IO_H_
#define BAREGPU_AM_REGISTER_IO_H_

#include <cstdint>
#include <functional>
#include <map>
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

  // Lines of a trace are at most this wide; a register's fields continue on indented lines.
  static constexpr size_t kTraceColumns = 160;

  // Called after every access (nullptr: no tracing).
  void set_tracer(Tracer tracer) { tracer_ = std::move(tracer); }
  const Tracer& tracer() const { return tracer_; }
  // "W GCVM_CONTEXT0_CNTL = 0x00000007 ENABLE_CONTEXT=0x1 PAGE_TABLE_DEPTH=0x3 ..." for one access, the value
  // always as 0x%08x. A register the database does not know is named by its IP block instance, segment and
  // offset ("GC0 seg0+0x1fb9 (dword 0x3219)"). Longer than kTraceColumns: the fields continue on lines that start
  // with four spaces (so the text may hold newlines; it never ends with one).
  std::string Describe(bool write, uint64_t address, uint32_t value) const;
  // A name for an address the driver itself defines, outside the register database (the remapped HDP flush page):
  // used by Describe and by WaitFor's messages.
  void NameAddress(uint64_t address, std::string name) { names_[address] = std::move(name); }
  // The register's name from the database (or NameAddress), else its IP block, segment and offset.
  std::string NameOf(uint64_t address) const;

  // Polls `address` until (value & mask) == expected. DeadlineExceeded names what was awaited, the register,
  // the expected and the last value seen.
  absl::Status WaitFor(uint64_t address, uint32_t mask, uint32_t expected, absl::Duration timeout,
                       absl::string_view what);
  // Polls `address` until it reads something other than `from` (amdgpu's psp_wait_for with check_changed, e.g. the
  // sOS's heartbeat in C2PMSG_81). DeadlineExceeded as WaitFor's.
  absl::Status WaitForChange(uint64_t address, uint32_t from, absl::Duration timeout, absl::string_view what);

  const regs::IpBases& bases() const { return bases_; }

 private:
  pci::Mmio bar5_;
  const regs::IpBases& bases_;
  uint64_t rsmu_index_, rsmu_data_;
  Tracer tracer_;
  std::map<uint64_t, std::string> names_;
};

}  // namespace am

#endif  // BAREGPU_AM_REGISTER_IO_H_
