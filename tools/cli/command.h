// The baregpu command line: a table of subcommands, each in its own file, registered at start-up.
//
// Conventions every command follows: `--help` prints its usage and exits 0; `--json` (on commands that list or
// report) prints one JSON document on stdout, whose first key "schema" names its shape (docs/json.md; PrintJson adds
// it); failure prints one line `error: ...` on stderr and exits non-zero (2 for a usage error, 1 for anything else,
// including output that could not be written). Progress goes to stderr, only when stderr is a terminal; notes
// (`note: ...`) and log lines (`-v`, base/log.h) go to stderr too, so stdout holds only the command's output.
// The man page and the bash completion are generated from this table (man_page.cc, completion_command.cc).
#ifndef BAREGPU_TOOLS_CLI_COMMAND_H_
#define BAREGPU_TOOLS_CLI_COMMAND_H_

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cli {

struct OptionSpec {
  std::string name;          // without dashes: "json", "trace"
  bool takes_value = false;  // --name=value or --name value
  std::string help;
  // With takes_value: the value is optional and only ever inline (--name or --name=value; the next argument is
  // never taken as the value). value() is "" for the bare form.
  bool optional_value = false;
};

// A parsed command line for one command.
class Invocation {
 public:
  Invocation(std::vector<std::string> positional, std::map<std::string, std::string> options, std::ostream& out,
             std::ostream& err, bool interactive)
      : positional_(std::move(positional)),
        options_(std::move(options)),
        out_(out),
        err_(err),
        interactive_(interactive) {}

  const std::vector<std::string>& positional() const { return positional_; }
  bool has(absl::string_view option) const { return options_.count(std::string(option)) != 0; }
  std::optional<std::string> value(absl::string_view option) const;
  bool json() const { return has("json"); }
  // True when a person watches (stderr is a terminal): the only case where progress is shown.
  bool interactive() const { return interactive_; }
  std::ostream& out() { return out_; }
  std::ostream& err() { return err_; }

  // A usage error naming the command: exits with status 2.
  absl::Status UsageError(absl::string_view message) const;
  // The n-th positional argument or a usage error naming what was expected.
  absl::StatusOr<std::string> Positional(size_t index, absl::string_view what) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> options_;
  std::ostream& out_;
  std::ostream& err_;
  bool interactive_;
};

struct Command {
  std::string name;                 // "list", "regs"
  std::string summary;              // one line for `baregpu --help`
  std::string usage;                // "baregpu list [--json]"
  std::string details;              // more text for `baregpu NAME --help`; may be empty
  std::vector<OptionSpec> options;  // --help is implicit
  std::function<absl::Status(Invocation&)> run;
  // The version in the schema id of this command's --json documents ("baregpu.list/1"); raise it when a field
  // changes meaning or disappears (adding one does not), and say so in docs/json.md.
  int json_version = 1;
};

// The schema id every --json document carries as its first key, "schema": "baregpu.<command>/<version>"
// (docs/json.md; PrintJson adds it). cli::Main sets it from the command before running it; a command whose actions
// print documents of different shapes sets its own ("baregpu.regs.decode/1") before PrintJson.
void SetJsonSchema(std::string schema);
const std::string& JsonSchema();

bool RegisterCommand(Command command);
const std::map<std::string, Command>& Commands();

// The manual page baregpu(1) in roff, from the command table (`baregpu help --man`; tools/cli/man_page.cc).
void PrintManPage(std::ostream& out);

// Runs `baregpu ARGS...`; returns the exit status. The whole program is this call (main.cc), so tests can run it.
int Main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool interactive);

}  // namespace cli

#define BAREGPU_REGISTER_COMMAND(registrar_name, ...) \
  [[maybe_unused]] static const bool registrar_name = ::cli::RegisterCommand(__VA_ARGS__)

#endif  // BAREGPU_TOOLS_CLI_COMMAND_H_
