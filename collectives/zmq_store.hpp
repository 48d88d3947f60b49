#pragma once
// The store client of a process that reaches the store actor through store_server
// (store_actor.hpp). Plain ZeroMQ REQ/REP with msgpack bodies; no CAF needed on this side.
// This class is NOT thread-safe (one REQ socket); give each thread its own client.
#include <memory>
#include <string>

#include "collectives/store.hpp"

namespace troupe::collectives {

class remote_store final : public store {
 public:
  explicit remote_store(const std::string& address);
  ~remote_store() override;
  void set(const std::string& key, const std::string& value) override;
  std::optional<std::string> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, steady::time_point deadline) override;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace troupe::collectives
