#pragma once
// The rendezvous store backed by a CAF actor, so that ranks in other processes can rendezvous:
//   - spawn_store_actor: the actor holding the keys (one per job or cluster);
//   - actor_store: a store client for threads of the actor's own process;
//   - store_server: serves the actor to other processes over a ZeroMQ ROUTER socket
//     (collectives links CAF::core only, not the middleman; ZeroMQ is already our data plane);
//   - remote_store (zmq_store.hpp): the client other processes use, without CAF.
// Register the messages with add_store_types(cfg) before creating the actor_system.
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "collectives/store.hpp"

namespace troupe::collectives {

void add_store_types(caf::actor_system_config& cfg);

caf::actor spawn_store_actor(caf::actor_system& sys);

// This class is thread-safe (each call uses its own scoped actor).
class actor_store final : public store {
 public:
  actor_store(caf::actor_system& sys, caf::actor store_actor);
  void set(const std::string& key, const std::string& value) override;
  std::optional<std::string> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, steady::time_point deadline) override;

 private:
  caf::actor_system& sys_;
  caf::actor actor_;
  std::atomic<std::uint64_t> next_ticket_{1};
};

// Serves `store_actor` on tcp://host:PORT (port 0 = any) until destroyed.
class store_server {
 public:
  store_server(caf::actor_system& sys, caf::actor store_actor,
               const std::string& host = "127.0.0.1", int port = 0);
  ~store_server();
  store_server(const store_server&) = delete;
  store_server& operator=(const store_server&) = delete;

  // "tcp://127.0.0.1:PORT": what remote_store connects to.
  const std::string& address() const { return address_; }

 private:
  void serve();

  struct sockets;
  caf::actor_system& sys_;
  caf::actor actor_;
  std::unique_ptr<sockets> sockets_;
  std::string address_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace troupe::collectives
