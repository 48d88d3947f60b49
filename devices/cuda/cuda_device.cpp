#include "devices/cuda_device.hpp"

#include <string>

#include "core/error.hpp"
#include "devices/cuda/gpu_faults.hpp"
#include "devices/cuda/gpu_program.hpp"
#include "devices/cuda/layer_split_device.hpp"
#include "devices/cuda_info.hpp"
#include "devices/sim_device.hpp"
#include "devices/timed_compute.hpp"

namespace troupe::devices {
namespace {

class cuda_device final : public device {
 public:
  cuda_device(std::string name, int ordinal) : name_(std::move(name)), ordinal_(ordinal) {}

  device_kind kind() const override { return device_kind::cuda; }
  const std::string& name() const override { return name_; }
  // A first guess only (one GPU against one reference CPU thread on the small built-in models);
  // the start-up probe and the rebalancer replace it with measured speeds.
  double capability() const override { return 20.0; }

  models::step_stats run_step(models::model& m, const float* params, const models::batch& b,
                              float* grad_sum, step_timing* timing) override {
    return timed_compute(timing, [&] { return program_for(m).step(params, b, grad_sum); });
  }

  void provoke(device_fault f) override {
    // The worker is replaced after the failure: its program's buffers go first.
    program_.reset();
    model_ = nullptr;
    if (f == device_fault::out_of_memory) gpu::provoke_out_of_memory(ordinal_);
    gpu::provoke_device_error(ordinal_);
  }

  models::step_stats run_eval(models::model& m, const float* params, const models::batch& b,
                              step_timing* timing) override {
    return timed_compute(timing, [&] { return program_for(m).evaluate(params, b); });
  }

 private:
  // One program per model instance (a worker keeps its model for its life).
  gpu::program& program_for(models::model& m) {
    if (program_ && model_ == &m) return *program_;
    const models::layer_program* p = m.program();
    if (!p)
      throw input_error("device '" + name_ + "': model kind '" + m.kind() +
                        "' does not describe its layers, so the cuda backend cannot run it");
    program_.reset();
    gpu::program_options o;
    o.ordinal = ordinal_;
    program_ = std::make_unique<gpu::program>(*p, o);
    model_ = &m;
    return *program_;
  }

  std::string name_;
  int ordinal_;
  const models::model* model_ = nullptr;
  std::unique_ptr<gpu::program> program_;
};

}  // namespace

std::unique_ptr<device> make_cuda_device(const device_spec& spec) {
  const int gpus = cuda_device_count();
  if (spec.ordinal < 0 || spec.ordinal >= gpus)
    throw input_error("device '" + spec.name + "': cuda device " + std::to_string(spec.ordinal) +
                      " is not visible (" + std::to_string(gpus) + " GPU(s) visible)");
  if (spec.layer_split != -1) {
    if (!spec.share_group.empty())
      throw input_error("device '" + spec.name +
                        "': a shared GPU runs whole models (no layer_split)");
    return make_layer_split_device(spec);
  }
  auto gpu = std::make_unique<cuda_device>(spec.name, spec.ordinal);
  if (spec.share_group.empty()) return gpu;
  // A shared GPU: the sim backend's share gate at slowdown 1 time-slices it between the jobs by
  // their shares, each call measured by wall time (the host thread's CPU time says nothing of
  // the GPU's).
  return std::make_unique<sim_device>(spec.name, std::move(gpu), 1.0, spec.share_group);
}

}  // namespace troupe::devices
