#include "actors/job/job_checkpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "actors/checkpoint/checkpoint_writer.hpp"
#include "actors/job/job_data.hpp"
#include "actors/job/job_messages.hpp"
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
  if (auto then = self->state.ckpt.cycle.release(steady::now())) then();
}

}  // namespace

std::optional<job_snapshot> checkpoint_resume(job_self self, std::size_t param_count) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  st.ckpt.identity = checkpoint_identity(cfg, param_count);
  if (st.launch.resume_dir.empty()) return std::nullopt;
  const checkpoint_store store(job_dir(st.launch.resume_dir, cfg.name), 0);
  load_result found = store.load_newest_valid();
  // A newer build's checkpoint: resuming behind it (from an older file, or fresh) would lose
  // its steps without a word.
  for (const auto& k : found.skipped)
    if (k.other_version)
      throw input_error("--resume: " + k.path + ": " + k.reason +
                        "; resume it with the build that wrote it, or move it away");
  if (!found.loaded) {
    // Files that are all damaged: asked to resume, the job does not silently start over.
    if (!found.skipped.empty())
      throw input_error("--resume: " + found.summary +
                        "; move the damaged files away to start fresh");
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
  note_event(self, "resume", "resume: " + found.summary);
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
  st.clock.step_seconds_total = snap.step_seconds_total;
  st.ckpt.resumed_from = snap.step;
  st.ckpt.resumed_members = snap.members;
  if (!snap.members.empty()) {
    std::string was;
    for (const auto& m : snap.members) was += " " + m.substr(0, m.find(' '));
    log(self, "resume: the run that wrote step " + std::to_string(snap.step) + " had " +
                  std::to_string(snap.members.size()) + " workers:" + was);
  }
  if (!st.ledger) return;
  if (snap.has_ledger) {
    if (snap.ledger.size() != st.ledger->samples())
      throw input_error("--resume: checkpoint of step " + std::to_string(snap.step) + " counts " +
                        std::to_string(snap.ledger.size()) +
                        " samples in its ledger, the training set has " +
                        std::to_string(st.ledger->samples()));
    st.ledger->restore(snap.ledger_pass, snap.ledger);
    st.ledger_earlier = snap.ledger_totals;
  } else if (snap.step % spp != 0) {
    // A checkpoint from before the ledger, taken inside a pass: that pass's earlier samples
    // are not known here.
    st.ledger->resume_unknown(snap.step / spp);
  }
}

void checkpoint_init(job_self self) {
  auto& st = self->state;
  const auto& c = st.launch.cfg.checkpoint;
  const bool asked = !c.dir.empty() && (c.every_steps > 0 || c.every_seconds > 0 || c.at_stop);
  st.ckpt.cycle = checkpoint_cycle(c, asked && st.sync->checkpoints(), steady::now());
  if (st.ckpt.resumed_from) st.ckpt.cycle.resumed(*st.ckpt.resumed_from);
  if (!asked || !st.sync->checkpoints()) return;
  st.ckpt.dir = job_dir(c.dir, st.launch.cfg.name);
  st.ckpt.writer = spawn_detached(self, checkpoint_writer, st.ckpt.dir, keep_checkpoints);
  self->monitor(st.ckpt.writer);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", c.every_seconds);
  const bool interval = c.every_steps > 0 || c.every_seconds > 0;
  log(self, "checkpoints: " + st.ckpt.dir + (interval ? " every " : " at a graceful stop only") +
                (c.every_steps > 0 ? std::to_string(c.every_steps) + " steps" : "") +
                (c.every_steps > 0 && c.every_seconds > 0 ? " or " : "") +
                (c.every_seconds > 0 ? std::string(buf) + " s" : "") + ", keeping " +
                std::to_string(keep_checkpoints));
}

void checkpoint_boundary(job_self self) {
  auto& st = self->state;
  const auto now = steady::now();
  // A run that stops takes one at its last boundary, due or not.
  const bool last = st.interrupting && st.phase == job_phase::draining;
  if (!st.sync->at_capture_point() || !st.ckpt.cycle.due(st.step, now, last)) return;
  const auto& cfg = st.launch.cfg;
  auto snap = std::make_shared<job_snapshot>();
  snap->step = st.step;
  snap->job = cfg.name;
  snap->identity = st.ckpt.identity;
  const auto pos = position_of(st.step, st.steps_per_pass, cfg.batch, cfg.seed);
  snap->pass = pos.pass;
  snap->position = pos.position;
  snap->rng = pos.rng;
  snap->optimizer_kind = name_of(cfg.optimizer.kind);
  snap->pass_loss_sum = st.pass_stats.loss_sum;
  snap->pass_samples = st.pass_stats.samples;
  snap->pass_correct = st.pass_stats.correct;
  snap->samples_total = static_cast<std::uint64_t>(st.samples_total);
  snap->step_seconds_total = st.clock.step_seconds_total;
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    if (st.mem.status(r) != member_status::migrated)
      snap->members.push_back(st.workers[r].name + " " + st.workers[r].device);
  if (st.ledger) {
    snap->has_ledger = true;
    snap->ledger_pass = st.ledger->open_pass();
    snap->ledger = st.ledger->counts();
    const auto t = st.ledger->totals();
    snap->ledger_totals.passes_checked = st.ledger_earlier.passes_checked + t.passes_checked;
    snap->ledger_totals.counted_twice = st.ledger_earlier.counted_twice + t.counted_twice;
    snap->ledger_totals.never_counted = st.ledger_earlier.never_counted + t.never_counted;
  }
  const msg::ckpt_capture cap{st.gate.job(), st.gate.generation(), st.step};
  st.ckpt.cycle.begin(std::move(snap), st.sync->capture(self, cap), now);
}

bool checkpoint_hold(job_self self, std::function<void()> then) {
  return self->state.ckpt.cycle.hold(std::move(then), steady::now());
}

void checkpoint_part(job_self self, const msg::ckpt_part& m,
                     const msg::local_ref<ckpt_shard_part>& part) {
  auto& st = self->state;
  if (m.job != st.gate.job()) return;
  std::string line;
  switch (st.ckpt.cycle.on_part(m.step, m.version, m.shard, part.ptr, line)) {
    case checkpoint_cycle::part_result::ignored:
      return;
    case checkpoint_cycle::part_result::waiting:
      ++st.progress;
      return;
    case checkpoint_cycle::part_result::dropped:
      ++st.progress;
      log(self, line);
      release(self);
      return;
    case checkpoint_cycle::part_result::complete: {
      ++st.progress;
      auto snap = st.ckpt.cycle.take_snapshot();
      try {
        st.sync->assemble(*snap);
      } catch (const std::exception& e) {
        // No write follows: the cycle hears of the failure as of a write's (and logs it).
        checkpoint_written(
            self, msg::ckpt_written{st.gate.job(), st.gate.generation(), m.step, "", 0, 0.0, 0.0,
                                    std::string("not assembled: ") + e.what()});
        return;
      }
      self->send(st.ckpt.writer, msg::ckpt_write{st.gate.job(), st.gate.generation(), m.step},
                 msg::local_ref<job_snapshot>{std::move(snap)});
      return;
    }
  }
}

void checkpoint_written(job_self self, const msg::ckpt_written& m) {
  auto& st = self->state;
  if (m.job != st.gate.job()) return;
  const write_outcome w{m.step, m.path, m.bytes, m.encode_seconds, m.write_seconds, m.error};
  const auto line = st.ckpt.cycle.on_written(w, steady::now());
  if (!line) return;
  ++st.progress;
  log(self, *line);
  release(self);
}

}  // namespace troupe::actors
