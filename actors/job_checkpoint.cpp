#include "actors/job_checkpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "actors/checkpoint_writer.hpp"
#include "actors/job.hpp"
#include "actors/job_data.hpp"
#include "actors/job_messages.hpp"
#include "actors/report.hpp"
#include "core/checkpoint.hpp"
#include "core/error.hpp"

namespace troupe::actors {
namespace {

// How many checkpoints a job keeps: more than one, so that a newest file damaged after it was
// written still has a predecessor.
constexpr std::size_t keep_checkpoints = 3;

std::string job_dir(const std::string& root, const std::string& job) {
  return (std::filesystem::path(root) / job).string();
}

// Ends the capture in flight and runs what waited for it.
void release(job_self self) {
  auto& ck = self->state.ckpt;
  ck.in_flight = false;
  ck.pending.reset();
  if (!ck.held) return;
  auto then = std::move(ck.held);
  ck.held = nullptr;
  ck.hold_seconds_total += seconds_since(ck.hold_t0);
  then();
}

}  // namespace

std::optional<job_snapshot> checkpoint_resume(job_self self, std::size_t param_count) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  st.ckpt.identity = checkpoint_identity(cfg, param_count);
  if (st.launch.resume_dir.empty()) return std::nullopt;
  const checkpoint_store store(job_dir(st.launch.resume_dir, cfg.name), 0);
  load_result found = store.load_newest_valid();
  if (!found.loaded) {
    log(self, "resume: " + found.summary + "; starting fresh");
    return std::nullopt;
  }
  const checkpoint& c = *found.loaded;
  check_belongs(c, cfg.name, st.ckpt.identity);
  job_snapshot snap = from_checkpoint(c);
  const auto spp = step_sampler::steps_per_pass(st.data.train->n, cfg.batch);
  const auto want = position_of(snap.step, spp, cfg.batch, cfg.seed);
  if (want.pass != snap.pass || want.position != snap.position || want.rng != snap.rng)
    throw input_error("--resume: " + c.source + ": its sampler cursor (pass " +
                      std::to_string(snap.pass) + ", position " + std::to_string(snap.position) +
                      ") is not where step " + std::to_string(snap.step) +
                      " starts with this data (pass " + std::to_string(want.pass) + ", position " +
                      std::to_string(want.position) + ")");
  log(self, "resume: " + found.summary);
  return snap;
}

void checkpoint_restore(job_self self, const job_snapshot& snap) {
  auto& st = self->state;
  const auto& params = snap.parts.at(0)->params;
  if (params.size() != st.store->values.size())
    throw input_error("--resume: checkpoint of step " + std::to_string(snap.step) + " has " +
                      std::to_string(params.size()) + " parameters, the model " +
                      std::to_string(st.store->values.size()));
  std::copy(params.begin(), params.end(), st.store->values.begin());
  st.store->version.store(snap.step);
  st.step = snap.step;
  const auto spp = step_sampler::steps_per_pass(st.data.train->n, st.launch.cfg.batch);
  // The pass of the last completed step: begin_step resets the statistics when the next differs.
  st.pass = snap.step > 0 ? (snap.step - 1) / spp : 0;
  st.pass_stats.loss_sum = snap.pass_loss_sum;
  st.pass_stats.samples = static_cast<std::size_t>(snap.pass_samples);
  st.pass_stats.correct = static_cast<std::size_t>(snap.pass_correct);
  st.samples_total = static_cast<std::int64_t>(snap.samples_total);
  st.step_seconds_total = snap.step_seconds_total;
  st.ckpt.last_step = snap.step;
  st.ckpt.resumed_from = snap.step;
  st.ckpt.durable_step = snap.step;
}

void checkpoint_init(job_self self) {
  auto& st = self->state;
  const auto& c = st.launch.cfg.checkpoint;
  st.ckpt.enabled = !c.dir.empty() && (c.every_steps > 0 || c.every_seconds > 0);
  if (!st.ckpt.enabled) return;
  st.ckpt.dir = job_dir(c.dir, st.launch.cfg.name);
  st.ckpt.last_time = steady::now();
  st.ckpt.writer = spawn_detached(self, checkpoint_writer, st.ckpt.dir, keep_checkpoints);
  self->monitor(st.ckpt.writer);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", c.every_seconds);
  log(self, "checkpoints: " + st.ckpt.dir + " every " +
                (c.every_steps > 0 ? std::to_string(c.every_steps) + " steps" : "") +
                (c.every_steps > 0 && c.every_seconds > 0 ? " or " : "") +
                (c.every_seconds > 0 ? std::string(buf) + " s" : "") + ", keeping " +
                std::to_string(keep_checkpoints));
}

