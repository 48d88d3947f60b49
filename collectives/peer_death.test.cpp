// A rank that is a separate process and is killed (SIGKILL: no goodbye, no cleanup) while the
// others wait on it inside an allreduce: the others must get an error naming it, within the
// deadline. The in-process tests close links on purpose; this is the crash the runtime meets.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "collectives/allreduce.hpp"
#include "collectives/shm/shm_link.hpp"
#include "collectives/store_actor.hpp"
#include "collectives/testing.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "collectives/zmq_store.hpp"
#include "core/clock.hpp"

using namespace troupe::collectives;
using namespace std::chrono_literals;

namespace {

constexpr int size = 3;
constexpr int victim = 1;

communicator connect(const std::string& transport, store& rendezvous, int rank) {
  if (transport == "shm") {
    shm_connect_options o;
    o.rendezvous = &rendezvous;
    o.rank = rank;
    o.size = size;
    o.prefix = "death";
    o.deadline = deadline_in(20s);
    return shm_connect(o);
  }
  zmq_connect_options o;
  o.rendezvous = &rendezvous;
  o.rank = rank;
  o.size = size;
  o.scheme = *troupe::parse_name<zmq_scheme>(transport);
  o.prefix = "death";
  o.deadline = deadline_in(20s);
  return zmq_connect(o);
}

// Reads one line from fd, waiting at most `limit`; "" on timeout or EOF.
std::string read_line(int fd, std::chrono::milliseconds limit) {
  std::string line;
  const auto end = troupe::steady::now() + limit;
  while (troupe::steady::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char c = 0;
    if (::read(fd, &c, 1) != 1) return "";
    if (c == '\n') return line;
    line += c;
  }
  return "";
}

// The victim process: rendezvous through the parent's store server, report "connected", then
// hold its links open without ever joining the op, until it is killed.
[[noreturn]] void victim_main(const std::string& transport, int from_parent, int to_parent) {
  try {
    const std::string address = read_line(from_parent, 20000ms);
    remote_store rendezvous{address};
    communicator comm = connect(transport, rendezvous, victim);
    if (::write(to_parent, "c\n", 2) != 2) ::_exit(4);
    for (;;) ::pause();
  } catch (...) {
    ::_exit(3);
  }
}

// `before_deadline`: the transport sees the death itself, so no survivor's error is a timeout.
void killed_peer_case(const std::string& transport, std::chrono::milliseconds op_deadline,
                      bool before_deadline) {
  int down[2], up[2];
  REQUIRE(::pipe(down) == 0);
  REQUIRE(::pipe(up) == 0);
  // Fork before any thread exists in this process (CAF starts its threads below).
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) victim_main(transport, down[0], up[1]);
  ::close(down[0]);
  ::close(up[1]);

  caf::actor_system_config cfg;
  add_store_types(cfg);
  caf::actor_system sys{cfg};
  caf::actor store_actor = spawn_store_actor(sys);
  std::vector<double> took_after_kill(size, -1.0);
  std::vector<std::string> errors;
  {
    store_server server{sys, store_actor};
    const std::string line = server.address() + "\n";
    REQUIRE(::write(down[1], line.data(), line.size()) == static_cast<ssize_t>(line.size()));
    testing::latch connected{size - 1};
    std::atomic<troupe::steady::time_point> killed_at{troupe::steady::time_point::max()};
    errors = testing::run_ranks(size, [&](int rank) {
      if (rank == victim) {
        // The killer: once everyone is connected and the survivors are waiting in the op.
        const bool child_connected = read_line(up[0], 20000ms) == "c";
        connected.wait_for(20s);
        std::this_thread::sleep_for(300ms);  // real processes: the survivors enter the op
        killed_at = troupe::steady::now();
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        if (!child_connected) throw std::runtime_error("the victim never connected");
        return;
      }
      remote_store rendezvous{server.address()};
      communicator comm = connect(transport, rendezvous, rank);
      connected.count_down();
      std::vector<float> data(100000, 1.0f);
      allreduce_options o;
      o.comm = &comm;
      o.data = data;
      o.deadline = troupe::steady::now() + op_deadline;
      try {
        allreduce(o);
      } catch (...) {
        took_after_kill[static_cast<std::size_t>(rank)] =
            std::chrono::duration<double>(troupe::steady::now() - killed_at.load()).count();
        throw;
      }
    });
  }
  caf::anon_send_exit(store_actor, caf::exit_reason::user_shutdown);
  ::close(down[1]);
  ::close(up[0]);

  CHECK(errors[victim] == "");
  for (int rank : {0, 2}) {
    CAPTURE(rank);
    MESSAGE(transport << " rank " << rank << ": " << errors[static_cast<std::size_t>(rank)]);
    CHECK(!errors[static_cast<std::size_t>(rank)].empty());
    MESSAGE("failed " << took_after_kill[static_cast<std::size_t>(rank)] << " s after the kill");
    if (before_deadline)
      CHECK(errors[static_cast<std::size_t>(rank)].find("timed out") == std::string::npos);
  }
  // Rank 2 receives from the victim: its error names it.
  CHECK(errors[2].find("rank 1") != std::string::npos);
}

}  // namespace

TEST_CASE("shared memory: a killed peer process is detected at once, named") {
  // The ring checks that the peer process is alive while it waits: well before the deadline.
  killed_peer_case("shm", 20s, true);
}

TEST_CASE("tcp: a killed peer process fails the others by their deadline, named") {
  // ZeroMQ reconnects silently, so a crash without a goodbye is seen at the deadline.
  killed_peer_case("tcp", 3s, false);
}
