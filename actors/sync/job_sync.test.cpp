// The sync seam without actors: what each mode answers at the job's fixed points. Reductions
// themselves are tested in allreduce_step.test.cpp and local_step.test.cpp, the whole step in
// tests/ (equivalence, allreduce_equivalence, local_sgd).
#include "actors/sync/job_sync.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "actors/common/report.hpp"

using namespace troupe;
using namespace troupe::actors;

namespace {

std::shared_ptr<param_store> store_of(std::vector<float> v) {
  auto s = std::make_shared<param_store>(v.size());
  s->values = std::move(v);
  return s;
}

config::job_config job(std::int64_t period = 1) {
  config::job_config c;
  c.name = "j";
  c.sync.period = period;
  return c;
}

}  // namespace

TEST_CASE("ps: one store for every rank; survives a lost member; checkpoints need shards") {
  auto s = make_ps_sync(job(), 1);
  auto store = store_of({1, 2, 3});
  CHECK(s->params_for(0, store) == store);
  CHECK(s->params_for(2, store) == store);
  CHECK(s->survives_member_loss());
  CHECK(s->regroups_lost_slices());
  CHECK_FALSE(s->recovers_lost_reduction());  // the shards reduce what they were sent
  CHECK(s->grad_norm_from_applied());
  CHECK_FALSE(s->checkpoints());  // no shard was started
  CHECK(s->may_stop_on_time());
  job_report r;
  s->fill_report(r, 12);
  CHECK(r.sync.rounds == 12);
  CHECK(r.sync.period == 1);
}

TEST_CASE("allreduce: a replica per rank, published together, checked at the end") {
  auto s = make_allreduce_sync(job(), 30.0);
  auto store = store_of({1, 2, 3});
  auto r0 = s->params_for(0, store);
  auto r1 = s->params_for(1, store);
  CHECK(r0 == store);
  REQUIRE(r1 != store);
  CHECK(r1->values == store->values);
  // A lost member: while the step computes the survivors take its slices (no replica in an
  // agent); while the members reduce the job recovers from their answers.
  CHECK(s->survives_member_loss());
  CHECK(s->recovers_lost_reduction());
  s->open_generation(nullptr, 1, 1, {{true, true}, {false, false}}, true);
  CHECK(s->regroups_lost_slices());
  // Member 0 sends |G_B|^2 with `applied` (the replicated form reduces the mean gradient).
  CHECK(s->grad_norm_from_applied());
  // A replica in an agent: the agents hold their gradients, so a step that lost a member runs
  // again instead.
  s->open_generation(nullptr, 1, 2, {{true, true}, {false, true}}, false);
  CHECK(s->survives_member_loss());
  CHECK_FALSE(s->regroups_lost_slices());
  auto distributed_loss = job();
  distributed_loss.optimizer.form = optimizer_form::distributed;
  CHECK_FALSE(make_allreduce_sync(distributed_loss, 30.0)->survives_member_loss());
  CHECK_FALSE(make_allreduce_sync(distributed_loss, 30.0)->recovers_lost_reduction());
  // local: the job owns each rank's replica and optimizer state, so a lost member's training
  // joins the next average.
  auto local = make_local_sync(job(2), 30.0);
  CHECK(local->survives_member_loss());
  CHECK(local->regroups_lost_slices());
  CHECK(local->recovers_lost_reduction());
  // A local step reduces no mean gradient: the job reads the sums.
  local->params_for(0, store_of({1, 2, 3}));
  local->open_generation(nullptr, 1, 1, {{true, true}, {false, false}}, true);
  CHECK_FALSE(local->grad_norm_from_applied());
  CHECK(local->local_state_for(1) != nullptr);
  CHECK(local->local_state_for(1) == local->local_state_for(1));
  CHECK(local->local_state_for(0) != local->local_state_for(1));
  CHECK(s->local_state_for(0) == nullptr);
  // Replicas are equal after a step: one member's copy is a checkpoint. The distributed form:
  // the parameters are equal, and every member's moments are captured.
  CHECK(s->checkpoints());
  auto distributed = job();
  distributed.optimizer.form = optimizer_form::distributed;
  CHECK(make_allreduce_sync(distributed, 30.0)->checkpoints());
  // local: after an average the replicas' parameters are one (at_capture_point, below).
  CHECK(make_local_sync(job(2), 30.0)->checkpoints());
  CHECK(s->at_capture_point());
  CHECK_FALSE(s->replica_optimizer_state());
  CHECK_FALSE(s->commit(4, 0.1, 0.1, 1.0));
  CHECK(r0->version.load() == 5);
  CHECK(r1->version.load() == 5);
  CHECK(s->end(nullptr, job_status::completed).empty());
  r1->values[2] = 9.0f;
  const auto why = s->end(nullptr, job_status::completed);
  CHECK(why.find("replica of rank 1 differs") != std::string::npos);
}

TEST_CASE("local: stops on time and checkpoints only after an average; the period decides") {
  auto s = make_local_sync(job(3), 30.0);
  auto store = store_of({1, 2});
  s->params_for(0, store);
  s->open_generation(nullptr, 1, 1, generation_members{{true}, {false}}, true);
  const std::vector<caf::actor> none;  // no workers: nothing is sent
  // Steps 0, 1 train locally; step 2 averages (period 3); `last` forces an average.
  const std::vector<std::pair<bool, bool>> table{
      {false, false}, {false, false}, {false, true}, {false, false}, {true, true}};
  std::int64_t step = 0;
  for (const auto& [last, averages] : table) {
    CAPTURE(step);
    reduce_round round;
    round.cmd.step = step;
    round.workers = &none;
    round.last = last;
    CHECK(s->reduce(nullptr, round) == 0);
    CHECK(s->may_stop_on_time() == averages);
    s->commit(step, 0.01, 0.01, 1.0);
    CHECK(s->at_capture_point() == averages);  // the boundary after step `step`
    ++step;
  }
  job_report r;
  s->fill_report(r, step);
  CHECK(r.sync.period == 3);
  CHECK(r.sync.rounds == 2);
}
