// membership: events in, commands out, no actors. Each case is a table of events and what the
// job must do after each.
#include "actors/job/membership.hpp"

#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace {

using troupe::actors::down_event;
using troupe::actors::member_status;
using troupe::actors::membership;

// Three workers: two in group cpu, one in group slow; split weights 2:2:1.
membership three() {
  return membership({"cpu/0", "cpu/1", "slow/0"}, {"cpu", "cpu", "slow"}, 10.0);
}
const std::vector<double> weights{2.0, 2.0, 1.0};

auto grad() {
  return std::make_shared<const std::vector<float>>(4, 1.0f);
}

down_event down(std::int32_t rank, bool restart) {
  down_event e;
  e.rank = rank;
  e.kind = troupe::failure_class::crash;
  e.restart = restart;
  e.reason = "injected kill";
  e.decision = restart ? "crash: restart" : "crash: migrate";
  return e;
}

}  // namespace

TEST_CASE("a step's slices are owed by rank and answered in order") {
  auto m = three();
  m.begin_step(7, {40, 40, 20});
  CHECK(m.pending() == 3);
  CHECK_FALSE(m.accept(3, grad(), 0.1));  // no such rank
  CHECK(m.accept(1, grad(), 0.1));
  CHECK_FALSE(m.accept(1, grad(), 0.1));  // it owes nothing more
  CHECK(m.accept(0, grad(), 0.1));
  CHECK(m.accept(2, grad(), 0.1));
  CHECK(m.pending() == 0);
  // The reduction order is the offset order: 0, 40, 80.
  std::vector<std::int64_t> offsets;
  std::vector<std::int32_t> ranks;
  for (const auto& [off, res] : m.results()) {
    offsets.push_back(off);
    ranks.push_back(res.rank);
  }
  CHECK(offsets == std::vector<std::int64_t>{0, 40, 80});
  CHECK(ranks == std::vector<std::int32_t>{0, 1, 2});
}

TEST_CASE("a lost member's slice is re-planned over the others by weight, same offsets") {
  // rank that fails, restart?, expected re-plan (rank, offset, count) for its 40 samples at 40.
  struct row {
    std::int32_t failed;
    bool restart;
    member_status after;
    std::vector<std::array<std::int64_t, 3>> replan;
  };
  const std::vector<row> table{
      {1, true, member_status::restarting, {{0, 40, 27}, {2, 67, 13}}},
      {1, false, member_status::migrated, {{0, 40, 27}, {2, 67, 13}}},
  };
  for (const auto& t : table) {
    CAPTURE(t.restart);
    auto m = three();
    m.begin_step(3, {40, 40, 20});
    CHECK(m.accept(0, grad(), 0.1));
    const auto c = m.on_down(down(t.failed, t.restart), 1.0, weights);
    CHECK_FALSE(c.fail);
    CHECK(c.new_generation);
    CHECK(c.arm_deadline);
    CHECK(m.status(static_cast<std::size_t>(t.failed)) == t.after);
    REQUIRE(c.replan.size() == t.replan.size());
    for (std::size_t i = 0; i < t.replan.size(); ++i) {
      CHECK(c.replan[i].rank == t.replan[i][0]);
      CHECK(c.replan[i].piece.offset == t.replan[i][1]);
      CHECK(c.replan[i].piece.count == t.replan[i][2]);
    }
    CHECK(c.replan_log == "step 3 re-planned: cpu/0+27 slow/0+13");
    // The step still completes with every sample: rank 0 owes its second slice, rank 2 two.
    CHECK(m.pending() == 3);
    CHECK(m.accept(0, grad(), 0.2));
    CHECK(m.accept(2, grad(), 0.2));
    CHECK(m.accept(2, grad(), 0.2));
    CHECK(m.pending() == 0);
    CHECK(m.results().size() == 4);
    m.step_completed(100, 100, 1.5);
    CHECK(m.report().failures == 1);
    CHECK(m.report().lost_steps == 0);
    REQUIRE(m.report().recovery_ms.size() == 1);
    CHECK(m.report().recovery_ms[0] == doctest::Approx(500.0));
    CHECK(m.report().restarts == (t.restart ? 1 : 0));
    CHECK(m.report().migrations == (t.restart ? 0 : 1));
    CHECK(m.report().recomputed_steps == 1);
    // The counted slices are the step's samples, each once.
    std::int64_t counted = 0;
    for (const auto& [offset, res] : m.results()) counted += res.count;
    CHECK(counted == 100);
  }
}

