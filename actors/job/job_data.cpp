#include "actors/job/job_data.hpp"

#include <algorithm>
#include <numeric>

#include "core/config_load.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "data/csv.hpp"
#include "data/idx.hpp"
#include "data/preprocess.hpp"
#include "data/synthetic.hpp"

namespace troupe::actors {
namespace {

// Moves a seeded 20% of `all` into a test set (sources that come without one).
data::train_test hold_out(data::dataset all, std::uint64_t seed) {
  std::vector<std::size_t> order(all.n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  rng(seed).fork(0x7e57).shuffle(order);
  const std::size_t n_test = std::max<std::size_t>(1, all.n / 5);
  data::train_test out;
  auto take = [&](data::dataset& d, std::size_t from, std::size_t to) {
    d.name = all.name;
    d.sample_shape = all.sample_shape;
    d.classes = all.classes;
    d.n = to - from;
    const std::size_t f = all.features();
    d.x.resize(d.n * f);
    for (std::size_t i = from; i < to; ++i) {
      std::copy(all.row(order[i]), all.row(order[i]) + f, d.x.begin() + (i - from) * f);
      if (!all.labels.empty()) d.labels.push_back(all.labels[order[i]]);
      if (!all.targets.empty()) d.targets.push_back(all.targets[order[i]]);
    }
  };
  take(out.test, 0, n_test);
  take(out.train, n_test, all.n);
  return out;
}

data::dataset make_synthetic(const config::data_config& cfg, std::uint64_t seed) {
  rng r(seed);
  const std::size_t n = cfg.synthetic_samples ? cfg.synthetic_samples : 4096;
  switch (cfg.generator) {
    case synthetic_kind::linear:
      return data::make_linear_regression(n, 16, 0.1, r).data;
    case synthetic_kind::blobs:
      break;
    case synthetic_kind::hard_easy: {
      // 10% of the samples sit within 0.25 of a class boundary (data priority's test bed).
      data::hard_easy_options o;
      o.n = n;
      o.classes = 4;
      o.d = 8;
      o.hard_fraction = 0.1;
      return data::make_hard_easy_blobs(o, r).data;
    }
  }
  return data::make_gaussian_blobs(n, 10, 32, 4.0, r).data;
}

}  // namespace

data_bundle load_job_data(const config::data_config& cfg, std::uint64_t seed) {
  data::train_test tt;
  switch (cfg.dataset) {
    case dataset_kind::fashion_mnist:
    case dataset_kind::idx:
      tt = data::load_fashion_mnist(cfg.path.empty() ? config::default_fashion_mnist_path
                                                     : cfg.path);
      break;
    case dataset_kind::csv:
      tt = hold_out(data::load_csv(cfg.path), seed);
      break;
    case dataset_kind::synthetic:
      tt = hold_out(make_synthetic(cfg, seed), seed);
      break;
  }
  if (tt.train.n == 0)
    throw input_error(std::string("data: the training set of '") + name_of(cfg.dataset) +
                      "' is empty");
  if (!cfg.preprocess.empty()) {
    data::pipeline p(cfg.preprocess);
    p.fit_apply(tt.train);
    p.apply(tt.test);
  }
  data_bundle out;
  out.train = std::make_shared<const data::dataset>(std::move(tt.train));
  out.test = std::make_shared<const data::dataset>(std::move(tt.test));
  return out;
}

step_sampler::step_sampler(std::size_t n, std::int64_t batch, std::uint64_t seed)
    : sampler_(n, seed), batch_(batch), steps_per_pass_(steps_per_pass(n, batch)) {}

std::int64_t step_sampler::steps_per_pass(std::size_t n, std::int64_t batch) {
  const auto n64 = static_cast<std::int64_t>(n);
  return std::max<std::int64_t>(1, (n64 + batch - 1) / batch);
}

std::vector<std::int64_t> step_sampler::batch(std::int64_t step) const {
  const data::sampler_cursor start{static_cast<std::uint64_t>(pass_of(step)),
                                   static_cast<std::uint64_t>((step % steps_per_pass_) * batch_)};
  return sampler_.peek(start, static_cast<std::size_t>(batch_));
}

}  // namespace troupe::actors
