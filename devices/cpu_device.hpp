#pragma once
// The cpu backend: runs the model's own BLAS code on the calling thread.
//
// OpenBLAS keeps ONE process-wide thread count (openblas_set_num_threads); the backend sets it
// to its `threads` before each call. Several cpu devices with different thread counts in one
// process therefore race on that setting; give devices of one process the same count.
#include <string>

#include "devices/device.hpp"

namespace troupe::devices {

class cpu_device final : public device {
 public:
  cpu_device(std::string name, int threads);

  device_kind kind() const override { return device_kind::cpu; }
  const std::string& name() const override { return name_; }
  double capability() const override { return static_cast<double>(threads_); }
  int threads() const { return threads_; }

  models::step_stats run_step(models::model& m, const float* params, const models::batch& b,
                              float* grad_sum, step_timing* timing) override;
  models::step_stats run_eval(models::model& m, const float* params, const models::batch& b,
                              step_timing* timing) override;

 private:
  std::string name_;
  int threads_;
};

// Sets OpenBLAS's process-wide thread count.
void set_blas_threads(int threads);

}  // namespace troupe::devices