TEST_CASE("with the canonical reduction's blocks, a lost slice is re-planned in whole blocks") {
  // Blocks of 8: the plan 40 + 40 + 20 (the last block 4 short). Rank 1's 5 blocks at 40 go to
  // ranks 0 and 2 by weight 2:1 (3 and 2 blocks); rank 2's 20 samples (2 blocks and the short
  // one) to rank 0 alone when rank 1 is gone too.
  auto m = three();
  m.set_block(8);
  m.begin_step(3, {40, 40, 20});
  CHECK(m.accept(0, grad(), 0.1));
  const auto c = m.on_down(down(1, false), 1.0, weights);
  REQUIRE(c.replan.size() == 2);
  CHECK(c.replan[0].rank == 0);
  CHECK(c.replan[0].piece.offset == 40);
  CHECK(c.replan[0].piece.count == 24);
  CHECK(c.replan[1].rank == 2);
  CHECK(c.replan[1].piece.offset == 64);
  CHECK(c.replan[1].piece.count == 16);
  const auto d = m.on_down(down(2, false), 1.5, weights);
  // Rank 2's own slice at 80 and its re-planned one at 64: both whole to rank 0.
  REQUIRE(d.replan.size() == 2);
  for (const auto& r : d.replan) {
    CHECK(r.rank == 0);
    CHECK(r.piece.offset % 8 == 0);
  }
  std::int64_t owed = 0;
  for (const auto& r : d.replan) owed += r.piece.count;
  CHECK(owed == 36);
}

TEST_CASE("a member that leaves at a boundary is no failure and owes nothing") {
  auto m = three();
  m.begin_step(5, {40, 40, 20});
  for (std::int32_t r = 0; r < 3; ++r) CHECK(m.accept(r, grad(), 0.1));
  m.step_completed(100, 100, 1.0);
  CHECK(m.leave(2));
  CHECK_FALSE(m.leave(2));  // gone already
  CHECK(m.status(2) == member_status::migrated);
  CHECK(m.member_weights(weights) == std::vector<double>{2.0, 2.0, 0.0});
  // Its agent's end afterwards is not a failure either.
  const auto c = m.on_down(down(2, false), 2.0, weights);
  CHECK_FALSE(c.new_generation);
  m.begin_step(6, {50, 50, 0});
  CHECK(m.pending() == 2);
  CHECK(m.report().failures == 0);
  CHECK(m.report().migrations == 0);
  CHECK(m.report().recomputed_steps == 0);
}

TEST_CASE("a restarted worker joins at the next boundary, or at once when it is alone") {
  auto m = three();
  m.begin_step(1, {40, 40, 20});
  m.on_down(down(1, true), 0.5, weights);
  // Not alone: it waits for the boundary.
  auto c = m.on_restarted_ready(1, weights);
  REQUIRE(c);
  CHECK_FALSE(c->new_generation);
  CHECK(m.status(1) == member_status::joining);
  CHECK_FALSE(m.on_restarted_ready(1, weights));  // not restarting any more
  CHECK(m.join_at_boundary());
  CHECK(m.is_member(1));
  CHECK_FALSE(m.join_at_boundary());

  // Alone: every other rank migrated; the restarted one takes over the step in flight.
  auto a = three();
  a.begin_step(2, {40, 40, 20});
  a.on_down(down(0, false), 0.1, weights);
  a.on_down(down(2, false), 0.2, weights);
  const auto last = a.on_down(down(1, true), 0.3, weights);
  CHECK(last.replan.empty());  // nobody to re-plan to
  CHECK(a.pending() == 4);     // rank 1 held four pieces by then: they wait
  c = a.on_restarted_ready(1, weights);
  REQUIRE(c);
  CHECK(c->new_generation);
  CHECK(a.is_member(1));
  REQUIRE(c->replan.size() == 4);
  for (const auto& s : c->replan) CHECK(s.rank == 1);
}

