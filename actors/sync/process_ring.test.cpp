// The process ring (actors/sync/process_ring.hpp) without actors or agents: members are threads
// calling the reducer as device_workers do, and two more threads play the agents, joining the
// ring with the plan their member hands them, over a real transport (shm or ZeroMQ ipc, and
// ZeroMQ tcp on loopback) met through an in-memory store.
#include "actors/sync/process_ring.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "collectives/memory_store.hpp"
#include "collectives/shm/shm_link.hpp"
#include "collectives/testing.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"

using namespace troupe;
using namespace troupe::actors;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t count = 3001;
constexpr int steps = 3;
// Members 0 and 2 are agent members (ring ranks 1 and 2); 1 and 3 compute here.
const std::vector<bool> in_agent{true, false, true, false};

std::vector<float> values(std::uint64_t seed) {
  rng r(seed);
  std::vector<float> v(count);
  for (auto& x : v) x = static_cast<float>(r.normal());
  return v;
}

// Plans handed from a member to its agent thread, one per step.
class plan_box {
 public:
  void put(int member, const ring_plan& p) {
    std::lock_guard<std::mutex> lock(mu_);
    plans_[member].push_back(p);
    cv_.notify_all();
  }
  ring_plan take(int member, std::size_t step) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, 30s, [&] { return plans_[member].size() > step; }))
      throw runtime_failure("no plan for member " + std::to_string(member));
    return plans_[member][step];
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int, std::vector<ring_plan>> plans_;
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Runs `steps` reductions with agent links of kind `ipc` and sync.codec `codec`; checks every
// rank's result.
void check_ring(bool ipc, const std::string& codec = "") {
  auto store = std::make_shared<collectives::memory_store>();
  auto record = std::make_shared<ring_record>();
  const auto reducer = make_process_ring_reducer(
      in_agent, 1, 1, std::string("test/ring/") + (ipc ? "ipc/" : "tcp/") + codec, record, codec);
  REQUIRE(reducer->size() == 4);
  auto abort = std::make_shared<collectives::abort_signal>();
  plan_box box;
  // Gradient sums and weights: the local members' and the agents'. Agent member 2 has no
  // slice in step 1.
  const std::map<int, double> weight{{0, 5}, {1, 3}, {2, 4}, {3, 2}};
  std::map<int, std::vector<float>> grad;
  for (int m = 0; m < 4; ++m) grad[m] = values(10 + static_cast<std::uint64_t>(m));
  const auto weight_in = [&](int m, int step) { return m == 2 && step == 1 ? 0.0 : weight.at(m); };

  std::mutex mu;
  std::map<std::pair<int, int>, std::vector<float>> seen;  // (thread, step) -> result
  std::map<std::pair<int, int>, double> totals;
  const auto errors = collectives::testing::run_ranks(6, [&](int t) {
    if (t < 4) {  // a member
      agent_part part;
      part.endpoint.store = store;
      part.endpoint.ipc = ipc;
      part.endpoint.bind_host = "127.0.0.1";
      part.start = [&box, t](const ring_plan& p) { box.put(t, p); };
      for (int s = 0; s < steps; ++s) {
        reduce_call c;
        c.rank = t;
        c.count = count;
        c.divide_by_total_weight = true;
        c.deadline = steady::now() + 30s;
        c.abort = abort;
        if (!in_agent[static_cast<std::size_t>(t)]) {
          c.data = grad[t].data();
          c.weight = weight.at(t);
        }
        const auto out =
            in_agent[static_cast<std::size_t>(t)] ? reducer->reduce(c, part) : reducer->reduce(c);
        std::lock_guard<std::mutex> lock(mu);
        seen[{t, s}].assign(out.values.begin(), out.values.end());
        totals[{t, s}] = out.total_weight;
      }
      return;
    }
    const int member = t == 4 ? 0 : 2;  // an agent thread
    std::optional<collectives::communicator> ring;
    ring_codec coded;
    if (!codec.empty()) coded.encoding = collectives::make_codec(codec);
    for (int s = 0; s < steps; ++s) {
      const auto p = box.take(member, static_cast<std::size_t>(s));
      // (doctest's checks stay on the main thread: a wrong plan is an error of this rank.)
      if (p.size != 3 || p.rank != (member == 0 ? 1 : 2))
        throw runtime_failure("member " + std::to_string(member) + " got ring rank " +
                              std::to_string(p.rank) + " of " + std::to_string(p.size));
      if (!ring)
        ring = connect_ring(p.transport, p.rank, p.size, p.prefix, *store, "127.0.0.1",
                            steady::now() + 30s);
      std::vector<float> data(count + 1, 0.0f);
      const double w = weight_in(member, s);
      if (w > 0) std::copy(grad[member].begin(), grad[member].end(), data.begin());
      data.back() = static_cast<float>(w);
      const double total = ring_reduce_mean(*ring, p.job, p.generation, data, steady::now() + 30s,
                                            abort, codec.empty() ? nullptr : &coded);
      data.pop_back();
      std::lock_guard<std::mutex> lock(mu);
      seen[{t, s}] = std::move(data);
      totals[{t, s}] = total;
      if (s == steps - 1) ring->close();
    }
  });
  for (const auto& e : errors) CHECK_MESSAGE(e.empty(), e);
  for (int s = 0; s < steps; ++s) {
    CAPTURE(s);
    const double total = 3 + 2 + 5 + (s == 1 ? 0 : 4);
    // Every rank, here and in the "agents", holds the same bits, and they are the mean.
    for (int t = 0; t < 6; ++t) {
      CAPTURE(t);
      CHECK(totals[{t, s}] == total);
      CHECK(same_bits(seen[{t, s}], seen[{0, s}]));
    }
    double worst = 0;
    for (std::size_t i = 0; i < count; ++i) {
      double want = 0;
      for (int m = 0; m < 4; ++m) want += weight_in(m, s) > 0 ? grad[m][i] : 0.0;
      worst = std::max(worst, std::abs(seen[{0, s}][i] - want / total));
    }
    // fp16: each of the three blobs within 2^-11 of its sum; the sums are about 3 at most.
    CHECK(worst < (codec.empty() ? 1e-5 : 3e-3));
    if (!codec.empty()) CHECK(worst > 0);  // it did encode
  }
  std::lock_guard<std::mutex> lock(record->mu);
  CHECK(record->ranks == 3);
  CHECK(record->bytes == (count + 1) * sizeof(float));
  CHECK(record->seconds.size() == static_cast<std::size_t>(steps));
  const std::string here = collectives::cross_memory_attach_allowed() ? "shm" : "ipc";
  CHECK(record->transport == (ipc ? here : "tcp"));
  CHECK(record->codec == codec);
  // fp16: each rank sends the two other blobs of 2 bytes a value and a 16-byte head.
  CHECK(record->sent == (codec.empty() ? 0 : 2 * (2 * count + 16)));
}

}  // namespace

