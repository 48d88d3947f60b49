#pragma once
// The rendezvous axis: a tiny key-value store through which ranks publish their
// addresses (and NCCL unique ids) and wait for each other's. Values are opaque bytes.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "collectives/op_control.hpp"
#include "core/clock.hpp"

namespace troupe::collectives {

class store {
 public:
  virtual ~store() = default;
  virtual void set(const std::string& key, const std::string& value) = 0;
  virtual std::optional<std::string> get(const std::string& key) = 0;
  // Waits until every key is present; throws runtime_failure naming the missing keys when the
  // deadline passes.
  virtual void wait(const std::vector<std::string>& keys, steady::time_point deadline) = 0;

  // wait({key}) then get(key).
  std::string wait_get(const std::string& key, steady::time_point deadline);
};

// What every transport's connect needs from the rendezvous: where to meet, who this rank is
// among how many, under which key prefix (e.g. "job7/epoch3"), and until when to wait.
struct rendezvous_options {
  store* rendezvous = nullptr;
  int rank = 0;
  int size = 1;
  std::string prefix;
  steady::time_point deadline = steady::time_point::max();
  // Raised while a rank waits for its peers to publish: the wait ends at once (collective_error
  // aborted, or peer_closed for `gone`) instead of at the deadline, as an op's waits do.
  std::shared_ptr<const abort_signal> abort;
  std::shared_ptr<const abort_signal> gone;
};

// Fills the rendezvous part of a transport's connect options (the shm and ZeroMQ ones derive
// from it).
inline void meet_at(rendezvous_options& o, store& rendezvous, int rank, int size,
                    const std::string& prefix, steady::time_point deadline) {
  o.rendezvous = &rendezvous;
  o.rank = rank;
  o.size = size;
  o.prefix = prefix;
  o.deadline = deadline;
}

// The key of the link that carries data from rank `from` to rank `to`, in `transport`'s part of
// the prefix ("job7/epoch3/zmq/2->0"). Its receiving end publishes where to send.
std::string link_key(const rendezvous_options& o, const char* transport, int from, int to);

// Publishes this rank's receiving end of the link from `peer`.
void publish_end(const rendezvous_options& o, const char* transport, int peer,
                 const std::string& value);

// Waits for `peer`'s receiving end of the link from this rank. At the deadline, throws
// runtime_failure:
// "`who`: rank P never published `what` (rank R waited until the deadline)".
// Raised o.abort or o.gone end the wait earlier with collective_error.
std::string await_peer_end(const rendezvous_options& o, const char* transport, int peer,
                           const char* who, const char* what);

// Names the keys still missing in a timeout message: "rank/3/addr, rank/5/addr".
std::string join_keys(const std::vector<std::string>& keys);

}  // namespace troupe::collectives
