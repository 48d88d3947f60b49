#pragma once
// Typed, range-checked reads of one YAML map of the config schema, with errors that name the
// file, line and key path (core/config_yaml.hpp's context). Used by the config loader only.
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

#include "core/config_yaml.hpp"

namespace troupe::config::detail {

// A numeric interval for messages and checks: [lo, hi), (lo, inf), ...
struct range {
  double lo = -std::numeric_limits<double>::infinity();
  bool lo_open = false;
  double hi = std::numeric_limits<double>::infinity();
  bool hi_open = true;

  bool contains(double v) const {
    return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  }
  std::string text() const {
    const auto num = [](double d) {
      std::ostringstream s;
      s << d;
      return s.str();
    };
    if (std::isinf(hi)) return lo == 0 && lo_open ? "positive" : (lo_open ? "> " : ">= ") + num(lo);
    return std::string("in ") + (lo_open ? "(" : "[") + num(lo) + ", " + num(hi) +
           (hi_open ? ")" : "]");
  }
};
inline const range positive{0, true};
inline const range non_negative{0, false};
inline const range at_least_one{1, false};
inline const range unit_open{0, false, 1, true};     // [0, 1)
inline const range unit_closed{0, false, 1, false};  // [0, 1]

// One map of the schema at a key path: typed, range-checked reads of its keys. Absent keys leave
// the struct's default in place (config.hpp declares every default once).
class map_view {
 public:
  map_view(const context& cx, YAML::Node m, std::string path)
      : cx_(cx), m_(std::move(m)), path_(std::move(path)) {
    cx_.check_map(m_, path_);
  }

  bool has(const std::string& k) const { return node(k).IsDefined(); }
  YAML::Node node(const std::string& k) const {
    const YAML::Node& cm = m_;  // const lookup: never inserts a key
    return cm[k];
  }
  const YAML::Node& self() const { return m_; }
  std::string path(const std::string& k) const { return child_path(path_, k); }
  [[noreturn]] void fail(const std::string& k, const std::string& what) const {
    // A missing key has no line of its own: point at the map that should hold it.
    cx_.fail(has(k) ? node(k) : m_, path(k), what);
  }
  void require(const std::string& k) const {
    if (!has(k)) fail(k, "required key is missing");
  }
  // For keys that would be silently ignored in this combination: a mistake worth stopping for.
  void only_with(const std::string& k, bool ok, const std::string& condition) const {
    if (has(k) && !ok) fail(k, "only applies with " + condition);
  }

  void str(const std::string& k, std::string& out) const {
    if (has(k)) out = cx_.as_string(node(k), path(k));
  }
  void name(const std::string& k, std::string& out) const {
    require(k);
    out = cx_.as_string(node(k), path(k));
    // Names become file and directory names (logs, checkpoints) and fault targets (GROUP/INDEX):
    // safe characters, starting with a letter or a digit (so never "." or ".."), at most 64.
    const bool ok = !out.empty() && out.size() <= 64 &&
                    std::isalnum(static_cast<unsigned char>(out[0])) &&
                    std::all_of(out.begin(), out.end(), [](unsigned char c) {
                      return std::isalnum(c) || c == '_' || c == '-' || c == '.';
                    });
    if (!ok)
      fail(k,
           "must be 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or a digit; "
           "got \"" +
               out.substr(0, 80) + "\"");
  }
  // A list of strings; a single string counts as a list of one.
  void strings(const std::string& k, std::vector<std::string>& out) const {
    if (has(k)) out = cx_.as_string_list(node(k), path(k), true);
  }
  template <class E>
  void enumeration(const std::string& k, E& out,
                   const std::vector<E>& allowed = all_values<E>()) const {
    if (has(k)) out = cx_.as_enum<E>(node(k), path(k), allowed);
  }
  void boolean(const std::string& k, bool& out) const {
    if (has(k)) out = cx_.as_bool(node(k), path(k));
  }
  void number(const std::string& k, double& out, const range& r) const {
    if (!has(k)) return;
    out = cx_.as_double(node(k), path(k));
    if (!r.contains(out))
      fail(k, "must be " + r.text() + ", got " + detail::shown(node(k).Scalar()));
  }
  void number(const std::string& k, std::optional<double>& out, const range& r) const {
    if (!has(k)) return;
    double v = 0;
    number(k, v, r);
    out = v;
  }
  template <class T>
  void integer(const std::string& k, T& out, const range& r) const {
    if (has(k)) out = integer_of<T>(node(k), path(k), r);
  }
  template <class T>
  void integer(const std::string& k, std::optional<T>& out, const range& r) const {
    if (has(k)) out = integer_of<T>(node(k), path(k), r);
  }
  template <class T>
  T integer_of(const YAML::Node& n, const std::string& p, const range& r) const {
    const auto v = cx_.as_int(n, p);
    const auto d = static_cast<double>(v);
    if (!r.contains(d))
      cx_.fail(n, p, "must be " + r.text() + ", got " + detail::shown(n.Scalar()));
    if (d > static_cast<double>(std::numeric_limits<T>::max()) ||
        d < static_cast<double>(std::numeric_limits<T>::lowest()))
      cx_.fail(n, p, "out of range, got " + detail::shown(n.Scalar()));
    return static_cast<T>(v);
  }
  // A sub-map; absent means "all defaults".
  std::optional<map_view> sub(const std::string& k) const {
    if (!has(k)) return std::nullopt;
    return map_view(cx_, node(k), path(k));
  }

 private:
  const context& cx_;
  YAML::Node m_;
  std::string path_;
};

}  // namespace troupe::config::detail
