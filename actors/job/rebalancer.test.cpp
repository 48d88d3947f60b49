// The rebalancer policy actor on CAF's deterministic scheduler, fed fake timings from known
// per-worker time models (no devices, no sleeps): it moves the split toward the equal-finish
// split, settles there without churn, and follows a worker that slows down 3x mid-run.
#include "actors/job/rebalancer.hpp"

#include <doctest/doctest.h>

#include "actors/common/actor_testing.hpp"

#include <memory>

using namespace troupe;
using namespace troupe::actors;

namespace {

struct recorded {
  std::vector<msg::split_decision> updates;
};

// Stands in for the job: records what the rebalancer sends it.
caf::behavior fake_job(caf::event_based_actor*, std::shared_ptr<recorded> rec) {
  return {[rec](const msg::split_decision& u) { rec->updates.push_back(u); }};
}

struct fixture : testing::deterministic_system {
  std::shared_ptr<recorded> rec = std::make_shared<recorded>();
  caf::actor job, reb;
  double noise = 0.03;  // relative amplitude of the deterministic wobble on every timing

  fixture() {
    job = sys.spawn(fake_job, rec);
    reb = sys.spawn(rebalancer_actor, job, msg::job_id{3}, msg::generation_id{1}, std::size_t{3},
                    std::int64_t{1024}, rebalancer_options{});
    sched.run();
  }
  ~fixture() {
    caf::anon_send_exit(reb, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(job, caf::exit_reason::user_shutdown);
    sched.run();
  }

  // Step `step` ran `slices` on workers whose true times are `models` (plus a deterministic
  // +-`noise` wobble, so the fit sees noise); returns the number of decisions it caused.
  std::size_t step(std::int64_t step, const std::vector<std::int64_t>& slices,
                   const std::vector<policies::linear_time>& models,
                   msg::generation_id generation = 1) {
    msg::step_metrics m;
    m.job = 3;
    m.generation = generation;
    m.step = step + 1;  // completed steps
    m.worker_samples = slices;
    for (std::size_t r = 0; r < slices.size(); ++r) {
      const auto phase = (step * 7 + static_cast<std::int64_t>(r) * 3) % 5 - 2;  // -2..2
      const double wobble = 1.0 + noise * static_cast<double>(phase) / 2.0;
      m.worker_compute_seconds.push_back(models[r].at(static_cast<double>(slices[r])) * wobble);
    }
    const auto before = rec->updates.size();
    caf::anon_send(reb, m);
    sched.run();
    return rec->updates.size() - before;
  }
};

std::vector<std::int64_t> slices_of(const msg::split_decision& u) {
  return u.slices;
}

// Speeds 1:2:4 (seconds per sample 4, 2, 1 x 0.1 ms) and a 2 ms fixed cost each.
const std::vector<policies::linear_time> speeds_124 = {{2e-3, 4e-4}, {2e-3, 2e-4}, {2e-3, 1e-4}};

// Plays `steps` steps from `split`; a decision reaches the plans two steps later, as in the job
// (the plan of the next step is prefetched). Returns the split of every step.
std::vector<std::vector<std::int64_t>> play(fixture& f, std::int64_t from, std::int64_t steps,
                                            std::vector<std::int64_t> split,
                                            const std::vector<policies::linear_time>& models) {
  std::vector<std::vector<std::int64_t>> history;
  std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>> in_flight;
  for (std::int64_t s = from; s < from + steps; ++s) {
    for (auto it = in_flight.begin(); it != in_flight.end();)
      if (it->first <= s) {
        split = it->second;
        it = in_flight.erase(it);
      } else {
        ++it;
      }
    history.push_back(split);
    if (f.step(s, split, models) > 0)
      in_flight.emplace_back(s + 2, slices_of(f.rec->updates.back()));
  }
  return history;
}

}  // namespace

TEST_CASE_FIXTURE(fixture, "the rebalancer moves an even split to the equal-finish split") {
  const auto target = policies::equal_finish_split(speeds_124, 1024);
  // Equal finish at 1:2:4 with equal fixed costs: about 1/7, 2/7, 4/7 of the batch.
  CHECK(target[0] == doctest::Approx(1024.0 / 7).epsilon(0.03));
  CHECK(target[2] == doctest::Approx(4096.0 / 7).epsilon(0.03));

  const std::vector<std::int64_t> even = {342, 341, 341};
  // Warm-up: the first step has one observation per worker; no decision yet.
  CHECK(step(0, even, speeds_124) == 0);
  REQUIRE(step(1, even, speeds_124) == 1);
  const auto first = slices_of(rec->updates.back());
  CHECK(first[0] + first[1] + first[2] == 1024);
  // Damped: part of the way, not all of it, and strictly closer.
  CHECK(policies::split_distance(first, target) < policies::split_distance(even, target));
  CHECK(policies::split_distance(first, target) > 0.02);
  CHECK(rec->updates.back().step == 1);
  CHECK(rec->updates.back().reason.find("rebalance") != std::string::npos);

  const auto history = play(*this, 2, 30, first, speeds_124);
  const auto& last = history.back();
  CAPTURE(last[0]);
  CAPTURE(last[1]);
  CAPTURE(last[2]);
  // Converged: within 3% of the samples of the equal-finish split, and the predicted makespan
  // within 5% of the optimum (the hysteresis band).
  CHECK(policies::split_distance(last, target) < 0.03);
  CHECK(policies::predicted_makespan(speeds_124, last) <
        1.05 * policies::predicted_makespan(speeds_124, target));
  // Damping and hysteresis: a handful of decisions, then none while the timings only wobble.
  CHECK(rec->updates.size() <= 8);
  const auto settled = rec->updates.size();
  play(*this, 32, 20, last, speeds_124);
  CHECK(rec->updates.size() == settled);
}

TEST_CASE_FIXTURE(fixture, "after a worker slows down 3x the split re-converges within 20 steps") {
  auto history = play(*this, 0, 30, {342, 341, 341}, speeds_124);
  const auto before = history.back();
  auto slowed = speeds_124;
  slowed[2].c *= 3.0;  // the fastest worker becomes the slowest but one: speeds 1 : 2 : 4/3
  const auto target = policies::equal_finish_split(slowed, 1024);
  REQUIRE(policies::split_distance(before, target) > 0.2);
  const auto after = play(*this, 30, 40, before, slowed);
  // Re-converged (the policy's measure, as `troupe bench hetero` takes it): every split from
  // step k on within 2% of the one it settled on; and that one is within the hysteresis band of
  // the new equal-finish split.
  const auto k = policies::steps_to_reconverge(after, 0.02);
  REQUIRE(k);
  MESSAGE("re-converged in " << *k << " steps to " << after.back()[0] << "/" << after.back()[1]
                             << "/" << after.back()[2] << " (equal finish " << target[0] << "/"
                             << target[1] << "/" << target[2] << ")");
  CHECK(*k <= 20);
  CHECK(policies::split_distance(after.back(), target) < 0.05);
  CHECK(policies::predicted_makespan(slowed, after.back()) <
        1.05 * policies::predicted_makespan(slowed, target));
}

TEST_CASE_FIXTURE(fixture, "with +-15% timing noise the split still settles without churn") {
  noise = 0.15;
  const auto target = policies::equal_finish_split(speeds_124, 1024);
  const auto history = play(*this, 0, 60, {342, 341, 341}, speeds_124);
  const auto k = policies::steps_to_reconverge(history, 0.02);
  REQUIRE(k);
  MESSAGE("settled after " << *k << " steps with " << rec->updates.size() << " decisions");
  CHECK(*k <= 20);
  CHECK(rec->updates.size() <= 10);
  CHECK(policies::predicted_makespan(speeds_124, history.back()) <
        1.08 * policies::predicted_makespan(speeds_124, target));
}

TEST_CASE_FIXTURE(fixture,
                  "timings of an older generation are dropped, a newer generation is followed") {
  const std::vector<std::int64_t> even = {342, 341, 341};
  for (std::int64_t s = 0; s < 5; ++s) CHECK(step(s, even, speeds_124, 0) == 0);
  CHECK(rec->updates.empty());
  // Only the job makes generations: a newer one is a membership change, and the decisions
  // carry it.
  std::size_t decisions = 0;
  for (std::int64_t s = 0; s < 5; ++s) decisions += step(s, even, speeds_124, 2);
  REQUIRE(decisions > 0);
  CHECK(rec->updates.back().generation == 2);
}

TEST_CASE("split_tuner ignores a shortened step and resynchronises with the observed split") {
  split_tuner t(3, 1024);
  // Three equal workers: 1 ms + 0.1 ms per sample.
  auto secs = [](std::vector<std::int64_t> s) {
    std::vector<double> out;
    for (auto b : s) out.push_back(1e-3 + 1e-4 * static_cast<double>(b));
    return out;
  };
  CHECK_FALSE(t.observe(0, {100, 100, 100}, secs({100, 100, 100})));  // sums to 300: observed only
  CHECK(t.models()[0].observations() == 1);
  CHECK(t.intended().empty());
  // Equal workers at an even split: nothing to gain, no decision.
  CHECK_FALSE(t.observe(1, {342, 341, 341}, secs({342, 341, 341})));
  CHECK_FALSE(t.observe(2, {342, 341, 341}, secs({342, 341, 341})));
  CHECK(t.decisions() == 0);
  CHECK(t.intended() == std::vector<std::int64_t>{342, 341, 341});
}

TEST_CASE("split_tuner decides over the members only once a rank leaves the membership") {
  split_tuner t(3, 1000);
  // Worker 0 is twice as fast as 1; worker 2 is out (no slice) from step 6 on.
  auto secs = [](std::vector<std::int64_t> s) {
    return std::vector<double>{1e-4 * static_cast<double>(s[0]), 2e-4 * static_cast<double>(s[1]),
                               s[2] > 0 ? 1e-2 : 0.0};
  };
  for (std::int64_t step = 0; step < 6; ++step)
    t.observe(step, {490, 490, 20}, secs({490, 490, 20}));
  std::optional<policies::rebalance_decision> last;
  for (std::int64_t step = 6; step < 30; ++step) {
    // The job cuts what was decided, over the members: worker 2 always gets nothing.
    auto cut = t.intended().empty() ? std::vector<std::int64_t>{500, 500, 0} : t.intended();
    if (cut[2] != 0) cut = {500, 500, 0};
    auto d = t.observe(step, cut, secs(cut));
    if (d) {
      CHECK(d->slices[2] == 0);  // never handed a share while out
      CHECK(d->reason.find("reset") == std::string::npos);
      last = d;
    }
  }
  REQUIRE(last);
  // Toward 2:1 between the two members.
  CHECK(last->slices[0] > 600);
  CHECK(last->slices[0] + last->slices[1] == 1000);
}

TEST_CASE("split_tuner restarts a worker's model after three misses, not after one") {
  split_tuner t(2, 200);
  for (std::int64_t s = 0; s < 5; ++s) t.observe(s, {100, 100}, {0.010, 0.010});
  CHECK(t.model_resets() == 0);
  // One outlier (3x) is held back, then joins the fit when the next step hits again.
  t.observe(5, {100, 100}, {0.030, 0.010});
  CHECK(t.model_resets() == 0);
  CHECK(t.models()[0].observations() == 5);
  t.observe(6, {100, 100}, {0.010, 0.010});
  CHECK(t.models()[0].observations() == 7);
  // Three in a row: the model restarts from them and predicts the new speed at once.
  t.observe(7, {100, 100}, {0.030, 0.010});
  t.observe(8, {100, 100}, {0.030, 0.010});
  CHECK(t.model_resets() == 0);
  auto d = t.observe(9, {100, 100}, {0.030, 0.010});
  CHECK(t.model_resets() == 1);
  CHECK(t.models()[0].observations() == 3);
  CHECK(t.models()[0].predict(100) == doctest::Approx(0.030));
  // ...and the split moves toward the worker that is now 3x faster.
  REQUIRE(d);
  CHECK(d->slices[0] < 100);
}
