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
// With CPU time, a training step whose batch gives its row width runs in up to 8 pieces, each
// followed by its share of the stretch (run_paced), so the device's CPU demand is spread over the
// step as a slower device's would be.
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
  double slowdown() const { return slowdown_.load(); }
  void set_share(const std::string& job, double weight) override;

  models::step_stats run_step(models::model& m, const float* params, const models::batch& b,
                              float* grad_sum, step_timing* timing) override;
  models::step_stats run_eval(models::model& m, const float* params, const models::batch& b,
                              step_timing* timing) override;

 private:
  template <class Work>
  models::step_stats run_gated(Work&& work, step_timing* timing);
  // The whole call, then the stretch.
  template <class Compute>
  models::step_stats run_whole(Compute&& compute, step_timing* timing);
  // How many pieces run_step paces a batch in (1: whole); see run_paced.
  std::size_t pace_pieces(const models::batch& b) const;
  models::step_stats run_paced(models::model& m, const float* params, const models::batch& b,
                               float* grad_sum, std::size_t pieces, step_timing* timing);
  // Idles `seconds`, less the average oversleep of earlier idles (see the .cpp).
  void idle_for(double seconds);

  // Pieces of at least this many rows (small GEMMs lose BLAS efficiency), at most this many.
  // 32-row pieces made a device about 25% slower on a 140-row slice than on a 1024-row one: each
  // piece writes the whole gradient once, and that fixed cost was stretched with the rest.
  static constexpr std::size_t min_piece_rows = 128;
  static constexpr std::size_t max_pieces = 8;

  std::string name_;
  std::unique_ptr<device> base_;
  std::atomic<double> slowdown_;
  std::shared_ptr<share_gate> gate_;
  std::string job_ = "default";
  idle_fn idle_;
  cpu_clock_fn cpu_clock_;
  std::vector<float> piece_grad_;  // a later piece's gradient sum, added into the caller's
  double oversleep_ = 0.0;         // average seconds an idle overslept (exponentially weighted)
};

// CPU seconds consumed by the calling thread (CLOCK_THREAD_CPUTIME_ID).
double thread_cpu_seconds();

}  // namespace troupe::devices
