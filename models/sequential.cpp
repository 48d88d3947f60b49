#include "models/sequential.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "models/layers/dense.hpp"
#include "models/layers/init.hpp"
#include "models/layers/loss.hpp"
#include "models/layers/pool.hpp"

namespace troupe::models {

namespace {

std::size_t product(const std::vector<std::size_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::size_t{1}, std::multiplies<>());
}

class dense_stage final : public stage {
 public:
  dense_stage(param_layout& l, const std::string& name, std::size_t in, std::size_t out, bool relu,
              double gain)
      : in_(in), out_(out), relu_(relu), gain_(gain) {
    w_ = l.add(name + ".weight", {out, in}).offset;
    b_ = l.add(name + ".bias", {out}).offset;
  }
  std::size_t out_size() const override { return out_; }
  void init(float* p, rng& r) const override {
    layers::kaiming_uniform(p + w_, out_ * in_, in_, gain_, r);
    std::fill(p + b_, p + b_ + out_, 0.0f);
  }
  void forward(const float* p, const float* x, float* y, std::size_t n) override {
    layers::dense_forward(x, p + w_, p + b_, y, n, in_, out_, relu_);
  }
  void backward(const float* p, const float* x, const float* y, float* dy, float* dx, float* g,
                std::size_t n) override {
    layers::dense_backward(x, p + w_, y, dy, dx, g + w_, g + b_, n, in_, out_, relu_);
  }

 private:
  std::size_t in_, out_;
  bool relu_;
  double gain_;
  std::size_t w_ = 0, b_ = 0;
};

class pool_stage final : public stage {
 public:
  pool_stage(std::size_t c, std::size_t h, std::size_t w) : c_(c), h_(h), w_(w) {}
  std::size_t out_size() const override { return c_ * (h_ / 2) * (w_ / 2); }
  void init(float*, rng&) const override {}
  void forward(const float*, const float* x, float* y, std::size_t n) override {
    win_.resize(n * out_size());
    layers::maxpool2_forward(x, y, win_.data(), n, c_, h_, w_);
  }
  void backward(const float*, const float*, const float*, float* dy, float* dx, float*,
                std::size_t n) override {
    if (dx) layers::maxpool2_backward(win_.data(), dy, dx, n, c_, h_, w_);
  }
  // Samples [first, first + n) of a batch of `batch`, x, y, dy and dx pointing at sample first.
  void forward_part(const float* x, float* y, std::size_t first, std::size_t n, std::size_t batch) {
    win_.resize(batch * out_size());
    layers::maxpool2_forward(x, y, win_.data() + first * out_size(), n, c_, h_, w_);
  }
  void backward_part(const float* dy, float* dx, std::size_t first, std::size_t n) {
    layers::maxpool2_backward(win_.data() + first * out_size(), dy, dx, n, c_, h_, w_);
  }

 private:
  std::size_t c_, h_, w_;
  std::vector<std::int32_t> win_;
};

class conv_stage final : public stage {
 public:
  conv_stage(param_layout& l, const std::string& name, layers::conv_shape s, bool relu)
      : s_(s), relu_(relu), col_(s.col_size()), dcol_(s.col_size()) {
    w_ = l.add(name + ".weight", {s.cout, s.c, s.k, s.k}).offset;
    b_ = l.add(name + ".bias", {s.cout}).offset;
  }
  std::size_t out_size() const override { return s_.out_size(); }
  void init(float* p, rng& r) const override {
    // A ReLU follows every conv layer here, so He's gain sqrt(2).
    layers::kaiming_uniform(p + w_, s_.cout * s_.col_rows(), s_.col_rows(), std::sqrt(2.0), r);
    std::fill(p + b_, p + b_ + s_.cout, 0.0f);
  }
  void forward(const float* p, const float* x, float* y, std::size_t n) override {
    layers::conv2d_forward(s_, x, p + w_, p + b_, y, n, col_.data(), relu_);
  }
  void backward(const float* p, const float* x, const float* y, float* dy, float* dx, float* g,
                std::size_t n) override {
    layers::conv2d_backward(s_, x, p + w_, y, dy, dx, g + w_, g + b_, n, col_.data(), dcol_.data(),
                            relu_);
  }
  // With the 2x2 pool after it, one sample at a time: the CNN's first conv writes 3.2 MB a batch
  // of 64, which the pool, and backward the mask and bias gradient, then read back from beyond
  // L2; per sample it is 50 KB and still in cache.
  void fuse_pool(pool_stage* next) { pool_ = next; }
  bool fuses_next() const override { return pool_ != nullptr; }
  void forward_fused(const float* p, const float* x, float* y, float* pooled,
                     std::size_t n) override {
    const std::size_t in = s_.in_size(), out = s_.out_size(), pout = pool_->out_size();
    for (std::size_t i = 0; i < n; ++i) {
      layers::conv2d_forward(s_, x + i * in, p + w_, p + b_, y + i * out, 1, col_.data(), relu_);
      pool_->forward_part(y + i * out, pooled + i * pout, i, 1, n);
    }
  }
  void backward_fused(const float* p, const float* x, const float* y, float* dpooled, float* dy,
                      float* dx, float* g, std::size_t n) override {
    if (n == 0) return backward(p, x, y, dy, dx, g, n);
    const std::size_t in = s_.in_size(), out = s_.out_size(), pout = pool_->out_size();
    for (std::size_t i = 0; i < n; ++i) {
      pool_->backward_part(dpooled + i * pout, dy + i * out, i, 1);
      // The same sums in the same order as one call over the batch: the first sample
      // overwrites dw and db, the rest add.
      layers::conv2d_backward(s_, x + i * in, p + w_, y + i * out, dy + i * out,
                              dx ? dx + i * in : nullptr, g + w_, g + b_, 1, col_.data(),
                              dcol_.data(), relu_, i > 0);
    }
  }

