#include "devices/cpu_device.hpp"

#include <cblas.h>

#include "core/error.hpp"
#include "devices/timed_compute.hpp"

namespace troupe::devices {

void set_blas_threads(int threads) {
  openblas_set_num_threads(threads);
}

cpu_device::cpu_device(std::string name, int threads) : name_(std::move(name)), threads_(threads) {
  if (threads < 1) throw input_error("device '" + name_ + "': threads must be >= 1");
}

models::step_stats cpu_device::run_step(models::model& m, const float* params,
                                        const models::batch& b, float* grad_sum,
                                        step_timing* timing) {
  set_blas_threads(threads_);
  return timed_compute(timing, [&] { return m.forward_backward(params, b, grad_sum); });
}

models::step_stats cpu_device::run_eval(models::model& m, const float* params,
                                        const models::batch& b, step_timing* timing) {
  set_blas_threads(threads_);
  return timed_compute(timing, [&] { return m.evaluate(params, b); });
}

}  // namespace troupe::devices
