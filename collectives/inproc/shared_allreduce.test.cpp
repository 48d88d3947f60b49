#include "collectives/inproc/shared_allreduce.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "collectives/allreduce.hpp"
#include "collectives/exact_sums_testing.hpp"
#include "collectives/inproc/inproc_link.hpp"
#include "collectives/testing.hpp"

using namespace troupe::collectives;
using namespace std::chrono_literals;
using namespace troupe::collectives::testing;

namespace {

// Rank `rank`'s call over all of `data` with a 10 s deadline: what the cases start from.
shared_allreduce_options call_of(int rank, const std::vector<float>& data, double weight = 1.0) {
  shared_allreduce_options o;
  o.rank = rank;
  o.data = data.data();
  o.count = data.size();
  o.weight = weight;
  o.deadline = deadline_in(10s);
  return o;
}

// What ranks 0 to `ranks` - 1 of `group` end in, each calling over `count` ones as call_of makes
// it and `adjust` then changes it: the collective_error's text, or "" when the op succeeded.
// Anything else thrown is a bug and leaves the rank's thread.
std::vector<std::string> collective_errors(
    shared_allreduce_group& group, int ranks, std::size_t count,
    const std::function<void(int rank, shared_allreduce_options&)>& adjust) {
  std::vector<std::string> why(static_cast<std::size_t>(ranks));
  run_ranks(ranks, [&](int rank) {
    std::vector<float> data(count, 1.0f);
    auto o = call_of(rank, data);
    adjust(rank, o);
    try {
      group.allreduce(o);
    } catch (const collective_error& e) {
      why[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  return why;
}

}  // namespace

TEST_CASE("shared allreduce sums exactly for 1 to 8 ranks and awkward sizes") {
  check_exact_sums<shared_allreduce_group>(
      {0, 1, 7, 13, 1009, 10007},
      [](shared_allreduce_group& group, int size, std::size_t count, int rank) {
        std::vector<float> data = pattern_data(rank, count);
        auto o = call_of(rank, data);
        const auto first = group.allreduce(o);
        // Two ops in a row: the first result stays valid (two slots alternate).
        o.divide_by_total_weight = true;
        const auto mean = group.allreduce(o);
        std::size_t wrong = first.total_weight == size ? 0 : 1000;
        for (std::size_t i = 0; i < count; ++i) {
          wrong += first.values[i] != pattern_sum(size, i);
          wrong += mean.values[i] != pattern_sum(size, i) / static_cast<float>(size);
        }
        return wrong;
      });
}

TEST_CASE("shared allreduce: max, absent contributions, and the parameter-server float order") {
  const int size = 3;
  const std::size_t count = 4099;
  shared_allreduce_group group{size};
  std::vector<std::vector<float>> in(size, std::vector<float>(count));
  for (int r = 0; r < size; ++r)
    for (std::size_t i = 0; i < count; ++i)
      in[r][i] = 0.1f * static_cast<float>(r + 1) + 1e-3f * static_cast<float>(i % 97) -
                 (r == 1 ? 0.25f : 0.0f);
  std::vector<std::vector<float>> got_max(size), got_mean(size), got_partial(size);
  auto errors = run_ranks(size, [&](int rank) {
    shared_allreduce_options o;
    o.rank = rank;
    o.count = count;
    o.deadline = deadline_in(10s);
    o.data = in[rank].data();
    o.op = reduce_op::max;
    auto mx = group.allreduce(o);
    got_max[rank].assign(mx.values.begin(), mx.values.end());
    o.op = reduce_op::sum;
    o.weight = 10.0 + rank;
    o.divide_by_total_weight = true;
    auto mean = group.allreduce(o);
    got_mean[rank].assign(mean.values.begin(), mean.values.end());
    o.data = rank == 1 ? nullptr : in[rank].data();  // rank 1 has nothing this time
    auto partial = group.allreduce(o);
    got_partial[rank].assign(partial.values.begin(), partial.values.end());
  });
  for (const auto& e : errors) CHECK(e == "");
  std::size_t bad = 0;
  const float total = 33.0f;
  for (std::size_t i = 0; i < count; ++i) {
    const float mx = std::max({in[0][i], in[1][i], in[2][i]});
    const float mean = ((in[0][i] + in[1][i]) + in[2][i]) / total;  // the shard's order
    const float partial = (in[0][i] + in[2][i]) / total;
    for (int r = 0; r < size; ++r)
      bad += got_max[r][i] != mx || got_mean[r][i] != mean || got_partial[r][i] != partial;
  }
  CHECK(bad == 0);
}

TEST_CASE("shared allreduce: an abort in flight fails every waiting rank quickly") {
  const int size = 3;
  shared_allreduce_group group{size};
  auto abort = std::make_shared<abort_signal>();
  std::vector<float> data(1 << 16, 1.0f);
  const auto t0 = std::chrono::steady_clock::now();
  auto errors = run_ranks(size, [&](int rank) {
    if (rank == 2) {
      // Rank 2 never joins; it aborts once the other two are waiting (polled, with a deadline).
      const auto limit = std::chrono::steady_clock::now() + 10s;
      while (group.waiting() < 2 && std::chrono::steady_clock::now() < limit)
        std::this_thread::yield();
      abort->abort("generation bumped");
      return;
    }
    shared_allreduce_options o;
    o.rank = rank;
    o.data = data.data();
    o.count = data.size();
    o.deadline = deadline_in(30s);
    o.abort = abort;
    group.allreduce(o);
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("abort returned after " << seconds << " s");  // the cause is asserted, not the speed
  for (int r = 0; r < 2; ++r) {
    CHECK(errors[static_cast<std::size_t>(r)].find("aborted (generation bumped)") !=
          std::string::npos);
    CHECK(errors[static_cast<std::size_t>(r)].find("rank 2") != std::string::npos);
  }
  CHECK(group.broken());
  // A broken group refuses further work at once.
  shared_allreduce_options o;
  o.deadline = deadline_in(30s);
  CHECK_THROWS_AS(group.allreduce(o), collective_error);
}

TEST_CASE("shared allreduce: a missing rank times out naming it") {
  shared_allreduce_group group{2};
  shared_allreduce_options o;
  o.rank = 0;
  o.deadline = deadline_in(50ms);
  try {
    group.allreduce(o);
    FAIL("no timeout");
  } catch (const collective_error& e) {
    CHECK(e.kind() == failure_kind::timeout);
    CHECK(e.peer().rank == 1);
  }
}

TEST_CASE("ring allreduce with max over in-process links") {
  for (int size : {1, 2, 3, 5}) {
    inproc_hub hub{size};
    const std::size_t count = 1001;
    std::vector<std::size_t> bad(static_cast<std::size_t>(size), 99);
    auto errors = run_ranks(size, [&](int rank) {
      communicator comm = hub.connect(rank);
      std::vector<float> data = pattern_data(rank, count);
      auto o = testing::ring_options(comm, data, 10s, 256);
      o.op = reduce_op::max;
      allreduce(o);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < count; ++i) {
        float mx = pattern(0, i);
        for (int r = 1; r < size; ++r) mx = std::max(mx, pattern(r, i));
        wrong += data[i] != mx;
      }
      bad[static_cast<std::size_t>(rank)] = wrong;
    });
    CAPTURE(size);
    CHECK(testing::first_failure(errors, bad) == "");
  }
}

TEST_CASE("shared allreduce: |result|^2 from the pieces, the same bits on every rank") {
  // Several pieces and a bit (a piece is 16384 floats), so several ranks reduce pieces.
  const int size = 3;
  const std::size_t count = 5 * 16384 + 1001;
  shared_allreduce_group group{size};
  std::vector<double> got(size, -1.0), direct(size, -2.0), plain(size, -3.0);
  auto errors = run_ranks(size, [&](int rank) {
    std::vector<float> data = pattern_data(rank, count);
    auto o = call_of(rank, data, 2.0);
    o.divide_by_total_weight = true;
    o.sq_norm = true;
    const auto r = group.allreduce(o);
    got[static_cast<std::size_t>(rank)] = r.sq_norm;
    double sq = 0.0;
    for (float v : r.values) sq += static_cast<double>(v) * v;
    direct[static_cast<std::size_t>(rank)] = sq;
    o.sq_norm = false;
    plain[static_cast<std::size_t>(rank)] = group.allreduce(o).sq_norm;
  });
  REQUIRE(testing::first_failure(errors, std::vector<std::size_t>(size, 0)) == "");
  CHECK(got[0] > 0.0);
  CHECK(got[0] == doctest::Approx(direct[0]).epsilon(1e-6));
  CHECK(got[1] == got[0]);
  CHECK(got[2] == got[0]);
  CHECK(plain[0] == 0.0);  // not asked for
}

TEST_CASE("shared allreduce: ranks that disagree on the norm fail the op on every rank") {
  const int size = 2;
  shared_allreduce_group group{size};
  const auto why = collective_errors(
      group, size, 16, [](int rank, shared_allreduce_options& o) { o.sq_norm = rank == 0; });
  for (const auto& w : why) CHECK(w.find("disagree") != std::string::npos);
}

TEST_CASE("shared allreduce: a step applied piece by piece, once, or not at all") {
  const int size = 3;
  const std::size_t count = 4 * 16384 + 77;
  shared_allreduce_group group{size};
  std::vector<float> params(count, 10.0f);
  std::vector<int> touched(count, 0);
  int opened = 0;
  const auto call = [&](int rank, const std::vector<float>& data) {
    auto o = call_of(rank, data);
    o.on_open = [&] { ++opened; };  // under the group's lock
    o.on_piece = [&](const float* result, std::size_t lo, std::size_t n) {
      for (std::size_t i = lo; i < lo + n; ++i) {
        params[i] -= result[i];
        ++touched[i];
      }
    };
    group.allreduce(o);
  };
  auto errors = run_ranks(size, [&](int rank) {
    std::vector<float> data(count, static_cast<float>(rank + 1));  // sums to 6
    call(rank, data);
  });
  REQUIRE(testing::first_failure(errors, std::vector<std::size_t>(size, 0)) == "");
  CHECK(opened == 1);
  CHECK(std::all_of(touched.begin(), touched.end(), [](int t) { return t == 1; }));
  CHECK(std::all_of(params.begin(), params.end(), [](float p) { return p == 4.0f; }));

  // A rank that never comes: the others give up at their deadline, and nothing was applied.
  shared_allreduce_group short_one{size};
  const auto why = collective_errors(short_one, 2, count, [&](int, shared_allreduce_options& o) {
    o.weight = 0.0;
    o.deadline = deadline_in(100ms);
    o.on_open = [&] { ++opened; };
    o.on_piece = [&](const float*, std::size_t lo, std::size_t n) {
      for (std::size_t i = lo; i < lo + n; ++i) ++touched[i];
    };
  });
  CHECK(!why[0].empty());
  CHECK(!why[1].empty());
  CHECK(opened == 1);
  CHECK(std::all_of(touched.begin(), touched.end(), [](int t) { return t == 1; }));
}

TEST_CASE("shared allreduce: an on_open that throws fails the op on every rank") {
  const int size = 3;
  shared_allreduce_group group{size};
  const auto why = collective_errors(group, size, 100, [](int, shared_allreduce_options& o) {
    o.on_open = [] { throw troupe::input_error("checkpoint state of 7 values for 100"); };
    o.on_piece = [](const float*, std::size_t, std::size_t) {};
  });
  for (const auto& w : why) CHECK(w.find("checkpoint state of 7 values") != std::string::npos);
}

TEST_CASE("shared allreduce: a list of inputs is summed in its order, whoever holds which") {
  // Five block sums shared by two ranks: the result is ((((b0 + b1) + b2) + b3) + b4) / weight
  // whichever rank passes data, and a list given on one rank only fails the op on both.
  const std::size_t count = 1031;
  std::vector<std::vector<float>> blocks(5, std::vector<float>(count));
  for (std::size_t b = 0; b < blocks.size(); ++b)
    for (std::size_t i = 0; i < count; ++i)
      blocks[b][i] = 1e-3f * static_cast<float>((i * 7 + b * 13) % 101) * (b % 2 ? -1.0f : 3.3f);
  std::vector<const float*> list;
  for (const auto& b : blocks) list.push_back(b.data());
  shared_allreduce_group group{2};
  std::vector<std::vector<float>> got(2);
  auto errors = run_ranks(2, [&](int rank) {
    auto o = call_of(rank, blocks[static_cast<std::size_t>(rank)], rank == 0 ? 3.0 : 2.0);
    o.inputs = &list;
    o.divide_by_total_weight = true;
    const auto r = group.allreduce(o);
    got[static_cast<std::size_t>(rank)].assign(r.values.begin(), r.values.end());
  });
  for (const auto& e : errors) CHECK(e == "");
  std::size_t bad = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const float want =
        ((((blocks[0][i] + blocks[1][i]) + blocks[2][i]) + blocks[3][i]) + blocks[4][i]) / 5.0f;
    bad += got[0][i] != want || got[1][i] != want;
  }
  CHECK(bad == 0);
  shared_allreduce_group mixed{2};
  auto refused = run_ranks(2, [&](int rank) {
    auto o = call_of(rank, blocks[0]);
    if (rank == 0) o.inputs = &list;
    mixed.allreduce(o);
  });
  for (const auto& e : refused) CHECK(e.find("inputs") != std::string::npos);
}
