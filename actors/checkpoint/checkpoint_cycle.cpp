#include "actors/checkpoint/checkpoint_cycle.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "actors/common/report.hpp"

namespace troupe::actors {
namespace {

double seconds_between(steady::time_point a, steady::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

checkpoint_cycle::checkpoint_cycle(const config::checkpoint_config& c, bool enabled,
                                   steady::time_point now)
    : config_(c), enabled_(enabled), last_time_(now) {}

void checkpoint_cycle::resumed(std::int64_t step) {
  last_step_ = step;
  resumed_from_ = step;
  durable_step_ = step;
}

bool checkpoint_cycle::due(std::int64_t step, steady::time_point now, bool force) const {
  if (!enabled_ || in_flight_ || step <= last_step_) return false;
  if (force) return true;
  const bool by_steps = config_.every_steps > 0 && step - last_step_ >= config_.every_steps;
  const bool by_time =
      config_.every_seconds > 0 && seconds_between(last_time_, now) >= config_.every_seconds;
  return by_steps || by_time;
}

void checkpoint_cycle::begin(std::shared_ptr<job_snapshot> snap, int parts,
                             steady::time_point now) {
  last_step_ = snap->step;
  pending_ = std::move(snap);
  parts_missing_ = parts;
  in_flight_ = true;
  last_time_ = now;
  capture_t0_ = now;
}

checkpoint_cycle::part_result checkpoint_cycle::on_part(std::int64_t step, std::int64_t version,
                                                        std::int32_t holder,
                                                        std::shared_ptr<const ckpt_shard_part> part,
                                                        std::string& log) {
  if (!in_flight_ || !pending_ || step != pending_->step) return part_result::ignored;
  if (version != step || !part) {
    ++failed_;
    log = "checkpoint of step " + std::to_string(step) + " dropped: shard " +
          std::to_string(holder) + " was at version " + std::to_string(version);
    return part_result::dropped;
  }
  pending_->parts.push_back(std::move(part));
  return --parts_missing_ > 0 ? part_result::waiting : part_result::complete;
}

std::optional<std::string> checkpoint_cycle::on_written(const write_outcome& w,
                                                        steady::time_point now) {
  if (!in_flight_ || w.step != last_step_) return std::nullopt;
  const double total_ms = seconds_between(capture_t0_, now) * 1e3;
  if (!w.error.empty()) {
    ++failed_;
    return "checkpoint of step " + std::to_string(w.step) + " FAILED: " + w.error;
  }
  ++written_;
  durable_step_ = w.step;
  write_seconds_total_ += w.write_seconds;
  write_seconds_max_ = std::max(write_seconds_max_, w.write_seconds);
  char buf[160];
  std::snprintf(buf, sizeof buf,
                " (%.2f MB; encode %.1f ms, write+fsync %.1f ms, %.1f ms since the boundary)",
                static_cast<double>(w.bytes) / 1e6, w.encode_seconds * 1e3, w.write_seconds * 1e3,
                total_ms);
  return "checkpoint step " + std::to_string(w.step) + ": " + w.path + buf;
}

bool checkpoint_cycle::hold(std::function<void()> then, steady::time_point now) {
  if (!in_flight_) return false;
  held_ = std::move(then);
  hold_t0_ = now;
  return true;
}

std::function<void()> checkpoint_cycle::release(steady::time_point now) {
  in_flight_ = false;
  pending_.reset();
  if (!held_) return {};
  auto then = std::move(held_);
  held_ = nullptr;
  hold_seconds_total_ += seconds_between(hold_t0_, now);
  return then;
}

void checkpoint_cycle::fill_report(job_report& r) const {
  r.checkpoints.written = written_;
  r.checkpoints.failed = failed_;
  r.checkpoints.last_step = durable_step_;
  r.checkpoints.resumed_from_step = resumed_from_;
  r.checkpoints.write_ms_mean =
      written_ > 0 ? write_seconds_total_ * 1e3 / static_cast<double>(written_) : 0.0;
  r.checkpoints.write_ms_max = write_seconds_max_ * 1e3;
  r.checkpoints.hold_ms = hold_seconds_total_ * 1e3;
}

}  // namespace troupe::actors
