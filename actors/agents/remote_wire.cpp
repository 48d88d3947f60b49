#include "actors/agents/remote_wire.hpp"

#include "core/host_address.hpp"
#include "core/launcher_env.hpp"

namespace troupe::actors::remote_wire {

collectives::zmq_connect_options link_options(
    int rank, const std::string& prefix, collectives::store& store, const std::string& peer_host,
    const std::string& agent_data_host, const std::string& bind_host, steady::duration within) {
  collectives::zmq_connect_options o;
  o.rendezvous = &store;
  o.rank = rank;
  o.size = 2;
  o.peers = {1 - rank};
  o.prefix = prefix;
  o.deadline = steady::now() + within;
  if (peer_host == host_name() && is_loopback(agent_data_host)) {
    o.scheme = collectives::zmq_scheme::ipc;
  } else {
    o.scheme = collectives::zmq_scheme::tcp;
    o.host = bind_host;
  }
  return o;
}

}  // namespace troupe::actors::remote_wire
