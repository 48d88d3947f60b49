#pragma once
// Background processes for the multi-process tests: `troupe ARGS` started with its output in
// files, polled for a line, waited for with a deadline and killed (with its group) when the test
// is done with it, so no test leaves a process behind.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/binary_support.hpp"

namespace troupe::testing {

// Polls `done` every 10 ms until it holds (true) or `seconds` have passed (false): every wait of
// a multi-process test has a deadline, generous enough for a loaded machine, and is not a check
// of speed.
template <class Predicate>
bool wait_until(double seconds, Predicate done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

class troupe_process {
 public:
  // Starts `[prefix...] troupe args...` (prefix: e.g. `ip netns exec NS`, which execs troupe in
  // that network namespace), stdout to DIR/NAME.out and stderr to DIR/NAME.err.
  troupe_process(const std::filesystem::path& dir, const std::string& name,
                 const std::vector<std::string>& args, const std::vector<std::string>& prefix = {})
      : out_(dir / (name + ".out")), err_(dir / (name + ".err")) {
    std::vector<std::string> words = prefix;
    words.push_back(troupe_binary().string());
    words.insert(words.end(), args.begin(), args.end());
    std::fflush(nullptr);  // else the child's freopen writes our buffered output a second time
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      if (!std::freopen(out_.c_str(), "w", stdout) || !std::freopen(err_.c_str(), "w", stderr))
        ::_exit(127);
      std::vector<char*> argv;
      for (const auto& w : words) argv.push_back(const_cast<char*>(w.c_str()));
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~troupe_process() { kill(SIGKILL); }
  troupe_process(const troupe_process&) = delete;
  troupe_process& operator=(const troupe_process&) = delete;

  pid_t pid() const { return pid_; }
  void kill(int sig) {
    if (pid_ > 0 && !code_) ::kill(pid_, sig);
    if (sig == SIGKILL) wait_for_exit(10);
  }

  // The exit code (-1: killed by a signal), or nothing when it runs on after `seconds`.
  std::optional<int> wait_for_exit(double seconds) {
    wait_until(seconds, [&] {
      int status = 0;
      if (!code_ && pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_)
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      return code_.has_value() || pid_ <= 0;
    });
    return code_;
  }

  std::string out() const { return read(out_); }
  std::string err() const { return read(err_); }

  // Waits until stdout and stderr together hold `text` at least `times` times; false after
  // `seconds`.
  bool wait_for_text(const std::string& text, double seconds, int times = 1) const {
    return wait_until(seconds, [&] { return count(out() + err(), text) >= times; });
  }

 private:
  static int count(const std::string& hay, const std::string& text) {
    int n = 0;
    for (auto at = hay.find(text); at != std::string::npos; at = hay.find(text, at + 1)) ++n;
    return n;
  }
  static std::string read(const std::filesystem::path& p) {
    std::stringstream ss;
    ss << std::ifstream(p).rdbuf();
    return ss.str();
  }
  std::filesystem::path out_, err_;
  pid_t pid_ = -1;
  std::optional<int> code_;
};

// A port nobody listens on now (the kernel's pick, released), for a flag that takes a fixed
// port: the service binds its ports anew at each restart, a run its --control-port.
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace troupe::testing
