#include "collectives/store_actor.hpp"

#include <caf/all.hpp>
#include <zmq.hpp>

#include <map>

#include "collectives/store_messages.hpp"
#include "collectives/store_wire.hpp"
#include "core/error.hpp"

namespace troupe::collectives {
namespace {

struct waiter {
  std::vector<std::string> keys;
  caf::actor reply_to;
  std::uint64_t ticket;  // the client's, echoed in st_done
};

struct store_state {
  std::map<std::string, std::string> values;
  // By an id of the actor's own: clients' tickets are unique within a process only (see
  // fresh_ticket_base), and clients in other processes (agents, over CAF's middleman) draw the
  // same ones; keyed by ticket, a second wait replaced the first, which then never heard back.
  std::map<std::uint64_t, waiter> waiters;
  std::uint64_t next_waiter = 0;
  static inline const char* name = "rendezvous_store";

  std::string missing(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    for (const auto& k : keys)
      if (!values.count(k)) out.push_back(k);
    return join_keys(out);
  }
};

caf::behavior store_behavior(caf::stateful_actor<store_state>* self) {
  return {
      [=](st_set_atom, const std::string& key, const std::string& value) {
        self->state.values[key] = value;
        for (auto it = self->state.waiters.begin(); it != self->state.waiters.end();) {
          if (self->state.missing(it->second.keys).empty()) {
            self->send(it->second.reply_to, st_done_atom_v, it->second.ticket, std::string{});
            it = self->state.waiters.erase(it);
          } else {
            ++it;
          }
        }
        return caf::ok_atom_v;
      },
      [=](st_get_atom, const std::string& key) {
        auto it = self->state.values.find(key);
        if (it == self->state.values.end()) return store_value{false, {}};
        return store_value{true, it->second};
      },
      [=](st_wait_atom, const store_keys& keys, std::uint64_t ticket, std::int64_t timeout_ms) {
        auto reply_to = caf::actor_cast<caf::actor>(self->current_sender());
        if (self->state.missing(keys.keys).empty()) {
          self->send(reply_to, st_done_atom_v, ticket, std::string{});
          return;
        }
        const auto id = ++self->state.next_waiter;
        self->state.waiters[id] = waiter{keys.keys, reply_to, ticket};
        self->delayed_send(self, std::chrono::milliseconds(timeout_ms), st_expire_atom_v, id);
      },
      [=](st_expire_atom, std::uint64_t id) {
        auto it = self->state.waiters.find(id);
        if (it == self->state.waiters.end()) return;
        self->send(it->second.reply_to, st_done_atom_v, it->second.ticket,
                   self->state.missing(it->second.keys));
        self->state.waiters.erase(it);
      },
  };
}

// Tickets of different clients must not collide inside the actor: each client draws from its own
// range of 2^40 tickets.
std::uint64_t fresh_ticket_base() {
  static std::atomic<std::uint64_t> clients{1};
  return clients++ << 40;
}

}  // namespace

void add_store_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::troupe_collectives>();
}

caf::actor spawn_store_actor(caf::actor_system& sys) {
  return sys.spawn(store_behavior);
}

actor_store::actor_store(caf::actor_system& sys, caf::actor store_actor)
    : sys_(sys), actor_(std::move(store_actor)), next_ticket_(fresh_ticket_base()) {}

void actor_store::set(const std::string& key, const std::string& value) {
  caf::scoped_actor self{sys_};
  std::string failure;
  self->request(actor_, std::chrono::seconds(10), st_set_atom_v, key, value)
      .receive([](caf::ok_atom) {}, [&](caf::error& e) { failure = sys_.render(e); });
  if (!failure.empty()) throw runtime_failure("store: set " + key + " failed: " + failure);
}

std::optional<std::string> actor_store::get(const std::string& key) {
  caf::scoped_actor self{sys_};
  std::optional<std::string> out;
  std::string failure;
  self->request(actor_, std::chrono::seconds(10), st_get_atom_v, key)
      .receive(
          [&](const store_value& v) {
            if (v.found) out = v.value;
          },
          [&](caf::error& e) { failure = sys_.render(e); });
  if (!failure.empty()) throw runtime_failure("store: get " + key + " failed: " + failure);
  return out;
}

