#pragma once
// What a command tells the person (or the log shipper) that runs it. One spdlog logger a stream,
// as the jobs' log files use, with levels: stderr carries the command's notes, warnings and
// errors ("troupe run: warning: ..."); stdout a run's job lines and results. Under
// `--log-format json` each line of both is one JSON object (core/json_log.hpp), level included.
#include <cstdint>
#include <string>

namespace troupe::apps::console {

enum class format { text, json };

// Once the command knows its flags. `program` ("troupe run") leads each text line of stderr;
// `quiet` drops stdout's info lines (job lines), never a warning or an error. Until then: text,
// "troupe", not quiet.
void configure(const std::string& program, format f, bool quiet = false);
// `--log-format`'s value: text or json, else input_error naming the flag.
format parse_format(const std::string& value);

// stderr.
void info(const std::string& text);
void warn(const std::string& text);
void error(const std::string& text);
// A line of the runtime's log callbacks (the service's, an agent's), which carry text only: one
// that starts "warning: " is a warning, any other a note.
void runtime_line(const std::string& text);

// stdout: a job's log line ("[job] text" as text), and a run's results (a job's summary).
void job_line(const std::string& job, std::int64_t step, const std::string& text);
void result(const std::string& text);
// A job's line that is a warning (its checkpoints failed), on stdout beside its summary.
void job_warning(const std::string& job, const std::string& text);

}  // namespace troupe::apps::console
