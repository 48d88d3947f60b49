// The worker's side of `sync: allreduce` without actors: ranks are threads calling
// allreduce_and_apply, as detached device_workers do.
#include "actors/sync/allreduce_step.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "actors/sync/replica_testing.hpp"
#include "collectives/inproc/inproc_link.hpp"
#include "collectives/testing.hpp"
#include "core/hash.hpp"
#include "core/rng.hpp"
#include "models/max_adabelief.hpp"
#include "models/optimizer.hpp"

using namespace troupe;
using namespace troupe::actors;
using namespace std::chrono_literals;

namespace {

constexpr int members = 3;
constexpr std::size_t count = 5003;

// Per-rank gradient sums and sample counts of `steps` steps (rank 2 has no slice at step 1).
using workload = testing::replica_workload;
using testing::step_of;

workload make_workload(int steps) {
  workload w;
  rng r(11);
  for (int s = 0; s < steps; ++s) {
    w.grads.emplace_back();
    w.samples.push_back({40, 37, s == 1 ? 0 : 19});
    for (int k = 0; k < members; ++k) {
      std::vector<float> g(count);
      for (auto& v : g) v = static_cast<float>(r.normal()) * 3.0f;
      w.grads.back().push_back(std::move(g));
    }
  }
  return w;
}

// Runs `steps` steps on every rank; returns the replicas' parameters.
std::vector<std::vector<float>> run(const std::shared_ptr<const allreduce_session>& session,
                                    const workload& w, std::vector<std::string>* errors) {
  std::vector<std::vector<float>> params(members, std::vector<float>(count, 0.5f));
  *errors = collectives::testing::run_ranks(members, [&](int rank) {
    replica_optimizer opt;
    for (std::size_t s = 0; s < w.grads.size(); ++s)
      allreduce_and_apply(opt, *session,
                          step_of(w, s, rank, params[static_cast<std::size_t>(rank)].data()));
  });
  return params;
}

std::shared_ptr<allreduce_session> session_for(const std::string& kind, bool distributed,
                                               bool ring) {
  auto s = std::make_shared<allreduce_session>();
  s->members = members;
  s->optimizer.kind = kind;
  s->optimizer.lr = 0.01;
  s->distributed = distributed;
  s->deadline_seconds = 30;
  if (ring) {
    collectives::inproc_hub hub{members};
    std::vector<collectives::communicator> comms;
    for (int r = 0; r < members; ++r) comms.push_back(hub.connect(r));
    s->reducer = make_ring_reducer(std::move(comms), 1, 1);
  } else {
    s->reducer = make_shared_reducer(members);
  }
  return s;
}

std::uint64_t hash(const std::vector<float>& v) {
  return fnv1a64(v.data(), v.size() * sizeof(float));
}

// The parameters after w's steps of one Adam (lr 0.01, from 0.5) fed "sum in rank order, then
// divide": the parameter-server shard's float order.
std::vector<float> reference_adam(const workload& w) {
  models::optimizer_spec spec;
  spec.kind = "adam";
  spec.lr = 0.01;
  auto opt = models::make_optimizer(spec, count);
  std::vector<float> ref(count, 0.5f), mean(count);
  for (std::size_t s = 0; s < w.grads.size(); ++s) {
    const float total = static_cast<float>(w.samples[s][0] + w.samples[s][1] + w.samples[s][2]);
    for (std::size_t i = 0; i < count; ++i) {
      float sum = w.grads[s][0][i] + w.grads[s][1][i];
      mean[i] = w.samples[s][2] > 0 ? (sum + w.grads[s][2][i]) / total : sum / total;
    }
    opt->step(ref.data(), mean.data());
  }
  return ref;
}

}  // namespace

TEST_CASE("replicated optimizer: the shared reducer equals the parameter-server arithmetic") {
  const auto w = make_workload(4);
  std::vector<std::string> errors;
  const auto params = run(session_for("adam", false, false), w, &errors);
  for (const auto& e : errors) CHECK(e == "");
  const auto ref = reference_adam(w);
  for (int r = 0; r < members; ++r) CHECK(hash(params[static_cast<std::size_t>(r)]) == hash(ref));
}

