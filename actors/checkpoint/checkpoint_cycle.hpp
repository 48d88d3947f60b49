#pragma once
// When a job takes a checkpoint and how one capture goes, as a plain class: no CAF, no clock
// of its own (callers pass `now`). The job actor (actors/job/job_checkpoint.cpp) sends the
// messages; checkpoint_cycle.test.cpp drives the cycle with tables.
//
// One capture at a step boundary that is due (checkpoint.every_steps and/or every_seconds, or
// forced at the boundary where an interrupted run stops):
//   IDLE --1--> COLLECTING --2--> WRITING --3--> IDLE
//   1. begin: the job snapshots the step's metadata and asks every part holder (the ps shards)
//      for its copy, before anything of the next step reaches them.
//   2. every part arrived at the captured version: the snapshot goes to the writer.
//      A part at another version (a shard already past the step) drops the capture: --> IDLE.
//   3. the writer answered (durable, or failed: counted and logged).
// The next step computes meanwhile, but the step after the captured one is not completed until
// the capture ended (hold/release): completed steps exceed the newest durable checkpoint by at
// most one interval, and two writes of one job never overlap.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "actors/checkpoint/checkpoint_state.hpp"
#include "core/clock.hpp"
#include "core/config.hpp"

namespace troupe {
struct job_report;
}

namespace troupe::actors {

// What a write's answer carries.
struct write_outcome {
  std::int64_t step = 0;
  std::string path;
  std::int64_t bytes = 0;
  double encode_seconds = 0.0;
  double write_seconds = 0.0;
  std::string error;  // empty: durable
};

class checkpoint_cycle {
 public:
  enum class part_result { ignored, dropped, waiting, complete };

  checkpoint_cycle() = default;
  // `enabled`: a directory and an interval are set and the sync mode can capture.
  checkpoint_cycle(const config::checkpoint_config& c, bool enabled, steady::time_point now);

  bool enabled() const { return enabled_; }
  bool in_flight() const { return in_flight_; }
  // The job resumed from the checkpoint of `step`.
  void resumed(std::int64_t step);
  // At the boundary before step `step`: is a capture due? `force`: whatever the interval (the
  // run stops), if enabled, idle and past the last capture.
  bool due(std::int64_t step, steady::time_point now, bool force = false) const;
  // Edge 1: `snap` (its step set) waits for `parts` parts.
  void begin(std::shared_ptr<job_snapshot> snap, int parts, steady::time_point now);
  // One part holder's copy. `log` gets a line when the capture is dropped.
  part_result on_part(std::int64_t step, std::int64_t version, std::int32_t holder,
                      std::shared_ptr<const ckpt_shard_part> part, std::string& log);
  // After on_part returned complete: the snapshot to write.
  std::shared_ptr<job_snapshot> take_snapshot() { return std::move(pending_); }
  // Edge 3. Returns the line to log; nothing when the answer is not the capture in flight's.
  std::optional<std::string> on_written(const write_outcome& w, steady::time_point now);
  // While a capture is in flight, `then` waits for its end (true); else false and nothing waits.
  bool hold(std::function<void()> then, steady::time_point now);
  // Ends the capture in flight; returns what waited for it (empty when nothing did).
  std::function<void()> release(steady::time_point now);

  void fill_report(job_report& r) const;

 private:
  config::checkpoint_config config_;
  bool enabled_ = false;
  std::int64_t last_step_ = 0;  // step of the last capture (or of the checkpoint resumed from)
  steady::time_point last_time_ = steady::now();
  bool in_flight_ = false;
  std::shared_ptr<job_snapshot> pending_;
  int parts_missing_ = 0;
  steady::time_point capture_t0_ = steady::now();
  std::function<void()> held_;  // what waits for the write: completing a step or evaluating
  steady::time_point hold_t0_ = steady::now();
  // For the report.
  std::int64_t written_ = 0;
  std::int64_t failed_ = 0;
  double write_seconds_total_ = 0.0;
  double write_seconds_max_ = 0.0;
  double hold_seconds_total_ = 0.0;  // time completed steps waited for a write
  std::optional<std::int64_t> resumed_from_;
  std::int64_t durable_step_ = -1;  // newest checkpoint known to be on disk (-1: none)
};

}  // namespace troupe::actors
