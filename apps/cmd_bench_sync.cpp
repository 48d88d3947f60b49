// `troupe bench sync`: wall time to a target training loss under a slow link,
// for local SGD with period 1 (parameter averaging every step: as much communication as
// synchronous data parallelism) against `period: adaptive` (AdaComm) and any fixed periods. One
// worker's communication is held back --delay-ms per averaging round by a `delay` fault. The
// same job (seed, data order, model) runs under every period; periods alternate inside each
// repeat and the figures are medians over --runs: the machine is shared and noisy.
//
// Time to target: the training loss is the moving average of the last --window steps' losses;
// the time is from the start of the first step to the end of the first step where that average
// is at or below the target.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "apps/args.hpp"
#include "apps/bench_run.hpp"
#include "apps/command.hpp"
#include "apps/console.hpp"
#include "apps/json_output.hpp"
#include "core/config_load.hpp"
#include "core/error.hpp"
#include "core/median.hpp"

namespace troupe::apps {
namespace {

const char* usage =
    "usage: troupe bench sync [--delay-ms 20] [--target-loss 0.65 | auto] [--runs 3]\n"
    "                         [--periods 1,adaptive] [--steps 300] [--batch 128] [--workers 2]\n"
    "                         [--hidden 64] [--optimizer sgd] [--lr 0.1] [--window 10]\n"
    "                         [--data DIR] [--log-dir DIR] [--json FILE]\n\n"
    "Local SGD (sync.mode: local) on Fashion-MNIST (MLP 784-HIDDEN-10) over --workers cpu\n"
    "workers, with worker cpu/0's communication delayed --delay-ms per averaging round (a\n"
    "`delay` fault), under each of --periods (integers or `adaptive`). Prints, per period, the\n"
    "median wall time and steps until the moving average of the last --window step losses\n"
    "reaches --target-loss, the median step time, averaging rounds and the final period, and the\n"
    "factor of period 1's time over each other period's. --target-loss auto takes the highest\n"
    "of the runs' lowest moving averages (a loss every run reached). Medians over --runs.";

struct params {
  double delay_ms = 20, lr = 0.1;
  std::int64_t steps = 300, batch = 128, workers = 2, hidden = 64, window = 10;
  std::string optimizer = "sgd", data, log_dir;
};

std::string config_yaml(const params& p, const std::string& period) {
  std::ostringstream y;
  y << "cluster:\n  groups:\n    - {name: cpu, device: cpu, count: " << p.workers
    << ", threads: 1}\n"
    << "jobs:\n  - name: sync\n    model: {kind: mlp, hidden: [" << p.hidden << "]}\n"
    << "    data: {dataset: fashion-mnist, path: '" << p.data
    << "', preprocess: [normalize], split: even}\n"
    << "    optimizer: {kind: " << p.optimizer << ", lr: " << p.lr << "}\n"
    << "    batch: " << p.batch << "\n    max_steps: " << p.steps << "\n"
    << "    sync: {mode: local, period: " << period << "}\n    seed: 42\n";
  if (p.delay_ms > 0)
    y << "    faults:\n      - {step: 0, action: delay, target: cpu/0, seconds: "
      << p.delay_ms / 1000.0 << "}\n";
  return y.str();
}

struct run_result {
  job_report job;
  std::vector<double> elapsed;  // by step: seconds from the first step's start to this one's end
  std::vector<double> moving;   // by step: moving average of the step losses
  std::vector<double> step_seconds;
};

run_result run_job(const params& p, const std::string& period) {
  runtime_options o;
  o.wait_seconds = 600;  // a deadline, never a hang
  o.step_deadline_seconds = 60;
  o.log_dir = p.log_dir;
  const auto run = run_one_job(config_yaml(p, period), "bench-sync.yaml", o, "bench sync");
  const auto* out = &run.steps;
  run_result r{run.job, {}, {}, {}};
  if (out->empty()) throw runtime_failure("bench sync: no step metrics");
  const double t0 = out->front().elapsed_seconds - out->front().step_seconds;
  double sum = 0;
  for (std::size_t i = 0; i < out->size(); ++i) {
    sum += (*out)[i].loss;
    if (i >= static_cast<std::size_t>(p.window)) sum -= (*out)[i - p.window].loss;
    const auto n = std::min<std::size_t>(i + 1, static_cast<std::size_t>(p.window));
    r.moving.push_back(sum / static_cast<double>(n));
    r.elapsed.push_back((*out)[i].elapsed_seconds - t0);
    r.step_seconds.push_back((*out)[i].step_seconds);
  }
  return r;
}

// The first step whose moving average is at or below `target` (a full window in).
std::optional<std::size_t> reached(const run_result& r, double target, std::int64_t window) {
  for (std::size_t i = static_cast<std::size_t>(window) - 1; i < r.moving.size(); ++i)
    if (r.moving[i] <= target) return i;
  return std::nullopt;
}

const flag_set flags{{"delay-ms", "target-loss", "runs", "periods", "steps", "batch", "workers",
                      "hidden", "optimizer", "lr", "window", "data", "log-dir", "json"},
                     {},
                     {}};

int run(const std::vector<std::string>& argv) {
  args a(argv, flags);
  json_output json(a.get("json"));
  a.no_positionals();
  params p;
  p.delay_ms = a.get_double("delay-ms", 20);
  p.steps = a.get_int("steps", 300);
  p.batch = a.get_int("batch", 128);
  p.workers = a.get_int("workers", 2);
  p.hidden = a.get_int("hidden", 64);
  p.optimizer = a.get_or("optimizer", "sgd");
  p.lr = a.get_double("lr", 0.1);
  p.window = a.get_int("window", 10);
  p.data = a.get_or("data", "/usr/share/datasets/fashion-mnist");
  p.log_dir = a.get_or("log-dir", "");
  const auto runs = a.get_int("runs", 3);
  const std::string target_text = a.get_or("target-loss", "0.65");
  const auto periods = split_list(a.get_or("periods", "1,adaptive"));
  if (p.delay_ms < 0) throw input_error("--delay-ms must be >= 0");
  if (runs < 1 || p.steps < 2 || p.batch < p.workers || p.workers < 1 || p.hidden < 1 ||
      p.window < 1 || p.window > p.steps)
    throw input_error(
        "--runs >= 1, --steps >= 2, --workers >= 1, --batch >= --workers, --hidden >= 1, "
        "1 <= --window <= --steps");
  if (std::find(periods.begin(), periods.end(), "1") == periods.end())
    throw input_error("--periods must include 1 (the baseline of the factor)");
  std::optional<double> target;
  if (target_text != "auto") {
    target = a.get_double("target-loss", 0.65);
    if (!(*target > 0)) throw input_error("--target-loss must be > 0 or auto");
  }

  std::map<std::string, std::vector<run_result>> results;
  for (long long rep = 0; rep < runs; ++rep) {
    for (const auto& period : periods) results[period].push_back(run_job(p, period));
    console::info("run " + std::to_string(rep + 1) + "/" + std::to_string(runs) + " done");
  }
  if (!target) {
    double t = 0;
    for (const auto& [period, rs] : results)
      for (const auto& r : rs) {
        const auto first = r.moving.begin() + (p.window - 1);
        t = std::max(t, *std::min_element(first, r.moving.end()));
      }
    target = t;
  }

  std::printf(
      "troupe bench sync: MLP 784-%lld-10 on Fashion-MNIST, %s lr %g, batch %lld over %lld cpu "
      "workers, %lld steps; delay %g ms on cpu/0's communication per averaging round; target "
      "loss %.4f (moving average of %lld step losses); medians of %lld runs\n\n",
      static_cast<long long>(p.hidden), p.optimizer.c_str(), p.lr, static_cast<long long>(p.batch),
      static_cast<long long>(p.workers), static_cast<long long>(p.steps), p.delay_ms, *target,
      static_cast<long long>(p.window), runs);
  std::printf("%-9s %15s %16s %9s %7s %10s %11s %8s  %s\n", "period", "time to target",
              "steps to target", "ms/step", "rounds", "final tau", "final loss", "reached",
              "tau history (step:tau) of the last run");
  nlohmann::json js = nlohmann::json::array();
  std::map<std::string, double> time_median;
  for (const auto& period : periods) {
    std::vector<double> times, steps, ms, rounds, taus, finals;
    int hit = 0;
    nlohmann::json per_run = nlohmann::json::array();
    for (const auto& r : results[period]) {
      const auto k = reached(r, *target, p.window);
      if (k) {
        ++hit;
        times.push_back(r.elapsed[*k]);
        steps.push_back(static_cast<double>(*k + 1));
      }
      ms.push_back(1e3 * median(r.step_seconds));
      rounds.push_back(static_cast<double>(r.job.sync.rounds));
      taus.push_back(r.job.sync.period);
      finals.push_back(r.moving.back());
      per_run.push_back({{"time_to_target_s", k ? nlohmann::json(r.elapsed[*k]) : nullptr},
                         {"steps_to_target", k ? nlohmann::json(*k + 1) : nullptr},
                         {"report", to_json(r.job)}});
    }
    std::string history;
    for (const auto& c : results[period].back().job.sync.period_history)
      history += std::to_string(c.step) + ":" + std::to_string(c.period) + " ";
    char t[32] = "-", s[32] = "-";
    if (!times.empty()) {
      std::snprintf(t, sizeof t, "%.2f s", median(times));
      std::snprintf(s, sizeof s, "%.0f", median(steps));
      if (hit == runs) time_median[period] = median(times);
    }
    std::printf("%-9s %15s %16s %9.1f %7.0f %10.0f %11.4f %5d/%lld  %s\n", period.c_str(), t, s,
                median(ms), median(rounds), median(taus), median(finals), hit, runs,
                history.c_str());
    js.push_back({{"period", period},
                  {"time_to_target_s",
                   times.empty() ? nlohmann::json(nullptr) : nlohmann::json(median(times))},
                  {"runs_reached", hit},
                  {"ms_per_step", median(ms)},
                  {"rounds", median(rounds)},
                  {"runs", per_run}});
  }
  std::printf("\n");
  for (const auto& period : periods) {
    if (period == "1") continue;
    if (time_median.count("1") && time_median.count(period))
      std::printf("factor, time to target of period 1 / period %s: %.2fx\n", period.c_str(),
                  time_median["1"] / time_median[period]);
    else
      std::printf("factor, period 1 / period %s: - (not every run reached the target)\n",
                  period.c_str());
  }
  json.write({{"target_loss", *target}, {"delay_ms", p.delay_ms}, {"periods", js}});
  return exit_ok;
}

const command_registrar reg{{"bench sync",
                             "local SGD under a slow link: time to a target loss, period 1 vs "
                             "adaptive",
                             usage, run, flags}};

}  // namespace
}  // namespace troupe::apps
