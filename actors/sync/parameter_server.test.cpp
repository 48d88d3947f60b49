// The shard's reduction and the stale-generation rule, on CAF's deterministic test scheduler.
#include "actors/sync/parameter_server.hpp"

#include <doctest/doctest.h>

#include "actors/common/actor_testing.hpp"

#include <caf/scoped_actor.hpp>

#include "actors/job/data_distributor.hpp"

using namespace troupe;
using namespace troupe::actors;

namespace {

struct fixture : testing::deterministic_system {
  ~fixture() { sched.run(); }
};

std::shared_ptr<const msg::grad_buffer> buf(std::vector<float> v) {
  return std::make_shared<const msg::grad_buffer>(std::move(v));
}

}  // namespace

TEST_CASE_FIXTURE(fixture, "a shard sums in rank order, divides by the samples, steps once") {
  caf::scoped_actor job{sys, true};
  auto store = std::make_shared<param_store>(6);
  store->values = {1, 2, 3, 4, 5, 6};
  models::optimizer_spec os;
  os.kind = "sgd";
  os.lr = 1.0;
  shard_spec ss;
  ss.job = 7;
  ss.generation = 1;
  ss.shard = 1;
  ss.offset = 2;  // owns values[2..5)
  ss.count = 3;
  ss.params = store;
  ss.optimizer = models::make_optimizer(os, 3);
  ss.job_actor = caf::actor{job.ptr()};
  auto shard = sys.spawn(parameter_server, ss);
  sched.run();

  auto grads = std::make_shared<msg::grad_set>();
  grads->push_back(buf({0, 0, 4, 8, 12, 0}));  // rank 0: a sum over 2 samples
  grads->push_back(buf({0, 0, 4, 0, -4, 0}));  // rank 2: a sum over 2 samples
  msg::local_ref<msg::grad_set> ref{grads};

  // A stale generation and a step from the future are both dropped: nothing changes.
  caf::anon_send(shard, msg::reduce_cmd{7, 0, 0, {0, 2}, 4}, ref);
  caf::anon_send(shard, msg::reduce_cmd{8, 1, 0, {0, 2}, 4}, ref);
  caf::anon_send(shard, msg::reduce_cmd{7, 1, 3, {0, 2}, 4}, ref);
  sched.run();
  CHECK(store->values == std::vector<float>{1, 2, 3, 4, 5, 6});
  bool got = false;
  job->receive([&](const msg::applied&) { got = true; },
               caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK_FALSE(got);

  // The current generation's step 0: mean = (g0 + g2) / 4 over the slice, sgd with lr 1.
  caf::anon_send(shard, msg::reduce_cmd{7, 1, 0, {0, 2}, 4}, ref);
  sched.run();
  CHECK(store->values == std::vector<float>{1, 2, 3 - 2.0f, 4 - 2.0f, 5 - 2.0f, 6});
  job->receive(
      [&](const msg::applied& a) {
        got = true;
        CHECK(a.shard == 1);
        CHECK(a.step == 0);
        CHECK(a.version == 1);
        CHECK(a.generation == 1);
      },
      caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK(got);

  // After a membership change (generation 2), generation-1 reduces are stale.
  caf::anon_send(shard, msg::start_atom_v, msg::generation_id{2});
  caf::anon_send(shard, msg::reduce_cmd{7, 1, 1, {0, 2}, 4}, ref);
  sched.run();
  CHECK(store->values[2] == 1.0f);
  std::int64_t version = -1, dropped = -1;
  auto probe = job->request(shard, std::chrono::seconds(1), msg::query_atom_v);
  sched.run();
  probe.receive(
      [&](std::int64_t v, std::int64_t d) {
        version = v;
        dropped = d;
      },
      [&](caf::error&) {});
  CHECK(version == 1);
  CHECK(dropped == 4);  // wrong generation, wrong job, future step, old generation
  caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(fixture, "the distributor plans by weight and drops stale requests") {
  caf::scoped_actor job{sys, true};
  config::job_config cfg;
  cfg.name = "plan";
  cfg.data.dataset = troupe::dataset_kind::synthetic;
  cfg.data.synthetic_samples = 100;
  cfg.batch = 10;
  cfg.seed = 3;
  auto dist =
      sys.spawn(data_distributor, msg::job_id{4}, msg::generation_id{2}, cfg, std::int64_t{0});
  sched.run();
  auto loaded = job->request(dist, std::chrono::seconds(5), msg::data_atom_v);
  sched.run();
  std::size_t n_train = 0;
  loaded.receive([&](msg::local_ref<data_bundle>& b) { n_train = b->train->n; },
                 [&](caf::error&) {});
  CHECK(n_train == 80);  // 20% held out as the test set

  caf::send_as(caf::actor{job.ptr()}, dist, msg::split_update{4, 1, {1.0}});  // stale: ignored
  caf::send_as(caf::actor{job.ptr()}, dist, msg::split_update{4, 2, {3.0, 1.0}});
  caf::send_as(caf::actor{job.ptr()}, dist, msg::plan_request{4, 1, 0});  // stale: no answer
  caf::send_as(caf::actor{job.ptr()}, dist, msg::plan_request{4, 2, 9});
  sched.run();
  int plans = 0;
  for (int i = 0; i < 2; ++i)
    job->receive(
        [&](const msg::step_plan& p, const msg::local_ref<msg::index_list>& idx) {
          ++plans;
          CHECK(p.step == 9);
          CHECK(p.data_epoch == 1);  // 80 / 10 = 8 steps per pass
          CHECK(p.counts == std::vector<std::int64_t>{8, 2});
          CHECK(idx->size() == 10);
        },
        caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK(plans == 1);
  caf::anon_send_exit(dist, caf::exit_reason::user_shutdown);
}
