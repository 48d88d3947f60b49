// sync: local without actors: the worker side (ranks are threads calling local_step_apply, as
// detached device_workers do) and the job's averaging schedule, fed with made-up timings.
#include "actors/sync/local_step.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "actors/common/fault_delay.hpp"
#include "actors/sync/replica_testing.hpp"
#include "collectives/testing.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "models/optimizer.hpp"

using namespace troupe;
using namespace troupe::actors;

namespace {

constexpr std::size_t count = 4099;

using workload = testing::replica_workload;
using testing::step_of;

// Unequal slices, and rank 2 idle at step 1.
workload make_workload(int members, int steps) {
  workload w;
  rng r(5);
  for (int s = 0; s < steps; ++s) {
    w.grads.emplace_back();
    w.samples.emplace_back();
    for (int k = 0; k < members; ++k) {
      w.samples.back().push_back(k == 2 && s == 1 ? 0 : 40 - 11 * k);
      std::vector<float> g(count);
      for (auto& v : g) v = static_cast<float>(r.normal()) * 2.0f;
      w.grads.back().push_back(std::move(g));
    }
  }
  return w;
}

std::shared_ptr<allreduce_session> make_session(int members, const std::string& kind) {
  auto s = std::make_shared<allreduce_session>();
  s->members = members;
  s->optimizer.kind = kind;
  s->optimizer.lr = 0.05;
  s->deadline_seconds = 30;
  s->reducer = make_shared_reducer(members);
  return s;
}

// Every rank runs the workload; `period` 0 means sync: allreduce (gradient averaging).
std::vector<std::vector<float>> run(int members, const std::string& kind, const workload& w,
                                    int period) {
  const auto session = make_session(members, kind);
  std::vector<std::vector<float>> params(static_cast<std::size_t>(members),
                                         std::vector<float>(count, 0.25f));
  const auto errors = collectives::testing::run_ranks(members, [&](int rank) {
    local_replica local;
    replica_optimizer opt;
    auto* p = params[static_cast<std::size_t>(rank)].data();
    for (std::size_t s = 0; s < w.grads.size(); ++s) {
      const auto rs = step_of(w, s, rank, p);
      if (period == 0)
        allreduce_and_apply(opt, *session, rs);
      else
        local_step_apply(
            local, *session, rs,
            (s + 1) % static_cast<std::size_t>(period) == 0 || s + 1 == w.grads.size());
    }
  });
  for (const auto& e : errors) CHECK_MESSAGE(e.empty(), e);
  return params;
}

double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    n += double(b[i]) * b[i];
  }
  return std::sqrt(d / n);
}

// period 0: adaptive.
config::job_config job_with(std::int64_t period) {
  config::job_config cfg;
  cfg.optimizer.lr = 0.1;
  cfg.sync.mode = sync_mode::local;
  cfg.sync.period = period;
  cfg.sync.adaptive_period = period == 0;
  return cfg;
}

}  // namespace

TEST_CASE("period 1 with SGD: weighted parameter averaging equals gradient averaging") {
  const auto w = make_workload(3, 12);
  const auto local = run(3, "sgd", w, 1);
  const auto grad_avg = run(3, "sgd", w, 0);
  for (int r = 0; r < 3; ++r) {
    CAPTURE(r);
    // Every replica reads one shared result: bit-identical after an average.
    CHECK(local[static_cast<std::size_t>(r)] == local[0]);
    const double rel = relative_l2(local[static_cast<std::size_t>(r)], grad_avg[0]);
    MESSAGE("relative L2 local(period 1) vs gradient averaging: " << rel);
    CHECK(rel < 1e-5);
  }
}

TEST_CASE("one worker: local SGD is plain SGD (and Adam), whatever the period") {
  const auto w = make_workload(1, 9);
  for (const std::string kind : {"sgd", "adam"}) {
    CAPTURE(kind);
    std::vector<float> plain(count, 0.25f), mean(count);
    models::optimizer_spec spec;
    spec.kind = kind;
    spec.lr = 0.05;
    auto opt = models::make_optimizer(spec, count);
    for (std::size_t s = 0; s < w.grads.size(); ++s) {
      for (std::size_t i = 0; i < count; ++i)
        mean[i] = w.grads[s][0][i] / static_cast<float>(w.samples[s][0]);
      opt->step(plain.data(), mean.data());
    }
    const auto local = run(1, kind, w, 4);
    CHECK(relative_l2(local[0], plain) < 1e-6);
  }
}

TEST_CASE("period 4: replicas drift between averages and agree after the last one") {
  const auto w = make_workload(3, 10);
  const auto local = run(3, "sgd", w, 4);
  const auto grad_avg = run(3, "sgd", w, 0);
  CHECK(local[1] == local[0]);
  CHECK(local[2] == local[0]);
  // Not the synchronous result: the local steps are a different algorithm.
  CHECK(relative_l2(local[0], grad_avg[0]) > 1e-4);
}

