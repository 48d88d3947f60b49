#include "core/names.hpp"

#include <doctest/doctest.h>

#include <type_traits>

#include "core/kinds.hpp"

namespace troupe {
namespace {

enum class colour { red, light_blue };

}  // namespace

TROUPE_SPELLINGS(colour, light_blue, "red", "light-blue");

namespace {

TEST_CASE("a closed set's names: both ways, in the enum's order, and nothing else") {
  CHECK(std::string(name_of(colour::light_blue)) == "light-blue");
  CHECK(parse_name<colour>("light-blue") == colour::light_blue);
  CHECK(parse_name<colour>("red") == colour::red);
  CHECK_FALSE(parse_name<colour>("light_blue").has_value());  // the spelling, not the C++ name
  CHECK_FALSE(parse_name<colour>("Red").has_value());
  CHECK_FALSE(parse_name<colour>("").has_value());
  CHECK(all_values<colour>() == std::vector<colour>{colour::red, colour::light_blue});
  CHECK(names_listed<colour>() == "red or light-blue");
  CHECK(std::string(name_of(static_cast<colour>(7))) == "?");
}

TEST_CASE("the config's closed sets: every value's name parses back to it") {
  const auto round_trips = [](auto values) {
    for (const auto v : values) {
      CAPTURE(name_of(v));
      CHECK(parse_name<std::decay_t<decltype(v)>>(name_of(v)) == v);
    }
  };
  round_trips(all_values<device_kind>());
  round_trips(all_values<sync_mode>());
  round_trips(all_values<fault_action>());
  round_trips(all_values<failure_class>());
  round_trips(all_values<job_status>());
  CHECK(names_listed<sync_mode>() == "ps, allreduce or local");
  CHECK(std::string(name_of(failure_class::out_of_memory)) == "out-of-memory");
  CHECK(std::string(name_of(optimizer_kind::max_adabelief)) == "max-adabelief");
}

}  // namespace
}  // namespace troupe