TEST_CASE("the ring reducer keeps replicas identical, close to the shared one") {
  const auto w = make_workload(4);
  std::vector<std::string> errors;
  for (const bool distributed : {false, true}) {
    CAPTURE(distributed);
    const auto ring = run(session_for("max-adabelief", distributed, true), w, &errors);
    for (const auto& e : errors) CHECK(e == "");
    const auto shared = run(session_for("max-adabelief", distributed, false), w, &errors);
    for (const auto& e : errors) CHECK(e == "");
    for (int r = 1; r < members; ++r) {
      CHECK(hash(ring[static_cast<std::size_t>(r)]) == hash(ring[0]));
      CHECK(hash(shared[static_cast<std::size_t>(r)]) == hash(shared[0]));
    }
    double diff = 0, moved = 0;
    for (std::size_t i = 0; i < count; ++i) {
      diff = std::max(diff, std::abs(static_cast<double>(ring[0][i]) - shared[0][i]));
      moved = std::max(moved, std::abs(static_cast<double>(shared[0][i]) - 0.5));
    }
    CHECK(moved > 0.01);  // 4 steps of lr 0.01 moved the parameters
    CHECK(diff < 1e-5);   // only the float summation order differs
  }
}

TEST_CASE("distributed max-adabelief averages m_hat and maxes s_hat across members") {
  // One step from zero moments with equal-size local batches: m_hat_i = g_i, s_hat_i = g_i^2 +
  // eps-ish, so p moves by lr * mean(g) / (sqrt(max(s_hat)) + eps) on every replica.
  auto session = session_for("max-adabelief", true, false);
  workload w;
  w.samples.push_back({1, 1, 1});
  w.grads.push_back({std::vector<float>(count, 1.0f), std::vector<float>(count, 2.0f),
                     std::vector<float>(count, -6.0f)});
  std::vector<std::string> errors;
  const auto params = run(session, w, &errors);
  for (const auto& e : errors) CHECK(e == "");
  // Expected from the pieces of models/max_adabelief.hpp on the same inputs.
  models::optimizer_spec h = session->optimizer;
  std::vector<float> m_avg(1, 0.0f), s_max(1, 0.0f);
  for (float g : {1.0f, 2.0f, -6.0f}) {
    float m = 0, s = 0, sm = 0, mh = 0, sh = 0, p = 0.5f;
    models::max_adabelief::local_moments(h, 1, 1, &p, &g, &m, &s, &sm, &mh, &sh);
    m_avg[0] += mh;
    s_max[0] = std::max(s_max[0], sh);
  }
  m_avg[0] = m_avg[0] / 3.0f;
  float expect = 0.5f;
  models::max_adabelief::apply_update(h, 1, &expect, m_avg.data(), s_max.data());
  for (int r = 0; r < members; ++r) CHECK(params[static_cast<std::size_t>(r)][7] == expect);
  CHECK(expect != 0.5f);
}

