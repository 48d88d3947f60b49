#include "core/writable_paths.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/testing.hpp"

namespace fs = std::filesystem;

using troupe::testing::input_error_of;

TEST_CASE("writable directories and files are made or refused, naming the flag and the path") {
  const auto dir = fs::temp_directory_path() / ("troupe-writable-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto logs = (dir / "a" / "logs").string();
  troupe::require_writable_dir(logs, "--log-dir");
  CHECK(fs::is_directory(logs));
  CHECK(fs::is_empty(logs));  // the scratch file is gone again
  const auto report = (dir / "r" / "report.json").string();
  troupe::require_writable_file(report, "--report");
  CHECK(fs::is_directory(dir / "r"));
  CHECK_FALSE(fs::exists(report));  // created by the check only: removed
  std::ofstream(report) << "{}";
  troupe::require_writable_file(report, "--report");
  CHECK(fs::file_size(report) == 2);  // an existing file is not truncated by the check

  // A directory under a regular file, a file where a directory is, a pseudo file system.
  const auto plain = (dir / "plain").string();
  std::ofstream(plain) << "x";
  const auto under =
      input_error_of([&] { troupe::require_writable_dir(plain + "/ckpt", "checkpoint.dir"); });
  CHECK(under.find("checkpoint.dir " + plain + "/ckpt") != std::string::npos);
  const auto is_dir = input_error_of([&] { troupe::require_writable_file(logs, "--report"); });
  CHECK(is_dir.find("is a directory") != std::string::npos);
  const auto proc =
      input_error_of([] { troupe::require_writable_file("/proc/troupe-r.json", "--report"); });
  CHECK(proc.find("--report /proc/troupe-r.json: cannot write there") != std::string::npos);
  const auto proc_dir =
      input_error_of([] { troupe::require_writable_dir("/proc/nope", "--log-dir"); });
  CHECK(proc_dir.find("--log-dir /proc/nope") != std::string::npos);
  fs::remove_all(dir);
}
