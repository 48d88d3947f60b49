#pragma once
// Where to cut a chain of layers between the host's CPU and a GPU: the first `cut` layers run
// on the CPU, the rest on the GPU (cut 0: the whole model on the GPU; cut L: none of it). Each
// cut's step time is predicted from measured parts:
//
//   t(cut) = sum of cpu[i] for i < cut                      the CPU's layers, forward and backward
//          + sum of gpu[i] for i >= cut                     the GPU's layers
//          + copies: the GPU layers' parameters up and their gradient down, the GPU's input up
//            (the rows at cut 0, layer cut-1's output otherwise) and, at 0 < cut, that output's
//            gradient down; each copy costs latency + bytes x per_byte
//
// The CPU and GPU parts of one step run one after the other (the GPU needs the CPU's output,
// the CPU's backward needs the GPU's input gradient), so their times add. The cut with the least
// predicted time wins; when that is 0 or L, splitting loses to one device, and the plan says by
// how much.
#include <cstddef>
#include <string>
#include <vector>

namespace troupe::devices {

struct layer_split_inputs {
  std::vector<std::string> names;        // per layer, for the text
  std::vector<double> cpu_seconds;       // per layer: forward + backward over the batch
  std::vector<double> gpu_seconds;       // the same on the GPU
  std::vector<double> out_bytes;         // per layer: its output for the batch
  double input_bytes = 0.0;              // the batch's rows and labels
  std::vector<double> param_bytes;       // per layer: its parameters
  double latency = 0.0, per_byte = 0.0;  // one copy between host and GPU
};

struct layer_split_plan {
  std::size_t cut = 0;
  std::vector<double> predicted;  // seconds for each cut 0..L
};

// Throws troupe::input_error when the per-layer vectors differ in length or are empty.
layer_split_plan plan_layer_split(const layer_split_inputs& in);

// "cut after conv2 (2 layers on the CPU): 1.92 ms; whole model on the GPU: 0.31 ms, on the CPU:
// 28.0 ms; ..." with the chosen cut first; `chosen` may differ from the plan's (a forced cut).
std::string describe(const layer_split_plan& plan, const std::vector<std::string>& names,
                     std::size_t chosen);

}  // namespace troupe::devices
