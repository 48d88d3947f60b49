#include "collectives/zmq/zmq_link.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>

#include "collectives/allreduce.hpp"
#include "collectives/broadcast.hpp"
#include "collectives/memory_store.hpp"
#include "collectives/testing.hpp"
#include "core/error.hpp"

using namespace troupe::collectives;
using namespace std::chrono_literals;
using namespace troupe::collectives::testing;

namespace {

communicator connect(memory_store& store, const std::string& scheme, int rank, int size,
                     const std::string& prefix) {
  zmq_connect_options o;
  o.rendezvous = &store;
  o.rank = rank;
  o.size = size;
  o.scheme = *troupe::parse_name<zmq_scheme>(scheme);
  o.prefix = prefix;
  o.deadline = deadline_in(10s);
  return zmq_connect(o);
}

}  // namespace

TEST_CASE("allreduce over ZeroMQ tcp and ipc sums exactly for 1 to 8 ranks, by ring and direct") {
  for (const std::string scheme : {"tcp", "ipc"}) {
    for (int size = 1; size <= 8; ++size) {
      memory_store store;
      std::vector<std::size_t> bad(static_cast<std::size_t>(size), 0);
      auto errors = run_ranks(size, [&](int rank) {
        communicator comm = connect(store, scheme, rank, size, "t");
        for (bool ring : {true, false})  // direct: by size, one step or two (or the ring)
          for (std::size_t count : {0ul, 1ul, 13ul, 10007ul, 300000ul}) {
            std::vector<float> data = pattern_data(rank, count);
            auto o =
                ring ? ring_options(comm, data, 10s, 64 * 1024) : allreduce_in(comm, data, 10s);
            o.job = 3;
            o.generation = 2;
            allreduce(o);
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < count; ++i) wrong += data[i] != pattern_sum(size, i);
            bad[static_cast<std::size_t>(rank)] += wrong;
          }
      });
      CAPTURE(scheme);
      CAPTURE(size);
      CHECK(testing::first_failure(errors, bad) == "");
    }
  }
}

TEST_CASE("a peer that never joins: the others time out naming it, within the deadline") {
  const int size = 3;
  memory_store store;
  std::vector<double> took(size, 0);
  testing::latch others_done{2};
  auto errors = run_ranks(size, [&](int rank) {
    communicator comm = connect(store, "tcp", rank, size, "silent");
    if (rank == 2) {  // connected, then never takes part: a hung process
      others_done.wait_for(5s);
      return;
    }
    const count_down_on_exit done{others_done};
    std::vector<float> ones(100000, 1.0f);
    timed_allreduce(ring_options(comm, ones, 300ms), took[static_cast<std::size_t>(rank)]);
  });
  MESSAGE(errors[0]);
  // Rank 0 waits for its left neighbour, rank 2; rank 1 waits for rank 0, which is stuck.
  CHECK(errors[0].find("timed out") != std::string::npos);
  CHECK(errors[0].find("rank 2 (tcp://127.0.0.1:") != std::string::npos);
  // Rank 1 waits for rank 0: it times out too, or hears rank 0 close after its own timeout.
  CHECK(errors[1].find("rank 0 (tcp://127.0.0.1:") != std::string::npos);
  // Both waited for their deadline; how soon after it they return is the machine's business.
  for (int rank : {0, 1}) CHECK(took[static_cast<std::size_t>(rank)] >= 0.29);
}

TEST_CASE("a rank waiting for a peer that never publishes its end is released by an abort") {
  // The job gave up the generation (or ended) while a rank still waited to meet a peer that
  // will never come: the wait ends at the abort, not at the rendezvous deadline (a minute here,
  // which the test would otherwise wait out and then fail on the message). Raised before the
  // call, the abort is seen at the end of the wait's first slice, as one raised meanwhile is.
  memory_store store;
  auto abort = std::make_shared<abort_signal>();
  abort->abort("generation 3 replaces generation 2");
  zmq_connect_options o;
  o.rendezvous = &store;
  o.rank = 0;
  o.size = 2;  // rank 1 never comes
  o.scheme = zmq_scheme::tcp;
  o.prefix = "never";
  o.deadline = deadline_in(60s);
  o.abort = abort;
  std::string error;
  try {
    zmq_connect(o);
  } catch (const collective_error& e) {
    error = e.what();
    CHECK(e.kind() == failure_kind::aborted);
  }
  CAPTURE(error);
  CHECK(error.find("generation 3 replaces generation 2") != std::string::npos);
  CHECK(error.find("rank 1") != std::string::npos);
}