TEST_CASE("the job aborts an allreduce in flight: the waiting workers return quickly") {
  config::job_config cfg;
  cfg.optimizer.kind = troupe::optimizer_kind::sgd;
  job_allreduce job{cfg, 60.0};  // a long deadline: only the abort can end the wait
  auto initial = std::make_shared<param_store>(count);
  for (int r = 0; r < members; ++r) job.replica(static_cast<std::size_t>(r), initial);
  job.open_generation(1, 1, std::vector<bool>(members, true));
  const auto session = job.session();
  std::vector<float> grad(count, 1.0f);
  const auto t0 = std::chrono::steady_clock::now();
  auto errors = collectives::testing::run_ranks(members, [&](int rank) {
    if (rank == 2) {
      // The straggler never reduces; the job gives up on the generation once the others wait in it
      // (polled, with a deadline).
      const auto limit = std::chrono::steady_clock::now() + 10s;
      while (session->reducer->waiting() < 2 && std::chrono::steady_clock::now() < limit)
        std::this_thread::yield();
      job.open_generation(1, 2, std::vector<bool>(members - 1, true));  // a bump aborts the old
      return;
    }
    replica_optimizer opt;
    replica_step rs;
    rs.rank = rank;
    rs.contributed = true;
    rs.samples = 4;
    rs.total_samples = 12;
    rs.grad = grad.data();
    std::vector<float> p(count, 0.0f);
    rs.params = p.data();
    rs.count = count;
    allreduce_and_apply(opt, *session, rs);
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("abort returned after " << seconds << " s");
  // The workers returned before their 30 s deadline with the abort as the cause, not a timeout:
  // how fast that is depends on the machine (`troupe bench allreduce` and ctest -L perf).
  for (int r = 0; r < 2; ++r)
    CHECK(errors[static_cast<std::size_t>(r)].find(
              "aborted (generation 2 replaces generation 1)") != std::string::npos);
  CHECK(job.session()->generation == 2);
  CHECK_FALSE(job.session()->abort->aborted());
}

TEST_CASE("a generation with no members: no reducer, and a rank that reduces in it is told") {
  // Every rank out at once (the last member lost while the others restart): the job opens such
  // a generation and waits at the boundary. A group of zero ranks cannot exist, so the session
  // has no reducer; the job failing there was the bug this guards.
  config::job_config cfg;
  cfg.optimizer.kind = troupe::optimizer_kind::sgd;
  job_allreduce job{cfg, 60.0};
  auto initial = std::make_shared<param_store>(count);
  for (int r = 0; r < members; ++r) job.replica(static_cast<std::size_t>(r), initial);
  job.open_generation(1, 1, std::vector<bool>(members, true));
  REQUIRE_NOTHROW(job.open_generation(1, 2, std::vector<bool>(members, false)));
  const auto session = job.session();
  REQUIRE(session);
  CHECK(session->generation == 2);
  CHECK(session->members == 0);
  CHECK_FALSE(session->reducer);
  replica_optimizer opt;
  replica_step rs;
  std::vector<float> grad(count, 1.0f), p(count, 0.0f);
  rs.rank = 1;
  rs.contributed = true;
  rs.samples = 4;
  rs.total_samples = 4;
  rs.grad = grad.data();
  rs.params = p.data();
  rs.count = count;
  CHECK_THROWS_WITH_AS(allreduce_and_apply(opt, *session, rs),
                       "allreduce: generation 2 has no members, yet rank 1 reduces",
                       troupe::runtime_failure);
  // The next generation with members reduces again.
  job.open_generation(1, 3, std::vector<bool>{false, true, false});
  REQUIRE(job.session()->reducer);
  CHECK(job.session()->reducer->size() == 1);
}

TEST_CASE("one replica: every member steps the one store once, with the ps shard's bits") {
  config::job_config cfg;
  cfg.optimizer.kind = troupe::optimizer_kind::adam;
  cfg.optimizer.lr = 0.01;
  job_allreduce job{cfg, 60.0, true};
  auto initial = std::make_shared<param_store>(count);
  std::fill(initial->values.begin(), initial->values.end(), 0.5f);
  for (int r = 0; r < members; ++r)
    CHECK(job.replica(static_cast<std::size_t>(r), initial) == initial);
  const auto opt = job.optimizer(0);
  CHECK(job.optimizer(2) == opt);
  job.open_generation(1, 1, std::vector<bool>(members, true));
  REQUIRE(job.session()->one_replica);
  CHECK(job.one_replica_steps() == 0);

  const auto w = make_workload(4);
  std::vector<double> sq(members, -1.0);
  const auto errors = collectives::testing::run_ranks(members, [&](int rank) {
    for (std::size_t s = 0; s < w.grads.size(); ++s)
      sq[static_cast<std::size_t>(rank)] =
          allreduce_and_apply(*opt, *job.session(), step_of(w, s, rank, initial->values.data()));
  });
  for (const auto& e : errors) CHECK(e == "");
  CHECK(job.one_replica_steps() == 4);
  CHECK(opt->replicated->steps_taken() == 4);  // once per step, not once per member
  CHECK(sq[0] > 0.0);                          // member 0 reports |G_B|^2
  CHECK(sq[1] == 0.0);

  CHECK(hash(initial->values) == hash(reference_adam(w)));
  // A rank brought up to date keeps the one optimizer's state (it already holds it).
  job.copy_replica(0, 2);
  CHECK(job.optimizer(2)->replicated->steps_taken() == 4);
  CHECK(job.check_replicas().empty());
}
