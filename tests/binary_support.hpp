#pragma once
// Shared by the tests that drive the built `troupe` binary as a user would (tests/cli,
// tests/bench_hetero, tests/resume_cli): where it is, a scratch directory per test process, and
// one command run with a deadline.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace troupe::testing {

// The test executables and `troupe` are built into the same directory.
// A file's whole content ("" when it cannot be read: the caller's checks say what was missing).
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::filesystem::path troupe_binary() {
  auto path = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "troupe";
  if (!std::filesystem::exists(path))
    throw std::runtime_error(path.string() + " is missing: build the troupe target first");
  return path;
}

// `text` as the file `name` in `dir`; its path.
inline std::filesystem::path write_file(const std::filesystem::path& dir, const std::string& name,
                                        const std::string& text) {
  auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

// The scratch directories of this test process, removed when it exits (kept when
// TROUPE_KEEP_SCRATCH is set, to look at what a failing test left).
struct scratch_dirs {
  std::vector<std::filesystem::path> dirs;
  ~scratch_dirs() {
    if (std::getenv("TROUPE_KEEP_SCRATCH")) return;
    for (const auto& d : dirs) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }
};

// A directory of this test process's own, named `name`-PID under the temp directory.
inline std::filesystem::path scratch_dir(const std::string& name) {
  static scratch_dirs made;
  auto dir = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  made.dirs.push_back(dir);
  return dir;
}

// Every control process a test starts (and the agents and clients it starts, which inherit the
// environment) keeps the cluster's credentials in one scratch directory of the test binary,
// never in the working directory (the source tree, under ctest). A test that wants its own
// cluster passes --state.
inline const bool test_state_dir_set = [] {
  if (!std::getenv("TROUPE_STATE"))
    ::setenv("TROUPE_STATE", (scratch_dir("troupe-test-state") / "state").c_str(), 0);
  return true;
}();

struct outcome {
  int code = -1;  // the exit code; -1 when killed by a signal
  std::string err;
};

// `troupe ARGS` with stdout and stderr into `dir`, killed after `timeout_s` (never a hang).
inline outcome run_troupe_in(const std::filesystem::path& dir, const std::string& args,
                             int timeout_s) {
  const auto err_file = dir / "stderr.txt";
  const std::string cmd = "timeout " + std::to_string(timeout_s) + " " + troupe_binary().string() +
                          " " + args + " > " + (dir / "stdout.txt").string() + " 2> " +
                          err_file.string();
  const int status = std::system(cmd.c_str());
  outcome o;
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream ss;
  ss << std::ifstream(err_file).rdbuf();
  o.err = ss.str();
  return o;
}

}  // namespace troupe::testing
