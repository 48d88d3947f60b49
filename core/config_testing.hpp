#pragma once
// For the config tests: the input_error a config is refused with.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/config_load.hpp"
#include "core/error.hpp"

namespace troupe::config::testing {

// The input_error message of parsing `yaml` as "bad.yaml"; fails the test when it parses.
inline std::string error_of(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    parse_config(yaml, "bad.yaml", sets);
  } catch (const troupe::input_error& e) {
    return e.what();
  }
  FAIL("expected an input_error for:\n" << yaml);
  return {};
}

}  // namespace troupe::config::testing