TEST_CASE("the last worker is restarted instead of migrated, a bounded number of times") {
  auto m = membership({"cpu/0"}, {"cpu"}, 10.0);
  for (int i = 1; i <= troupe::actors::last_worker_restart_limit; ++i) {
    m.begin_step(i, {10});
    const auto c = m.on_down(down(0, false), i, {1.0});
    CHECK_FALSE(c.fail);
    CHECK(c.restart == std::vector<std::int32_t>{0});
    REQUIRE(m.on_restarted_ready(0, {1.0}));
    CHECK(m.is_member(0));
  }
  const auto c = m.on_down(down(0, false), 9.0, {1.0});
  REQUIRE(c.fail);
  CHECK(c.fail->find("no other worker is left") != std::string::npos);
}

TEST_CASE("a deadline names the silent members: hang, or lost-group for a whole group") {
  struct row {
    std::vector<std::int32_t> answered;
    std::vector<std::pair<std::int32_t, std::string>> reported;
  };
  const std::vector<row> table{
      {{0, 1}, {{2, "hang"}}},
      {{0, 2}, {{1, "hang"}}},
      {{2}, {{0, "lost-group"}, {1, "lost-group"}}},
      {{0, 1, 2}, {}},
  };
  for (const auto& t : table) {
    auto m = three();
    m.begin_step(5, {40, 40, 20});
    const auto seq = m.next_deadline_seq();
    for (auto r : t.answered) CHECK(m.accept(r, grad(), 0.1));
    CHECK(m.on_timeout(seq - 1, 2.0).silent.empty());  // a stale deadline
    const auto silent = m.on_timeout(seq, 2.0).silent;
    REQUIRE(silent.size() == t.reported.size());
    for (std::size_t i = 0; i < silent.size(); ++i) {
      CHECK(silent[i].rank == t.reported[i].first);
      CHECK(name_of(silent[i].kind) == t.reported[i].second);
      CHECK(silent[i].reason.find("no answer to step 5") == 0);
    }
    // Reported once: the next deadline of the same dispatch does not name them again.
    CHECK(m.on_timeout(seq, 3.0).silent.empty());
  }
}

