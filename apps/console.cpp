#include "apps/console.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>

#include "core/error.hpp"
#include "core/json_log.hpp"

namespace troupe::apps::console {
namespace {

// The message is formatted here (text or JSON), so the sinks print it as it is.
std::shared_ptr<spdlog::logger> make(std::shared_ptr<spdlog::sinks::sink> sink, const char* name) {
  auto lg = std::make_shared<spdlog::logger>(name, std::move(sink));
  lg->set_pattern("%v");
  lg->flush_on(spdlog::level::trace);  // every line at once: a person or a pipe is waiting
  return lg;
}

struct state {
  std::mutex mu;
  std::string program = "troupe";
  format fmt = format::text;
  bool quiet = false;
  std::shared_ptr<spdlog::logger> err =
      make(std::make_shared<spdlog::sinks::stderr_sink_mt>(), "console:stderr");
  std::shared_ptr<spdlog::logger> out =
      make(std::make_shared<spdlog::sinks::stdout_sink_mt>(), "console:stdout");
};

state& the() {
  static state s;
  return s;
}

const char* level_name(spdlog::level::level_enum l) {
  return l == spdlog::level::warn ? "warning" : l == spdlog::level::err ? "error" : "info";
}

// stderr: "PROGRAM: text", "PROGRAM: warning: text"; errors read as they always have
// ("troupe run: FILE:3: ..."), since scripts and tests match them.
void to_err(spdlog::level::level_enum l, const std::string& text) {
  auto& s = the();
  std::string line;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.fmt == format::json)
      line = json_line("", 0, 0, s.program + ": " + text, level_name(l));
    else
      line = s.program + ": " + (l == spdlog::level::warn ? "warning: " : "") + text;
  }
  s.err->log(l, line);
}

void to_out(spdlog::level::level_enum l, const std::string& job, std::int64_t step,
            const std::string& text, const std::string& plain) {
  auto& s = the();
  bool as_json = false;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    as_json = s.fmt == format::json;
  }
  s.out->log(l, as_json ? json_line(job, 0, step, text, level_name(l)) : plain);
}

}  // namespace

void configure(const std::string& program, format f, bool quiet) {
  auto& s = the();
  std::lock_guard<std::mutex> lock(s.mu);
  s.program = program;
  s.fmt = f;
  s.quiet = quiet;
}

format parse_format(const std::string& value) {
  if (value == "text") return format::text;
  if (value == "json") return format::json;
  throw input_error("--log-format must be text or json, got '" + value + "'");
}

void info(const std::string& text) {
  to_err(spdlog::level::info, text);
}
void warn(const std::string& text) {
  to_err(spdlog::level::warn, text);
}
void error(const std::string& text) {
  to_err(spdlog::level::err, text);
}

void runtime_line(const std::string& text) {
  static const std::string mark = "warning: ";
  if (text.compare(0, mark.size(), mark) == 0)
    warn(text.substr(mark.size()));
  else
    info(text);
}

void job_line(const std::string& job, std::int64_t step, const std::string& text) {
  {
    auto& s = the();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.quiet) return;
  }
  to_out(spdlog::level::info, job, step, text, "[" + job + "] " + text);
}

void result(const std::string& text) {
  to_out(spdlog::level::info, "", 0, text, text);
}

void job_warning(const std::string& job, const std::string& text) {
  to_out(spdlog::level::warn, job, 0, text, job + ": WARNING: " + text);
}

}  // namespace troupe::apps::console
