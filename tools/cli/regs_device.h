// `baregpu regs DEVICE read NAME | write NAME=VALUE | write NAME.FIELD=VALUE | dump IP`: registers of a device,
// located with its discovery table and decoded with the database.
#ifndef BAREGPU_TOOLS_CLI_REGS_DEVICE_H_
#define BAREGPU_TOOLS_CLI_REGS_DEVICE_H_

#include "absl/status/status.h"
#include "tools/cli/command.h"

namespace cli {

absl::Status RunRegsDevice(Invocation& inv);

}  // namespace cli

#endif  // BAREGPU_TOOLS_CLI_REGS_DEVICE_H_
