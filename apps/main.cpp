// `troupe`: dispatches to the subcommands registered in apps/cmd_*.cpp. Two-word commands
// ("bench train") are matched before one-word ones.
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "apps/command.hpp"
#include "apps/console.hpp"
#include "core/error.hpp"

namespace troupe::apps {

std::vector<command>& command_table() {
  static std::vector<command> table;
  return table;
}

namespace {

void print_help() {
  auto table = command_table();
  std::sort(table.begin(), table.end(),
            [](const command& a, const command& b) { return a.name < b.name; });
  std::cout << "troupe: an actor-model elastic runtime for heterogeneous training\n\n"
               "usage: troupe COMMAND [ARGS...]\n       troupe COMMAND --help\n\ncommands:\n";
  for (const auto& c : table) {
    std::cout << "  " << c.name;
    for (std::size_t i = c.name.size(); i < 18; ++i) std::cout << ' ';
    std::cout << c.summary << '\n';
  }
}

}  // namespace
}  // namespace troupe::apps

int main(int argc, char** argv) {
  using namespace troupe::apps;
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    print_help();
    return words.empty() ? exit_bad_input : exit_ok;
  }
  if (words[0] == "--version") words[0] = "version";
  const command* found = nullptr;
  std::size_t used = 0;
  for (const auto& c : command_table()) {
    const bool two = c.name.find(' ') != std::string::npos;
    if (two && words.size() >= 2 && c.name == words[0] + " " + words[1]) {
      found = &c;
      used = 2;
      break;
    }
    if (!two && c.name == words[0] && !found) {
      found = &c;
      used = 1;
    }
  }
  if (!found) {
    std::cerr << "troupe: unknown command '" << words[0] << "' (see troupe --help)\n";
    return exit_bad_input;
  }
  std::vector<std::string> rest(words.begin() + used, words.end());
  if (std::find(rest.begin(), rest.end(), "--help") != rest.end() ||
      std::find(rest.begin(), rest.end(), "-h") != rest.end()) {
    std::cout << found->usage << '\n';
    return exit_ok;
  }
  // Text until the command reads its --log-format; an error then reads "troupe run: ...".
  console::configure("troupe " + found->name, console::format::text);
  try {
    return found->run(rest);
  } catch (const troupe::input_error& e) {
    console::error(e.what());
    return exit_bad_input;
  } catch (const std::exception& e) {
    console::error(e.what());
    return exit_failed;
  }
}
