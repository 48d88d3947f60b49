#pragma once
// Internal to the config loader (core/config_load.cpp): the YAML side of it. The schema's key
// lists, typed scalar readers that name the file, line and key path on failure, and the --set
// overrides. Kept apart from config_load.cpp so that the struct mapping reads as a table.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/names.hpp"

namespace troupe::config::detail {

// Known keys of the map found at a schema pattern ("" for the root, "jobs[].data", ...), or
// nullptr when nothing at that pattern is a map of the schema. The one list of keys: unknown-key
// checks and --set both read it, so they cannot drift apart.
const std::vector<std::string>* schema_keys(const std::string& pattern);

// "jobs[3].data.path" -> "jobs[].data.path".
std::string pattern_of(const std::string& path);

std::string child_path(const std::string& parent, const std::string& key);
std::string index_path(const std::string& parent, std::size_t i);

// The closest candidate by edit distance, or "" when none is close enough to be a likely typo.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

// Applies one `PATH=VALUE` to the tree. Returns the key path in display form ("jobs[0].epochs"),
// which messages use to attribute later errors to this --set. Throws input_error naming `text`.
std::string apply_set(YAML::Node root, const std::string& source, const std::string& text);

// Where messages come from: the file, and which key paths a --set replaced.
class context {
 public:
  context(std::string source) : source_(std::move(source)) {}
  void add_set(std::string display_path, std::string text);
  const std::string& source() const { return source_; }

  // Throws input_error "<file>:<line>: <path>: <what>", or "<file>: --set '<text>': <path>: ..."
  // when the value at `path` came from a --set (the file's line would point at the wrong text).
  [[noreturn]] void fail(const YAML::Node& at, const std::string& path,
                         const std::string& what) const;

  std::int64_t as_int(const YAML::Node& n, const std::string& path) const;
  double as_double(const YAML::Node& n, const std::string& path) const;
  bool as_bool(const YAML::Node& n, const std::string& path) const;
  std::string as_string(const YAML::Node& n, const std::string& path) const;
  // The string at `n` when it is one of `allowed`, else fails naming them and the closest.
  std::string one_of(const YAML::Node& n, const std::string& path,
                     const std::vector<std::string>& allowed) const;
  // A closed set's value from its name (core/kinds.hpp); `allowed` narrows the set.
  template <class E>
  E as_enum(const YAML::Node& n, const std::string& path,
            const std::vector<E>& allowed = all_values<E>()) const {
    std::vector<std::string> names;
    for (const E e : allowed) names.emplace_back(name_of(e));
    return *parse_name<E>(one_of(n, path, names));
  }
  // A list of scalars; a single scalar counts as a list of one when `single_ok`.
  std::vector<std::string> as_string_list(const YAML::Node& n, const std::string& path,
                                          bool single_ok) const;

  // Checks that `n` is a map of the schema at `path`: every key known (suggesting the closest
  // known key otherwise) and none repeated.
  void check_map(const YAML::Node& n, const std::string& path) const;
  // Checks that `n` is a sequence (null counts as empty).
  void check_seq(const YAML::Node& n, const std::string& path) const;

 private:
  struct set_record {
    std::string path;
    std::string text;
  };
  std::string source_;
  std::vector<set_record> sets_;
};

// A short description of a node's type for "expected X, got Y" messages.
std::string describe(const YAML::Node& n);
// A value as an error message shows it: whole up to 60 characters, else its first 60 and its
// length ("aaaa... (5000 characters)"), so a bad value cannot flood the terminal.
std::string shown(const std::string& value);

}  // namespace troupe::config::detail
