#pragma once
// Deadlines for HTTP requests as a whole. cpp-httplib 0.11 bounds each read of a connection
// (set_read_timeout) but not a request: a client that sends a header byte every few seconds
// holds a worker thread for as long as it likes, and a handful of them stop a server with a
// small pool (slowloris). This is the server's thread pool with a watchdog:
//
//   - each worker thread has a slot: the socket it serves and a deadline;
//   - a connection taken from the queue gets `request_seconds` for its first request's headers
//     and body; the TLS handshake's start names its socket (on_handshake_start);
//   - the headers in, the body gets `request_seconds` of its own (headers_read); a handler that
//     may take long (a drain waits for a step boundary) clears the deadline (handler_started);
//     an answer sent gives the next request on a kept-alive connection `request_seconds`
//     (answered);
//   - every quarter second the watchdog shuts down the socket of a slot past its deadline: the
//     worker's read fails, httplib closes the connection, and the thread is free again.
//
// Plain-HTTP connections have no handshake to name their socket: they keep httplib's per-read
// bound only (such ports serve loopback, or are --insecure by the operator's choice).
#include <httplib.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/clock.hpp"

namespace troupe {

class deadline_pool final : public httplib::TaskQueue {
 public:
  deadline_pool(std::size_t threads, double request_seconds);
  ~deadline_pool() override;
  deadline_pool(const deadline_pool&) = delete;
  deadline_pool& operator=(const deadline_pool&) = delete;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  // Calls from the worker thread serving a connection; nothing on other threads.
  static void on_handshake_start(int fd);
  static void headers_read();
  static void handler_started();
  static void answered();

 private:
  struct slot {
    std::mutex mu;
    int fd = -1;
    bool armed = false;
    steady::time_point deadline;
  };
  void work(slot& s);
  void watch();
  static void arm(double seconds);

  const double request_seconds_;
  std::vector<std::unique_ptr<slot>> slots_;
  std::vector<std::thread> threads_;
  std::thread watchdog_;
  std::mutex mu_;
  std::condition_variable cv_;  // workers wait on it for connections
  // The watchdog's own: a connection's notify_one must wake a worker, never the watchdog.
  std::condition_variable watch_cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  bool workers_gone_ = false;
};

}  // namespace troupe