TEST_CASE("every member silent and none answered: a stall is waited out, doubling, then named") {
  // Steps of 10 ms measured: the deadline is the 0.5 s floor; the first step's is 10 s.
  auto measured = [] {
    auto m = three();
    for (std::int64_t s = 0; s < 20; ++s) {
      m.begin_step(s, {40, 40, 20});
      for (std::int32_t r = 0; r < 3; ++r) CHECK(m.accept(r, grad(), 0.01));
    }
    REQUIRE(m.deadline_seconds() == 0.5);
    return m;
  };
  auto m = measured();
  m.begin_step(20, {40, 40, 20});
  std::vector<double> waits;
  for (int i = 0; i < 10; ++i) {
    const auto v = m.on_timeout(m.next_deadline_seq(), 1.0);
    if (v.wait_more <= 0) {
      // The step waited the first step's deadline in all: now each is named.
      REQUIRE(v.silent.size() == 3);
      CHECK(v.silent[0].reason == "no answer to step 20 within the 10.000 s deadline");
      break;
    }
    CHECK(v.silent.empty());
    CHECK(v.log.find("step 20: all 3 members silent") == 0);
    waits.push_back(v.wait_more);
  }
  CHECK(waits == std::vector<double>{0.5, 1.0, 2.0, 4.0, 2.0});
  // A new step waits from the floor again.
  auto again = measured();
  again.begin_step(20, {40, 40, 20});
  CHECK(again.on_timeout(again.next_deadline_seq(), 1.0).wait_more == 0.5);
  CHECK(again.on_timeout(again.next_deadline_seq(), 1.5).wait_more == 1.0);
  again.begin_step(21, {40, 40, 20});
  CHECK(again.on_timeout(again.next_deadline_seq(), 2.0).wait_more == 0.5);

  // One member answered: the others are named at the first deadline, as hangs (no stall).
  auto n = measured();
  n.begin_step(20, {40, 40, 20});
  const auto seq = n.next_deadline_seq();
  CHECK(n.accept(2, grad(), 0.01));
  const auto v = n.on_timeout(seq, 1.0);
  CHECK(v.wait_more == 0);
  CHECK(v.silent.size() == 2);

  // One member owes the step alone: its silence is its own.
  auto one = measured();
  one.begin_step(20, {100, 0, 0});
  CHECK(one.on_timeout(one.next_deadline_seq(), 1.0).silent.size() == 1);
}

TEST_CASE("member weights and the member list leave out who is not a member") {
  auto m = three();
  m.begin_step(0, {40, 40, 20});
  m.on_down(down(2, false), 0.0, weights);
  CHECK(m.member_weights(weights) == std::vector<double>{2.0, 2.0, 0.0});
  CHECK(m.member_list() == " cpu/0 cpu/1");
  m.on_down(down(0, false), 0.0, weights);
  m.on_down(down(1, true), 0.0, weights);
  CHECK(m.member_list() == " (none)");
}

TEST_CASE("a device added to a running job waits for its worker, then joins at a boundary") {
  auto m = three();
  m.begin_step(5, {40, 40, 20});
  const auto rank = m.add_rank("late/0", "late");
  CHECK(rank == 3);
  CHECK(m.size() == 4);
  CHECK(m.status(3) == member_status::restarting);
  std::vector<double> w = weights;
  w.push_back(2.0);
  // Not a member yet: no share of the split, and the step in flight does not wait for it.
  CHECK(m.member_weights(w) == std::vector<double>{2.0, 2.0, 1.0, 0.0});
  CHECK(m.pending() == 3);
  const auto ready = m.on_restarted_ready(3, w);
  REQUIRE(ready);
  CHECK(!ready->new_generation);  // the others are members: it waits for the boundary
  REQUIRE(ready->log.size() == 1);
  CHECK(ready->log[0] == "worker late/0 is ready: joins at the next step");
  CHECK(m.status(3) == member_status::joining);
  CHECK(m.join_at_boundary());
  CHECK(m.status(3) == member_status::member);
  CHECK(m.member_weights(w) == w);
  CHECK(m.member_list() == " cpu/0 cpu/1 slow/0 late/0");
  // A later restart of the same rank reads as a restart again.
  m.begin_step(6, {30, 30, 15, 25});
  m.on_down(down(3, true), 1.0, w);
  const auto again = m.on_restarted_ready(3, w);
  REQUIRE(again);
  CHECK(again->log[0] == "worker late/0 restarted: joins at the next step");
}

TEST_CASE("the step deadline never drops below the job's hang floor") {
  // Steps of 10 ms: 4 x their 95th percentile is 40 ms, below either floor.
  for (const double floor : {0.5, 2.5}) {
    membership m({"cpu/0", "cpu/1"}, {"cpu", "cpu"}, 10.0, floor);
    for (std::int64_t s = 0; s < 20; ++s) {
      m.begin_step(s, {8, 8});
      CHECK(m.accept(0, grad(), 0.01));
      CHECK(m.accept(1, grad(), 0.01));
    }
    CHECK(m.deadline_seconds() == floor);
  }
}
