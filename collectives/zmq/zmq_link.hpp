#pragma once
// The ZeroMQ transport for ranks in different processes or hosts, over tcp or ipc (unix
// sockets). One socket pair per connected peer: a PULL socket this rank binds for that peer's
// messages and a PUSH socket connected to the peer's PULL. A message is two frames: a msgpack
// header (the tag) and the raw payload bytes, sent without copying (ZeroMQ frees it through a
// callback, which completes the post's ticket). Ranks publish their addresses in the store.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/store.hpp"
#include "core/names.hpp"

namespace troupe::collectives {

enum class zmq_scheme { tcp, ipc };

}  // namespace troupe::collectives

namespace troupe {
TROUPE_SPELLINGS(collectives::zmq_scheme, ipc, "tcp", "ipc");
}  // namespace troupe

namespace troupe::collectives {

// The process's default for zmq_connect_options::curve: on. A process started with --insecure
// (troupe run, serve, agent) turns it off for its whole life, so its links are plain and its
// peers, insecure too, meet it so.
void set_curve_by_default(bool on);
bool curve_by_default();

// The ports a tcp link's receiving end binds: any free one (0, 0; the default), or one of
// [first, last], for hosts behind a firewall that opens only those (`--data-ports LO-HI` of
// troupe run, serve and agent, for the whole process).
struct port_range {
  std::uint16_t first = 0, last = 0;
  bool any() const { return first == 0; }
};
void set_data_ports(port_range r);
port_range data_ports();
// "LO-HI" (1 <= LO <= HI <= 65535) for `flag`; input_error naming the flag otherwise.
port_range parse_port_range(const std::string& text, const std::string& flag);

struct zmq_connect_options : rendezvous_options {
  zmq_connect_options() { prefix = "zmq"; }
  zmq_scheme scheme = zmq_scheme::tcp;
  std::string host = "127.0.0.1";  // tcp: the interface to bind and advertise
  std::vector<int> peers;          // ranks to link with; empty = default_peers
  int io_threads = 1;
  port_range ports = data_ports();  // tcp: where the receiving ends bind
  // ZeroMQ CURVE on every link: each rank's receiving sockets get a fresh key pair whose public
  // half travels beside the address through the rendezvous store (which runs over the
  // authenticated control plane), so only a peer that read the store can connect, and nothing
  // on the wire is readable or changeable. A rank that requires it refuses a peer that
  // published no key. Off: plain links (--insecure; a caller that measures the bare transport).
  bool curve = curve_by_default();
};

// Binds, publishes, waits for the peers' addresses and connects. Throws runtime_failure naming
// the missing peers when the rendezvous deadline passes.
communicator zmq_connect(const zmq_connect_options& options);

}  // namespace troupe::collectives
