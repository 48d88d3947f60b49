#include "devices/cuda/gpu_program.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/clock.hpp"

#include "devices/cuda/gpu_engine.cuh"

namespace troupe::devices::gpu {

namespace {

// Labels outside [0, classes) would index past a row of logits on the device: refuse them here,
// with the CPU path's message.
void check_labels(const std::int32_t* labels, std::size_t n, std::size_t classes) {
  for (std::size_t i = 0; i < n; ++i)
    if (labels[i] < 0 || static_cast<std::size_t>(labels[i]) >= classes)
      throw input_error("label " + std::to_string(labels[i]) + " is outside [0, " +
                        std::to_string(classes) + ") for a " + std::to_string(classes) +
                        "-class model");
}

// Copies a batch's rows, labels or targets and weights into the engine's buffers.
void load_batch(engine& e, const models::batch& b, std::size_t first, std::size_t n) {
  const auto& p = e.layers();
  e.be.to_device(e.x.get(), b.x + first * p.input_size, n * p.input_size * sizeof(float));
  if (p.loss == models::loss_kind::squared_error) {
    if (!b.targets) throw input_error("cuda backend: the model needs regression targets");
    e.be.to_device(e.targets.get(), b.targets + first, n * sizeof(float));
  } else {
    if (!b.labels) throw input_error("cuda backend: the model needs class labels");
    check_labels(b.labels + first, n, p.outputs);
    e.be.to_device(e.labels.get(), b.labels + first, n * sizeof(std::int32_t));
  }
  if (b.weights) e.be.to_device(e.weights.get(), b.weights + first, n * sizeof(float));
}

models::step_stats read_stats(engine& e, std::size_t samples) {
  double acc[2] = {0.0, 0.0};
  e.be.to_host(acc, e.acc.get(), sizeof acc);
  e.be.synchronize("reading the step's statistics");
  models::step_stats st;
  st.loss_sum = acc[0];
  st.samples = samples;
  st.correct = static_cast<std::size_t>(acc[1] + 0.5);
  return st;
}

void check_program(const models::layer_program& p) {
  if (p.layers.empty()) throw input_error("cuda backend: the model has no layers");
  if (p.loss == models::loss_kind::squared_error && p.outputs != 1)
    throw input_error("cuda backend: a squared-error model must have one output");
}

// Graph keys: what the captured work depends on besides the buffers.
enum : std::uint64_t { key_train = 1, key_eval = 2, key_resident = 3 };
std::uint64_t key_of(std::uint64_t kind, std::size_t n, bool weighted) {
  return kind | (static_cast<std::uint64_t>(weighted) << 2) | (static_cast<std::uint64_t>(n) << 3);
}

}  // namespace

// ---- program ----------------------------------------------------------------------------------

models::layer_program slice(const models::layer_program& p, std::size_t first) {
  if (first >= p.layers.size())
    throw input_error("cuda backend: no layers from " + std::to_string(first) + " of " +
                      std::to_string(p.layers.size()));
  models::layer_program out = p;
  out.layers.assign(p.layers.begin() + static_cast<std::ptrdiff_t>(first), p.layers.end());
  out.input_size = out.layers.front().in;
  return out;
}

program::program(const models::layer_program& p, const program_options& o)
    : layers_(p), options_(o) {
  check_program(p);
  param_begin_ = p.param_count;
  for (const auto& op : p.layers)
    if (op.op != models::layer_op::kind::maxpool2) param_begin_ = std::min(param_begin_, op.weight);
  e_ = std::make_unique<engine>(p, o);
}

program::~program() = default;

void program::fit(std::size_t rows) {
  if (rows <= e_->max_batch()) return;
  // The slice grew (the rebalancer moved rows here): grow once, to a power of two, not per row.
  std::size_t want = e_->max_batch();
  while (want < rows) want *= 2;
  e_.reset();
  program_options o = options_;
  o.max_batch = want;
  e_ = std::make_unique<engine>(layers_, o);
}

models::step_stats program::step(const float* params, const models::batch& b, float* grad_sum,
                                 float* d_input) {
  e_->be.activate();
  if (d_input && !options_.input_grad)
    throw input_error("cuda backend: an input gradient from a program built without one");
  const std::size_t n = b.size;
  if (n == 0) {
    std::fill(grad_sum + param_begin_, grad_sum + layers_.param_count, 0.0f);
    return {};
  }
  fit(n);
  engine& e = *e_;
  e.be.to_device(e.params.get(), params, layers_.param_count * sizeof(float));
  load_batch(e, b, 0, n);
  const bool weighted = b.weights != nullptr;
  e.run(key_of(key_train, n, weighted), [&] {
    e.clear_stats();
    e.forward(n);
    e.loss(n, true, weighted);
    e.backward(n);
  });
  e.be.to_host(grad_sum + param_begin_, e.grad.get() + param_begin_,
               (layers_.param_count - param_begin_) * sizeof(float));
  if (d_input) e.be.to_host(d_input, e.input_grad.get(), n * layers_.input_size * sizeof(float));
  if (b.sample_loss) e.be.to_host(b.sample_loss, e.raw.get(), n * sizeof(float));
  return read_stats(e, n);
}

std::vector<double> program::layer_seconds(const float* params, const models::batch& b) {
  e_->be.activate();
  fit(b.size);
  engine& e = *e_;
  e.be.to_device(e.params.get(), params, layers_.param_count * sizeof(float));
  load_batch(e, b, 0, b.size);
  e.be.synchronize("loading a batch to time");
  auto out = e.layer_seconds(b.size, b.weights != nullptr);
  e.clear_stats();
  return out;
}

program::transfer_cost program::measure_transfers() {
  e_->be.activate();
  const backend& be = e_->be;
  const std::size_t big = std::size_t{8} << 20;
  std::vector<char> host(big, 1);
  buffer<char> dev(be, big, "a transfer probe");
  auto time_copy = [&](std::size_t bytes) {
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      stopwatch sw;
      be.to_device(dev.get(), host.data(), bytes);
      be.to_host(host.data(), dev.get(), bytes);
      be.synchronize("a transfer probe");
      best = std::min(best, sw.seconds() / 2);
    }
    return best;
  };
  const double small = time_copy(4), large = time_copy(big);
  transfer_cost c;
  c.latency = small;
  c.per_byte = std::max(0.0, large - small) / static_cast<double>(big);
  return c;
}

