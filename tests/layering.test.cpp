// Imports flow one way, and this test holds the tree to it, so that a reader can trust a
// folder's place: a file of one layer includes only the layers below it.
//
// Two levels are checked, each against what the tree itself declares (no second copy here):
// - Top-level folders: a component's allowed includes are the transitive closure of the
//   troupe_* libraries it links in CMakeLists.txt (`troupe_component(NAME DIR DEPS ...)`). So the
//   link graph and the include graph cannot drift apart. apps/ (the `troupe` command) may
//   include every component; tests/ and fuzz targets are not checked.
// - The rooms of actors/: each room's README.md names what it may include on its
//   `May include:` line (actors/README.md for the files at the top of actors/). Test files
//   (*.test.cpp) may include any room: a test assembles a scenario from several.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/binary_support.hpp"

namespace fs = std::filesystem;
using troupe::testing::read_file;

namespace {

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Folder -> the folders it may include (itself always allowed), from CMakeLists.txt's
// troupe_component calls.
std::map<std::string, std::set<std::string>> component_layers(const std::string& cmake) {
  std::map<std::string, std::string> dir_of;                // troupe_data -> data
  std::map<std::string, std::vector<std::string>> deps_of;  // data -> [troupe_core, ...]
  const std::regex call(R"(troupe_component\(([^)]*)\))");
  for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), call);
       it != std::sregex_iterator(); ++it) {
    const auto w = words((*it)[1].str());
    if (w.size() < 2) continue;
    dir_of[w[0]] = w[1];
    for (std::size_t i = 3; i < w.size(); ++i)
      if (w[i].rfind("troupe_", 0) == 0) deps_of[w[1]].push_back(w[i]);
  }
  std::map<std::string, std::set<std::string>> allowed;
  for (const auto& [target, dir] : dir_of) {
    std::set<std::string> seen{dir};
    std::vector<std::string> pending{dir};
    while (!pending.empty()) {
      const auto d = pending.back();
      pending.pop_back();
      for (const auto& dep : deps_of[d]) {
        const auto found = dir_of.find(dep);
        if (found != dir_of.end() && seen.insert(found->second).second)
          pending.push_back(found->second);
      }
    }
    allowed[dir] = seen;
  }
  return allowed;
}

// Room -> rooms it may include, from each README's `May include:` line ("" is actors/ itself).
std::map<std::string, std::set<std::string>> room_layers(const fs::path& actors) {
  std::map<std::string, std::set<std::string>> allowed;
  const auto read_room = [&](const std::string& room, const fs::path& readme) {
    std::set<std::string> rooms{room};
    std::istringstream in(read_file(readme));
    bool declared = false;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("May include:", 0) != 0) continue;
      declared = true;
      for (auto w : words(line.substr(12))) {
        if (w.front() == '(') continue;  // "(none)"
        while (!w.empty() && (w.back() == ',' || w.back() == '.')) w.pop_back();
        rooms.insert(w);
      }
    }
    CHECK_MESSAGE(declared, readme.string() << " has no `May include:` line");
    allowed[room] = rooms;
  };
  read_room("", actors / "README.md");
  for (const auto& e : fs::directory_iterator(actors))
    if (e.is_directory()) read_room(e.path().filename().string(), e.path() / "README.md");
  return allowed;
}

struct source {
  std::string path;  // relative to the root, e.g. "actors/job/job.cpp"
  std::string text;
};

