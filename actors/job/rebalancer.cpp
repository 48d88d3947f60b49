#include "actors/job/rebalancer.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace troupe::actors {

split_tuner::split_tuner(std::size_t workers, std::int64_t global_batch, rebalancer_options options)
    : options_(options),
      global_batch_(global_batch),
      models_(workers, policies::time_model(options.model)),
      misses_(workers),
      policy_(options.policy) {
  if (workers == 0) throw input_error("rebalancer: no workers");
  if (global_batch < static_cast<std::int64_t>(workers) * options.policy.min_per_worker)
    throw input_error("rebalancer: batch " + std::to_string(global_batch) + " is smaller than " +
                      std::to_string(workers) + " workers at the minimum slice");
}

void split_tuner::observe_one(std::size_t r, std::int64_t slice, double seconds) {
  auto& model = models_[r];
  const double b = static_cast<double>(slice);
  if (model.ready()) {
    const double predicted = model.predict(b);
    if (predicted > 0.0 && std::abs(seconds - predicted) > options_.change_threshold * predicted) {
      misses_[r].emplace_back(b, seconds);
      if (misses_[r].size() >= options_.change_steps) {
        model = policies::time_model(options_.model);
        for (const auto& [mb, mt] : misses_[r]) model.observe(mb, mt);
        misses_[r].clear();
        ++resets_;
      }
      return;  // a miss waits: one outlier must not bend the fit
    }
  }
  // A hit: the misses were outliers; they join the fit late rather than never.
  for (const auto& [mb, mt] : misses_[r]) model.observe(mb, mt);
  misses_[r].clear();
  model.observe(b, seconds);
}

std::optional<policies::rebalance_decision> split_tuner::observe(
    std::int64_t step, const std::vector<std::int64_t>& slices,
    const std::vector<double>& compute_seconds) {
  const std::size_t n = models_.size();
  if (slices.size() != n || compute_seconds.size() != n) return std::nullopt;
  std::int64_t sum = 0;
  for (std::size_t r = 0; r < n; ++r) {
    sum += slices[r];
    // A rank without a slice has nothing to say about its speed.
    if (slices[r] > 0 && compute_seconds[r] > 0.0) observe_one(r, slices[r], compute_seconds[r]);
  }
  if (sum != global_batch_) return std::nullopt;  // a shortened step: observed, not decided on

  // The ranks with a slice are the members: a rank out of the membership (failed and migrated,
  // or set aside by the leave-out trial) has none, and the decision is over the others only.
  std::vector<std::size_t> members;
  for (std::size_t r = 0; r < n; ++r)
    if (slices[r] > 0) members.push_back(r);
  bool same_members = intended_.size() == n;
  for (std::size_t r = 0; same_members && r < n; ++r)
    same_members = (intended_[r] > 0) == (slices[r] > 0);
  if (!same_members ||
      (slices != intended_ &&
       (last_decision_step_ < 0 || step - last_decision_step_ > options_.resync_steps)))
    intended_ = slices;
  for (auto r : members)
    if (models_[r].observations() < options_.warmup_steps) return std::nullopt;

  std::vector<policies::linear_time> fits;
  std::vector<std::int64_t> current;
  for (auto r : members) {
    fits.push_back(models_[r].fit());
    current.push_back(intended_[r]);
  }
  auto d = policy_.decide(fits, current, global_batch_);
  if (!d.changed) return std::nullopt;
  std::vector<std::int64_t> all(n, 0);
  for (std::size_t k = 0; k < members.size(); ++k) all[members[k]] = d.slices[k];
  d.slices = all;
  intended_ = d.slices;
  last_decision_step_ = step;
  ++decisions_;
  return d;
}

caf::behavior rebalancer_actor(stateful<rebalancer_state>* self, caf::actor job, msg::job_id id,
                               msg::generation_id generation, std::size_t workers,
                               std::int64_t global_batch, rebalancer_options options) {
  auto& st = self->state;
  st.gate = generation_gate{id, generation};
  st.job = std::move(job);
  st.tuner.emplace(workers, global_batch, options);
  return {
      // Edge 1.
      [=](const msg::step_metrics& m) {
        auto& st = self->state;
        if (!st.gate.follow(m)) return;
        // m.step counts completed steps; the timings are of step m.step - 1.
        auto d = st.tuner->observe(m.step - 1, m.worker_samples, m.worker_compute_seconds);
        if (!d) return;
        msg::split_decision u;
        u.job = st.gate.job();
        u.generation = st.gate.generation();
        u.step = m.step - 1;
        u.slices = d->slices;
        char buf[160];
        std::snprintf(buf, sizeof buf, "; predicted step %.1f ms -> %.1f ms (target %.1f ms)",
                      d->current_makespan * 1e3, d->predicted_makespan * 1e3,
                      d->target_makespan * 1e3);
        u.reason = d->reason + buf;
        self->send(st.job, std::move(u));
      },
  };
}

}  // namespace troupe::actors
