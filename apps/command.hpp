#pragma once
// The `troupe` command line: each apps/cmd_*.cpp registers one subcommand with a static
// registrar, so adding a command means adding one file.
#include <functional>
#include <string>
#include <vector>

#include "apps/args.hpp"

namespace troupe::apps {

// Exit codes, shared by every subcommand.
constexpr int exit_ok = 0;
constexpr int exit_failed = 1;
constexpr int exit_bad_input = 2;

struct command {
  std::string name;     // "run", "bench train"
  std::string summary;  // one line for `troupe --help`
  std::string usage;    // full help for `troupe NAME --help`
  std::function<int(const std::vector<std::string>& args)> run;
  flag_set flags;  // what `run` parses: every flag its usage names, and no other
};

std::vector<command>& command_table();

struct command_registrar {
  explicit command_registrar(command c) { command_table().push_back(std::move(c)); }
};

}  // namespace troupe::apps