 private:
  layers::conv_shape s_;
  bool relu_;
  std::vector<float> col_, dcol_;
  std::size_t w_ = 0, b_ = 0;
  pool_stage* pool_ = nullptr;
};

}  // namespace

sequential::sequential(std::string kind, model_spec spec, rebuild_fn rebuild)
    : kind_(std::move(kind)), spec_(std::move(spec)), rebuild_(rebuild), shape_(spec_.input_shape) {
  if (shape_.empty() || product(shape_) == 0)
    throw input_error("model '" + kind_ + "': input_shape must be non-empty with no zero extent");
  program_.input_size = product(shape_);
}

std::size_t sequential::flat() const {
  return product(shape_);
}

void sequential::add_dense(const std::string& name, std::size_t out, bool relu, double init_gain) {
  if (out == 0) throw input_error("model '" + kind_ + "': layer " + name + " has width 0");
  layer_op op;
  op.op = layer_op::kind::dense;
  op.relu = relu;
  op.in = flat();
  op.out = out;
  stages_.push_back(std::make_unique<dense_stage>(layout_, name, flat(), out, relu, init_gain));
  op.weight = layout_.find(name + ".weight").offset;
  op.bias = layout_.find(name + ".bias").offset;
  shape_ = {out};
  record(op);
}

void sequential::add_conv(const std::string& name, std::size_t cout, std::size_t k, bool relu) {
  if (shape_.size() != 3)
    throw input_error("model '" + kind_ + "': " + name + " needs an image input {C,H,W}");
  if (cout == 0) throw input_error("model '" + kind_ + "': " + name + " has 0 channels");
  if (k % 2 == 0)
    throw input_error("model '" + kind_ + "': kernel " + std::to_string(k) +
                      " is not odd ('same' padding needs an odd kernel)");
  const layers::conv_shape s{shape_[0], shape_[1], shape_[2], cout, k};
  stages_.push_back(std::make_unique<conv_stage>(layout_, name, s, relu));
  layer_op op;
  op.op = layer_op::kind::conv;
  op.relu = relu;
  op.conv = s;
  op.in = s.in_size();
  op.out = s.out_size();
  op.weight = layout_.find(name + ".weight").offset;
  op.bias = layout_.find(name + ".bias").offset;
  shape_ = {cout, s.h, s.w};
  record(op);
}

void sequential::add_maxpool2() {
  if (shape_.size() != 3 || shape_[1] < 2 || shape_[2] < 2)
    throw input_error("model '" + kind_ + "': a 2x2 pool needs an image of at least 2x2, got " +
                      std::to_string(shape_.size() == 3 ? shape_[1] : 0) + "x" +
                      std::to_string(shape_.size() == 3 ? shape_[2] : 0));
  auto pool = std::make_unique<pool_stage>(shape_[0], shape_[1], shape_[2]);
  if (auto* conv = stages_.empty() ? nullptr : dynamic_cast<conv_stage*>(stages_.back().get()))
    conv->fuse_pool(pool.get());
  stages_.push_back(std::move(pool));
  layer_op op;
  op.op = layer_op::kind::maxpool2;
  op.conv = layers::conv_shape{shape_[0], shape_[1], shape_[2], shape_[0], 1};
  op.in = flat();
  shape_ = {shape_[0], shape_[1] / 2, shape_[2] / 2};
  op.out = flat();
  record(op);
}

void sequential::record(const layer_op& op) {
  program_.layers.push_back(op);
  program_.outputs = op.out;
  program_.param_count = layout_.size();
}

void sequential::init_params(float* params, rng& r) const {
  for (const auto& s : stages_) s->init(params, r);
}

const float* sequential::forward(const float* params, const float* x, std::size_t n) {
  if (stages_.empty()) throw input_error("model '" + kind_ + "' has no layers");
  return run_forward(params, x, n, stages_.size(), nullptr);
}

