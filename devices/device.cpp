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
