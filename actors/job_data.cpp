#include "actors/job_data.hpp"

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

}  // namespace

data_bundle load_job_data(const config::data_config& cfg, std::uint64_t seed) {
  data::train_test tt;
  if (cfg.dataset == "fashion-mnist" || cfg.dataset == "idx") {
    tt = data::load_fashion_mnist(cfg.path.empty() ? config::default_fashion_mnist_path : cfg.path);
  } else if (cfg.dataset == "csv") {
    tt = hold_out(data::load_csv(cfg.path), seed);
  } else if (cfg.dataset == "synthetic") {
    rng r(seed);
    const std::size_t n = cfg.synthetic_samples ? cfg.synthetic_samples : 4096;
    if (cfg.synthetic_kind == "linear") {
      tt = hold_out(data::make_linear_regression(n, 16, 0.1, r).data, seed);
    } else if (cfg.synthetic_kind == "blobs") {
      tt = hold_out(data::make_gaussian_blobs(n, 10, 32, 4.0, r).data, seed);
    } else if (cfg.synthetic_kind == "hard-easy") {
      // 10% of the samples sit within 0.25 of a class boundary (data priority's test bed).
      data::hard_easy_options o;
      o.n = n;
      o.classes = 4;
      o.d = 8;
      o.hard_fraction = 0.1;
      tt = hold_out(data::make_hard_easy_blobs(o, r).data, seed);
    } else {
      throw input_error("data.synthetic_kind: unknown kind '" + cfg.synthetic_kind +
                        "' (blobs | linear | hard-easy)");
    }
  } else {
    throw input_error("data.dataset: unknown dataset '" + cfg.dataset + "'");
  }
  if (tt.train.n == 0)
    throw input_error("data: the training set of '" + cfg.dataset + "' is empty");
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
