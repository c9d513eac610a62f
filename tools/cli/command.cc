#include "tools/cli/command.h"

#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cli {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr absl::string_view kUsagePayload = "baregpu.usage";

std::map<std::string, Command>& MutableCommands() {
  static auto* commands = new std::map<std::string, Command>();
  return *commands;
}

void PrintProgramHelp(std::ostream& out) {
  out << "baregpu: bring up and drive GPUs without a vendor kernel driver\n\n"
      << "usage: baregpu COMMAND [ARGS...] [--json] [--help]\n\ncommands:\n";
  for (const auto& [name, command] : Commands()) out << absl::StrFormat("  %-8s %s\n", name, command.summary);
  out << "\nDevices are named by PCI address (0000:03:00.0) or as virtual devices (sim:navi31).\n"
      << "`baregpu COMMAND --help` describes one command.\n";
}

void PrintCommandHelp(const Command& command, std::ostream& out) {
  out << "usage: " << command.usage << "\n\n" << command.summary << "\n";
  if (!command.details.empty()) out << "\n" << command.details << "\n";
  out << "\noptions:\n";
  for (const OptionSpec& option : command.options) {
    out << absl::StrFormat("  --%-14s %s\n", option.takes_value ? option.name + "=V" : option.name, option.help);
  }
  out << absl::StrFormat("  --%-14s %s\n", "help", "show this help");
}

}  // namespace

std::optional<std::string> Invocation::value(absl::string_view option) const {
  auto it = options_.find(std::string(option));
  if (it == options_.end()) return std::nullopt;
  return it->second;
}

absl::Status Invocation::UsageError(absl::string_view message) const {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayload, absl::Cord("1"));
  return status;
}

absl::StatusOr<std::string> Invocation::Positional(size_t index, absl::string_view what) const {
  if (index >= positional_.size()) return UsageError(absl::StrCat("missing ", what));
  return positional_[index];
}

bool RegisterCommand(Command command) {
  std::string name = command.name;
  return MutableCommands().emplace(std::move(name), std::move(command)).second;
}

const std::map<std::string, Command>& Commands() { return MutableCommands(); }

int Main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool interactive) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintProgramHelp(out);
    return args.empty() ? kExitUsage : 0;
  }
  auto it = Commands().find(args[0]);
  if (it == Commands().end()) {
    err << "error: unknown command '" << args[0] << "'; `baregpu --help` lists the commands\n";
    return kExitUsage;
  }
  const Command& command = it->second;
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  bool options_done = false;
  for (size_t i = 1; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (options_done || !absl::StartsWith(arg, "--")) {
      if (!options_done && arg == "-h") {
        PrintCommandHelp(command, out);
        return 0;
      }
      positional.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    arg.remove_prefix(2);
    std::string name(arg.substr(0, arg.find('=')));
    if (name == "help") {
      PrintCommandHelp(command, out);
      return 0;
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& option : command.options) {
      if (option.name == name) spec = &option;
    }
    if (spec == nullptr) {
      err << "error: unknown option --" << name << " for 'baregpu " << command.name << "'; see `baregpu "
          << command.name << " --help`\n";
      return kExitUsage;
    }
    const bool inline_value = arg.find('=') != absl::string_view::npos;
    if (!spec->takes_value) {
      if (inline_value) {
        err << "error: option --" << name << " of 'baregpu " << command.name << "' takes no value\n";
        return kExitUsage;
      }
      options[name] = "";
    } else if (inline_value) {
      options[name] = std::string(arg.substr(arg.find('=') + 1));
    } else if (i + 1 < args.size()) {
      options[name] = args[++i];
    } else {
      err << "error: option --" << name << " of 'baregpu " << command.name << "' needs a value (--" << name
          << "=VALUE)\n";
      return kExitUsage;
    }
  }
  Invocation invocation(std::move(positional), std::move(options), out, err, interactive);
  absl::Status status = command.run(invocation);
  out.flush();
  if (status.ok()) return 0;
  err << "error: " << status.message() << "\n";
  return status.GetPayload(kUsagePayload).has_value() ? kExitUsage : kExitError;
}

}  // namespace cli
