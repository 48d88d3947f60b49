// `troupe bench priority`: time and steps to a target training loss on the
// synthetic hard/easy set (10% of the samples within 0.25 of a class boundary), uniform sampling
// (the runtime's permutation sampler) against `data.priority: {alpha, beta}`. One cpu worker,
// one job per run through the whole runtime; the modes alternate inside each repeat and every
// figure is the median over repeats (the machine is shared and noisy).
//
// The loss is measured honestly: the model is wrapped in a probe that, every --every steps,
// evaluates the current parameters on the WHOLE training set (unweighted mean loss: the objective
// both modes minimise) and on the held-out set, and takes its own evaluation time off the clock.
// A prioritised batch's own loss would be biased toward the hard samples.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>

#include "actors/job/job_data.hpp"
#include "actors/runtime.hpp"
#include "apps/args.hpp"
#include "apps/command.hpp"
#include "core/clock.hpp"
#include "core/config_load.hpp"
#include "core/error.hpp"
#include "core/median.hpp"
#include "models/model.hpp"

namespace troupe::apps {
namespace {

const char* usage =
    "usage: troupe bench priority [--runs 3] [--steps 800] [--every 10] [--target 0.02]\n"
    "                             [--alpha 1] [--beta 0.5] [--lr 0.05] [--batch 32]\n"
    "                             [--samples 4096] [--model mlp] [--hidden 512,512]\n\n"
    "Trains --model on the synthetic hard/easy set (4 classes, 8 features, 10% hard samples\n"
    "near a boundary, 20% held out) with uniform sampling and with data.priority {alpha, beta},\n"
    "--runs times each (alternating, seeds 1..runs). Every --every steps the whole training set\n"
    "and the held-out set are evaluated (time off the clock). Prints per mode the medians of\n"
    "steps and seconds until the training loss first reaches --target, the held-out loss there\n"
    "and at the end, and the factor uniform/priority.";

struct point {
  std::int64_t step;
  double seconds;  // training time, evaluation excluded
  double train_loss, test_loss;
};

// Shared by the probe model's clones (the job's prototype and its one worker).
struct probe {
  std::string inner_kind;
  std::shared_ptr<const data::dataset> train, test;
  std::int64_t every = 10;
  std::mutex mu;
  std::int64_t calls = 0;
  double eval_seconds = 0.0;
  std::optional<stopwatch> clock;
  std::vector<point> points;
};

std::mutex current_mu;
std::shared_ptr<probe> current;  // the probe of the run being set up

models::batch whole(const data::dataset& d) {
  models::batch b;
  b.x = d.x.data();
  b.labels = d.labels.data();
  b.size = d.n;
  return b;
}

class probe_model final : public models::model {
 public:
  probe_model(std::shared_ptr<probe> p, std::unique_ptr<models::model> inner)
      : p_(std::move(p)), inner_(std::move(inner)) {}
  std::string kind() const override { return "bench-probe"; }
  const models::param_layout& layout() const override { return inner_->layout(); }
  void init_params(float* params, rng& r) const override { inner_->init_params(params, r); }
  models::step_stats forward_backward(const float* params, const models::batch& b,
                                      float* grad_sum) override {
    {
      std::lock_guard<std::mutex> lock(p_->mu);
      if (!p_->clock) p_->clock.emplace();
      if (p_->calls % p_->every == 0) {
        stopwatch sw;
        const auto tr = inner_->evaluate(params, whole(*p_->train));
        const auto te = inner_->evaluate(params, whole(*p_->test));
        p_->points.push_back({p_->calls, p_->clock->seconds() - p_->eval_seconds,
                              tr.loss_sum / static_cast<double>(tr.samples),
                              te.loss_sum / static_cast<double>(te.samples)});
        p_->eval_seconds += sw.seconds();
      }
      ++p_->calls;
    }
    return inner_->forward_backward(params, b, grad_sum);
  }
  models::step_stats evaluate(const float* params, const models::batch& b) override {
    return inner_->evaluate(params, b);
  }
  std::unique_ptr<models::model> clone() const override {
    return std::make_unique<probe_model>(p_, inner_->clone());
  }

