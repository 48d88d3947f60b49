#pragma once
// Test helpers for the sim device's unit tests (not part of the library): a model of fixed
// arithmetic, a fake CPU clock, an idle that records instead of sleeping, one call's inputs.
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "devices/sim_device.hpp"

namespace troupe::devices::testing {

// A model whose "compute" is a fixed amount of arithmetic; enough to time, no BLAS needed.
class busy_model final : public models::model {
 public:
  busy_model() { layout_.add("w", {4}); }
  std::string kind() const override { return "busy"; }
  const models::param_layout& layout() const override { return layout_; }
  void init_params(float* p, rng&) const override {
    for (int i = 0; i < 4; ++i) p[i] = 0.0f;
  }
  models::step_stats forward_backward(const float*, const models::batch& b, float* g) override {
    volatile double acc = 0;
    for (int i = 0; i < 200000; ++i) acc = acc + i * 1e-9;
    for (int i = 0; i < 4; ++i) g[i] = static_cast<float>(b.size);
    return {1.0 * b.size, b.size, 0};
  }
  models::step_stats evaluate(const float*, const models::batch& b) override {
    return {0.5 * b.size, b.size, b.size};
  }
  std::unique_ptr<models::model> clone() const override { return std::make_unique<busy_model>(); }

 private:
  models::param_layout layout_;
};

// A fake CPU clock for a sim device: read at the start and at the end of each call, it advances
// by `costs[k]` across call k (the last cost repeats).
inline sim_device::cpu_clock_fn costs_clock(std::vector<double> costs) {
  struct state {
    std::vector<double> costs;
    std::size_t call = 0;
    double now = 1.0;
    bool in_call = false;
  };
  auto st = std::make_shared<state>(state{std::move(costs)});
  return [st] {
    if (st->in_call) st->now += st->costs[std::min(st->call++, st->costs.size() - 1)];
    st->in_call = !st->in_call;
    return st->now;
  };
}

// An idle that records what it was asked for and does not wait.
inline sim_device::idle_fn record_into(std::vector<double>& idles) {
  return [&idles](std::chrono::duration<double> s) { idles.push_back(s.count()); };
}

// One call's inputs on a busy_model: parameters, gradient, a batch of `rows` rows, the timing.
struct call {
  busy_model m;
  std::vector<float> p = std::vector<float>(4), g = std::vector<float>(4);
  models::batch b;
  step_timing t;
  explicit call(std::size_t rows) { b.size = rows; }
  models::step_stats step(sim_device& d) { return d.run_step(m, p.data(), b, g.data(), &t); }
  models::step_stats eval(sim_device& d) { return d.run_eval(m, p.data(), b, &t); }
};

}  // namespace troupe::devices::testing