TEST_CASE("a peer that closes its sockets mid-operation fails the others at once") {
  const int size = 3;
  memory_store store;
  std::vector<double> took(size, 0);
  auto errors = run_ranks(size, [&](int rank) {
    communicator comm = connect(store, "ipc", rank, size, "closing");
    if (rank == 1) {
      comm.close();  // dies before sending anything
      return;
    }
    std::vector<float> ones(10000, 1.0f);
    timed_allreduce(ring_options(comm, ones, 5s), took[static_cast<std::size_t>(rank)]);
  });
  MESSAGE(errors[2]);
  // Rank 2 receives from rank 1: it hears the goodbye and names rank 1 long before 5 s.
  CHECK(errors[2].find("rank 1 (ipc://") != std::string::npos);
  CHECK(errors[2].find("closed") != std::string::npos);
  // "closed", not "timed out": the goodbye ended the wait, not the 5 s deadline.
  CHECK(errors[2].find("timed out") == std::string::npos);
  MESSAGE("rank 2 failed after " << took[2] << " s");
  CHECK(errors[0] != "");  // rank 0 then loses rank 2 or times out; never hangs
}

TEST_CASE("abort from another thread ends a stuck allreduce quickly") {
  const int size = 2;
  memory_store store;
  auto abort = std::make_shared<abort_signal>();
  double took = 0;
  testing::latch rank0_done{1};
  auto errors = run_ranks(size + 1, [&](int rank) {
    if (rank == size) {                    // the job, bumping its generation after 100 ms
      std::this_thread::sleep_for(100ms);  // the time of the abort, not a synchronisation
      abort->abort("generation 8 began");
      return;
    }
    communicator comm = connect(store, "tcp", rank, size, "abort");
    if (rank == 1) {  // never joins
      rank0_done.wait_for(5s);
      return;
    }
    const count_down_on_exit done{rank0_done};
    std::vector<float> data(1000, 1.0f);
    auto o = ring_options(comm, data, 10s);
    o.abort = abort;
    timed_allreduce(o, took);
  });
  MESSAGE(errors[0]);
  CHECK(errors[0].find("aborted (generation 8 began)") != std::string::npos);
  CHECK(errors[0].find("rank 1") != std::string::npos);
  MESSAGE("abort ended the wait after " << took << " s (deadline 10 s)");
}

TEST_CASE("receive_into refuses a payload of another size, an empty one included") {
  for (const std::size_t sent : {0ul, 4ul, 12ul}) {
    CAPTURE(sent);
    memory_store store;
    std::string error;
    run_ranks(2, [&](int rank) {
      communicator comm = connect(store, "ipc", rank, 2, "sizes");
      op_context ctx;
      ctx.deadline = deadline_in(10s);
      message_header h;
      h.op = 1;
      h.bytes = sent;
      if (rank == 0) {
        const std::vector<std::byte> payload(sent, std::byte{7});
        comm.link(1).wait_sent(comm.link(1).post(h, payload.data(), ctx), ctx);
        return;
      }
      std::vector<std::byte> into(8);
      try {
        comm.link(0).receive_into(h, into.data(), into.size(), ctx);
      } catch (const collective_error& e) {
        if (e.kind() == failure_kind::protocol) error = e.what();
      }
    });
    CHECK(error.find("rank 0") != std::string::npos);
  }
}

TEST_CASE("--data-ports: tcp links bind inside the range, and a range with no free port fails") {
  // A range far from the kernel's ephemeral one, wide enough that ports other processes hold
  // are skipped; 3 ranks bind 2 receiving sockets each.
  const std::uint16_t first = 23000 + static_cast<std::uint16_t>(::getpid() % 2000) * 2;
  const port_range range{first, static_cast<std::uint16_t>(first + 40)};
  memory_store store;
  auto errors = run_ranks(3, [&](int rank) {
    zmq_connect_options o;
    meet_at(o, store, rank, 3, "ports", deadline_in(10s));
    o.ports = range;
    communicator comm = zmq_connect(o);
    std::vector<float> data = pattern_data(rank, 100);
    allreduce(allreduce_in(comm, data, 10s));
  });
  CHECK(testing::first_failure(errors, std::vector<std::size_t>(3, 0)) == "");
  int checked = 0;
  for (int from = 0; from < 3; ++from)
    for (int to = 0; to < 3; ++to) {
      if (from == to) continue;
      const auto address =
          store.get("ports/zmq/" + std::to_string(from) + "->" + std::to_string(to));
      REQUIRE(address);
      const auto colon = address->rfind(':', address->find(" curve:"));
      const int port = std::stoi(address->substr(colon + 1));
      CAPTURE(*address);
      CHECK(port >= range.first);
      CHECK(port <= range.last);
      ++checked;
    }
  CHECK(checked == 6);

  // One port for two ranks: the second to bind cannot, and says which range.
  memory_store small;
  auto refused = run_ranks(2, [&](int rank) {
    zmq_connect_options o;
    meet_at(o, small, rank, 2, "full", deadline_in(2s));
    o.ports = {range.first, range.first};
    zmq_connect(o);
  });
  const auto text = refused[0] + refused[1];
  CHECK(text.find("--data-ports " + std::to_string(range.first) + "-" +
                  std::to_string(range.first) + ": every port is taken") != std::string::npos);

  CHECK(parse_port_range("7100-7199", "--data-ports").last == 7199);
  for (const char* bad : {"7100", "7199-7100", "0-10", "1-70000", "a-b", "7100-7199x"})
    CHECK_THROWS_AS(parse_port_range(bad, "--data-ports"), troupe::input_error);
}
