// The job actor's phases on CAF's deterministic scheduler: what a phase does with a message it
// does not expect, and a drain before RUNNING. The step protocol itself runs end to end
// in tests/ (equivalence, faults, resume); the rules behind it are unit-tested in
// membership.test.cpp and checkpoint_cycle.test.cpp.
#include "actors/job/job.hpp"

#include <doctest/doctest.h>

#include "actors/common/actor_testing.hpp"

#include <memory>
#include <string>
#include <vector>

#include "actors/job/job_state.hpp"

using namespace troupe;
using namespace troupe::actors;

namespace {

struct finished {
  std::vector<msg::job_finished> msgs;
  std::vector<job_report> reports;
};

// Stands in for the task manager: records what the job reports at its end.
caf::behavior fake_task_manager(caf::event_based_actor*, std::shared_ptr<finished> rec) {
  return {
      [=](const msg::job_finished& f, const msg::local_ref<job_report_data>& r) {
        rec->msgs.push_back(f);
        rec->reports.push_back(r->report);
      },
  };
}

struct fixture : testing::deterministic_system {
  std::shared_ptr<finished> rec = std::make_shared<finished>();
  caf::actor tm;
  caf::actor job;

  fixture() {
    tm = sys.spawn(fake_task_manager, rec);
    job_launch launch;
    launch.id = 7;
    launch.cfg.name = "probe";
    launch.cfg.data.dataset = troupe::dataset_kind::synthetic;
    launch.cfg.data.synthetic_samples = 64;
    launch.cfg.batch = 16;
    launch.task_manager = tm;
    launch.step_deadline_seconds = 30.0;
    job = sys.spawn(job_actor, launch);
    sched.run();  // the job asked for its data: it is LOADING
  }
  // Drains the job (it is in a phase before RUNNING, so it ends at once) and returns its report.
  const job_report& cancel() {
    caf::anon_send(job, msg::drain{7, 1});
    sched.run();
    REQUIRE(rec->msgs.size() == 1);
    CHECK(rec->msgs[0].status == troupe::job_status::cancelled);
    return rec->reports.at(0);
  }
  ~fixture() {
    caf::anon_send_exit(job, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(tm, caf::exit_reason::user_shutdown);
    sched.run();
  }
};

}  // namespace

TEST_CASE_FIXTURE(fixture, "a message no phase expects is dropped, and the job goes on") {
  // Late answers of other phases reach a LOADING job: an evaluation, a step's gradient.
  caf::anon_send(job, msg::eval_done{7, 1, 0, 4, 1.0, 3});
  caf::anon_send(job, msg::probe_done{7, 1, 0, 0.001});
  // And its own step deadline, armed in RUNNING, firing after the job left it: CAF's own
  // caf::drop would answer the sender (the job) with an error, which ends the job.
  caf::send_as(job, job, msg::step_timeout{7, 1, 3, 1});
  sched.run();
  CHECK(rec->msgs.empty());
  // The job is alive: a drain still ends it, and nothing was counted as stale (those messages
  // were of no phase, not of an old generation).
  CHECK(cancel().stale_dropped == 0);
}

TEST_CASE_FIXTURE(fixture, "a drain before RUNNING cancels the job at once; a stale one does not") {
  caf::anon_send(job, msg::drain{7, 5});  // another generation: dropped
  sched.run();
  CHECK(rec->msgs.empty());
  const auto& r = cancel();
  CHECK(rec->msgs[0].name == "probe");
  CHECK(r.steps == 0);
  CHECK(r.stale_dropped == 1);
  CHECK(r.sync.mode == troupe::sync_mode::ps);
}

TEST_CASE_FIXTURE(fixture, "a worker failure of a rank the job does not have is ignored") {
  // No workers yet: rank 3 is not this job's, nor is a message of job 8.
  caf::anon_send(job, msg::worker_down{7, 1, 3, failure_class::crash, false, "gone",
                                       failure_policy::restart, "crash: restart"});
  caf::anon_send(job, msg::worker_down{8, 1, 0, failure_class::crash, false, "gone",
                                       failure_policy::restart, "crash: restart"});
  sched.run();
  CHECK(rec->msgs.empty());
  CHECK(cancel().stale_dropped == 0);
}
