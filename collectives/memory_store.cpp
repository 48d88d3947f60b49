#include "collectives/memory_store.hpp"

#include "core/error.hpp"

namespace troupe::collectives {

void memory_store::set(const std::string& key, const std::string& value) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    values_[key] = value;
  }
  changed_.notify_all();
}

std::optional<std::string> memory_store::get(const std::string& key) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

void memory_store::wait(const std::vector<std::string>& keys, steady::time_point deadline) {
  std::unique_lock<std::mutex> lock{mutex_};
  auto missing = [&] {
    std::vector<std::string> out;
    for (const auto& k : keys)
      if (!values_.count(k)) out.push_back(k);
    return out;
  };
  if (!changed_.wait_until(lock, deadline, [&] { return missing().empty(); }))
    throw runtime_failure("store: timed out waiting for keys " + join_keys(missing()));
}

}  // namespace troupe::collectives