TEST_CASE("the process ring: local sums and the agents' gradients give one mean everywhere") {
  SUBCASE("agents on this host") {
    check_ring(true);
  }
  SUBCASE("an agent on another host (tcp)") {
    check_ring(false);
  }
  SUBCASE("sync.codec fp16: the sums encoded, the count exact") {
    check_ring(true, "fp16");
  }
}

TEST_CASE("a member that reduces against its placement is refused before any wait") {
  const auto reducer = make_process_ring_reducer(in_agent, 1, 1, "test/ring/refused",
                                                 std::make_shared<ring_record>());
  std::vector<float> g(count, 1.0f);
  reduce_call c;
  c.count = count;
  c.data = g.data();
  c.weight = 1;
  c.divide_by_total_weight = true;
  c.deadline = steady::now() + 1s;
  c.rank = 0;  // placed in an agent, reducing as a local member
  CHECK_THROWS_WITH_AS(reducer->reduce(c), doctest::Contains("placed in an agent"),
                       runtime_failure);
  agent_part part;
  c.rank = 1;  // placed here, reducing as an agent member
  CHECK_THROWS_WITH_AS(reducer->reduce(c, part), doctest::Contains("was placed here"),
                       runtime_failure);
  c.rank = 1;
  c.divide_by_total_weight = false;
  CHECK_THROWS_WITH_AS(reducer->reduce(c), doctest::Contains("mean reductions only"),
                       runtime_failure);
  CHECK_THROWS_WITH_AS(make_process_ring_reducer({false, false}, 1, 1, "p", nullptr),
                       doctest::Contains("needs a member in an agent"), runtime_failure);
}
