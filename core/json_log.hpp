#pragma once
// One log line as one JSON object, for log shippers (`--log-format json`): {time (UTC, ISO 8601
// with milliseconds), level, job, generation, step, message}. Invalid UTF-8 in the message is
// replaced, never thrown on: a log line must not stop a job.
#include <cstdint>
#include <string>

namespace troupe {

// Now, UTC, ISO 8601 with milliseconds: "2026-11-28T12:00:00.123Z".
std::string utc_now_iso8601();

std::string json_line(const std::string& job, std::uint32_t generation, std::int64_t step,
                      const std::string& message, const std::string& level = "info");

}  // namespace troupe