models::step_stats program::evaluate(const float* params, const models::batch& b) {
  e_->be.activate();
  engine& e = *e_;
  e.be.to_device(e.params.get(), params, layers_.param_count * sizeof(float));
  e.clear_stats();
  const bool weighted = b.weights != nullptr;
  for (std::size_t first = 0; first < b.size; first += e.max_batch()) {
    const std::size_t n = std::min(e.max_batch(), b.size - first);
    load_batch(e, b, first, n);
    e.run(key_of(key_eval, n, weighted), [&] {
      e.forward(n);
      e.loss(n, false, weighted);
    });
    if (b.sample_loss) e.be.to_host(b.sample_loss + first, e.raw.get(), n * sizeof(float));
  }
  return read_stats(e, b.size);
}

// ---- resident_trainer -------------------------------------------------------------------------

class resident_state {
 public:
  buffer<float> data;
  buffer<std::int32_t> data_labels;
  buffer<std::int64_t> order;
  buffer<std::int64_t> cursor;
  buffer<float> m, v;  // optimizer moments (momentum uses v)
  buffer<kernels::optimizer_scalars> scalars;
  std::size_t rows = 0;
};

resident_trainer::resident_trainer(const models::layer_program& p, const trainer_options& o,
                                   const float* x, const std::int32_t* labels, std::size_t rows) {
  check_program(p);
  if (p.loss != models::loss_kind::softmax_cross_entropy)
    throw input_error("cuda resident training: only classification models");
  const auto& k = o.optimizer.kind;
  if (k != "sgd" && k != "momentum" && k != "adam" && k != "adamw")
    throw input_error("cuda resident training: optimizer '" + k +
                      "' has no GPU kernel (sgd, momentum, adam, adamw)");
  check_labels(labels, rows, p.outputs);
  program_options po = o;
  e_ = std::make_unique<engine>(p, po);
  auto st = std::make_unique<resident_state>();
  const backend& be = e_->be;
  st->rows = rows;
  st->data = buffer<float>(be, rows * p.input_size, "the resident training set");
  st->data_labels = buffer<std::int32_t>(be, rows, "the resident labels");
  st->order = buffer<std::int64_t>(be, rows, "the sample order");
  st->cursor = buffer<std::int64_t>(be, 1, "the order's cursor");
  st->m = buffer<float>(be, p.param_count, "optimizer state");
  st->v = buffer<float>(be, p.param_count, "optimizer state");
  st->scalars = buffer<kernels::optimizer_scalars>(be, 1, "optimizer scalars");
  be.to_device(st->data.get(), x, rows * p.input_size * sizeof(float));
  be.to_device(st->data_labels.get(), labels, rows * sizeof(std::int32_t));
  be.zero(st->cursor.get(), sizeof(std::int64_t));
  be.zero(st->m.get(), p.param_count * sizeof(float));
  be.zero(st->v.get(), p.param_count * sizeof(float));
  be.zero(st->scalars.get(), sizeof(kernels::optimizer_scalars));
  be.synchronize("uploading the training set");
  st_ = std::move(st);
  optimizer_ = o.optimizer;
}

