#pragma once
// For the config tests: a small valid config, and the input_error a config is refused with.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/config_load.hpp"
#include "core/error.hpp"

namespace troupe::config::testing {

// A small valid config; cases append lines from line 14 on, so their line numbers are known.
inline const std::string base = R"(cluster:
  groups:
    - name: cpu
      device: cpu
      count: 2
    - name: slow
      device: sim
      slowdown: 3
jobs:
  - name: a
    data:
      dataset: synthetic
    batch: 32
)";

// File, line and key path, then the explanation.
inline void expect(const std::string& msg, const std::string& where, const std::string& what) {
  CHECK_MESSAGE(msg.rfind("bad.yaml:" + where, 0) == 0, msg);
  CHECK_MESSAGE(msg.find(what) != std::string::npos, msg);
}

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
