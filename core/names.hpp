#pragma once
// Spellings of closed sets. Each enum that the config, a report or a wire format spells out has
// one specialisation of `names<E>` beside it: `spelled`, the names in the enum's order (the
// enumerators are 0, 1, 2, ...), and `last`, its last enumerator, so that a value added to the
// enum without a name fails to compile. Parsing, error messages and writers all read it, so a
// name cannot be spelled two ways.
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace troupe {

// Specialised per closed set: `static constexpr const char* spelled[]` and `static constexpr E
// last`.
template <class E>
struct names;

// Declares the spellings of E, whose last enumerator is E::LAST: one line per closed set.
#define TROUPE_SPELLINGS(E, LAST, ...)                      \
  template <>                                               \
  struct names<E> {                                         \
    static constexpr const char* spelled[] = {__VA_ARGS__}; \
    static constexpr E last = E::LAST;                      \
  }

namespace detail {
template <class E>
constexpr std::size_t name_count() {
  constexpr std::size_t n = std::size(names<E>::spelled);
  static_assert(n == static_cast<std::size_t>(names<E>::last) + 1,
                "names<E>::spelled must name every enumerator, in order");
  return n;
}
}  // namespace detail

// The value's name ("?" only for a value outside the enum, e.g. a corrupt cast).
template <class E>
const char* name_of(E value) {
  const auto i = static_cast<std::size_t>(value);
  return i < detail::name_count<E>() ? names<E>::spelled[i] : "?";
}

// The value a name stands for, or nothing for a name outside the set (case-sensitive).
template <class E>
std::optional<E> parse_name(std::string_view text) {
  for (std::size_t i = 0; i < detail::name_count<E>(); ++i)
    if (text == names<E>::spelled[i]) return static_cast<E>(i);
  return std::nullopt;
}

// Every value, in the enum's order.
template <class E>
std::vector<E> all_values() {
  std::vector<E> out;
  for (std::size_t i = 0; i < detail::name_count<E>(); ++i) out.push_back(static_cast<E>(i));
  return out;
}

// Every name, in the enum's order (for "expected a, b or c" messages and suggestions).
template <class E>
std::vector<std::string> all_names() {
  return {std::begin(names<E>::spelled), std::end(names<E>::spelled)};
}

// "a, b or c".
template <class E>
std::string names_listed() {
  const auto all = all_names<E>();
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i)
    out += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i];
  return out;
}

}  // namespace troupe
