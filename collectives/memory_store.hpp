#pragma once
// The store for ranks that are threads of one process (tests, inproc benchmarks).
// This class is thread-safe.
#include <condition_variable>
#include <map>
#include <mutex>

#include "collectives/store.hpp"

namespace troupe::collectives {

class memory_store final : public store {
 public:
  void set(const std::string& key, const std::string& value) override;
  std::optional<std::string> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, steady::time_point deadline) override;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
};

}  // namespace troupe::collectives