resident_trainer::~resident_trainer() = default;

void resident_trainer::set_params(const float* params) {
  e_->be.activate();
  e_->be.to_device(e_->params.get(), params, e_->layers().param_count * sizeof(float));
  e_->be.synchronize("uploading parameters");
}

void resident_trainer::get_params(float* params) const {
  e_->be.activate();
  e_->be.to_host(params, e_->params.get(), e_->layers().param_count * sizeof(float));
  e_->be.synchronize("downloading parameters");
}

void resident_trainer::set_order(const std::vector<std::int64_t>& rows) {
  e_->be.activate();
  auto& st = *st_;
  if (rows.size() > st.rows)
    throw input_error("cuda resident training: an order of " + std::to_string(rows.size()) +
                      " rows for a set of " + std::to_string(st.rows));
  for (auto r : rows)
    if (r < 0 || static_cast<std::size_t>(r) >= st.rows)
      throw input_error("cuda resident training: row " + std::to_string(r) + " is not in the set");
  e_->be.synchronize("finishing the last order's steps");
  e_->be.to_device(st.order.get(), rows.data(), rows.size() * sizeof(std::int64_t));
  e_->be.zero(st.cursor.get(), sizeof(std::int64_t));
  order_size_ = rows.size();
  order_used_ = 0;
}

void resident_trainer::step(std::size_t n) {
  e_->be.activate();
  if (n == 0) return;
  if (n > e_->max_batch())
    throw input_error("cuda resident training: a batch of " + std::to_string(n) +
                      " rows exceeds max_batch " + std::to_string(e_->max_batch()));
  if (order_used_ + n > order_size_)
    throw input_error("cuda resident training: the order has " +
                      std::to_string(order_size_ - order_used_) + " rows left, a step wants " +
                      std::to_string(n));
  order_used_ += n;
  engine& e = *e_;
  auto& st = *st_;
  const auto& p = e.layers();
  const auto o = optimizer_;
  e.run(key_of(key_resident, n, false), [&] {
    e.be.each(n * p.input_size,
              kernels::gather_rows{e.x.get(), e.labels.get(), st.data.get(), st.data_labels.get(),
                                   st.order.get(), st.cursor.get(), p.input_size});
    e.forward(n);
    e.loss(n, true, false);
    e.backward(n);
    const float scale = 1.0f / static_cast<float>(n);
    const float lr = static_cast<float>(o.lr), wd = static_cast<float>(o.weight_decay);
    const std::size_t count = p.param_count;
    if (o.kind == "sgd") {
      e.be.each(count, kernels::sgd_update{e.params.get(), e.grad.get(), scale, lr, wd});
    } else if (o.kind == "momentum") {
      e.be.each(count, kernels::momentum_update{e.params.get(), st.v.get(), e.grad.get(), scale, lr,
                                                wd, static_cast<float>(o.momentum), o.nesterov});
    } else {
      const bool decoupled = o.kind == "adamw";
      e.be.each(count, kernels::adam_update{
                           e.params.get(), st.m.get(), st.v.get(), e.grad.get(), st.scalars.get(),
                           scale, lr, static_cast<float>(o.eps), decoupled ? 0.0f : wd,
                           decoupled ? static_cast<float>(1.0 - o.lr * o.weight_decay) : 1.0f,
                           o.beta1, o.beta2});
    }
    e.be.each(1, kernels::advance{st.cursor.get(), st.scalars.get(), static_cast<std::int64_t>(n)});
  });
  ++steps_;
  queued_samples_ += n;
}

models::step_stats resident_trainer::take_stats() {
  e_->be.activate();
  auto st = read_stats(*e_, queued_samples_);
  queued_samples_ = 0;
  e_->clear_stats();
  return st;
}

models::step_stats resident_trainer::evaluate(const float* x, const std::int32_t* labels,
                                              std::size_t rows) {
  take_stats();  // the training steps' sums are not the evaluation's
  engine& e = *e_;
  models::batch b;
  b.x = x;
  b.labels = labels;
  b.size = rows;
  for (std::size_t first = 0; first < rows; first += e.max_batch()) {
    const std::size_t n = std::min(e.max_batch(), rows - first);
    load_batch(e, b, first, n);
    e.run(key_of(key_eval, n, false), [&] {
      e.forward(n);
      e.loss(n, false, false);
    });
  }
  auto st = read_stats(e, rows);
  e.clear_stats();
  return st;
}

}  // namespace troupe::devices::gpu