 private:
  std::shared_ptr<probe> p_;
  std::unique_ptr<models::model> inner_;
};

struct params {
  // A target the hard samples decide: at 0.05 the easy 90% alone get there and priority does not
  // help (measured 0.94x); at 0.02 it does (about 2x).
  std::int64_t steps = 800, every = 10, batch = 32, samples = 4096;
  double target = 0.02, alpha = 1.0, beta = 0.5, lr = 0.05;
  // Big enough that a step's compute (ms) hides the distributor's O(N) prioritised draw, as in
  // real training; with a tiny model the draw, not the model, sets the pace.
  std::string model = "mlp";
  std::string hidden = "512,512";  // mlp widths; empty: the kind's default
};

std::string config_yaml(const params& p, bool prioritised, std::uint64_t seed) {
  char buf[1200];
  std::snprintf(buf, sizeof buf,
                "cluster:\n  groups:\n    - {name: cpu, device: cpu, count: 1, threads: 1, "
                "weight: 1}\n"
                "jobs:\n  - name: priority\n    model: {kind: bench-probe%s}\n"
                "    data: {dataset: synthetic, synthetic: {kind: hard-easy, samples: %lld}%s}\n"
                "    optimizer: {kind: sgd, lr: %g}\n    batch: %lld\n    epochs: 100000\n"
                "    max_steps: %lld\n    seed: %llu\n",
                p.hidden.empty() ? "" : (", hidden: [" + p.hidden + "]").c_str(),
                static_cast<long long>(p.samples),
                prioritised ? (", priority: {alpha: " + std::to_string(p.alpha) +
                               ", beta: " + std::to_string(p.beta) + "}")
                                  .c_str()
                            : "",
                p.lr, static_cast<long long>(p.batch), static_cast<long long>(p.steps),
                static_cast<unsigned long long>(seed));
  return buf;
}

struct outcome {
  std::optional<point> reached;  // the first evaluation at or below the target
  point last;
};

outcome run_once(const params& p, bool prioritised, std::uint64_t seed) {
  const auto cfg = config::parse_config(config_yaml(p, prioritised, seed), "bench-priority");
  auto pr = std::make_shared<probe>();
  pr->inner_kind = p.model;
  pr->every = p.every;
  // The same data the job's distributor loads (same config, same seed).
  const auto data = actors::load_job_data(cfg.jobs[0].data, cfg.jobs[0].seed);
  pr->train = data.train;
  pr->test = data.test;
  {
    std::lock_guard<std::mutex> lock(current_mu);
    current = pr;
  }
  runtime_options opts;
  opts.wait_seconds = 600;
  runtime rt(cfg, opts);
  const auto report = rt.run();
  if (report.jobs.size() == 1 && report.jobs[0].bad_input) throw input_error(report.jobs[0].error);
  if (report.jobs.size() != 1 || report.jobs[0].status != job_status::completed)
    throw runtime_failure("bench priority: the run did not complete: " +
                          (report.jobs.empty() ? std::string("no job") : report.jobs[0].error));
  std::lock_guard<std::mutex> lock(pr->mu);
  if (pr->points.empty()) throw runtime_failure("bench priority: no evaluation points");
  outcome o;
  o.last = pr->points.back();
  for (const auto& pt : pr->points)
    if (pt.train_loss <= p.target) {
      o.reached = pt;
      break;
    }
  return o;
}

// NaN when empty: a figure no run produced prints as nan, not 0.
double median_or_nan(const std::vector<double>& v) {
  return v.empty() ? std::nan("") : troupe::median(v);
}

const flag_set flags{{"runs", "steps", "every", "target", "alpha", "beta", "lr", "batch", "samples",
                      "model", "hidden"},
                     {},
                     {}};

int run(const std::vector<std::string>& argv) {
  args a(argv, flags);
  params p;
  const auto runs = a.get_int("runs", 3);
  p.steps = a.get_int("steps", p.steps);
  p.every = a.get_int("every", p.every);
  p.batch = a.get_int("batch", p.batch);
  p.samples = a.get_int("samples", p.samples);
  p.target = a.get_double("target", p.target);
  p.alpha = a.get_double("alpha", p.alpha);
  p.beta = a.get_double("beta", p.beta);
  p.lr = a.get_double("lr", p.lr);
  p.model = a.get_or("model", p.model);
  p.hidden = a.get_or("hidden", p.hidden);
  if (runs < 1) throw input_error("--runs must be at least 1");
  if (p.every < 1) throw input_error("--every must be at least 1");
  if (p.steps < p.every) throw input_error("--steps must be at least --every");
  if (!(p.target > 0)) throw input_error("--target must be positive");
  runtime::register_model("bench-probe", [](const models::model_spec& s) {
    std::shared_ptr<probe> pr;
    {
      std::lock_guard<std::mutex> lock(current_mu);
      pr = current;
    }
    if (!pr) throw input_error("model 'bench-probe' only exists inside troupe bench priority");
    auto inner = s;
    inner.kind = pr->inner_kind;
    return std::make_unique<probe_model>(pr, models::make_model(inner));
  });
  std::printf(
      "# bench priority: %s, batch %lld, lr %g, target train loss %g, alpha %g beta %g, "
      "%lld steps, %lld runs\n",
      p.model.c_str(), static_cast<long long>(p.batch), p.lr, p.target, p.alpha, p.beta,
      static_cast<long long>(p.steps), static_cast<long long>(runs));
  std::printf("%-9s %4s %8s %9s %11s %11s %11s %11s\n", "mode", "run", "steps", "seconds",
              "test@target", "train_end", "test_end", "reached");
  struct agg {
    std::vector<double> steps, seconds, test_at, train_end, test_end;
    int reached = 0;
  } ag[2];
  for (long long r = 0; r < runs; ++r)
    for (int mode = 0; mode < 2; ++mode) {
      const auto o = run_once(p, mode == 1, static_cast<std::uint64_t>(r + 1));
      auto& g = ag[mode];
      g.train_end.push_back(o.last.train_loss);
      g.test_end.push_back(o.last.test_loss);
      // A run that never reaches the target counts as its whole length (a lower bound).
      const point at = o.reached ? *o.reached : o.last;
      g.steps.push_back(static_cast<double>(at.step));
      g.seconds.push_back(at.seconds);
      g.test_at.push_back(at.test_loss);
      g.reached += o.reached ? 1 : 0;
      std::printf("%-9s %4lld %8lld %9.3f %11.4f %11.4f %11.4f %11s\n",
                  mode ? "priority" : "uniform", r + 1, static_cast<long long>(at.step), at.seconds,
                  at.test_loss, o.last.train_loss, o.last.test_loss, o.reached ? "yes" : "no");
    }
  for (int mode = 0; mode < 2; ++mode) {
    const auto& g = ag[mode];
    std::printf(
        "median %-9s steps %7.0f seconds %7.3f test@target %.4f train_end %.4f "
        "test_end %.4f reached %d/%lld\n",
        mode ? "priority" : "uniform", median_or_nan(g.steps), median_or_nan(g.seconds),
        median_or_nan(g.test_at), median_or_nan(g.train_end), median_or_nan(g.test_end), g.reached,
        runs);
  }
  std::printf("factor (uniform / priority): time %.2fx, steps %.2fx\n",
              median_or_nan(ag[0].seconds) / median_or_nan(ag[1].seconds),
              median_or_nan(ag[0].steps) / median_or_nan(ag[1].steps));
  return exit_ok;
}

const command_registrar reg{{"bench priority",
                             "time to a target loss: data priority vs uniform sampling", usage, run,
                             flags}};

}  // namespace
}  // namespace troupe::apps