void checkpoint_boundary(job_self self) {
  auto& st = self->state;
  auto& ck = st.ckpt;
  const auto& c = st.launch.cfg.checkpoint;
  if (!ck.enabled || ck.in_flight || st.step <= ck.last_step || st.shards.empty()) return;
  const bool by_steps = c.every_steps > 0 && st.step - ck.last_step >= c.every_steps;
  const bool by_time = c.every_seconds > 0 && seconds_since(ck.last_time) >= c.every_seconds;
  if (!by_steps && !by_time) return;
  const auto& cfg = st.launch.cfg;
  auto snap = std::make_shared<job_snapshot>();
  snap->step = st.step;
  snap->job = cfg.name;
  snap->identity = ck.identity;
  const auto pos = position_of(st.step, st.steps_per_pass, cfg.batch, cfg.seed);
  snap->pass = pos.pass;
  snap->position = pos.position;
  snap->rng = pos.rng;
  snap->optimizer_kind = cfg.optimizer.kind;
  snap->pass_loss_sum = st.pass_stats.loss_sum;
  snap->pass_samples = st.pass_stats.samples;
  snap->pass_correct = st.pass_stats.correct;
  snap->samples_total = static_cast<std::uint64_t>(st.samples_total);
  snap->step_seconds_total = st.step_seconds_total;
  ck.pending = std::move(snap);
  ck.parts_missing = static_cast<int>(st.shards.size());
  ck.in_flight = true;
  ck.last_step = st.step;
  ck.last_time = steady::now();
  ck.capture_t0 = ck.last_time;
  msg::ckpt_capture cap{st.gate.job(), st.gate.epoch(), st.step};
  for (auto& s : st.shards) self->send(s, cap);
}

bool checkpoint_hold(job_self self, std::function<void()> then) {
  auto& ck = self->state.ckpt;
  if (!ck.in_flight) return false;
  ck.held = std::move(then);
  ck.hold_t0 = steady::now();
  return true;
}

void checkpoint_part(job_self self, const msg::ckpt_part& m,
                     const msg::local_ref<ckpt_shard_part>& part) {
  auto& st = self->state;
  auto& ck = st.ckpt;
  if (m.job != st.gate.job() || !ck.in_flight || !ck.pending || m.step != ck.pending->step) return;
  ++st.progress;
  if (m.version != m.step || !part) {
    ++ck.failed;
    log(self, "checkpoint of step " + std::to_string(m.step) + " dropped: shard " +
                  std::to_string(m.shard) + " was at version " + std::to_string(m.version));
    release(self);
    return;
  }
  ck.pending->parts.push_back(part.ptr);
  if (--ck.parts_missing > 0) return;
  self->send(ck.writer, msg::ckpt_write{st.gate.job(), st.gate.epoch(), m.step},
             msg::local_ref<job_snapshot>{std::move(ck.pending)});
}

void checkpoint_written(job_self self, const msg::ckpt_written& m) {
  auto& st = self->state;
  auto& ck = st.ckpt;
  if (m.job != st.gate.job() || !ck.in_flight || m.step != ck.last_step) return;
  ++st.progress;
  const double total_ms = seconds_since(ck.capture_t0) * 1e3;
  if (!m.error.empty()) {
    ++ck.failed;
    log(self, "checkpoint of step " + std::to_string(m.step) + " FAILED: " + m.error);
  } else {
    ++ck.written;
    ck.durable_step = m.step;
    ck.write_seconds_total += m.write_seconds;
    ck.write_seconds_max = std::max(ck.write_seconds_max, m.write_seconds);
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  " (%.2f MB; encode %.1f ms, write+fsync %.1f ms, %.1f ms since "
                  "the boundary)",
                  static_cast<double>(m.bytes) / 1e6, m.encode_seconds * 1e3, m.write_seconds * 1e3,
                  total_ms);
    log(self, "checkpoint step " + std::to_string(m.step) + ": " + m.path + buf);
  }
  release(self);
}

void fill_checkpoint_report(job_self self, job_report& r) {
  const auto& ck = self->state.ckpt;
  r.checkpoints.written = ck.written;
  r.checkpoints.failed = ck.failed;
  r.checkpoints.last_step = ck.durable_step;
  r.checkpoints.resumed_from_step = ck.resumed_from;
  r.checkpoints.write_ms_mean =
      ck.written > 0 ? ck.write_seconds_total * 1e3 / static_cast<double>(ck.written) : 0.0;
  r.checkpoints.write_ms_max = ck.write_seconds_max * 1e3;
  r.checkpoints.hold_ms = ck.hold_seconds_total * 1e3;
}

}  // namespace troupe::actors
