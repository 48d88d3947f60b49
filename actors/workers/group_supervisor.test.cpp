// The group supervisor on CAF's deterministic scheduler, with light stand-in workers: a crash is
// restarted after an exponential backoff (simulated time, no sleeps), the failure past the
// restart intensity escalates to migration, a hang reported by the job releases and stops the
// worker, the job's supervision map picks the policy, and a release cancels pending restarts.
#include "actors/workers/group_supervisor.hpp"

#include <doctest/doctest.h>

#include "actors/common/actor_testing.hpp"

#include <chrono>
#include <memory>

using namespace troupe;
using namespace troupe::actors;
using namespace std::chrono_literals;

namespace {

struct recorded {
  std::vector<msg::worker_down> downs;
  std::vector<caf::actor> workers;  // every incarnation, from its worker_ready
  std::vector<std::shared_ptr<const worker_setup>> setups;  // what each incarnation was given
};

// Stands in for the job: asks for workers, records what comes back.
caf::behavior fake_job(caf::event_based_actor* self, std::shared_ptr<recorded> rec) {
  return {
      [=](const msg::spawn_worker& sw, const msg::local_ref<worker_setup>& setup, caf::actor sup) {
        self->request(sup, caf::infinite, sw, setup).then([](caf::actor&) {});
      },
      [=](const msg::worker_ready&) {
        rec->workers.push_back(caf::actor_cast<caf::actor>(self->current_sender()));
      },
      [=](const msg::worker_down& d) { rec->downs.push_back(d); },
  };
}

caf::behavior fake_worker(caf::event_based_actor* self, caf::actor job, msg::spawn_worker spec) {
  self->send(job, msg::worker_ready{spec.job, spec.generation, spec.rank, 1.0});
  return {[=](msg::finish_atom, const std::string& why) {
    self->quit(troupe::actors::crash_failure(why));
  }};
}

struct fixture : testing::deterministic_system {
  std::shared_ptr<recorded> rec = std::make_shared<recorded>();
  caf::actor job, sup;

  fixture() {
    job = sys.spawn(fake_job, rec);
    worker_factory factory = [r = rec](caf::event_based_actor* s, caf::actor j,
                                       const msg::spawn_worker& spec,
                                       const msg::local_ref<worker_setup>& setup) {
      r->setups.push_back(setup.ptr);
      return s->spawn(fake_worker, j, spec);
    };
    policies::backoff_params b;
    b.base_seconds = 0.05;
    b.factor = 2.0;
    b.jitter = 0.0;  // exact backoffs: 50, 100, 200 ms
    config::group_config g;
    g.name = "cpu";
    sup = sys.spawn(group_supervisor_with, g, factory, b);
    sched.run();
  }
  ~fixture() {
    caf::anon_send(sup, msg::release{9, 1});
    sched.run();
    caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(job, caf::exit_reason::user_shutdown);
    sched.run();
  }

  std::shared_ptr<worker_setup> spawn(
      std::int32_t rank, const std::map<failure_class, failure_policy>& supervision = {}) {
    auto setup = std::make_shared<worker_setup>();
    setup->supervision = policies::policy_table(supervision);
    caf::anon_send(job, msg::spawn_worker{9, 1, rank, rank, "cpu/" + std::to_string(rank)},
                   msg::local_ref<worker_setup>{setup}, sup);
    sched.run();
    return setup;
  }
  // Rank `rank` with the job's restart intensity `limits`.
  void spawn_limited(std::int32_t rank, policies::restart_limits limits) {
    auto setup = std::make_shared<worker_setup>();
    setup->restarts = limits;
    caf::anon_send(job, msg::spawn_worker{9, 1, rank, rank, "cpu/" + std::to_string(rank)},
                   msg::local_ref<worker_setup>{setup}, sup);
    sched.run();
  }
  void crash(const caf::actor& w) {
    caf::anon_send(w, msg::finish_atom_v, std::string("injected kill at step 5"));
    sched.run();
  }
  void advance(caf::timespan d) {
    sched.advance_time(d);
    sched.run();
  }
};

}  // namespace

TEST_CASE_FIXTURE(fixture, "crashes restart with exponential backoff, then escalate to migration") {
  spawn(1);
  REQUIRE(rec->workers.size() == 1);
  const std::vector<caf::timespan> backoffs = {50ms, 100ms, 200ms};
  for (std::size_t k = 0; k < backoffs.size(); ++k) {
    CAPTURE(k);
    crash(rec->workers.back());
    REQUIRE(rec->downs.size() == k + 1);
    CHECK(rec->downs.back().kind == failure_class::crash);
    CHECK(rec->downs.back().action == failure_policy::restart);
    CHECK(rec->downs.back().rank == 1);
    // Not before the backoff...
    advance(backoffs[k] - 1ms);
    CHECK(rec->workers.size() == k + 1);
    // ...and right after it, a new incarnation.
    advance(1ms);
    CHECK(rec->workers.size() == k + 2);
  }
  // Restart R + 1 = 4 within the window: escalate.
  crash(rec->workers.back());
  REQUIRE(rec->downs.size() == 4);
  CHECK(rec->downs.back().action == failure_policy::migrate);
  advance(10s);
  CHECK(rec->workers.size() == 4);
  // The job keeps its last member: it asks for the restart itself.
  caf::anon_send(sup, msg::restart_worker{9, 1, 1});
  sched.run();
  CHECK(rec->workers.size() == 5);
}

