#pragma once
// Small flag parser for subcommands: --name value, --name=value, boolean --flag, positionals.
// Unknown flags are an input_error naming the flag.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/names.hpp"

namespace troupe::apps {

// The flags of one command, declared once: the command registers them (apps/command.hpp), its
// parser accepts exactly these, and `troupe commands --json` lists them, against which a test
// checks each command's --help and every `troupe ...` line of the docs.
struct flag_set {
  // A constructor rather than an aggregate: most commands leave the later sets empty.
  flag_set(std::set<std::string> v = {}, std::set<std::string> b = {}, std::set<std::string> r = {},
           std::set<std::string> i = {})
      : values(std::move(v)),
        booleans(std::move(b)),
        repeatable(std::move(r)),
        internal(std::move(i)) {}
  std::set<std::string> values;      // --name VALUE
  std::set<std::string> booleans;    // --name
  std::set<std::string> repeatable;  // --name VALUE, any number of times
  // --name VALUE that the command passes to copies of itself it starts (a rank process, a child
  // agent): accepted, not offered in --help.
  std::set<std::string> internal;
};

class args {
 public:
  args(const std::vector<std::string>& argv, const flag_set& flags);
  // value_flags take a value; bool_flags do not; repeatable value flags may occur several times.
  args(const std::vector<std::string>& argv, const std::set<std::string>& value_flags,
       const std::set<std::string>& bool_flags = {}, const std::set<std::string>& repeatable = {});

  bool has(const std::string& flag) const;
  std::optional<std::string> get(const std::string& flag) const;
  std::string get_or(const std::string& flag, const std::string& fallback) const;
  std::vector<std::string> all(const std::string& flag) const;
  // Throws input_error naming the flag when the value is not a number.
  long long get_int(const std::string& flag, long long fallback) const;
  double get_double(const std::string& flag, double fallback) const;
  // A closed set's value by its name (core/names.hpp). Throws input_error naming the flag and the
  // names it takes.
  template <class E>
  E get_enum(const std::string& flag, E fallback) const {
    const auto text = get(flag);
    if (!text) return fallback;
    if (const auto e = parse_name<E>(*text)) return *e;
    throw input_error("--" + flag + " must be " + names_listed<E>() + ", got '" + *text + "'");
  }
  const std::vector<std::string>& positionals() const { return positionals_; }
  // For a command that takes flags only: throws input_error naming the first positional.
  void no_positionals() const {
    if (!positionals_.empty()) throw input_error("unexpected argument '" + positionals_[0] + "'");
  }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::set<std::string> present_;
  std::vector<std::string> positionals_;
};

// "a,b,,c" -> {"a", "b", "c"}: a flag's comma-separated list, empty items dropped.
std::vector<std::string> split_list(const std::string& text);

// Parses sizes like 4K, 256M, 1G, 1048576 (binary multiples). Throws input_error.
long long parse_size(const std::string& text, const std::string& what);

// `--control-port P`: 0 (the default: a free one) to 65535.
inline std::uint16_t control_port_flag(const args& a) {
  const auto p = a.get_int("control-port", 0);
  if (p < 0 || p > 65535) throw input_error("--control-port must be 0 to 65535");
  return static_cast<std::uint16_t>(p);
}

}  // namespace troupe::apps
