#include <cstdio>

#include "apps/bench_train.hpp"
#include "apps/console.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/median.hpp"
#include "data/sampler.hpp"
#ifdef TROUPE_HAVE_CUDA
#include "devices/cuda/gpu_program.hpp"
#endif

namespace troupe::apps {

#ifdef TROUPE_HAVE_CUDA
train_result train_on_gpu(const models::model& m, const models::optimizer_spec& optimizer,
                          std::vector<float> params, const data::dataset& train,
                          const data::dataset& test, const train_settings& s) {
  const models::layer_program* program = m.program();
  if (!program)
    throw input_error("bench train: model '" + m.kind() + "' has no layer program for the GPU");
  devices::gpu::trainer_options o;
  o.ordinal = s.ordinal;
  o.max_batch = s.batch;
  o.graphs = s.graphs;
  o.optimizer = optimizer;
  devices::gpu::resident_trainer trainer(*program, o, train.x.data(), train.labels.data(), train.n);
  trainer.set_params(params.data());

  data::epoch_sampler sampler(train.n, s.seed);
  train_result r;
  std::vector<double> later_epochs_us;
  for (std::int64_t e = 0; e < s.epochs; ++e) {
    // The epoch's steps as the CPU loop takes them: the sampler's runs of `batch` indices, the
    // last one shortened. The whole order goes to the GPU once; each step reads its run there.
    std::vector<std::int64_t> order;
    std::vector<std::size_t> sizes;
    const auto epoch = sampler.cursor().epoch;
    while (sampler.cursor().epoch == epoch) {
      if (s.max_steps >= 0 && r.steps + sizes.size() >= static_cast<std::size_t>(s.max_steps))
        break;
      const auto idx = sampler.next(s.batch);
      order.insert(order.end(), idx.begin(), idx.end());
      sizes.push_back(idx.size());
    }
    if (sizes.empty()) break;
    trainer.set_order(order);
    stopwatch sw;
    for (auto n : sizes) trainer.step(n);
    const auto stats = trainer.take_stats();  // waits for the epoch's steps
    const double epoch_s = sw.seconds();
    r.train_seconds += epoch_s;
    if (e > 0) later_epochs_us.push_back(1e6 * epoch_s / static_cast<double>(sizes.size()));
    r.samples += stats.samples;
    r.steps += sizes.size();
    ++r.epochs_done;
    char line[160];
    std::snprintf(line, sizeof line,
                  "epoch %lld: train loss %.4f, %.0f samples/s so far, %.1f us a step this epoch",
                  static_cast<long long>(e + 1),
                  stats.samples ? stats.loss_sum / static_cast<double>(stats.samples) : 0.0,
                  static_cast<double>(r.samples) / std::max(r.train_seconds, 1e-9),
                  1e6 * epoch_s / static_cast<double>(sizes.size()));
    console::info(line);
  }
  if (!later_epochs_us.empty()) r.steady_step_us = median(later_epochs_us);
  r.test = trainer.evaluate(test.x.data(), test.labels.data(), test.n);
  return r;
}
#else
train_result train_on_gpu(const models::model&, const models::optimizer_spec&, std::vector<float>,
                          const data::dataset&, const data::dataset&, const train_settings&) {
  throw input_error(
      "bench train: this build has no CUDA (nvcc was not found when it was "
      "configured)");
}
#endif

}  // namespace troupe::apps