TEST_CASE("an average folds in the replicas of lost members, weighted by what they trained") {
  // One member left; the lost rank's replica trained 30 samples since the last average.
  allreduce_session s;
  s.members = 1;
  s.index_of = {0, -1};
  s.optimizer.kind = "sgd";
  s.optimizer.lr = 0.1;
  s.reducer = make_shared_reducer(1);
  auto lost_params = std::make_shared<param_store>(count);
  lost_params->values.assign(count, 3.0f);
  auto lost = std::make_shared<local_replica>();
  lost->samples_since_average = 30;
  s.fold.push_back({lost_params, lost});
  local_replica mine;
  mine.samples_since_average = 50;  // trained before this step
  std::vector<float> params(count, 1.0f), grad(count, 0.0f);
  replica_step rs;
  rs.rank = 0;
  rs.contributed = true;
  rs.grad = grad.data();
  rs.samples = 10;
  rs.params = params.data();
  rs.count = count;
  rs.step = 7;
  local_step_apply(mine, s, rs, true);
  // (1 x 60 + 3 x 30) / 90: its own 60 samples (a zero gradient leaves it at 1) and the lost 30.
  CHECK(params[0] == doctest::Approx(150.0 / 90.0));
  CHECK(params[count - 1] == doctest::Approx(150.0 / 90.0));
  CHECK(mine.stepped == 7);
  CHECK(mine.samples_since_average == 0);
  // An average run again after an aborted one does not step again, and a member other than 0
  // does not fold.
  std::fill(params.begin(), params.end(), 1.0f);
  mine.samples_since_average = 60;
  std::fill(grad.begin(), grad.end(), 100.0f);
  s.index_of = {0, -1};
  local_step_apply(mine, s, rs, true, /*skip_step=*/true);
  CHECK(params[0] == doctest::Approx(150.0 / 90.0));  // no step of the gradient 100
}

TEST_CASE("local_sync: a fixed period averages every N steps and on the last step") {
  local_sync ls(job_with(3));
  CHECK_FALSE(ls.adaptive());
  std::vector<std::int64_t> averaged;
  for (std::int64_t s = 0; s < 10; ++s) {
    const bool avg = ls.averages(s, s == 9);
    if (avg) averaged.push_back(s);
    CHECK_FALSE(ls.on_applied(s, avg, 0.001, 0.001, 1.0));
  }
  CHECK(averaged == std::vector<std::int64_t>{2, 5, 8, 9});
  CHECK(ls.rounds() == 4);
  CHECK(ls.period() == 3);
  REQUIRE(ls.history().size() == 1);
}

TEST_CASE(
    "local_sync adaptive: expensive communication gives a long period that shrinks with "
    "the loss") {
  local_sync_options o;
  o.warmup = 5;
  local_sync ls(job_with(0), o);
  REQUIRE(ls.adaptive());
  std::int64_t s = 0;
  double loss = 2.0;
  // Warm-up: every step averages; 20 ms of communication against 1.25 ms of compute.
  for (; s < 5; ++s) {
    CHECK(ls.averages(s, false));
    const auto line = ls.on_applied(s, true, 0.00125, s == 2 ? 0.5 : 0.020, loss);
    CHECK(line.has_value() == (s == 4));
  }
  // tau_0 = ceil(4 sqrt(20 / 1.25)) = 16 (the 0.5 s outlier is outvoted by the median).
  CHECK(ls.period() == 16);
  REQUIRE(ls.history().size() == 2);
  CHECK(ls.history()[1].step == 5);
  // The loss falls 4x: sqrt(1/4) halves the period (AdaComm), in steps down at interval ends.
  int averages = 0;
  for (; s < 400; ++s) {
    loss = std::max(0.5, loss * 0.99);
    const bool avg = ls.averages(s, false);
    averages += avg;
    ls.on_applied(s, avg, 0.00125, avg ? 0.020 : 0.0002, loss);
  }
  CHECK(ls.period() < 16);
  CHECK(ls.period() >= 8);
  CHECK(ls.history().size() >= 3);
  for (std::size_t k = 2; k < ls.history().size(); ++k)
    CHECK(ls.history()[k].period < ls.history()[k - 1].period);
  CHECK(ls.rounds() == 5 + averages);
  CHECK(averages < (400 - 5) / 8);
}

TEST_CASE("local_sync adaptive: cheap communication keeps averaging every step") {
  local_sync ls(job_with(0));
  for (std::int64_t s = 0; s < 5; ++s) ls.on_applied(s, true, 0.010, 0.0002, 1.0);
  CHECK(ls.period() == 1);  // ceil(4 sqrt(0.02)) = 1
}

TEST_CASE("sync.period must be a positive int or adaptive") {
  CHECK(local_sync(job_with(7)).period() == 7);
  CHECK(local_sync(job_with(0)).period() == 1);  // adaptive: warm-up averages every step
  for (const std::int64_t bad : {std::int64_t{-2}, std::int64_t{99999999999}}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(local_sync(job_with(bad)), input_error);
  }
}

TEST_CASE("delay faults: windows, open ends, overlaps") {
  config::fault_config a;
  a.action = troupe::fault_action::delay;
  a.step = 3;
  a.until_step = 5;
  a.seconds = 0.02;
  config::fault_config b = a;
  b.step = 5;
  b.until_step = -1;
  b.seconds = 0.1;
  config::fault_config slow = a;
  slow.action = troupe::fault_action::slow;
  const std::vector<config::fault_config> fs{a, b, slow};
  CHECK(delay_seconds(fs, 2) == 0.0);
  CHECK(delay_seconds(fs, 3) == doctest::Approx(0.02));
  CHECK(delay_seconds(fs, 5) == doctest::Approx(0.12));
  CHECK(delay_seconds(fs, 1000) == doctest::Approx(0.1));
  CHECK(started_delays(fs, 3) == 0);
  CHECK(started_delays(fs, 4) == 1);
  CHECK(started_delays(fs, 6) == 2);
}
