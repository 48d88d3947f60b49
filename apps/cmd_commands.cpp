// `troupe commands [--json]`: every command with the flags it takes, from the same declaration
// its parser uses (apps/command.hpp), for shell completion and tooling. tests/help checks each
// command's --help and the docs' `troupe ...` lines against it.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "apps/args.hpp"
#include "apps/command.hpp"
#include "core/error.hpp"

namespace troupe::apps {
namespace {

const flag_set flags{{}, {"json"}, {}};

int run(const std::vector<std::string>& argv) {
  const args a(argv, flags);
  a.no_positionals();
  auto table = command_table();
  std::sort(table.begin(), table.end(),
            [](const command& x, const command& y) { return x.name < y.name; });
  if (!a.has("json")) {
    for (const auto& c : table) {
      std::string line = c.name;
      for (const auto& f : c.flags.values) line += " --" + f + " VALUE";
      for (const auto& f : c.flags.repeatable)
        if (!c.flags.values.count(f)) line += " --" + f + " VALUE...";
      for (const auto& f : c.flags.booleans) line += " --" + f;
      std::printf("%s\n", line.c_str());
    }
    return exit_ok;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : table)
    out.push_back({{"name", c.name},
                   {"summary", c.summary},
                   {"usage", c.usage},
                   {"flags",
                    {{"values", c.flags.values},
                     {"booleans", c.flags.booleans},
                     {"repeatable", c.flags.repeatable}}}});
  std::printf("%s\n", nlohmann::json{{"commands", out}}.dump(2).c_str());
  return exit_ok;
}

const command_registrar reg{
    {"commands", "every command and the flags it takes (for completion and tooling)",
     "usage: troupe commands [--json]\n\n"
     "  --json   one JSON object: each command's name, summary, usage and flags (values,\n"
     "           booleans, repeatable); without it, one line a command\n\n"
     "exit: 0",
     run, flags}};

}  // namespace
}  // namespace troupe::apps
