#pragma once
// One-time join tickets. The join endpoint hands an agent one after checking its token; the
// agent's hello on the control port must bring it, and the registry takes it back. A ticket
// works once and for a minute: a hello recorded and replayed later, or sent again on another
// connection, is refused.
#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "core/clock.hpp"
#include "core/secret.hpp"

namespace troupe::actors {

class join_tickets {
 public:
  explicit join_tickets(double valid_seconds = 60.0) : valid_(valid_seconds) {}

  // A new ticket for the agent `name`.
  std::string issue(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    prune();
    auto t = random_hex(16);
    issued_[t] = {name, steady::now() + std::chrono::duration_cast<steady::duration>(
                                            std::chrono::duration<double>(valid_))};
    return t;
  }

  // Whether `ticket` was issued for `name`, unused and unexpired; it is used up either way.
  bool redeem(const std::string& ticket, const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    prune();
    const auto it = issued_.find(ticket);
    if (it == issued_.end()) return false;
    const bool ok = it->second.name == name;
    issued_.erase(it);
    return ok;
  }

 private:
  struct entry {
    std::string name;
    steady::time_point expires;
  };
  void prune() {
    const auto now = steady::now();
    for (auto it = issued_.begin(); it != issued_.end();)
      it = it->second.expires < now ? issued_.erase(it) : std::next(it);
  }
  double valid_;
  std::mutex mu_;
  std::map<std::string, entry> issued_;
};

}  // namespace troupe::actors