void actor_store::wait(const std::vector<std::string>& keys, steady::time_point deadline) {
  caf::scoped_actor self{sys_};
  const auto ticket = next_ticket_++;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
  self->send(actor_, st_wait_atom_v, store_keys{keys}, ticket,
             static_cast<std::int64_t>(std::max<long long>(0, left.count())));
  std::string missing = join_keys(keys);
  bool answered = false;
  while (!answered) {
    bool timed_out = false;
    self->receive(
        [&](st_done_atom, std::uint64_t t, const std::string& m) {
          if (t != ticket) return;
          missing = m;
          answered = true;
        },
        // The actor answers at the deadline itself; this margin only covers a dead actor.
        caf::after(left + std::chrono::seconds(2)) >> [&] { timed_out = true; });
    if (timed_out) break;
  }
  if (!answered || !missing.empty())
    throw runtime_failure("store: timed out waiting for keys " + missing);
}

struct store_server::sockets {
  zmq::context_t context{1};
  zmq::socket_t router{context, zmq::socket_type::router};
};

store_server::store_server(caf::actor_system& sys, caf::actor store_actor, const std::string& host,
                           int port)
    : sys_(sys), actor_(std::move(store_actor)), sockets_(std::make_unique<sockets>()) {
  sockets_->router.set(zmq::sockopt::linger, 0);
  sockets_->router.bind("tcp://" + host + ":" + (port == 0 ? "*" : std::to_string(port)));
  address_ = sockets_->router.get(zmq::sockopt::last_endpoint);
  thread_ = std::thread([this] { serve(); });
}

store_server::~store_server() {
  stopping_ = true;
  thread_.join();
}

// One thread: polls the ROUTER socket and the scoped actor's mailbox in turn. set and get are
// answered at once; a wait is forwarded to the actor with a ticket and answered when the actor's
// st_done arrives, so one slow wait never blocks other clients.
void store_server::serve() {
  caf::scoped_actor self{sys_};
  std::map<std::uint64_t, std::string> waiting;  // ticket -> client routing id
  std::uint64_t next_ticket = fresh_ticket_base();
  auto reply = [&](const std::string& client, const wire::store_reply& r) {
    sockets_->router.send(zmq::buffer(client), zmq::send_flags::sndmore);
    sockets_->router.send(zmq::message_t{}, zmq::send_flags::sndmore);
    sockets_->router.send(zmq::buffer(wire::pack(r)), zmq::send_flags::none);
  };
  while (!stopping_) {
    zmq::pollitem_t item{static_cast<void*>(sockets_->router), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(2));
    if (item.revents & ZMQ_POLLIN) {
      zmq::message_t id, empty, body;
      (void)sockets_->router.recv(id);
      (void)sockets_->router.recv(empty);
      (void)sockets_->router.recv(body);
      const std::string client = id.to_string();
      try {
        const auto request = wire::unpack_request(body.data(), body.size());
        if (request.op == wire::store_op::wait) {
          const auto ticket = next_ticket++;
          waiting[ticket] = client;
          self->send(actor_, st_wait_atom_v, store_keys{request.keys}, ticket,
                     static_cast<std::int64_t>(request.timeout_ms));
        } else if (request.op == wire::store_op::set) {
          actor_store{sys_, actor_}.set(request.key, request.value);
          reply(client, {wire::reply_kind::ok, false, {}});
        } else {
          auto value = actor_store{sys_, actor_}.get(request.key);
          reply(client, {wire::reply_kind::value, value.has_value(), value.value_or("")});
        }
      } catch (const std::exception& e) {
        reply(client, {wire::reply_kind::error, false, e.what()});
      }
    }
    for (bool more = true; more;) {
      self->receive(
          [&](st_done_atom, std::uint64_t ticket, const std::string& missing) {
            auto it = waiting.find(ticket);
            if (it == waiting.end()) return;
            reply(it->second, {wire::reply_kind::done, false, missing});
            waiting.erase(it);
          },
          caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    }
  }
}

}  // namespace troupe::collectives
