// One IP block of the driver (tinygrad AM's AM_IP, amdgpu's amdgpu_ip_block): software set-up, hardware
// initialisation, and a clean stop that leaves the hardware as the next open expects it.
#ifndef BAREGPU_AM_IP_BLOCK_H_
#define BAREGPU_AM_IP_BLOCK_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace am {

class IpBlock {
 public:
  virtual ~IpBlock() = default;
  virtual absl::string_view name() const = 0;
  // Allocations and tables, no register writes.
  virtual absl::Status InitSw() { return absl::OkStatus(); }
  virtual absl::Status InitHw() = 0;
  virtual absl::Status FiniHw() { return absl::OkStatus(); }
};

}  // namespace am

#endif  // BAREGPU_AM_IP_BLOCK_H_
