#pragma once
// Which agent hosts which group, for the workers that compute there. The agent registry writes
// it (a join, a loss); group supervisors read it when they spawn or restart a worker of a group
// whose `process` is not local, so a restarted worker goes to the agent that holds the group
// now (one that rejoined after a loss). This class is thread-safe.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <caf/actor.hpp>

#include "collectives/op_control.hpp"

namespace troupe::actors {

struct hosted_group {
  caf::actor agent;        // the agent's actor (a middleman proxy)
  std::string agent_name;  // its --name
  std::string host;        // the host it reported
  std::int64_t member = 0;
  // Aborted when the registry loses the agent: every link to it fails at once instead of
  // waiting for its deadline.
  std::shared_ptr<collectives::abort_signal> lost = std::make_shared<collectives::abort_signal>();
};

class agent_directory {
 public:
  explicit agent_directory(caf::actor store = {}) : store_(std::move(store)) {}

  // The run's rendezvous store, where both ends of a worker's link meet.
  const caf::actor& store() const { return store_; }

  void put(const std::string& group, hosted_group h) {
    std::lock_guard<std::mutex> lock(mu_);
    groups_[group] = std::move(h);
  }
  std::optional<hosted_group> find(const std::string& group) const {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = groups_.find(group);
    if (it == groups_.end()) return std::nullopt;
    return it->second;
  }
  // The agent of member `member` is gone: its links fail with `why`, and the group is free.
  void lose(std::int64_t member, const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = groups_.begin(); it != groups_.end();) {
      if (it->second.member != member) {
        ++it;
        continue;
      }
      it->second.lost->abort("agent '" + it->second.agent_name + "' lost: " + why);
      it = groups_.erase(it);
    }
  }

 private:
  mutable std::mutex mu_;
  caf::actor store_;
  std::map<std::string, hosted_group> groups_;
};

}  // namespace troupe::actors
