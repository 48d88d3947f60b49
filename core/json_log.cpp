#include "core/json_log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

namespace troupe {

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const auto t = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&t, &utc);
  char time[80];  // room for any int the compiler can imagine; 24 are written
  std::snprintf(time, sizeof time, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(ms));
  return time;
}

std::string json_line(const std::string& job, std::uint32_t generation, std::int64_t step,
                      const std::string& message, const std::string& level) {
  return nlohmann::json{{"time", utc_now_iso8601()}, {"level", level}, {"job", job},
                        {"generation", generation},  {"step", step},   {"message", message}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace troupe
