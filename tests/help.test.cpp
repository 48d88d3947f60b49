// Each command's flags are declared once (apps/command.hpp: the parser accepts exactly those)
// and `troupe commands --json` lists them. This test holds the two other places a user reads
// flags to that declaration, so that neither can drift: the command's --help (every declared
// flag named, no other), and every `troupe COMMAND --flag` written in the README, docs/,
// config/README.md and examples/ (the flag must exist for that command).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/binary_support.hpp"

namespace fs = std::filesystem;
using namespace troupe::testing;

namespace {

// Flags every command takes without declaring them.
const std::set<std::string> global_flags = {"help", "version"};

struct declared {
  std::string usage;
  std::set<std::string> flags;
};

std::map<std::string, declared> declarations() {
  const auto dir = scratch_dir("troupe-help-test");
  const auto o = run_troupe_in(dir, "commands --json", 60);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  const auto j = nlohmann::json::parse(std::ifstream(dir / "stdout.txt"));
  std::map<std::string, declared> out;
  for (const auto& c : j.at("commands")) {
    declared d;
    d.usage = c.at("usage").get<std::string>();
    for (const char* kind : {"values", "booleans", "repeatable"})
      for (const auto& f : c.at("flags").at(kind)) d.flags.insert(f.get<std::string>());
    out[c.at("name").get<std::string>()] = d;
  }
  return out;
}

// The flags named in a piece of text, each with the command it is given to: the text after
// "troupe COMMAND" up to the end of the shell command (`|`, `;`, `&&`, `)`, a comment or a
// closing backtick) belongs to COMMAND. Flags before any such mention go to `current` (a
// command's own --help), or are not attributed when `current` is empty (prose in the docs).
struct flag_use {
  std::string command;
  std::string flag;
};

std::vector<flag_use> flag_uses(const std::string& text, const std::set<std::string>& commands,
                                const std::string& current) {
  std::vector<flag_use> out;
  std::string owner = current;
  const std::regex token(R"(troupe ([a-z]+)(?: ([a-z]+))?|--([a-z][a-z0-9-]*)|[|;)`#]|&&|\n)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), token);
       it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    if (m[1].matched) {
      const auto two = m[1].str() + " " + m[2].str();
      if (m[2].matched && commands.count(two))
        owner = two;
      else if (commands.count(m[1].str()))
        owner = m[1].str();
      else
        owner = current;
    } else if (m[3].matched) {
      if (!owner.empty()) out.push_back({owner, m[3].str()});
    } else {
      owner = current;  // the shell command, or the line, ended
    }
  }
  return out;
}

// Lines continued with a trailing backslash joined, as the shell reads them.
std::string joined_lines(std::string text) {
  for (auto at = text.find("\\\n"); at != std::string::npos; at = text.find("\\\n", at))
    text.replace(at, 2, " ");
  return text;
}

std::set<std::string> names_of(const std::map<std::string, declared>& d) {
  std::set<std::string> out;
  for (const auto& [name, _] : d) out.insert(name);
  return out;
}

}  // namespace

TEST_CASE("flags are attributed to the command they follow, up to the end of its shell command") {
  const std::set<std::string> commands = {"run", "bench chaos", "token"};
  const auto uses = flag_uses(
      "troupe run a.yaml --set x=1 | grep --color\n"
      "`troupe bench chaos c.yaml --rate 6` then --later\n"
      "curl --cacert ca -H \"Bearer $(troupe token --state s)\" --next\n",
      commands, "");
  REQUIRE(uses.size() == 3);
  CHECK(uses[0].command == "run");
  CHECK(uses[0].flag == "set");
  CHECK(uses[1].command == "bench chaos");
  CHECK(uses[1].flag == "rate");
  CHECK(uses[2].command == "token");
  CHECK(uses[2].flag == "state");
  // In a command's own help, flags before any mention are its own.
  const auto own = flag_uses(
      "usage: troupe run X [--quiet]\n  --report F  see troupe token --state", commands, "run");
  REQUIRE(own.size() == 3);
  CHECK(own[1].flag == "report");
  CHECK(own[1].command == "run");
  CHECK(own[2].command == "token");
}

TEST_CASE("every command's --help names exactly the flags its parser takes") {
  const auto decl = declarations();
  // Not vacuous: the commands and their flags are there.
  REQUIRE(decl.count("run"));
  REQUIRE(decl.count("bench chaos"));
  CHECK(decl.at("run").flags.count("set"));
  const auto commands = names_of(decl);
  for (const auto& [name, d] : decl) {
    CAPTURE(name);
    std::set<std::string> named;
    for (const auto& u : flag_uses(d.usage, commands, name)) {
      if (u.command != name) continue;  // another command's flag, mentioned in passing
      named.insert(u.flag);
      CHECK_MESSAGE(
          (d.flags.count(u.flag) || global_flags.count(u.flag)),
          "troupe " << name << " --help names --" << u.flag << ", which it does not take");
    }
    for (const auto& f : d.flags)
      CHECK_MESSAGE(named.count(f),
                    "troupe " << name << " takes --" << f << ", which its --help does not name");
  }
}

TEST_CASE("every `troupe COMMAND --flag` in the docs is a flag of that command") {
  const auto decl = declarations();
  const auto commands = names_of(decl);
  std::vector<fs::path> files = {"README.md", "config/README.md"};
  for (const auto& dir : {"docs", "examples", "config"})
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file()) continue;
      const auto ext = e.path().extension();
      if (ext == ".md" || ext == ".yaml" || ext == ".sh" || ext == ".sbatch" || ext == ".service")
        files.push_back(e.path());
    }
  int checked = 0;
  for (const auto& f : files) {
    for (const auto& u : flag_uses(joined_lines(read_file(f)), commands, "")) {
      ++checked;
      const auto& d = decl.at(u.command);
      CHECK_MESSAGE((d.flags.count(u.flag) || global_flags.count(u.flag)),
                    f.string() << ": troupe " << u.command << " --" << u.flag
                               << ": no such flag of that command");
    }
  }
  // Not vacuous: the docs do show commands with flags.
  CHECK(checked > 50);
  MESSAGE(checked << " flags of `troupe` commands checked in " << files.size() << " files");
}