TEST_CASE_FIXTURE(fixture,
                  "a worker that trained between failures restarts without a growing backoff") {
  // Faults from outside (an agent killed, stopped, cut off) that keep coming are not a crash
  // loop: an incarnation that computed a slice restarts after the base backoff again.
  spawn_limited(0, {100, 60.0});
  REQUIRE(rec->workers.size() == 1);
  // Crash loop first: two failures with nothing computed, 50 then 100 ms.
  for (const caf::timespan wait : {50ms, 100ms}) {
    crash(rec->workers.back());
    advance(wait - 1ms);
    const auto before = rec->workers.size();
    advance(1ms);
    REQUIRE(rec->workers.size() == before + 1);
  }
  // Then each incarnation computes before it fails: 50 ms every time, where the loop would
  // have waited 200, 400 and 800 ms.
  for (int k = 0; k < 3; ++k) {
    CAPTURE(k);
    REQUIRE(rec->setups.back()->computed);
    CHECK(rec->setups.back()->computed->load() == 0);  // each incarnation counts its own
    rec->setups.back()->computed->fetch_add(1);
    crash(rec->workers.back());
    CHECK(rec->downs.back().action == failure_policy::restart);
    advance(49ms);
    const auto before = rec->workers.size();
    advance(1ms);
    CHECK(rec->workers.size() == before + 1);
  }
  // And a failure with nothing computed after that starts the loop over: 100 ms.
  crash(rec->workers.back());
  advance(99ms);
  const auto before = rec->workers.size();
  advance(1ms);
  CHECK(rec->workers.size() == before + 1);
}

TEST_CASE_FIXTURE(
    fixture,
    "the job's restart intensity is the limit: max_restarts 1 escalates the second crash") {
  spawn_limited(0, {1, 60.0});
  REQUIRE(rec->workers.size() == 1);
  crash(rec->workers.back());
  REQUIRE(rec->downs.size() == 1);
  CHECK(rec->downs.back().action == failure_policy::restart);
  advance(50ms);
  REQUIRE(rec->workers.size() == 2);
  crash(rec->workers.back());
  REQUIRE(rec->downs.size() == 2);
  CHECK(rec->downs.back().action == failure_policy::migrate);
}

TEST_CASE_FIXTURE(fixture, "a restarted worker starts from the job's current share") {
  // The job moved its share on shared devices from the config's 1.0 to 0.25 (a share_update)
  // before the worker crashed: the new incarnation must not go back to 1.0.
  auto setup = spawn(0);
  REQUIRE(rec->setups.size() == 1);
  CHECK(rec->setups[0]->share->load() == 1.0);
  setup->share->store(0.25);
  crash(rec->workers.back());
  advance(50ms);
  REQUIRE(rec->setups.size() == 2);
  CHECK(rec->setups[1] != rec->setups[0]);       // a fresh setup (its own cancel token)...
  CHECK(rec->setups[1]->share->load() == 0.25);  // ...that reads the job's current share
}

TEST_CASE_FIXTURE(fixture, "a hang reported by the job releases, stops and restarts the worker") {
  auto setup = spawn(0);
  REQUIRE(rec->workers.size() == 1);
  caf::anon_send(sup, msg::worker_failed{9, 1, 0, failure_class::hang, "no answer within 0.5 s"});
  sched.run();
  CHECK(setup->cancel->cancelled());  // the hung thread wakes up and quits
  REQUIRE(rec->downs.size() == 1);
  CHECK(rec->downs[0].kind == failure_class::hang);
  CHECK(rec->downs[0].action == failure_policy::restart);
  advance(50ms);
  CHECK(rec->workers.size() == 2);
  // The stopped incarnation's own exit is not a second failure.
  CHECK(rec->downs.size() == 1);
  // A report for a worker that is already gone is ignored.
  caf::anon_send(sup, msg::worker_failed{9, 1, 7, failure_class::hang, "unknown rank"});
  sched.run();
  CHECK(rec->downs.size() == 1);
}

TEST_CASE_FIXTURE(fixture, "the job's supervision map picks the policy per class") {
  spawn(0, {{failure_class::crash, failure_policy::migrate}});
  spawn(1, {{failure_class::crash, failure_policy::fail_job}});
  REQUIRE(rec->workers.size() == 2);
  crash(rec->workers[0]);
  crash(rec->workers[1]);
  REQUIRE(rec->downs.size() == 2);
  CHECK(rec->downs[0].action == failure_policy::migrate);
  CHECK(rec->downs[1].action == failure_policy::fail_job);
  CHECK_FALSE(sched.has_pending_timeout());
  // A device error's default is migrate (policies/supervision.hpp), found from the reason text.
  spawn(2);
  caf::anon_send(rec->workers.back(), msg::finish_atom_v,
                 std::string("CUDA error: illegal access"));
  sched.run();
  REQUIRE(rec->downs.size() == 3);
  CHECK(rec->downs[2].kind == failure_class::device_error);
  CHECK(rec->downs[2].action == failure_policy::migrate);
}

TEST_CASE_FIXTURE(fixture, "a release drops a pending restart") {
  spawn(0);
  crash(rec->workers.back());
  REQUIRE(rec->downs.size() == 1);
  caf::anon_send(sup, msg::release{9, 1});
  sched.run();
  advance(1s);
  CHECK(rec->workers.size() == 1);
}
