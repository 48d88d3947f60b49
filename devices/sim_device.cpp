#include "devices/sim_device.hpp"

#include <time.h>

#include <algorithm>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/median.hpp"

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

void sim_device::set_row_seconds(double seconds) {
  if (!(seconds >= 0.0))
    throw input_error("sim device '" + name_ + "': row_seconds must be >= 0, got " +
                      std::to_string(seconds));
  row_seconds_ = seconds;
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

// The host CPU seconds this call's work stands for: the median per-row cost of the recent train
// steps times the rows. The emulated device is `slowdown` times slower than the host's typical
// speed on this work; one call's own measurement also holds the host's noise (a cold cache after
// another thread, a busy sibling), which the stretch would multiply by the slowdown (s4 varied by
// 15-20% per step at slowdown 4; a real device of that speed does not). A call that really takes
// longer than its stretch still ends late: that is not hidden.
//
// With row_seconds set the device has a fixed speed, as a real one does: the host's speed drifts
// by 20-30% within seconds here (other tenants of the VM's host), and a live median follows
// that drift, which the rebalancer then chases and which moves solo baselines between runs.
double sim_device::typical_cost(double own, std::size_t rows) {
  if (rows > 0 && row_seconds_ > 0) return row_seconds_ * static_cast<double>(rows);
  if (rows == 0 || !cpu_clock_) return own;
  recent_cost_[recent_next_ % recent_cost_.size()] = own / static_cast<double>(rows);
  ++recent_next_;
  const auto n = static_cast<std::ptrdiff_t>(std::min(recent_next_, recent_cost_.size()));
  return median({recent_cost_.begin(), recent_cost_.begin() + n}) * static_cast<double>(rows);
}

template <class Compute>
models::step_stats sim_device::run_whole(Compute&& compute, std::size_t rows, step_timing* timing) {
  return run_gated(
      [&](const stopwatch& sw) {
        const double cpu0 = cpu_clock_ ? cpu_clock_() : 0.0;
        auto stats = compute();
        const double wall = sw.seconds();
        const double own = cpu_clock_ ? cpu_clock_() - cpu0 : wall;
        const double target = typical_cost(own, rows) * slowdown();
        // What is left now, not target - wall: a thread preempted after the compute (5 ms, seen
        // at the end of a short slice on 2 cores) would otherwise end that much late.
        const double left = target - sw.seconds();
        if (left > 0) idle_for(left);
        return stats;
      },
      timing);
}

// A sleeping thread wakes late: the timer's slack, then the wait for a core, which on a busy
// host is most of a scheduler slice (about 1 ms here). A device whose stretch ends late every
// call is slower than its slowdown says, so the idle asks for the average oversleep less.
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
  return run_whole([&] { return base_->run_step(m, params, b, grad_sum, nullptr); }, b.size,
                   timing);
}

models::step_stats sim_device::run_eval(models::model& m, const float* params,
                                        const models::batch& b, step_timing* timing) {
  // Not a train step: its own cost, not the train steps' median.
  return run_whole([&] { return base_->run_eval(m, params, b, nullptr); }, 0, timing);
}

}  // namespace troupe::devices
