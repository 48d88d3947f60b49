#include "collectives/shm/shm_link.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectives/shm/shm_ring.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <functional>

#include "collectives/allreduce.hpp"
#include "collectives/memory_store.hpp"
#include "collectives/testing.hpp"

using namespace troupe::collectives;
using namespace std::chrono_literals;
using namespace troupe::collectives::testing;

namespace {

communicator connect(memory_store& store, int rank, int size, const std::string& prefix,
                     const std::function<void(shm_connect_options&)>& adjust = {}) {
  shm_connect_options o;
  o.rendezvous = &store;
  o.rank = rank;
  o.size = size;
  o.prefix = prefix;
  o.slots = 8192;        // the ring wraps many times over the test
  o.piece_bytes = 4096;  // messages are consumed in several pieces
  o.deadline = deadline_in(10s);
  if (adjust) adjust(o);
  return shm_connect(o);
}

// Three ranks: rank 1 closes once every rank has mapped its segments (a peer that goes away
// mid-operation, not during the connect), rank 0 holds its links open and never joins, and rank
// 2 runs `op`. What each rank ended with.
std::vector<std::string> one_closes_one_silent(const std::string& prefix,
                                               const std::function<void(communicator&)>& op) {
  const int size = 3;
  memory_store store;
  testing::latch done{1};
  testing::latch connected{size};
  return run_ranks(size, [&](int rank) {
    communicator comm = connect(store, rank, size, prefix);
    connected.count_down();
    if (rank == 1) {
      connected.wait_for(10s);
      comm.close();
      return;
    }
    if (rank == 0) {
      done.wait_for(5s);
      return;
    }
    const count_down_on_exit release_rank0{done};
    op(comm);
  });
}

}  // namespace

TEST_CASE("ring allreduce over shared memory sums exactly for 1 to 8 ranks") {
  for (int size = 1; size <= 8; ++size) {
    memory_store store;
    std::vector<std::size_t> bad(static_cast<std::size_t>(size), 99);
    auto errors = run_ranks(size, [&](int rank) {
      communicator comm = connect(store, rank, size, "t" + std::to_string(size));
      std::size_t wrong = 0;
      for (std::size_t count : {0ul, 1ul, 13ul, 10007ul, 100003ul}) {
        for (std::size_t chunk : {std::size_t{64}, std::size_t{16384}, std::size_t{1} << 20}) {
          std::vector<float> data = pattern_data(rank, count);
          auto o = ring_options(comm, data, 20s, chunk);
          o.job = o.generation = 1;
          allreduce(o);
          for (std::size_t i = 0; i < count; ++i) wrong += data[i] != pattern_sum(size, i);
        }
      }
      bad[static_cast<std::size_t>(rank)] = wrong;
    });
    CAPTURE(size);
    CHECK(testing::first_failure(errors, bad) == "");
  }
}

TEST_CASE("shared memory: every algorithm sums exactly through eager buffers and in place alike") {
  // Two eager buffers of 256 bytes: small messages go eager while one is free and are read from
  // the sender in place otherwise, in the same op. A ring-only mesh makes allreduce take the ring.
  struct layout {
    const char* name;
    bool every_pair;
  };
  for (const layout how : {layout{"full mesh", true}, layout{"ring links", false}})
    for (int size : {2, 3, 5, 8}) {
      memory_store store;
      std::vector<std::size_t> bad(static_cast<std::size_t>(size), 0);
      std::vector<int> meshed(static_cast<std::size_t>(size), -1);
      auto errors = run_ranks(size, [&](int rank) {
        communicator comm = connect(store, rank, size, "e", [&](shm_connect_options& o) {
          o.eager_slots = 2;
          o.eager_bytes = 256;
          if (!how.every_pair) o.peers = ring_peers(rank, size);
        });
        meshed[static_cast<std::size_t>(rank)] = fully_connected(comm);
        for (std::size_t count : {1ul, 13ul, 64ul, 65ul, 1000ul, 10007ul, 100003ul}) {
          std::vector<float> data = pattern_data(rank, count);
          auto o = allreduce_in(comm, data, 20s);
          o.one_step_bytes = 4096;  // 1 to 1000 values in one step, 10007 in two, then the ring
          o.two_step_bytes = 65536;
          o.chunk_bytes = 1024;
          allreduce(o);
          for (std::size_t i = 0; i < count; ++i)
            bad[static_cast<std::size_t>(rank)] += data[i] != pattern_sum(size, i);
        }
      });
      CAPTURE(how.name);
      CAPTURE(size);
      CHECK(testing::first_failure(errors, bad) == "");
      // Three ranks are all ring neighbours of each other.
      for (int m : meshed) CHECK(m == (how.every_pair || size <= 3));
    }
}

TEST_CASE("shared memory: a peer that closes mid-operation is named; a silent one times out") {
  double took = 0;
  const auto errors = one_closes_one_silent("dying", [&](communicator& comm) {
    std::vector<float> data(50000, 1.0f);
    timed_allreduce(ring_options(comm, data, 3s), took);
  });
  MESSAGE(errors[2]);
  // Rank 2 receives from rank 1 and sends to rank 0; rank 1 is gone.
  CHECK(errors[2].find("rank 1 (shm:/troupe-") != std::string::npos);
  CHECK(errors[2].find("closed") != std::string::npos);
  CHECK(errors[2].find("timed out") == std::string::npos);  // the close ended it, not the 3 s
  MESSAGE("rank 2 failed after " << took << " s");
}

TEST_CASE(
    "shared memory, direct allreduce: a peer that closes is named while a silent one blocks") {
  // Rank 2 adds the members in rank order, so it waits on the silent rank 0 first; rank 1
  // closes meanwhile, and that must end the op, not the deadline.
  for (std::size_t count : {16ul, 20000ul}) {  // one step, two steps
    const auto errors = one_closes_one_silent("direct-dying", [&](communicator& comm) {
      std::vector<float> data(count, 1.0f);
      allreduce(allreduce_in(comm, data, 3s));
    });
    CAPTURE(count);
    MESSAGE(errors[2]);
    CHECK(errors[2].find("rank 1 (shm:/troupe-") != std::string::npos);
    CHECK(errors[2].find("closed") != std::string::npos);
    CHECK(errors[2].find("timed out") == std::string::npos);
  }
}

TEST_CASE(
    "shm: a segment left by a dead process is removed at the next start; a live one's stays") {
  // A pid that is surely gone: a child that has exited and been reaped.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  const std::string dead = "/troupe-" + std::to_string(child) + "-stale-test";
  const std::string live = "/troupe-" + std::to_string(::getpid()) + "-live-test";
  for (const auto& name : {dead, live}) {
    const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    REQUIRE(fd >= 0);
    ::close(fd);
  }
  CHECK(shm::remove_stale_segments() >= 1);
  CHECK(::shm_open(dead.c_str(), O_RDWR, 0600) < 0);
  const int kept = ::shm_open(live.c_str(), O_RDWR, 0600);
  CHECK(kept >= 0);
  if (kept >= 0) ::close(kept);
  ::shm_unlink(live.c_str());
}
