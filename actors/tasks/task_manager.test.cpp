// Scheduling in the task manager, on CAF's deterministic scheduler with fake jobs: a job waits
// while its devices are held and starts when they are released; dependencies order jobs; a
// failed dependency cancels; priorities order the queue.
#include "actors/tasks/task_manager.hpp"

#include <doctest/doctest.h>

#include "actors/common/actor_testing.hpp"

#include <caf/scoped_actor.hpp>

using namespace troupe;
using namespace troupe::actors;

namespace {

struct launched {
  std::vector<job_launch> all;
  std::map<std::string, caf::actor> actors;
};

// A fake job: holds its devices until told (finish_atom, status), then reports like a real one.
caf::behavior fake_job(caf::event_based_actor* self, job_launch launch) {
  return {[=](msg::finish_atom, const std::string& status_name) {
    const auto status = *parse_name<job_status>(status_name);
    auto data = std::make_shared<job_report_data>();
    data->report.name = launch.cfg.name;
    data->report.status = status;
    msg::job_finished f{launch.id, 1, launch.cfg.name, status, "", false};
    self->send(launch.task_manager, f, msg::local_ref<job_report_data>{data});
    self->quit();
  }};
}

struct fixture : testing::deterministic_system {
  std::shared_ptr<launched> log = std::make_shared<launched>();
  caf::actor tm;

  fixture() {
    task_manager_options o;
    o.cluster.groups = {group("cpu", device_kind::cpu, 2), group("slow", device_kind::sim, 1)};
    auto lg = log;
    o.spawner = [lg](caf::event_based_actor* self, job_launch l) {
      auto a = self->spawn(fake_job, l);
      lg->all.push_back(l);
      lg->actors[l.cfg.name] = a;
      return a;
    };
    tm = sys.spawn(task_manager, o);
    sched.run();
  }
  ~fixture() {
    caf::anon_send_exit(tm, caf::exit_reason::user_shutdown);
    sched.run();
  }

  static config::group_config group(std::string name, device_kind device, int count) {
    config::group_config g;
    g.name = std::move(name);
    g.device = device;
    g.count = count;
    return g;
  }
  void submit(std::string name, std::vector<std::string> groups, int priority = 0,
              std::vector<std::string> after = {}) {
    auto req = std::make_shared<job_request>();
    req->config.name = std::move(name);
    req->config.resources = std::move(groups);
    req->config.priority = priority;
    req->config.after = std::move(after);
    caf::anon_send(tm, msg::submit_atom_v, msg::local_ref<job_request>{req});
    sched.run();
  }
  void finish(const std::string& name, const std::string& status = "completed") {
    caf::anon_send(log->actors.at(name), msg::finish_atom_v, status);
    sched.run();
  }
  std::vector<std::string> started() const {
    std::vector<std::string> out;
    for (const auto& l : log->all) out.push_back(l.cfg.name);
    return out;
  }
  run_report wait() {
    caf::scoped_actor self{sys, true};
    auto h = self->request(tm, std::chrono::seconds(1), msg::wait_atom_v);
    sched.run();
    run_report out;
    h.receive([&](msg::local_ref<run_report_data>& r) { out = r->report; }, [&](caf::error&) {});
    return out;
  }
};

using names = std::vector<std::string>;

}  // namespace

TEST_CASE_FIXTURE(fixture, "a job waits for held devices and starts when they are released") {
  submit("a", {"cpu"});
  submit("b", {"cpu"});   // cpu is held by a
  submit("c", {"slow"});  // slow is free: starts at once
  CHECK(started() == names{"a", "c"});
  REQUIRE(log->all[0].slots.size() == 1);
  CHECK(log->all[0].slots[0].devices == std::vector<int>{0, 1});  // every cpu device
  finish("a");
  CHECK(started() == names{"a", "c", "b"});  // a released cpu; b took it
  CHECK(log->all[2].slots[0].devices == std::vector<int>{0, 1});
  finish("b");
  finish("c");
  auto r = wait();
  REQUIRE(r.jobs.size() == 3);
  // The schedule shows b starting only after a completed.
  double a_done = -1, b_start = -1;
  for (const auto& e : r.cluster.schedule) {
    if (e.job == "a" && e.what == "completed") a_done = e.at_s;
    if (e.job == "b" && e.what == "started") b_start = e.at_s;
  }
  CHECK(a_done >= 0);
  CHECK(b_start >= a_done);
}

TEST_CASE_FIXTURE(fixture, "dependencies order jobs; a failed dependency cancels") {
  submit("first", {"cpu"});
  submit("second", {"slow"}, 9, {"first"});  // slow is free, but first has not completed
  submit("third", {"slow"}, 0, {"second"});
  CHECK(started() == names{"first"});
  finish("first");
  CHECK(started() == names{"first", "second"});
  finish("second", "failed");
  auto r = wait();
  REQUIRE(r.jobs.size() == 3);
  CHECK(r.jobs[2].name == "third");
  CHECK(r.jobs[2].status == troupe::job_status::cancelled);
  CHECK(started() == names{"first", "second"});
}

TEST_CASE_FIXTURE(fixture, "priorities order a queue; a job can never start without its group") {
  submit("hold", {});  // every group
  submit("low", {"cpu"}, 0);
  submit("high", {"cpu"}, 5);
  submit("ghost", {"gpu"});  // no such group: bad input, failed before it starts
  CHECK(started() == names{"hold"});
  finish("hold");
  CHECK(started() == names{"hold", "high"});  // high jumped the queue
  finish("high");
  CHECK(started() == names{"hold", "high", "low"});
  finish("low");
  auto r = wait();
  REQUIRE(r.jobs.size() == 4);
  CHECK(r.jobs[0].name == "ghost");
  CHECK(r.jobs[0].status == troupe::job_status::failed);
  CHECK(r.jobs[0].bad_input);
}

TEST_CASE_FIXTURE(fixture, "a job still running when the task manager is stopped is killed") {
  submit("stuck", {"cpu"});  // never told to finish
  REQUIRE(started() == names{"stuck"});
  caf::scoped_actor watcher{sys, true};
  watcher->monitor(log->actors.at("stuck"));
  caf::anon_send_exit(tm, caf::exit_reason::user_shutdown);
  sched.run();
  caf::error reason;
  bool down = false;
  watcher->receive(
      [&](const caf::down_msg& d) {
        down = true;
        reason = d.reason;
      },
      caf::after(std::chrono::seconds(5)) >> [] {});
  REQUIRE(down);
  CHECK(reason == caf::exit_reason::kill);
}
