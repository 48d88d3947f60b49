#pragma once
// rebalancer: the policy actor behind `split: adaptive`. One per adaptive job,
// spawned by the job when it starts running. The job sends it each step's per-rank slices and
// compute seconds (a step_metrics, as soon as the last worker reported); it fits one
// policies::time_model per worker (t_i(b) = a_i + c_i b, exponentially forgetting so that a device
// that slows down is followed), asks policies::rebalancer for a decision (equal-finish target,
// damping, hysteresis) and sends a change back to the job as split_decision (the new slices,
// summing to the batch). The job logs and counts it and hands it to the data distributor,
// so it applies to the next plan the distributor cuts.
//
// Latency: the job prefetches the plan of step s+1 while s computes, so a decision taken on step
// s's timings (sent while the shards reduce s) reaches the plans from s+2 on. While a decision is
// in flight the steps still show the old split; deciding from those would re-issue the same move.
// So the "current" split the policy damps from is the last one decided (`intended`) until the
// observed slices catch up; decisions compound step by step instead of waiting for each to land. If
// the observed slices do not match the intended ones `resync_steps` steps after the last decision
// (the job dropped it, a membership change), the observed split becomes current again.
//
// Change detection: the forgetting factor alone follows a device that slows down 3x only over
// ~1/(1 - lambda) steps, and meanwhile the regression mixes the two regimes (old fast points and
// new slow ones at different slices can even give a negative slope). A worker whose measured time
// misses its prediction by more than 50% three times in a row has changed: its model restarts
// from those steps, so the policy sees the new speed at once and only damping paces the move.
// (On a loaded 2-core machine single steps miss by 30-50% now and then; three in a row by more
// than 50% is a device that changed.)
//
// State machine (one state: it only reacts):
//
//   OBSERVING --1--> OBSERVING
//       \--2--> (gone)
//
//   1. step_metrics(e) from the job: every rank with a slice adds (slice, compute seconds) to its
//      time model. When every rank has at least `warmup_steps` observations and the step had the
//      full global batch (a shortened last step of a pass is observed, not decided on), the
//      policy decides; a change is sent to the job as split_decision(e, step, slices, reason).
//   2. exit from the job (it finished or failed).
// Messages of another generation are dropped (generation_gate).
#include <cstdint>
#include <optional>
#include <vector>

#include "actors/common/caf_compat.hpp"
#include "actors/common/generation_gate.hpp"
#include "policies/rebalance.hpp"
#include "policies/time_model.hpp"

namespace troupe::actors {

struct rebalancer_options {
  policies::rebalance_options policy;
  // Slower forgetting than the policy's default (0.9): on a shared machine step times are noisy,
  // and a real change of speed is caught by the change detection below, not by forgetting.
  policies::time_model_options model = [] {
    policies::time_model_options o;
    o.forgetting = 0.95;
    return o;
  }();
  std::size_t warmup_steps = 2;   // observations per worker before the first decision
  std::int64_t resync_steps = 4;  // see "Latency" above
  // Change detection: `change_steps` consecutive steps whose time misses the model's prediction
  // by more than `change_threshold` (relative) restart that worker's model from those steps.
  double change_threshold = 0.5;
  std::size_t change_steps = 3;
};

// The actor's logic without CAF: feed it steps, get decisions. Kept apart so that it reads as
// the policy it is and can be driven by tables as well as by the actor.
class split_tuner {
 public:
  split_tuner(std::size_t workers, std::int64_t global_batch, rebalancer_options options = {});

  // One step's slices and compute seconds by rank; a decision when the split should change.
  std::optional<policies::rebalance_decision> observe(std::int64_t step,
                                                      const std::vector<std::int64_t>& slices,
                                                      const std::vector<double>& compute_seconds);

  const std::vector<policies::time_model>& models() const { return models_; }
  const std::vector<std::int64_t>& intended() const { return intended_; }
  std::int64_t decisions() const { return decisions_; }
  std::int64_t model_resets() const { return resets_; }

 private:
  void observe_one(std::size_t rank, std::int64_t slice, double seconds);

  rebalancer_options options_;
  std::int64_t global_batch_;
  std::vector<policies::time_model> models_;
  std::vector<std::vector<std::pair<double, double>>> misses_;  // by rank: consecutive misses
  std::int64_t resets_ = 0;
  policies::rebalancer policy_;
  std::vector<std::int64_t> intended_;  // the split the job will use (empty: none seen yet)
  std::int64_t last_decision_step_ = -1;
  std::int64_t decisions_ = 0;
};

struct rebalancer_state {
  static inline const char* name = "rebalancer";
  generation_gate gate;
  caf::actor job;
  std::optional<split_tuner> tuner;
};

caf::behavior rebalancer_actor(stateful<rebalancer_state>* self, caf::actor job, msg::job_id id,
                               msg::generation_id generation, std::size_t workers,
                               std::int64_t global_batch, rebalancer_options options);

}  // namespace troupe::actors
