#include "actors/job/job_report.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "actors/common/fault_delay.hpp"
#include "actors/job/job_leave_out.hpp"
#include "actors/sync/local_step.hpp"
#include "core/hash.hpp"

namespace troupe::actors {

job_report make_report(stateful<job_state>* self, job_status status) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  job_report r;
  r.name = cfg.name;
  r.status = status;
  r.epochs = st.step > 0 ? st.pass + 1 : 0;
  r.steps = st.step;
  r.global_batch = cfg.batch;
  r.started_s = std::chrono::duration<double>(st.clock.job_t0 - st.launch.run_t0).count();
  r.finished_s = seconds_since(st.launch.run_t0);
  r.wall_seconds = r.finished_s - r.started_s;
  r.step_seconds = st.clock.step_seconds_total;
  const auto phases = st.trace.medians();
  r.step_phases_steps = static_cast<std::int64_t>(phases.steps);
  if (phases.steps > 0)
    for (std::size_t p = 0; p < step_phase_count; ++p)
      r.step_phases_us.emplace_back(name_of(static_cast<step_phase>(p)), phases.seconds[p] * 1e6);
  if (st.clock.step_seconds_total > 0)
    r.samples_per_second = static_cast<double>(st.samples_total) / st.clock.step_seconds_total;
  if (st.pass_stats.samples > 0)
    r.train_loss = st.pass_stats.loss_sum / static_cast<double>(st.pass_stats.samples);
  if (st.eval_stats.samples > 0) {
    r.test_loss = st.eval_stats.loss_sum / static_cast<double>(st.eval_stats.samples);
    r.test_accuracy =
        static_cast<double>(st.eval_stats.correct) / static_cast<double>(st.eval_stats.samples);
  }
  // A failed job may stop mid-reduce with the shards still writing: its parameters are not a
  // consistent version, so only a job that ended at a step boundary reports them.
  if (st.store && status != job_status::failed) {
    const auto& v = st.store->values;
    double sq = 0.0;
    for (float x : v) sq += static_cast<double>(x) * x;
    r.params.count = v.size();
    r.params.l2 = std::sqrt(sq);
    r.params.fnv1a64 = fnv1a64(v.data(), v.size() * sizeof(float));
    r.final_params = std::make_shared<const std::vector<float>>(v);
  }
  for (const auto& w : st.workers) {
    worker_report wr;
    wr.name = w.name;
    wr.group = w.group;
    wr.device = w.device;
    wr.samples = w.samples;
    wr.steps = w.steps;
    wr.first_step = w.first_step;
    wr.wire_bytes = w.wire_bytes;
    wr.mean_batch = w.steps > 0 ? static_cast<double>(w.samples) / static_cast<double>(w.steps) : 0;
    wr.compute_seconds = w.compute_seconds;
    wr.samples_per_second =
        w.compute_seconds > 0 ? static_cast<double>(w.samples) / w.compute_seconds : 0.0;
    wr.busy_fraction =
        st.clock.step_seconds_total > 0 ? w.compute_seconds / st.clock.step_seconds_total : 0;
    r.workers.push_back(wr);
  }
  std::int64_t wire = 0;
  for (const auto& w : st.workers) wire += w.wire_bytes;
  const auto steps_here = st.step - st.ckpt.resumed_from.value_or(0);
  if (steps_here > 0) r.wire_bytes_per_step = static_cast<double>(wire) / steps_here;
  r.stale_dropped = st.gate.dropped();
  r.rebalances = st.stats.rebalances;
  leave_out_report(st, r);
  r.imbalance_index = st.stats.mean_imbalance();
  r.noise_scale = st.stats.noise_scale();
  r.faults = st.mem.report();
  if (st.faults) r.faults.injected = st.faults->injected(st.step);
  if (st.sync)
    st.sync->fill_report(r, st.step);
  else
    fill_sync_report(r, cfg, nullptr, st.step);
  r.faults.injected += started_delays(st.faults ? st.faults->faults() : cfg.faults, st.step);
  st.ckpt.cycle.fill_report(r);
  r.checkpoints.resumed_members = st.ckpt.resumed_members;
  if (st.ledger) {
    const auto t = st.ledger->totals();
    r.samples = sample_audit{t.passes_checked, t.counted_twice, t.never_counted, t.recorded};
    r.samples->earlier_passes_checked = st.ledger_earlier.passes_checked;
    r.samples->earlier_counted_twice = st.ledger_earlier.counted_twice;
    r.samples->earlier_never_counted = st.ledger_earlier.never_counted;
  }
  st.timeline.finish();
  r.series = st.timeline.series();
  r.events = st.timeline.events();
  if (st.timeline.dropped() > 0)
    r.events.push_back({seconds_since(st.clock.job_t0),
                        st.step,
                        "dropped",
                        std::to_string(st.timeline.dropped()) + " more events not kept",
                        {}});
  return r;
}

}  // namespace troupe::actors
