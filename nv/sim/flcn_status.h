// FLCN_STATUS codes the virtual AD102's heavy-secure ucode models leave in MAILBOX0: nv/regs/flcn_status.h (NVIDIA's
// values from flcnretval.h), shared with the driver that names them.
#ifndef BAREGPU_NV_SIM_FLCN_STATUS_H_
#define BAREGPU_NV_SIM_FLCN_STATUS_H_

#include "nv/regs/flcn_status.h"

namespace nv::sim {
namespace flcn = ::nv::regs::flcn;
}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_FLCN_STATUS_H_
