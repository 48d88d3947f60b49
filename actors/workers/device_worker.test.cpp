// The device worker on CAF's deterministic scheduler. A job spawns it detached (its own thread,
// so a long compute never blocks a scheduler thread), but nothing in it needs that thread:
// spawned here on the test scheduler, each command is computed when the test runs the
// scheduler, and the answers are checked against the same computation done directly.
#include "actors/workers/device_worker.hpp"

#include <doctest/doctest.h>

#include "actors/common/actor_testing.hpp"

#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "actors/common/specs.hpp"
#include "actors/job/job_data.hpp"
#include "core/rng.hpp"
#include "devices/cpu_device.hpp"
#include "models/model.hpp"

using namespace troupe;
using namespace troupe::actors;

namespace {

constexpr msg::job_id job = 9;
constexpr msg::generation_id generation = 2;
constexpr std::int32_t rank = 1;

// What the job hands a worker: the data, the model, the parameter store (version 0).
std::shared_ptr<worker_setup> make_setup() {
  const auto cfg = testing::small_mlp_job("worker", 2, 500, 32);
  auto setup = std::make_shared<worker_setup>();
  setup->job_name = cfg.name;
  setup->group = "cpu";
  setup->device.name = "cpu/1";
  setup->data = load_job_data(cfg.data, cfg.seed);
  auto model = models::make_model(model_spec_of(cfg.model, *setup->data.train));
  setup->params = std::make_shared<param_store>(model->param_count());
  rng r(cfg.seed);
  model->init_params(setup->params->values.data(), r);
  setup->prototype = std::move(model);
  return setup;
}

struct done_reply {
  msg::step_done done;
  msg::local_ref<msg::grad_buffer> grad;
};

struct fixture : testing::job_stand_in {
  std::shared_ptr<worker_setup> setup = make_setup();
  caf::actor& worker = actor;  // the answers come back to job_actor
  std::optional<msg::worker_ready> ready;

  fixture() {
    worker = sys.spawn(device_worker, caf::actor{job_actor},
                       msg::spawn_worker{job, generation, rank, 1, "cpu/1"},
                       msg::local_ref<worker_setup>{setup});
    sched.run();
    job_actor->receive([&](const msg::worker_ready& r) { ready = r; },
                       caf::after(std::chrono::seconds(0)) >> [] {});
  }

  template <class... Ts>
  void send(Ts&&... xs) {
    job_actor->send(worker, std::forward<Ts>(xs)...);
    sched.run();
  }
  // The step_done the worker answered, or nothing when it dropped the command.
  std::optional<done_reply> done() {
    std::optional<done_reply> out;
    job_actor->receive(
        [&](const msg::step_done& d, const msg::local_ref<msg::grad_buffer>& g) {
          out = done_reply{d, g};
        },
        caf::after(std::chrono::seconds(0)) >> [] {});
    return out;
  }
  msg::compute_cmd cmd(msg::generation_id e, std::int64_t step, std::int64_t version,
                       std::int64_t offset, std::int64_t count) const {
    return msg::compute_cmd{job, e, step, version, rank, offset, count, false};
  }
  // The gradient sum of rows idx[offset, offset + count) at the store's parameters, computed
  // directly on a cpu device.
  std::vector<float> expected_grad(const msg::index_list& idx, std::size_t offset,
                                   std::size_t count) const {
    const auto& d = *setup->data.train;
    const std::size_t f = d.features();
    std::vector<float> x(count * f);
    std::vector<std::int32_t> labels(count);
    for (std::size_t i = 0; i < count; ++i) {
      const auto row = static_cast<std::size_t>(idx[offset + i]);
      std::memcpy(x.data() + i * f, d.row(row), f * sizeof(float));
      labels[i] = d.labels[row];
    }
    models::batch b;
    b.x = x.data();
    b.size = count;
    b.labels = labels.data();
    auto m = setup->prototype->clone();
    std::vector<float> g(m->param_count(), 0.0f);
    devices::cpu_device dev("ref", 1);
    dev.run_step(*m, setup->params->values.data(), b, g.data(), nullptr);
    return g;
  }
  // The worker answered `step` with the gradient sum of rows idx[offset, offset + count).
  void check_slice_done(std::int64_t step, const msg::index_list& idx, std::size_t offset,
                        std::size_t count) {
    const auto r = done();
    REQUIRE(r);
    CHECK(r->done.step == step);
    CHECK(r->done.samples == static_cast<std::int64_t>(count));
    CHECK(*r->grad == expected_grad(idx, offset, count));
  }
};

msg::local_ref<msg::index_list> indices(std::vector<std::int64_t> v) {
  return {std::make_shared<const msg::index_list>(std::move(v))};
}

}  // namespace

