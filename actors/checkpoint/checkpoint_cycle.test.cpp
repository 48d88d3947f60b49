// checkpoint_cycle: when a capture is due and how one goes, with a clock the test moves.
#include "actors/checkpoint/checkpoint_cycle.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "actors/common/report.hpp"

namespace {

using troupe::actors::checkpoint_cycle;
using troupe::actors::ckpt_shard_part;
using troupe::actors::job_snapshot;
using troupe::actors::write_outcome;
using part_result = checkpoint_cycle::part_result;

const troupe::steady::time_point t0{};

troupe::steady::time_point at(double seconds) {
  return t0 + std::chrono::duration_cast<troupe::steady::duration>(
                  std::chrono::duration<double>(seconds));
}

std::shared_ptr<job_snapshot> snap(std::int64_t step) {
  auto s = std::make_shared<job_snapshot>();
  s->step = step;
  return s;
}

auto part() {
  return std::make_shared<const ckpt_shard_part>();
}

troupe::config::checkpoint_config every(std::int64_t steps, double seconds) {
  troupe::config::checkpoint_config c;
  c.dir = "unused";
  c.every_steps = steps;
  c.every_seconds = seconds;
  return c;
}

}  // namespace

TEST_CASE("a capture is due by steps, by time, never twice at once, never when disabled") {
  struct row {
    std::int64_t every_steps;
    double every_seconds;
    bool enabled;
    std::int64_t step;
    double now;
    bool due;
  };
  const std::vector<row> table{
      {10, 0, true, 9, 0, false},   {10, 0, true, 10, 0, true},    {10, 0, true, 0, 99, false},
      {0, 5, true, 1, 4.9, false},  {0, 5, true, 1, 5.0, true},    {10, 5, true, 3, 6, true},
      {10, 0, false, 10, 0, false}, {10, 5, false, 99, 99, false},
  };
  for (const auto& t : table) {
    CAPTURE(t.every_steps);
    CAPTURE(t.step);
    checkpoint_cycle c(every(t.every_steps, t.every_seconds), t.enabled, at(0));
    CHECK(c.due(t.step, at(t.now)) == t.due);
  }
  checkpoint_cycle c(every(10, 0), true, at(0));
  c.begin(snap(10), 2, at(1));
  CHECK_FALSE(c.due(20, at(2)));  // one capture at a time
}

TEST_CASE("a capture collects its parts, is written, and releases what waited") {
  checkpoint_cycle c(every(10, 0), true, at(0));
  c.begin(snap(10), 2, at(1));
  std::string line;
  CHECK(c.on_part(9, 9, 0, part(), line) == part_result::ignored);  // another capture's
  CHECK(c.on_part(10, 10, 0, part(), line) == part_result::waiting);
  CHECK(c.on_part(10, 10, 1, part(), line) == part_result::complete);
  const auto s = c.take_snapshot();
  REQUIRE(s);
  CHECK(s->parts.size() == 2);
  // The next step completes only after the write: it waits.
  int ran = 0;
  CHECK(c.hold([&] { ++ran; }, at(1.5)));
  CHECK_FALSE(c.on_written({11, "", 0, 0, 0, ""}, at(2)));  // not this capture's answer
  const auto logged = c.on_written({10, "/x/ckpt-10", 1000000, 0.001, 0.002, ""}, at(2));
  REQUIRE(logged);
  CHECK(logged->find("checkpoint step 10: /x/ckpt-10 (1.00 MB;") == 0);
  auto then = c.release(at(2));
  REQUIRE(then);
  then();
  CHECK(ran == 1);
  CHECK_FALSE(c.in_flight());
  CHECK_FALSE(c.hold([] {}, at(3)));  // nothing in flight: nothing waits
  troupe::job_report r;
  c.fill_report(r);
  CHECK(r.checkpoints.written == 1);
  CHECK(r.checkpoints.last_step == 10);
  CHECK(r.checkpoints.hold_ms == doctest::Approx(500.0));
  CHECK(r.checkpoints.write_ms_max == doctest::Approx(2.0));
}

TEST_CASE("a part at another version drops the capture; a failed write is counted") {
  checkpoint_cycle c(every(5, 0), true, at(0));
  c.begin(snap(5), 2, at(0));
  std::string line;
  CHECK(c.on_part(5, 6, 1, part(), line) == part_result::dropped);
  CHECK(line == "checkpoint of step 5 dropped: shard 1 was at version 6");
  CHECK_FALSE(c.release(at(0)));
  c.begin(snap(10), 1, at(1));
  CHECK(c.on_part(10, 10, 0, part(), line) == part_result::complete);
  const auto logged = c.on_written({10, "", 0, 0, 0, "disk full"}, at(2));
  REQUIRE(logged);
  CHECK(*logged == "checkpoint of step 10 FAILED: disk full");
  c.release(at(2));
  troupe::job_report r;
  c.fill_report(r);
  CHECK(r.checkpoints.failed == 2);
  CHECK(r.checkpoints.written == 0);
  CHECK(r.checkpoints.last_step == -1);
}

TEST_CASE("a resumed job counts from its checkpoint") {
  checkpoint_cycle c(every(10, 0), true, at(0));
  c.resumed(30);
  CHECK_FALSE(c.due(39, at(0)));
  CHECK(c.due(40, at(0)));
  troupe::job_report r;
  c.fill_report(r);
  CHECK(r.checkpoints.resumed_from_step == 30);
  CHECK(r.checkpoints.last_step == 30);
}
