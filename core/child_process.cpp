#include "core/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"

extern char** environ;

namespace troupe {

child_process::child_process(const std::vector<std::string>& argv,
                             const std::vector<std::string>& extra_env,
                             const child_options& options) {
  if (argv.empty()) throw runtime_failure("child_process: no program");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; e && *e; ++e) env_text.emplace_back(*e);
  env_text.insert(env_text.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> env;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  // The child starts with no signal blocked: posix_spawn would pass the spawning thread's mask
  // on (exec resets handlers, not the mask), and an agent must take the SIGTERM sent to it.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  short flags = POSIX_SPAWN_SETSIGMASK;
  if (options.own_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  if (!options.output.empty()) {
    posix_spawn_file_actions_addopen(&files, 1, options.output.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
  }
  const int rc = ::posix_spawn(&pid_, argv[0].c_str(), &files, &attr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw runtime_failure("cannot start " + argv[0] + ": " + std::strerror(rc));
}

child_process::~child_process() {
  if (!reaped_) stop(0.0);
}

bool child_process::running() {
  if (reaped_) return false;
  const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) reaped_ = true;
  return !reaped_;
}

int child_process::kill_group(int sig) {
  if (reaped_) return status_;
  ::kill(-pid_, sig);
  while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return status_;
}

int child_process::stop(double grace) {
  const auto until = steady::now() + std::chrono::duration_cast<steady::duration>(
                                         std::chrono::duration<double>(grace));
  while (running() && steady::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (running()) {
    ::kill(pid_, SIGKILL);
    // SIGKILL cannot be ignored; the wait returns once the kernel has torn it down.
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  return status_;
}

}  // namespace troupe