const float* sequential::run_forward(const float* params, const float* x, std::size_t n,
                                     std::size_t k, std::vector<double>* seconds) {
  acts_.resize(stages_.size());
  const float* in = x;
  for (std::size_t i = 0; i < k; ++i) {
    acts_[i].resize(n * stages_[i]->out_size());
    // Not when timing stages one by one: the cost model wants each stage's own time.
    if (!seconds && i + 1 < k && stages_[i]->fuses_next()) {
      acts_[i + 1].resize(n * stages_[i + 1]->out_size());
      stages_[i]->forward_fused(params, in, acts_[i].data(), acts_[i + 1].data(), n);
      in = acts_[++i].data();
      continue;
    }
    if (seconds) {
      stopwatch sw;
      stages_[i]->forward(params, in, acts_[i].data(), n);
      (*seconds)[i] += sw.seconds();
    } else {
      stages_[i]->forward(params, in, acts_[i].data(), n);
    }
    in = acts_[i].data();
  }
  return in;
}

void sequential::size_grads(std::size_t n, std::size_t k) {
  grads_.resize(stages_.size());
  for (std::size_t i = 0; i < k; ++i) grads_[i].resize(n * stages_[i]->out_size());
}

void sequential::run_backward(const float* params, const float* x, std::size_t n, std::size_t k,
                              float* grad_sum, std::vector<double>* seconds) {
  for (std::size_t i = k; i-- > 0;) {
    if (!seconds && i > 0 && stages_[i - 1]->fuses_next()) {
      --i;
      const float* in = i == 0 ? x : acts_[i - 1].data();
      float* dx = i == 0 ? nullptr : grads_[i - 1].data();
      stages_[i]->backward_fused(params, in, acts_[i].data(), grads_[i + 1].data(),
                                 grads_[i].data(), dx, grad_sum, n);
      continue;
    }
    const float* in = i == 0 ? x : acts_[i - 1].data();
    float* dx = i == 0 ? nullptr : grads_[i - 1].data();
    if (seconds) {
      stopwatch sw;
      stages_[i]->backward(params, in, acts_[i].data(), grads_[i].data(), dx, grad_sum, n);
      (*seconds)[i] += sw.seconds();
    } else {
      stages_[i]->backward(params, in, acts_[i].data(), grads_[i].data(), dx, grad_sum, n);
    }
  }
}

step_stats sequential::loss(const float* out, const batch& b, std::size_t first, std::size_t n,
                            float* dout) {
  const float* w = b.weights ? b.weights + first : nullptr;
  float* sl = b.sample_loss ? b.sample_loss + first : nullptr;
  if (loss_ == loss_kind::squared_error) {
    if (!b.targets) throw input_error("model '" + kind_ + "' needs regression targets");
    return layers::squared_error(out, b.targets + first, w, n, dout, sl);
  }
  if (!b.labels) throw input_error("model '" + kind_ + "' needs class labels");
  return layers::softmax_cross_entropy(out, b.labels + first, w, n, stages_.back()->out_size(),
                                       dout, sl);
}

step_stats sequential::forward_backward(const float* params, const batch& b, float* grad_sum) {
  const std::size_t n = b.size;
  if (n == 0) {
    std::memset(grad_sum, 0, layout_.size() * sizeof(float));
    return {};
  }
  const float* out = forward(params, b.x, n);
  size_grads(n, stages_.size());
  const step_stats st = loss(out, b, 0, n, grads_.back().data());
  run_backward(params, b.x, n, stages_.size(), grad_sum, nullptr);
  return st;
}

const float* sequential::forward_prefix(const float* params, const float* x, std::size_t n,
                                        std::size_t k) {
  if (k > stages_.size())
    throw input_error("model '" + kind_ + "': a prefix of " + std::to_string(k) + " of " +
                      std::to_string(stages_.size()) + " layers");
  return run_forward(params, x, n, k, nullptr);
}

void sequential::backward_prefix(const float* params, const float* x, std::size_t n, std::size_t k,
                                 const float* d_out, float* grad_sum) {
  if (k == 0) return;
  if (k > stages_.size())
    throw input_error("model '" + kind_ + "': a prefix of " + std::to_string(k) + " of " +
                      std::to_string(stages_.size()) + " layers");
  size_grads(n, k);
  // The stages may clobber their output gradient (the ReLU masks it in place): work on a copy.
  std::copy_n(d_out, n * stages_[k - 1]->out_size(), grads_[k - 1].data());
  run_backward(params, x, n, k, grad_sum, nullptr);
}

std::vector<double> sequential::layer_seconds(const float* params, const batch& b,
                                              float* grad_sum) {
  const std::size_t n = b.size, L = stages_.size();
  std::vector<double> out(L, 0.0);
  if (n == 0 || L == 0) return out;
  const float* last = run_forward(params, b.x, n, L, &out);
  size_grads(n, L);
  stopwatch sw;
  loss(last, b, 0, n, grads_.back().data());
  out[L - 1] += sw.seconds();
  run_backward(params, b.x, n, L, grad_sum, &out);
  return out;
}

step_stats sequential::evaluate(const float* params, const batch& b) {
  step_stats total;
  const std::size_t in = spec_.input_size();
  for (std::size_t first = 0; first < b.size; first += eval_chunk) {
    const std::size_t n = std::min(eval_chunk, b.size - first);
    const float* out = forward(params, b.x + first * in, n);
    total += loss(out, b, first, n, nullptr);
  }
  return total;
}

}  // namespace troupe::models
