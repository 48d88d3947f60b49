#pragma once
// Helpers for tests and benchmarks that run ranks as threads of one process (gloo style).
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/op_control.hpp"
#include "core/clock.hpp"

namespace troupe::collectives::testing {

// Runs body(rank) on `size` threads and returns what each threw (empty string = no error).
// Every collective has a deadline, so the joins end.
inline std::vector<std::string> run_ranks(int size, const std::function<void(int rank)>& body) {
  std::vector<std::string> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank)
    threads.emplace_back([&, rank] {
      try {
        body(rank);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(rank)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

// A count-down latch whose wait has a deadline (a test must never hang): lets a "hung" rank keep
// its links open until the others have given up on it.
class latch {
 public:
  explicit latch(int count) : count_(count) {}
  void count_down() {
    std::lock_guard<std::mutex> guard{mutex_};
    if (--count_ <= 0) done_.notify_all();
  }
  bool wait_for(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock{mutex_};
    return done_.wait_for(lock, limit, [&] { return count_ <= 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  int count_;
};

// Counts `l` down when the scope it lives in is left, by return or by exception.
struct count_down_on_exit {
  latch& l;
  ~count_down_on_exit() { l.count_down(); }
};

// The value rank `rank` holds at index i: small integers, so float sums are exact in any order.
inline float pattern(int rank, std::size_t i) {
  return static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(rank) * 13) % 31) -
                            15);
}
// Rank `rank`'s input of `count` elements: pattern(rank, i) at i.
inline std::vector<float> pattern_data(int rank, std::size_t count) {
  std::vector<float> data(count);
  for (std::size_t i = 0; i < count; ++i) data[i] = pattern(rank, i);
  return data;
}
inline float pattern_sum(int size, std::size_t i) {
  float sum = 0;
  for (int r = 0; r < size; ++r) sum += pattern(r, i);
  return sum;
}

// An allreduce of `data` over `comm` that must finish within `limit` from now, with the
// algorithm allreduce picks by size; the tests set the rest.
inline allreduce_options allreduce_in(communicator& comm, std::vector<float>& data,
                                      std::chrono::milliseconds limit) {
  allreduce_options o;
  o.comm = &comm;
  o.data = data;
  o.deadline = deadline_in(limit);
  return o;
}

// The same through the ring whatever the size, in chunks of `chunk_bytes` (the options' default
// otherwise).
inline allreduce_options ring_options(communicator& comm, std::vector<float>& data,
                                      std::chrono::milliseconds limit,
                                      std::size_t chunk_bytes = op_options{}.chunk_bytes) {
  allreduce_options o = allreduce_in(comm, data, limit);
  o.chunk_bytes = chunk_bytes;
  o.one_step_bytes = o.two_step_bytes = 0;
  return o;
}

// allreduce(o); when it throws, `took` gets the seconds it ran before the error is rethrown (how
// soon a failure was noticed).
inline void timed_allreduce(const allreduce_options& o, double& took) {
  const stopwatch clock;
  try {
    allreduce(o);
  } catch (...) {
    took = clock.seconds();
    throw;
  }
}

// "" when every rank finished without an error and with no wrong element (`wrong[rank]`);
// otherwise the first rank that did not, and why.
template <class Counts>
std::string first_failure(const std::vector<std::string>& errors, const Counts& wrong) {
  for (std::size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r].empty()) return "rank " + std::to_string(r) + ": " + errors[r];
    if (r < wrong.size() && wrong[r] != 0)
      return "rank " + std::to_string(r) + ": " + std::to_string(wrong[r]) + " wrong elements";
  }
  return "";
}

}  // namespace troupe::collectives::testing
