#include "core/request_deadlines.hpp"

#include <sys/socket.h>

#include <chrono>

namespace troupe {
namespace {

// The slot of the connection this thread serves, and how long its requests may take (null on
// threads that are not a deadline_pool's).
struct current_slot {
  void* slot = nullptr;
  double seconds = 0;
};
thread_local current_slot current;

}  // namespace

deadline_pool::deadline_pool(std::size_t threads, double request_seconds)
    : request_seconds_(request_seconds) {
  for (std::size_t i = 0; i < threads; ++i) slots_.push_back(std::make_unique<slot>());
  for (std::size_t i = 0; i < threads; ++i)
    threads_.emplace_back([this, s = slots_[i].get()] { work(*s); });
  watchdog_ = std::thread([this] { watch(); });
}

deadline_pool::~deadline_pool() {
  shutdown();
}

void deadline_pool::enqueue(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(fn));
  }
  cv_.notify_one();
}

void deadline_pool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  // The watchdog keeps cutting slow connections until the workers are out: one that trickles
  // must not hold the server's stop.
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers_gone_ = true;
  }
  watch_cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void deadline_pool::work(slot& s) {
  current = {&s, request_seconds_};
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Queued connections are still served when stopping, as httplib's own pool does.
      if (queue_.empty()) return;
      fn = std::move(queue_.front());
      queue_.pop_front();
    }
    arm(request_seconds_);
    fn();
    std::lock_guard<std::mutex> lock(s.mu);
    s.fd = -1;
    s.armed = false;
  }
}

void deadline_pool::watch() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (watch_cv_.wait_for(lock, std::chrono::milliseconds(250),
                             [this] { return workers_gone_; }))
        return;
    }
    const auto now = steady::now();
    for (auto& s : slots_) {
      std::lock_guard<std::mutex> lock(s->mu);
      if (!s->armed || s->fd < 0 || now < s->deadline) continue;
      // Not close(): the worker still owns the descriptor and closes it itself.
      ::shutdown(s->fd, SHUT_RDWR);
      s->armed = false;
    }
  }
}

void deadline_pool::arm(double seconds) {
  auto* s = static_cast<slot*>(current.slot);
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mu);
  s->armed = seconds > 0;
  s->deadline = steady::now() + std::chrono::duration_cast<steady::duration>(
                                    std::chrono::duration<double>(seconds));
}

void deadline_pool::on_handshake_start(int fd) {
  auto* s = static_cast<slot*>(current.slot);
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mu);
  s->fd = fd;
}

void deadline_pool::headers_read() {
  arm(current.seconds);
}
void deadline_pool::handler_started() {
  arm(0);
}
void deadline_pool::answered() {
  arm(current.seconds);
}

}  // namespace troupe
