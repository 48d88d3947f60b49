// Embedding Troupe: a custom orchestration app that brings its own model class, builds a small
// heterogeneous cluster in code, submits a job, and watches it live. The runtime is a library
// (actors/runtime.hpp); `troupe run` is just another user of it.
#include <cmath>
#include <cstdio>
#include <memory>

#include "actors/runtime.hpp"

using namespace troupe;

namespace {

// Our own model: multinomial logistic regression written by hand (params: W[classes x d], b).
class centroid_softmax final : public models::model {
 public:
  explicit centroid_softmax(const models::model_spec& s)
      : d_(s.input_shape.empty() ? 0 : s.input_shape.back()), k_(s.classes) {
    layout_.add("w", {k_, d_});
    layout_.add("b", {k_});
  }
  std::string kind() const override { return "my-softmax"; }
  const models::param_layout& layout() const override { return layout_; }
  void init_params(float* p, rng& r) const override {
    for (std::size_t i = 0; i < layout_.size(); ++i) p[i] = static_cast<float>(r.normal(0, 0.01));
  }
  models::step_stats forward_backward(const float* p, const models::batch& b, float* g) override {
    std::fill(g, g + layout_.size(), 0.0f);
    return run(p, b, g);
  }
  models::step_stats evaluate(const float* p, const models::batch& b) override {
    return run(p, b, nullptr);
  }
  std::unique_ptr<models::model> clone() const override {
    return std::make_unique<centroid_softmax>(*this);
  }

 private:
  // Loss and accuracy sums; with g, also adds each sample's gradient (softmax - onehot) x.
  models::step_stats run(const float* p, const models::batch& b, float* g) {
    models::step_stats s;
    logits_.resize(k_);
    for (std::size_t n = 0; n < b.size; ++n) {
      const float* x = b.x + n * d_;
      double mx = -1e30, z = 0;
      for (std::size_t c = 0; c < k_; ++c) {
        double v = p[k_ * d_ + c];
        for (std::size_t j = 0; j < d_; ++j) v += p[c * d_ + j] * x[j];
        logits_[c] = v;
        mx = std::max(mx, v);
      }
      for (std::size_t c = 0; c < k_; ++c) z += std::exp(logits_[c] - mx);
      const auto y = static_cast<std::size_t>(b.labels[n]);
      s.loss_sum += -(logits_[y] - mx - std::log(z));
      std::size_t best = 0;
      for (std::size_t c = 1; c < k_; ++c) best = logits_[c] > logits_[best] ? c : best;
      s.correct += best == y;
      ++s.samples;
      if (!g) continue;
      for (std::size_t c = 0; c < k_; ++c) {
        const float delta = static_cast<float>(std::exp(logits_[c] - mx) / z) - (c == y);
        for (std::size_t j = 0; j < d_; ++j) g[c * d_ + j] += delta * x[j];
        g[k_ * d_ + c] += delta;
      }
    }
    return s;
  }
  std::size_t d_, k_;
  models::param_layout layout_;
  std::vector<double> logits_;
};

}  // namespace

int main() {
  runtime::register_model("my-softmax", [](const models::model_spec& s) {
    return std::make_unique<centroid_softmax>(s);
  });

  // A cluster of two cpu devices and one simulated device twice as slow.
  config::run_config cluster;
  cluster.source = "orchestrate.cpp";
  config::group_config fast, slow;
  fast.name = "fast";
  fast.count = 2;
  slow.name = "slow";
  slow.device = troupe::device_kind::sim;
  slow.slowdown = 2.0;
  cluster.cluster.groups = {fast, slow};

  config::job_config job;
  job.name = "blobs";
  job.model.kind = "my-softmax";
  job.data.dataset = troupe::dataset_kind::synthetic;
  job.data.synthetic_samples = 4000;
  job.data.preprocess = {"standardize"};
  job.data.split =
      troupe::split_kind::weighted;  // no weights given: measured by a short probe at start
  job.optimizer.kind = troupe::optimizer_kind::sgd;
  job.optimizer.lr = 0.1;
  job.batch = 128;
  job.epochs = 2;
  job.max_steps = 30;

  runtime rt(cluster);
  rt.on_log([](const std::string& j, const std::string& line) {
    std::printf("[%s] %s\n", j.c_str(), line.c_str());
  });
  rt.on_metrics([](const live_metrics& m) {
    if (m.step % 5 != 0) return;
    std::printf("step %2lld/%lld  loss %.4f  %7.0f samples/s  split",
                static_cast<long long>(m.step), static_cast<long long>(m.steps_total), m.loss,
                m.samples_per_second);
    for (const auto& [group, n] : m.split)
      std::printf(" %s=%lld", group.c_str(), static_cast<long long>(n));
    std::printf("\n");
  });
  rt.submit(job);
  const run_report report = rt.wait();

  const auto& j = report.jobs.at(0);
  std::printf("%s: %s after %lld steps, test accuracy %.3f, params fnv1a64 %s\n", j.name.c_str(),
              troupe::name_of(j.status), static_cast<long long>(j.steps), j.test_accuracy,
              hex64(j.params.fnv1a64).c_str());
  for (const auto& w : j.workers)
    std::printf("  %-7s %-4s mean batch %5.1f  busy %.2f\n", w.name.c_str(), w.device.c_str(),
                w.mean_batch, w.busy_fraction);
  return exit_code(report);
}
