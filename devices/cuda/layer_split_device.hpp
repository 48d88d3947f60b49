#pragma once
// A cuda device that runs the first layers of a model on the host's CPU and the rest on the GPU
// (`layer_split` on a cuda group). On the first step it times every layer on both (the CPU
// model's own code with `threads` BLAS threads; the GPU program with CUDA events) and the
// copies between them, asks policies::plan_layer_split where to cut, and runs every step that
// way: CPU forward of its layers, their output up, the GPU's forward, loss and backward, the
// input gradient down, the CPU's backward. A forced cut (K) is taken as given; placement() says
// what the model predicted for every cut either way. Evaluation runs the whole model on the GPU.
#include <memory>

#include "devices/device.hpp"

namespace troupe::devices {

std::unique_ptr<device> make_layer_split_device(const device_spec& spec, bool host_only = false);

}  // namespace troupe::devices
