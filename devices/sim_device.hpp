#pragma once
// The sim backend: a real backend whose compute time is stretched by a slowdown factor, and,
// when it names a share group, gated so that jobs sharing the device get weighted time slices.
// This is how one machine emulates a heterogeneous cluster (a device 3x slower than a CPU core)
// and virtual GPU shares. The stretch is idle time, not busy-work, so a slow sim device leaves
// the CPU to the other devices, like a real slower device would.
//
// A call takes slowdown x the host's own compute time: the calling thread's CPU time when the
// base runs single-threaded (time spent waiting for a core is the host's congestion, not the
// device's work, so it is absorbed by the stretch instead of multiplied by it), the wall time
// otherwise (a multi-threaded base's CPU time is spread over threads this one cannot see).
// With CPU time, a training step owes slowdown x the median per-row cost of the recent steps
// times its rows (typical_cost), so that the host's noise is not multiplied by the slowdown.
// The time since the call's inputs were ready (step_timing::start_lag_seconds) and the idle's
// average oversleep are absorbed too.
// Splitting a step into pieces with idle between them (tried: it spread the CPU demand) made each
// piece write the whole gradient, a fixed cost the stretch multiplied: solo baselines of 1024
// rows in 8 pieces ran 20% slower than whole.
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "devices/share_gate.hpp"

namespace troupe::devices {

class sim_device final : public device {
 public:
  // How the stretch is spent; tests pass a recorder instead of a real wait.
  using idle_fn = std::function<void(std::chrono::duration<double>)>;
  // The calling thread's CPU seconds; tests pass a fake, an empty one means wall time is used.
  using cpu_clock_fn = std::function<double()>;

  sim_device(std::string name, std::unique_ptr<device> base, double slowdown,
             std::string share_group = "", idle_fn idle = {}, cpu_clock_fn cpu_clock = {});

  device_kind kind() const override { return device_kind::sim; }
  const std::string& name() const override { return name_; }
  double capability() const override { return base_->capability() / slowdown(); }

  // Changeable while running (fault injection "slow", policy benchmarks).
  void set_slowdown(double factor);
  // A device of fixed speed: a train step of b samples owes slowdown x row_seconds x b (see the
  // .cpp). 0 (the default): the host's live per-sample cost stands in for row_seconds.
  void set_row_seconds(double seconds);
  double slowdown() const { return slowdown_.load(); }
  void set_share(const std::string& job, double weight) override;
  // The wrapped backend fails for real (a sim over cuda really exhausts the GPU).
  void provoke(device_fault f) override { base_->provoke(f); }

  models::step_stats run_step(models::model& m, const float* params, const models::batch& b,
                              float* grad_sum, step_timing* timing) override;
  models::step_stats run_eval(models::model& m, const float* params, const models::batch& b,
                              step_timing* timing) override;

 private:
  template <class Work>
  models::step_stats run_gated(Work&& work, step_timing* timing);
  // The whole call, then the stretch; `rows` > 0 for a train step (typical_cost).
  template <class Compute>
  models::step_stats run_whole(Compute&& compute, std::size_t rows, step_timing* timing);
  // Idles `seconds`, less the average oversleep of earlier idles (see the .cpp).
  void idle_for(double seconds);
  // Records this call's own cost; returns the host seconds the call stands for (see the .cpp).
  double typical_cost(double own, std::size_t rows);

  static constexpr std::size_t recent_calls = 9;  // the median's window

  std::string name_;
  std::unique_ptr<device> base_;
  std::atomic<double> slowdown_;
  std::shared_ptr<share_gate> gate_;
  std::string job_ = "default";
  idle_fn idle_;
  cpu_clock_fn cpu_clock_;
  double row_seconds_ = 0.0;
  double oversleep_ = 0.0;  // average seconds an idle overslept (exponentially weighted)
  std::array<double, recent_calls> recent_cost_{};  // own CPU seconds per row, a ring
  std::size_t recent_next_ = 0;                     // calls recorded
};

// CPU seconds consumed by the calling thread (CLOCK_THREAD_CPUTIME_ID).
double thread_cpu_seconds();

}  // namespace troupe::devices