// Every include that crosses the declared direction, as "FILE includes HEADER".
std::vector<std::string> violations(const std::vector<source>& sources,
                                    const std::map<std::string, std::set<std::string>>& components,
                                    const std::map<std::string, std::set<std::string>>& rooms) {
  std::vector<std::string> out;
  const std::regex include(R"(#include\s+"([a-z_]+)/([^"]+)\")");
  const auto room_of = [](const std::string& rest) {
    // "job/job.hpp" -> "job"; "runtime.hpp" -> "" (the top of actors/).
    const auto slash = rest.find('/');
    return slash == std::string::npos ? std::string() : rest.substr(0, slash);
  };
  for (const auto& s : sources) {
    const auto top = s.path.substr(0, s.path.find('/'));
    const bool is_test = s.path.size() > 9 && s.path.rfind(".test.cpp") == s.path.size() - 9;
    const auto comp = components.find(top);
    for (auto it = std::sregex_iterator(s.text.begin(), s.text.end(), include);
         it != std::sregex_iterator(); ++it) {
      const auto dir = (*it)[1].str();
      const auto rest = (*it)[2].str();
      if (!components.count(dir)) continue;  // not a component: a system or generated header
      if (comp != components.end() && !comp->second.count(dir)) {
        out.push_back(s.path + " includes " + dir + "/" + rest);
        continue;
      }
      if (top != "actors" || dir != "actors" || is_test) continue;
      const auto rest_of_path = s.path.substr(7);
      const auto from = room_of(rest_of_path);
      const auto to = room_of(rest);
      const auto may = rooms.find(from);
      if (may == rooms.end() || !may->second.count(to))
        out.push_back(s.path + " includes actors/" + rest + " (room '" + from +
                      "' may not include '" + to + "')");
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the checker reports an include against the direction, and only that") {
  const std::map<std::string, std::set<std::string>> components = {
      {"core", {"core"}}, {"data", {"data", "core"}}, {"actors", {"actors", "data", "core"}}};
  const std::map<std::string, std::set<std::string>> rooms = {
      {"", {"", "common", "job"}}, {"common", {"common"}}, {"job", {"job", "common"}}};
  const auto found = violations(
      {{"core/a.cpp", "#include \"core/b.hpp\"\n#include \"data/x.hpp\"\n"},
       {"data/x.cpp", "#include \"core/a.hpp\"\n#include <vector>\n"},
       {"actors/job/j.cpp", "#include \"actors/common/m.hpp\"\n#include \"actors/runtime.hpp\"\n"},
       {"actors/common/m.cpp", "#include \"actors/job/j.hpp\"\n"},
       {"actors/common/m.test.cpp", "#include \"actors/job/j.hpp\"\n"},
       {"actors/runtime.cpp", "#include \"actors/job/j.hpp\"\n"}},
      components, rooms);
  REQUIRE(found.size() == 3);
  CHECK(found[0] == "core/a.cpp includes data/x.hpp");
  CHECK(found[1].rfind("actors/job/j.cpp includes actors/runtime.hpp", 0) == 0);
  CHECK(found[2].rfind("actors/common/m.cpp includes actors/job/j.hpp", 0) == 0);
}

TEST_CASE("components parsed from CMake: the closure of their troupe_* dependencies") {
  const auto layers = component_layers(
      "troupe_component(troupe_core core DEPS spdlog::spdlog)\n"
      "troupe_component(troupe_data data DEPS troupe_core ZLIB::ZLIB)\n"
      "troupe_component(troupe_devices devices DEPS troupe_data\n  ${CMAKE_DL_LIBS})\n");
  CHECK(layers.at("core") == std::set<std::string>{"core"});
  CHECK(layers.at("devices") == std::set<std::string>{"devices", "data", "core"});
}

TEST_CASE("the tree: every include flows down, between folders and between actors' rooms") {
  auto components = component_layers(read_file("CMakeLists.txt"));
  REQUIRE(components.count("actors"));
  REQUIRE(components.count("core"));
  // apps/ is the `troupe` command, not a component: it may include every component.
  std::set<std::string> everything;
  for (const auto& [dir, _] : components) everything.insert(dir);
  everything.insert("apps");
  components["apps"] = everything;
  const auto rooms = room_layers("actors");
  // Every room of actors/ declares its place (a new folder without a README fails above).
  CHECK(rooms.size() >= 9);
  std::vector<source> sources;
  for (const auto& dir : everything) {
    if (dir == "tests" || !fs::is_directory(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      const auto ext = e.path().extension();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh") continue;
      const auto rel = e.path().lexically_normal().generic_string();
      if (rel.find("/fuzz/") != std::string::npos) continue;
      sources.push_back({rel, read_file(e.path())});
    }
  }
  // Not vacuous: the tree's sources were found.
  CHECK(sources.size() > 300);
  const auto found = violations(sources, components, rooms);
  for (const auto& v : found) FAIL_CHECK(v);
  CHECK(found.empty());
  MESSAGE(sources.size() << " files checked against " << components.size() << " components and "
                         << rooms.size() << " rooms of actors/");
}
