#include "devices/device.hpp"

#include <new>

#include "core/error.hpp"
#include "devices/cpu_device.hpp"
#include "devices/cuda_device.hpp"
#include "devices/sim_device.hpp"

namespace troupe::devices {

device_kind parse_device_kind(const std::string& text) {
  if (const auto k = parse_name<device_kind>(text)) return *k;
  throw input_error("unknown device kind '" + text + "' (expected " + names_listed<device_kind>() +
                    ")");
}

void device::provoke(device_fault f) {
  // What a failed allocation throws, without making one: a real one would take the host's memory
  // from everything else on it (and AddressSanitizer aborts on a request it cannot serve).
  if (f == device_fault::out_of_memory) throw std::bad_alloc();
  throw runtime_failure("device error on " + std::string(name_of(kind())) + " device '" + name() +
                        "' (injected)");
}

models::step_stats device::run_blocks(models::model& m, const float* params, const models::batch& b,
                                      std::size_t features, std::size_t block, float* grad_sums,
                                      step_timing* timing) {
  if (block == 0) throw runtime_failure("device '" + name() + "': a block of 0 rows");
  const std::size_t count = m.param_count();
  models::step_stats total;
  step_timing sum;
  if (timing) sum.start_lag_seconds = timing->start_lag_seconds;
  for (std::size_t row = 0, j = 0; row < b.size; row += block, ++j) {
    models::batch part;
    const std::size_t n = std::min(block, b.size - row);
    part.size = n;
    part.x = b.x + row * features;
    if (b.labels) part.labels = b.labels + row;
    if (b.targets) part.targets = b.targets + row;
    if (b.weights) part.weights = b.weights + row;
    if (b.sample_loss) part.sample_loss = b.sample_loss + row;
    step_timing t;
    // The inputs were ready when the first block began; later blocks start on arrival.
    t.start_lag_seconds = j == 0 ? sum.start_lag_seconds : 0.0;
    total += run_step(m, params, part, grad_sums + j * count, &t);
    sum.compute_seconds += t.compute_seconds;
    sum.gate_wait_seconds += t.gate_wait_seconds;
    sum.transfer_bytes += t.transfer_bytes;
  }
  if (timing) *timing = sum;
  return total;
}

std::unique_ptr<device> make_device(const device_spec& spec) {
  switch (spec.kind) {
    case device_kind::cpu:
      return std::make_unique<cpu_device>(spec.name, spec.threads);
    case device_kind::sim: {
      if (spec.base == device_kind::sim)
        throw input_error("sim device '" + spec.name + "': base must be a real backend, not sim");
      device_spec base = spec;
      base.kind = spec.base;
      base.name = spec.name + "/base";
      // A single-threaded base is measured by its thread's CPU time (see sim_device.hpp).
      sim_device::cpu_clock_fn cpu_clock;
      if (spec.threads == 1) cpu_clock = thread_cpu_seconds;
      auto sim = std::make_unique<sim_device>(spec.name, make_device(base), spec.slowdown,
                                              spec.share_group, sim_device::idle_fn{}, cpu_clock);
      sim->set_row_seconds(spec.row_seconds);
      return sim;
    }
    case device_kind::cuda:
      return make_cuda_device(spec);
  }
  throw input_error("device '" + spec.name + "': unknown kind");
}

}  // namespace troupe::devices