TEST_CASE_FIXTURE(fixture, "the worker reports ready, then answers a slice with its gradient sum") {
  REQUIRE(ready);
  CHECK(ready->job == job);
  CHECK(ready->generation == generation);
  CHECK(ready->rank == rank);
  REQUIRE_FALSE(setup->data.train->labels.empty());
  const auto idx = indices({40, 3, 17, 99, 0, 250, 8, 61, 12, 7, 300, 5});
  send(cmd(generation, 0, 0, 2, 8), idx);
  const auto r = done();
  REQUIRE(r);
  CHECK(r->done.job == job);
  CHECK(r->done.generation == generation);
  CHECK(r->done.step == 0);
  CHECK(r->done.rank == rank);
  CHECK(r->done.samples == 8);
  CHECK(r->done.loss_sum > 0.0);
  CHECK(r->done.grad_sq_norm > 0.0);
  REQUIRE(r->grad);
  REQUIRE(r->grad->size() == setup->prototype->param_count());
  // The slice's rows, not the first ones: the same sum computed directly.
  CHECK(*r->grad == expected_grad(*idx, 2, 8));
}

TEST_CASE_FIXTURE(fixture,
                  "a command of an older generation is dropped; a newer generation is followed") {
  const auto idx = indices({1, 2, 3, 4, 5, 6});
  send(cmd(generation - 1, 0, 0, 0, 4), idx);
  CHECK_FALSE(done());
  send(cmd(generation + 1, 0, 0, 0, 4), idx);
  auto r = done();
  REQUIRE(r);
  CHECK(r->done.generation == generation + 1);
  CHECK(r->done.samples == 4);
  // The worker now follows generation + 1: its own old generation is stale too.
  send(cmd(generation, 0, 0, 0, 4), idx);
  CHECK_FALSE(done());
}

TEST_CASE_FIXTURE(fixture, "a slice for the next version is parked until go_step") {
  const auto idx = indices({10, 11, 12, 13, 14});
  send(cmd(generation, 1, 1, 0, 5), idx);  // the store is still at version 0
  CHECK_FALSE(done());
  send(msg::go_step{job, generation, 2});  // another step's go: not this slice
  CHECK_FALSE(done());
  setup->params->publish(1);
  send(msg::go_step{job, generation, 1});
  check_slice_done(1, *idx, 0, 5);
}

TEST_CASE_FIXTURE(fixture, "eval counts the test rows it was given") {
  const auto n = static_cast<std::int64_t>(setup->data.test->n);
  REQUIRE(n >= 10);
  send(msg::eval_cmd{job, generation, 0, rank, 0, n - 3});
  std::optional<msg::eval_done> r;
  job_actor->receive([&](const msg::eval_done& d) { r = d; },
                     caf::after(std::chrono::seconds(0)) >> [] {});
  REQUIRE(r);
  CHECK(r->rank == rank);
  CHECK(r->samples == n - 3);
  CHECK(r->correct >= 0);
  CHECK(r->correct <= n - 3);
  CHECK(r->loss_sum > 0.0);
}

// The interleaving behind a rare wrong model in `sync: allreduce` recovery: a step ran again
// after a member was lost, and the next step's early slice reached the worker before the slices
// of the step that runs again. The slice computed meanwhile must not take the parked one's rows.
TEST_CASE_FIXTURE(fixture, "a slice computed while another waits parked leaves its rows alone") {
  const auto next = indices({10, 11, 12, 13, 14});
  const auto again = indices({200, 201, 202, 203, 204, 205, 206});
  send(cmd(generation, 1, 1, 0, 5), next);  // the store is at version 0: parked
  CHECK_FALSE(done());
  send(cmd(generation, 0, 0, 1, 6), again);  // the step in flight, run again: computed now
  check_slice_done(0, *again, 1, 6);
  setup->params->publish(1);
  send(msg::go_step{job, generation, 1});
  check_slice_done(1, *next, 0, 5);  // the parked slice, with its own rows
}
