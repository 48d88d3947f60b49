#include "core/json_log.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

TEST_CASE("a JSON log line has every field, and survives invalid UTF-8") {
  const auto line = troupe::json_line("mlp-1", 3, 120, "step 120/500 \"quoted\"\n\xff end");
  CHECK(line.find('\n') == std::string::npos);
  const auto j = nlohmann::json::parse(line);
  CHECK(j["job"] == "mlp-1");
  CHECK(j["generation"] == 3);
  CHECK(j["step"] == 120);
  CHECK(j["level"] == "info");
  CHECK(j["message"].get<std::string>().find("step 120/500 \"quoted\"\n") == 0);
  const auto t = j["time"].get<std::string>();
  REQUIRE(t.size() == 24);
  CHECK(t[4] == '-');
  CHECK(t[10] == 'T');
  CHECK(t[23] == 'Z');
}
