// `troupe bench train`: trains one model on one device, single process, no actors. It is the
// baseline that the runtime's control-plane cost is measured against, and the figure compared
// with PyTorch (apps/bench/torch_train.py) on the same model, batch, optimizer and threads.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "apps/args.hpp"
#include "apps/bench_train.hpp"
#include "apps/command.hpp"
#include "apps/console.hpp"
#include "apps/json_output.hpp"
#include "apps/sgemm_roofline.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "data/idx.hpp"
#include "data/sampler.hpp"
#include "devices/cpu_device.hpp"
#include "devices/device.hpp"
#include "models/model.hpp"
#include "models/optimizer.hpp"
#include "models/step_gemms.hpp"

namespace troupe::apps {
namespace {

const char* usage =
    "usage: troupe bench train --model mlp|cnn|softmax [--device cpu|cuda] [--threads T]\n"
    "                          [--batch B] [--epochs E] [--optimizer adam] [--lr LR] [--seed S]\n"
    "                          [--data DIR] [--max-steps N] [--graphs on|off]\n"
    "                          [--layer-split auto|K] [--json FILE]\n\n"
    "Trains on Fashion-MNIST on one device and prints samples/s (training steps only), the mean\n"
    "step time, final test accuracy and loss, and wall time. With --device cuda the training\n"
    "set, parameters and optimizer state stay on the GPU and each step is one CUDA graph\n"
    "(--graphs off launches its kernels one by one instead). --layer-split runs the first\n"
    "layers on this CPU (--threads) and the rest on the GPU, cut where the measured cost model\n"
    "says (auto) or after K layers, through the runtime's device (rows and parameters up each\n"
    "step), and prints every cut's predicted step time. On the cpu device it also prints the\n"
    "step's achieved GFLOP/s (its GEMMs' FLOPs over the mean step time) against OpenBLAS's\n"
    "single-call sgemm GFLOP/s at the same shapes, timed after training. --json writes\n"
    "samples_per_second, step_us, test_accuracy, test_loss, wall_seconds, epochs, batch,\n"
    "threads, model, device, and on the cpu device gflops, sgemm_gflops, roofline_ratio.";

// Copies the rows of `idx` into a contiguous batch (the model reads contiguous memory).
void gather(const data::dataset& ds, const std::vector<std::int64_t>& idx, std::vector<float>& x,
            std::vector<std::int32_t>& y) {
  const std::size_t f = ds.features(), count = idx.size();
  x.resize(count * f);
  y.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const auto row = static_cast<std::size_t>(idx[i]);
    std::copy_n(ds.row(row), f, x.data() + i * f);
    y[i] = ds.labels[row];
  }
}

models::step_stats evaluate(devices::device& dev, models::model& m, const float* params,
                            const data::dataset& ds) {
  models::step_stats total;
  const std::size_t chunk = 1000, f = ds.features();
  for (std::size_t begin = 0; begin < ds.n; begin += chunk) {
    models::batch b;
    b.size = std::min(chunk, ds.n - begin);
    b.x = ds.x.data() + begin * f;
    b.labels = ds.labels.data() + begin;
    total += dev.run_eval(m, params, b);
  }
  return total;
}

// The loop over a device's run_step (a cpu device, or a cuda device with a layer split), timed
// like the PyTorch twin: the batch gather, forward/backward and the
// optimizer. The runtime's sampler: a seeded permutation per epoch, the last step shortened.
train_result train_on_device(devices::device& dev, models::model& model, models::optimizer& opt,
                             std::vector<float>& params, const data::dataset& train,
                             std::int64_t batch, std::int64_t epochs, std::int64_t max_steps,
                             std::uint64_t seed) {
  std::vector<float> grad(params.size());
  data::epoch_sampler sampler(train.n, seed);
  std::vector<float> x;
  std::vector<std::int32_t> y;
  train_result r;
  for (std::int64_t e = 0; e < epochs; ++e) {
    double epoch_loss = 0.0;
    std::size_t epoch_samples = 0;
    const auto epoch = sampler.cursor().epoch;
    while (sampler.cursor().epoch == epoch) {
      if (max_steps >= 0 && r.steps >= static_cast<std::size_t>(max_steps)) break;
      stopwatch step;
      const auto idx = sampler.next(static_cast<std::size_t>(batch));
      gather(train, idx, x, y);
      models::batch b;
      b.x = x.data();
      b.labels = y.data();
      b.size = idx.size();
      auto stats = dev.run_step(model, params.data(), b, grad.data());
      const float inv = 1.0f / static_cast<float>(stats.samples);
      for (auto& g : grad) g *= inv;  // the optimizer takes the mean gradient
      opt.step(params.data(), grad.data());
      r.train_seconds += step.seconds();
      epoch_loss += stats.loss_sum;
      epoch_samples += stats.samples;
      r.samples += stats.samples;
      ++r.steps;
    }
    ++r.epochs_done;
    char line[128];
    std::snprintf(line, sizeof line, "epoch %lld: train loss %.4f, %.0f samples/s",
                  static_cast<long long>(e + 1),
                  epoch_samples ? epoch_loss / static_cast<double>(epoch_samples) : 0.0,
                  static_cast<double>(r.samples) / std::max(r.train_seconds, 1e-9));
    console::info(line);
  }
  return r;
}

// The step's GEMM throughput against OpenBLAS's at the same shapes (see sgemm_roofline.hpp).
struct compute_rate {
  double gflops = 0.0, sgemm_gflops = 0.0;
  double ratio() const { return sgemm_gflops > 0.0 ? gflops / sgemm_gflops : 0.0; }
};

compute_rate measure_compute(const models::model& m, std::size_t batch, const train_result& r,
                             int threads) {
  compute_rate c;
  const models::layer_program* program = m.program();
  if (program == nullptr || r.samples == 0 || r.train_seconds <= 0.0) return c;
  const auto gemms = models::training_gemms(*program, batch);
  // Every GEMM's FLOPs are linear in the rows, so the run's are a full step's times
  // samples / batch: exact also when an epoch's last step is short.
  const double run_flops =
      models::total_flops(gemms) * static_cast<double>(r.samples) / static_cast<double>(batch);
  c.gflops = run_flops / r.train_seconds / 1e9;
  devices::set_blas_threads(threads);
  c.sgemm_gflops = sgemm_gflops(gemms);
  return c;
}

const flag_set flags{{"model", "device", "threads", "batch", "epochs", "optimizer", "lr", "seed",
                      "data", "max-steps", "graphs", "layer-split", "json"},
                     {},
                     {}};

int run(const std::vector<std::string>& argv) {
  args a(argv, flags);
  json_output json(a.get("json"));
  a.no_positionals();
  const std::string model_kind = a.get_or("model", "mlp");
  const auto threads = a.get_int("threads", 1);
  const auto batch = a.get_int("batch", 64);
  const auto epochs = a.get_int("epochs", 1);
  const auto max_steps = a.get_int("max-steps", -1);
  if (batch < 1) throw input_error("--batch must be >= 1");
  if (epochs < 1) throw input_error("--epochs must be >= 1");

  const auto sets = data::load_fashion_mnist(a.get_or("data", "/usr/share/datasets/fashion-mnist"));
  const auto& train = sets.train;

  devices::device_spec ds;
  ds.kind = devices::parse_device_kind(a.get_or("device", "cpu"));
  ds.name = a.get_or("device", "cpu") + "0";
  ds.threads = static_cast<int>(threads);
  const auto split = a.get("layer-split");
  if (split) {
    if (ds.kind != devices::device_kind::cuda)
      throw input_error("--layer-split needs --device cuda");
    if (*split == "auto") {
      ds.layer_split = -2;
    } else {
      const auto k = a.get_int("layer-split", 0);
      if (k < 0) throw input_error("--layer-split must be auto or a number of layers >= 0");
      ds.layer_split = static_cast<int>(k);
    }
  }
  auto dev = devices::make_device(ds);

  models::model_spec ms;
  ms.kind = model_kind;
  ms.input_shape = train.sample_shape;
  ms.classes = train.classes;
  auto model = models::make_model(ms);

  models::optimizer_spec os;
  os.kind = a.get_or("optimizer", "adam");
  os.lr = a.get_double("lr", 1e-3);
  const std::size_t n_params = model->param_count();
  auto opt = models::make_optimizer(os, n_params);

  rng init(static_cast<std::uint64_t>(a.get_int("seed", 1)));
  std::vector<float> params(n_params);
  model->init_params(params.data(), init);

  train_result r;
  compute_rate compute;
  stopwatch wall;
  if (ds.kind == devices::device_kind::cuda && !split) {
    train_settings ts;
    ts.batch = static_cast<std::size_t>(batch);
    ts.epochs = epochs;
    ts.max_steps = max_steps;
    ts.seed = static_cast<std::uint64_t>(a.get_int("seed", 1));
    const std::string graphs = a.get_or("graphs", "on");
    if (graphs != "on" && graphs != "off") throw input_error("--graphs must be on or off");
    ts.graphs = graphs == "on";
    r = train_on_gpu(*model, os, params, train, sets.test, ts);
  } else {
    r = train_on_device(*dev, *model, *opt, params, train, batch, epochs, max_steps,
                        static_cast<std::uint64_t>(a.get_int("seed", 1)));
    r.test = evaluate(*dev, *model, params.data(), sets.test);
    if (ds.kind == devices::device_kind::cpu)
      compute =
          measure_compute(*model, static_cast<std::size_t>(batch), r, static_cast<int>(threads));
  }
  if (!dev->placement().empty()) std::printf("%s\n", dev->placement().c_str());
  const auto& test = r.test;
  const std::size_t samples = r.samples, steps = r.steps;
  const std::int64_t epochs_done = r.epochs_done;
  const double train_seconds = r.train_seconds;
  const double wall_s = wall.seconds();
  const double sps = static_cast<double>(samples) / std::max(train_seconds, 1e-9);
  const double acc = static_cast<double>(test.correct) / static_cast<double>(test.samples);
  const double test_loss = test.loss_sum / static_cast<double>(test.samples);
  const double step_us = 1e6 * train_seconds / static_cast<double>(std::max<std::size_t>(steps, 1));
  std::printf("model %s  device %s  threads %lld  batch %lld  epochs %lld  steps %zu\n",
              model_kind.c_str(), dev->name().c_str(), static_cast<long long>(threads),
              static_cast<long long>(batch), static_cast<long long>(epochs_done), steps);
  std::printf(
      "samples/s %.1f  step_us %.1f  test_accuracy %.4f  test_loss %.4f  wall_seconds %.2f\n", sps,
      step_us, acc, test_loss, wall_s);
  if (r.steady_step_us > 0)
    std::printf("step_us_steady %.1f  (median of epochs 2-%lld; samples/s %.1f)\n",
                r.steady_step_us, static_cast<long long>(epochs_done),
                static_cast<double>(batch) * 1e6 / r.steady_step_us);
  if (compute.sgemm_gflops > 0.0)
    std::printf("compute: %.1f GFLOP/s achieved, sgemm %.1f GFLOP/s at the same shapes (%.2fx)\n",
                compute.gflops, compute.sgemm_gflops, compute.ratio());
  if (json.wanted()) {
    nlohmann::json j = {{"samples_per_second", sps},
                        {"test_accuracy", acc},
                        {"test_loss", test_loss},
                        {"wall_seconds", wall_s},
                        {"epochs", epochs_done},
                        {"batch", batch},
                        {"threads", threads},
                        {"model", model_kind},
                        {"optimizer", os.kind},
                        {"steps", steps},
                        {"step_us", step_us},
                        {"device", name_of(ds.kind)},
                        {"step_us_steady", r.steady_step_us}};
    if (compute.sgemm_gflops > 0.0) {
      j["gflops"] = compute.gflops;
      j["sgemm_gflops"] = compute.sgemm_gflops;
      j["roofline_ratio"] = compute.ratio();
    }
    json.write(j, 2);
  }
  return exit_ok;
}

const command_registrar reg{
    {"bench train", "train one model on one device and print samples/s", usage, run, flags}};

}  // namespace
}  // namespace troupe::apps
