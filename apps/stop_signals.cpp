#include "apps/stop_signals.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/error.hpp"

namespace troupe::apps {
namespace {

// The pipe the handler writes to: [0] read by the watcher, [1] written by the handler.
int wake[2] = {-1, -1};

void on_signal(int sig) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] const auto n = ::write(wake[1], &byte, 1);  // async-signal-safe
  errno = saved;
}

}  // namespace

stop_signals::stop_signals(std::function<void(int)> on_first) : on_first_(std::move(on_first)) {
  if (::pipe2(wake, O_CLOEXEC) != 0) throw runtime_failure("cannot make the signal pipe");
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGTERM, &sa, &old_term_);
  ::sigaction(SIGINT, &sa, &old_int_);
  watcher_ = std::thread([this] {
    for (;;) {
      unsigned char byte = 0;
      const auto n = ::read(wake[0], &byte, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || byte == 0) return;  // the destructor's zero byte, or the pipe is gone
      const int sig = byte;
      int none = 0;
      if (first_.compare_exchange_strong(none, sig))
        on_first_(sig);
      else
        ::_exit(128 + sig);
    }
  });
}

stop_signals::~stop_signals() {
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sigaction(SIGINT, &old_int_, nullptr);
  const unsigned char stop = 0;
  [[maybe_unused]] const auto n = ::write(wake[1], &stop, 1);
  if (watcher_.joinable()) watcher_.join();
  ::close(wake[0]);
  ::close(wake[1]);
  wake[0] = wake[1] = -1;
}

}  // namespace troupe::apps
