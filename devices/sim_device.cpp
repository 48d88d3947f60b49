#include "devices/sim_device.hpp"

#include <time.h>

#include <algorithm>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace troupe::devices {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

sim_device::sim_device(std::string name, std::unique_ptr<device> base, double slowdown,
                       std::string share_group, idle_fn idle, cpu_clock_fn cpu_clock)
    : name_(std::move(name)),
      base_(std::move(base)),
      slowdown_(1.0),
      idle_(std::move(idle)),
      cpu_clock_(std::move(cpu_clock)) {
  if (!base_) throw input_error("sim device '" + name_ + "': no base device");
  set_slowdown(slowdown);
  if (!share_group.empty()) gate_ = share_gate::named(share_group);
  if (!idle_) idle_ = [](std::chrono::duration<double> d) { std::this_thread::sleep_for(d); };
}

void sim_device::set_slowdown(double factor) {
  if (!(factor >= 1.0))
    throw input_error("sim device '" + name_ + "': slowdown must be >= 1, got " +
                      std::to_string(factor));
  slowdown_.store(factor);
}

void sim_device::set_share(const std::string& job, double weight) {
  job_ = job;
  if (gate_) gate_->set_weight(job, weight);
}

// The share gate around one call, and its timing; `work(sw)` computes and stretches.
template <class Work>
models::step_stats sim_device::run_gated(Work&& work, step_timing* timing) {
  double waited = 0.0;
  if (gate_) waited = gate_->acquire(job_);
  // Time the step was ready before this call: the stretch absorbs it (step_timing).
  const double lag = timing ? std::max(0.0, timing->start_lag_seconds) : 0.0;
  stopwatch sw(lag);
  models::step_stats stats;
  try {
    stats = work(sw);
  } catch (...) {
    if (gate_) gate_->release(job_, sw.seconds());
    throw;
  }
  const double used = sw.seconds();
  if (gate_) gate_->release(job_, used);
  if (timing) {
    timing->compute_seconds = used;  // includes the start lag (sw started `lag` early)
    timing->gate_wait_seconds = waited;
  }
  return stats;
}

template <class Compute>
models::step_stats sim_device::run_whole(Compute&& compute, step_timing* timing) {
  return run_gated(
      [&](const stopwatch& sw) {
        const double cpu0 = cpu_clock_ ? cpu_clock_() : 0.0;
        auto stats = compute();
        const double wall = sw.seconds();
        const double own = cpu_clock_ ? cpu_clock_() - cpu0 : wall;
        const double target = own * slowdown();
        if (target > wall) idle_for(target - wall);
        return stats;
      },
      timing);
}

// A sleeping thread wakes late: the timer's slack, then the wait for a core, which on a busy
// host is most of a scheduler slice (about 1 ms here). A device whose stretch ends late every
// step is slower than its slowdown says, so the idle asks for the average oversleep less; the
// wall clock still corrects what remains (run_paced), and the average is of what was observed.
void sim_device::idle_for(double seconds) {
  // Oversleeps past 2 ms (another process, a paused VM) are not a pattern to anticipate.
  constexpr double max_anticipated = 0.002;
  const double ask = seconds - oversleep_;
  double over = 0.0;
  if (ask > 0.0) {
    stopwatch sw;
    idle_(std::chrono::duration<double>(ask));
    over = std::clamp(sw.seconds() - ask, 0.0, max_anticipated);
  }
  oversleep_ = 0.8 * oversleep_ + 0.2 * over;
}

models::step_stats sim_device::run_step(models::model& m, const float* params,
                                        const models::batch& b, float* grad_sum,
                                        step_timing* timing) {
  const std::size_t pieces = pace_pieces(b);
  if (pieces <= 1)
    return run_whole([&] { return base_->run_step(m, params, b, grad_sum, nullptr); }, timing);
  return run_paced(m, params, b, grad_sum, pieces, timing);
}

std::size_t sim_device::pace_pieces(const models::batch& b) const {
  if (!(slowdown() > 1.0) || b.features == 0 || !cpu_clock_) return 1;
  return std::min(max_pieces, b.size / min_piece_rows);
}

// A slower device spreads its work over the whole stretched time; computing the batch at full
// speed and then idling would put every sim device's CPU demand at the start of the step, where
// they queue for the host's cores (on 2 cores, three devices of slowdowns 2, 2, 6 need 1.2 cores
// on average but 3 at the start). So the batch runs in pieces, each followed by its share of the
// idle time. Gradients are sums, so the pieces add up to the batch's; the adds are not stretched
// (they are the emulation's cost, not the device's work).
models::step_stats sim_device::run_paced(models::model& m, const float* params,
                                         const models::batch& b, float* grad_sum,
                                         std::size_t pieces, step_timing* timing) {
  return run_gated(
      [&](const stopwatch& sw) {
        models::step_stats stats;
        const std::size_t n = m.layout().size();
        piece_grad_.resize(n);
        const double s = slowdown();
        double own = 0.0, idled = 0.0, busy = sw.seconds();  // the start lag, if any
        std::size_t first = 0;
        for (std::size_t k = 0; k < pieces; ++k) {
          const std::size_t rows = b.size / pieces + (k < b.size % pieces ? 1 : 0);
          const auto piece = models::rows_of(b, first, rows);
          first += rows;
          stopwatch piece_sw;
          const double cpu0 = cpu_clock_();
          stats +=
              base_->run_step(m, params, piece, k == 0 ? grad_sum : piece_grad_.data(), nullptr);
          own += cpu_clock_() - cpu0;
          if (k > 0)
            for (std::size_t i = 0; i < n; ++i) grad_sum[i] += piece_grad_[i];
          busy += piece_sw.seconds();
          // The wall clock corrects an idle that overslept; the bookkeeping covers an idle
          // function that does not really wait (tests).
          const double behind = own * s - std::max(sw.seconds(), busy + idled);
          if (behind > 0) {
            idle_for(behind);
            idled += behind;
          }
        }
        return stats;
      },
      timing);
}

models::step_stats sim_device::run_eval(models::model& m, const float* params,
                                        const models::batch& b, step_timing* timing) {
  return run_whole([&] { return base_->run_eval(m, params, b, nullptr); }, timing);
}

}  // namespace troupe::devices
