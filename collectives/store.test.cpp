#include "collectives/store.hpp"

#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "collectives/allreduce.hpp"
#include "collectives/memory_store.hpp"
#include "collectives/store_actor.hpp"
#include "collectives/store_messages.hpp"
#include "collectives/testing.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "collectives/zmq_store.hpp"

using namespace troupe::collectives;
using namespace std::chrono_literals;

namespace {

void exercise(store& s, const std::string& p = "") {
  CHECK(!s.get(p + "a"));
  s.set(p + "a", "1");
  s.set(p + "empty", "");
  CHECK(s.get(p + "a") == std::optional<std::string>{"1"});
  CHECK(s.get(p + "empty") == std::optional<std::string>{""});
  s.wait({p + "a", p + "empty"}, troupe::steady::now() + 1s);
  troupe::stopwatch clock;
  try {
    s.wait({p + "a", p + "never"}, troupe::steady::now() + 100ms);
    FAIL("wait returned without the key");
  } catch (const troupe::runtime_failure& e) {
    CHECK(std::string{e.what()}.find("never") != std::string::npos);
    CHECK(std::string{e.what()}.find("a,") == std::string::npos);  // only the missing key
  }
  CHECK(clock.seconds() >= 0.09);  // it waited for its deadline (a lower bound cannot flake)
}

struct caf_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::actor store_actor;
  static caf::actor_system_config& prepare(caf::actor_system_config& c) {
    add_store_types(c);
    return c;
  }
  caf_fixture() : sys(prepare(cfg)), store_actor(spawn_store_actor(sys)) {}
  ~caf_fixture() { caf::anon_send_exit(store_actor, caf::exit_reason::user_shutdown); }
};

}  // namespace

TEST_CASE("memory store: set, get, wait with a deadline naming the missing key") {
  memory_store s;
  exercise(s);
}

TEST_CASE_FIXTURE(caf_fixture, "actor store: same contract in-process and through the server") {
  actor_store local{sys, store_actor};
  exercise(local);
  store_server server{sys, store_actor};
  remote_store remote{server.address()};
  CHECK(remote.get("a") == std::optional<std::string>{"1"});  // the same actor's keys
  remote.set("a", "2");
  CHECK(local.get("a") == std::optional<std::string>{"2"});
  remote_store fresh{server.address()};
  exercise(fresh, "remote/");
}

TEST_CASE_FIXTURE(caf_fixture, "ranks rendezvous through the store server and allreduce over tcp") {
  store_server server{sys, store_actor};
  const int size = 4;
  std::vector<std::size_t> bad(size, 99);
  auto errors = testing::run_ranks(size, [&](int rank) {
    remote_store rendezvous{server.address()};  // as a separate process would
    zmq_connect_options o;
    o.rendezvous = &rendezvous;
    o.rank = rank;
    o.size = size;
    o.deadline = deadline_in(10s);
    communicator comm = zmq_connect(o);
    std::vector<float> data(1001);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = testing::pattern(rank, i);
    allreduce_options a;
    a.comm = &comm;
    a.data = data;
    a.deadline = deadline_in(10s);
    allreduce(a);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < data.size(); ++i) wrong += data[i] != testing::pattern_sum(size, i);
    bad[static_cast<std::size_t>(rank)] = wrong;
  });
  CHECK(testing::first_failure(errors, bad) == "");
}

TEST_CASE_FIXTURE(caf_fixture, "waits of clients whose tickets collide are each answered") {
  // Clients in other processes (agents, over CAF's middleman) draw their tickets from the same
  // ranges as this process's: two waits pending with one ticket must both be answered.
  caf::scoped_actor first{sys}, second{sys};
  const std::uint64_t ticket = std::uint64_t{1} << 40;
  first->send(store_actor, st_wait_atom_v, store_keys{{"first"}}, ticket, std::int64_t{20000});
  second->send(store_actor, st_wait_atom_v, store_keys{{"second"}}, ticket, std::int64_t{20000});
  actor_store setter{sys, store_actor};  // sends after the waits: the actor sees them first
  setter.set("first", "1");
  setter.set("second", "2");
  for (auto* client : {&first, &second}) {
    bool answered = false;
    std::string missing = "?";
    (*client)->receive(
        [&](st_done_atom, std::uint64_t t, const std::string& m) {
          answered = t == ticket;
          missing = m;
        },
        caf::after(std::chrono::seconds(10)) >> [] {});
    CHECK(answered);
    CHECK(missing == "");
  }
}
