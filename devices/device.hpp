#pragma once
// A compute device: something that can run a model step. Backends: cpu (OpenBLAS), sim (another
// backend slowed down and share-gated, to emulate heterogeneity and virtual device shares on
// one machine) and cuda (built when nvcc is found). devices/ knows nothing of the network or of
// actors; a device_worker actor owns one device and calls it from its own thread.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/kinds.hpp"
#include "models/batch.hpp"
#include "models/model.hpp"

namespace troupe::devices {

// device_kind and its names are in core/kinds.hpp (the config names it).
using troupe::device_kind;

// For command-line flags. Throws troupe::input_error naming the text when it is not a kind.
device_kind parse_device_kind(const std::string& text);

struct device_spec {
  device_kind kind = device_kind::cpu;
  std::string name;                     // e.g. "cpu0", "slow/1"
  int threads = 1;                      // cpu: BLAS threads
  device_kind base = device_kind::cpu;  // sim: the real backend it wraps
  double slowdown = 1.0;                // sim: compute time is stretched by this factor (>= 1)
  double row_seconds = 0.0;  // sim: fixed base seconds per training sample; 0: measured live
  std::string share_group;   // sim: devices with the same non-empty name share one gate
  int ordinal = 0;           // cuda: device index
  // cuda: -1 the whole model on the GPU; -2 the first layers on the host's CPU and the rest on
  // the GPU, cut where a measured cost model says (devices/layer_split_plan.hpp); K >= 0 cut after
  // the first K layers.
  int layer_split = -1;
};

// Timings of one call, measured by the device itself.
struct step_timing {
  double compute_seconds = 0.0;    // time the backend computed (including any sim stretch)
  double gate_wait_seconds = 0.0;  // time spent waiting for a share of a shared device
  // In, set by the caller: how long the step's inputs had been ready when the call began (the
  // host thread waking and waiting for a core). A sim device counts it as part of its stretch,
  // and of compute_seconds, as if it had started when its inputs were ready.
  double start_lag_seconds = 0.0;
  // Out: bytes the call moved between processes (parameters and rows out, the gradient back),
  // for a device that computes in another process; 0 for one that computes here.
  std::uint64_t transfer_bytes = 0;
};

// A failure fault injection asks a device for (`oom` and `device-error` faults).
enum class device_fault { out_of_memory, error };

class device {
 public:
  virtual ~device() = default;
  virtual device_kind kind() const = 0;
  virtual const std::string& name() const = 0;
  // Relative compute speed estimate (1.0 = one reference CPU thread); policies refine it from
  // measured step times.
  virtual double capability() const = 0;

  // Runs forward/backward of m on the batch; see models::model::forward_backward.
  virtual models::step_stats run_step(models::model& m, const float* params, const models::batch& b,
                                      float* grad_sum, step_timing* timing = nullptr) = 0;
  // The gradient sum of each block of `block` rows of the batch on its own (the last block
  // short): block j's into grad_sums + j * param_count, ceil(b.size / block) sums in all, each
  // with the bits run_step gives for those rows alone. The canonical reduction adds them in
  // order (actors/sync/parameter_server.hpp). `features`: floats per row. The default calls
  // run_step once per block; a device that computes in another process loops there, in one call.
  virtual models::step_stats run_blocks(models::model& m, const float* params,
                                        const models::batch& b, std::size_t features,
                                        std::size_t block, float* grad_sums,
                                        step_timing* timing = nullptr);
  virtual models::step_stats run_eval(models::model& m, const float* params, const models::batch& b,
                                      step_timing* timing = nullptr) = 0;

  // Virtual shares: the job on whose behalf the next calls run, and its relative weight on this
  // device. Devices that are not shared ignore these.
  virtual void set_share(const std::string& job, double weight) {
    (void)job;
    (void)weight;
  }

  // Where the model's layers run, when the device decided it (a layer split); "" otherwise.
  virtual std::string placement() const { return {}; }

  // Makes the device fail as `f` would, for real where it can, and throws what that failure
  // throws (its text is what supervision classifies). The default throws std::bad_alloc for
  // out_of_memory and a runtime_failure naming the device for error.
  virtual void provoke(device_fault f);
};

// Throws troupe::input_error for an unknown or unavailable device (e.g. cuda without a GPU).
std::unique_ptr<device> make_device(const device_spec& spec);

}  // namespace troupe::devices
