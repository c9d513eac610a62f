// baregpu: the command-line tool. Every subcommand lives in tools/cli/<name>_command.cc.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "tools/cli/command.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return cli::Main(args, std::cout, std::cerr, ::isatty(STDERR_FILENO) == 1);
}
