// `troupe bench step`: the synchronous step's fixed cost. Runs one job per (sync mode, worker
// count) and per (sync mode, parameter count) in this process and prints the median of every
// phase of the step (actors/observe/step_trace.hpp) and the step time minus the slowest worker's
// compute: what data parallelism costs beyond the compute itself. Then the growth law: the
// least-squares line of the fixed cost over workers and over parameters.
//
// The devices are sim devices with a fixed cost per row (row_seconds) by default: the compute
// is real (the gradient is computed) and then stretched by sleeping to the fixed cost, so eight
// workers fit two cores and the compute does not vary with the host's load; the fixed cost is
// then the runtime's alone. The default 80 us a row is about nine times this host's own cost of
// a row of the MLP, so that the real compute of eight workers (the batch's rows in all) fits two
// cores inside the stretch; with less, a worker waits for a core and the wait shows as dispatch.
// The parameter sweep runs two workers for the same reason: its large models' real compute
// exceeds any stretch. --device cpu runs real cpu devices instead.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "actors/observe/step_trace.hpp"
#include "actors/runtime.hpp"
#include "apps/args.hpp"
#include "apps/bench_run.hpp"
#include "apps/command.hpp"
#include "apps/json_output.hpp"
#include "core/error.hpp"
#include "core/median.hpp"
#include "core/number_text.hpp"

namespace troupe::apps {
namespace {

const char* summary = "the synchronous step's phases and fixed cost, over workers and parameters";
const char* usage =
    "usage: troupe bench step [--workers 1,2,3,4,8] [--modes ps,allreduce] [--batch 256]\n"
    "                         [--steps 100] [--repeats 3] [--device sim|cpu] [--row-us 80]\n"
    "                         [--params 10k,100k,1m,10m] [--params-workers 2]\n"
    "                         [--params-batch 24] [--params-steps 30] [--data DIR]\n"
    "                         [--ps-shards 2] [--log-dir DIR] [--json FILE]\n\n"
    "Trains an MLP on Fashion-MNIST data-parallel in this process and prints, per sync mode and\n"
    "worker count (MLP 784-256-128-10, --batch), the median microseconds of each phase of a\n"
    "step: plan (waiting for the step's plan), dispatch (to the last worker's compute start),\n"
    "compute (the last worker's), collect (to the job holding every gradient), sum (the gradient\n"
    "sum), apply (the optimizer; 0 under allreduce in one process, whose members apply it\n"
    "inside the sum), exchange (the reduce phase's messages), stats (statistics,\n"
    "metrics and policies at the boundary), the step, and fixed: the step minus the slowest\n"
    "worker's compute. Then the same at --params-workers workers for MLPs of about --params\n"
    "parameters (one hidden layer), and the least-squares growth of the fixed cost with workers\n"
    "and with parameters. Each figure is the median over --repeats runs of each run's median\n"
    "over its steps. --device sim (default) uses sim devices with a\n"
    "fixed --row-us per sample (real compute, stretched by sleeping); --params 0 skips the\n"
    "parameter sweep. --ps-shards: the parameter-server shards of sync mode ps.";

struct params {
  std::vector<int> workers;
  std::vector<std::string> modes;
  std::vector<long long> sizes;
  std::int64_t batch = 256, steps = 100, repeats = 3;
  int sweep_workers = 2;
  std::int64_t sweep_batch = 24, sweep_steps = 30;
  std::string device = "sim", data, log_dir;
  double row_us = 80;
  std::int64_t ps_shards = 2;
};

// One run's shape: a sync mode, a worker count, the hidden layers, the batch and steps.
struct shape {
  std::string mode;
  int workers = 1;
  std::vector<long long> hidden;
  std::int64_t batch = 0, steps = 0;
};

// "10k", "1m", "2500": a decimal count (parameters are counted, not sized in bytes).
long long parse_count(const std::string& text, const std::string& flag) {
  const auto [v, end] = read_leading_number(text);
  const std::string unit = text.substr(end);
  const double scale = unit.empty() ? 1 : unit == "k" ? 1e3 : unit == "m" ? 1e6 : -1;
  if (end == 0 || scale < 0 || v < 0)
    throw input_error("--" + flag + ": '" + text + "' is not a count (e.g. 10k, 1m)");
  return static_cast<long long>(v * scale);
}

std::string config_yaml(const params& p, const shape& s) {
  std::ostringstream y;
  y << "cluster:\n  groups:\n    - {name: w, ";
  if (p.device == "sim")
    y << "device: sim, base: cpu, slowdown: 1, row_seconds: " << p.row_us * 1e-6;
  else
    y << "device: cpu";
  y << ", count: " << s.workers << ", threads: 1}\n";
  y << "jobs:\n  - name: step\n    model: {kind: mlp, hidden: [";
  for (std::size_t i = 0; i < s.hidden.size(); ++i) y << (i ? ", " : "") << s.hidden[i];
  y << "]}\n    data: {dataset: fashion-mnist, path: '" << p.data
    << "', preprocess: [normalize], split: even}\n"
    << "    optimizer: {kind: adam, lr: 1.0e-3}\n"
    << "    batch: " << s.batch << "\n    max_steps: " << s.steps << "\n    epochs: 1000\n"
    << "    sync: {mode: " << s.mode;
  if (s.mode == "ps") y << ", ps_shards: " << p.ps_shards;
  y << "}\n    seed: 42\n";
  return y.str();
}

// Per phase, the median over the repeats of each run's median; and the parameter count.
struct measured {
  std::vector<std::pair<std::string, double>> phases_us;
  std::size_t params = 0;
  double busy = 0.0;  // the least busy worker's busy fraction, median over repeats
};

measured run_shape(const params& p, const shape& s) {
  std::map<std::string, std::vector<double>> by_phase;
  std::vector<std::string> order;
  std::vector<double> busy;
  measured m;
  for (std::int64_t i = 0; i < p.repeats; ++i) {
    runtime_options o;
    o.wait_seconds = 600;  // a deadline, never a hang
    o.step_deadline_seconds = 60;
    o.log_dir = p.log_dir;
    const auto r = run_one_job(config_yaml(p, s), "bench-step.yaml", o, "bench step").job;
    if (r.step_phases_us.empty())
      throw runtime_failure("bench step: the " + s.mode + " job traced no step");
    for (const auto& [name, us] : r.step_phases_us) {
      if (!by_phase.count(name)) order.push_back(name);
      by_phase[name].push_back(us);
    }
    double least = 1.0;
    for (const auto& w : r.workers) least = std::min(least, w.busy_fraction);
    busy.push_back(least);
    m.params = r.params.count;
  }
  for (const auto& name : order) m.phases_us.emplace_back(name, median(by_phase[name]));
  m.busy = median(busy);
  return m;
}

double phase(const measured& m, const std::string& name) {
  for (const auto& [n, us] : m.phases_us)
    if (n == name) return us;
  return 0.0;
}

// y = a + b x by least squares; {a, b}.
std::pair<double, double> fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double d = n * sxx - sx * sx;
  if (x.size() < 2 || d == 0) return {x.empty() ? 0.0 : sy / n, 0.0};
  const double b = (n * sxy - sx * sy) / d;
  return {(sy - b * sx) / n, b};
}

void print_header(const char* first) {
  std::printf("%-10s %8s %9s", "mode", first, "params");
  for (std::size_t p = 0; p < actors::step_phase_count; ++p)
    std::printf(" %8s", name_of(static_cast<actors::step_phase>(p)));
  std::printf(" %6s\n", "busy");
}

void print_row(const std::string& mode, long long first, const measured& m) {
  std::printf("%-10s %8lld %9zu", mode.c_str(), first, m.params);
  for (const auto& [name, us] : m.phases_us) std::printf(" %8.0f", us);
  std::printf(" %6.2f\n", m.busy);
}

nlohmann::json to_json(const shape& s, const measured& m) {
  nlohmann::json phases;
  for (const auto& [name, us] : m.phases_us) phases[name + "_us"] = us;
  return {{"mode", s.mode},   {"workers", s.workers}, {"params", m.params}, {"batch", s.batch},
          {"steps", s.steps}, {"phases", phases},     {"min_busy", m.busy}};
}

const flag_set flags{
    {"workers", "modes", "batch", "steps", "repeats", "device", "row-us", "params",
     "params-workers", "params-batch", "params-steps", "ps-shards", "data", "log-dir", "json"},
    {},
    {}};

int run(const std::vector<std::string>& argv) {
  args a(argv, flags);
  json_output json(a.get("json"));
  params p;
  for (const auto& w : split_list(a.get_or("workers", "1,2,3,4,8"))) {
    const auto n = parse_count(w, "workers");
    if (n < 1 || n > 64) throw input_error("--workers: each count must be 1..64, got " + w);
    p.workers.push_back(static_cast<int>(n));
  }
  p.modes = split_list(a.get_or("modes", "ps,allreduce"));
  for (const auto& m : p.modes)
    if (m != "ps" && m != "allreduce")
      throw input_error("--modes: each must be ps or allreduce, got '" + m + "'");
  for (const auto& s : split_list(a.get_or("params", "10k,100k,1m,10m")))
    if (const auto n = parse_count(s, "params")) p.sizes.push_back(n);
  p.batch = a.get_int("batch", 256);
  p.steps = a.get_int("steps", 100);
  p.repeats = a.get_int("repeats", 3);
  p.sweep_workers = static_cast<int>(a.get_int("params-workers", 2));
  p.sweep_batch = a.get_int("params-batch", 24);
  p.sweep_steps = a.get_int("params-steps", 30);
  p.device = a.get_or("device", "sim");
  p.row_us = a.get_double("row-us", 80);
  p.ps_shards = a.get_int("ps-shards", 2);
  p.data = a.get_or("data", "/usr/share/datasets/fashion-mnist");
  p.log_dir = a.get_or("log-dir", "troupe-logs/bench-step");
  if (p.device != "sim" && p.device != "cpu")
    throw input_error("--device must be sim or cpu, got '" + p.device + "'");
  if (p.batch < 1 || p.steps < 3 || p.repeats < 1 || p.sweep_workers < 1 || p.sweep_batch < 1 ||
      p.sweep_steps < 3 || p.row_us < 0 || p.ps_shards < 1)
    throw input_error(
        "bench step: --batch, --repeats, --params-workers, --params-batch and --ps-shards must be "
        ">= 1, "
        "--steps and --params-steps >= 3, --row-us >= 0");

  char pace[64] = "";
  if (p.device == "sim") std::snprintf(pace, sizeof pace, " at %g us a row", p.row_us);
  std::printf("troupe bench step: %s devices%s, median us per phase (median of %lld runs)\n\n",
              p.device.c_str(), pace, static_cast<long long>(p.repeats));
  nlohmann::json js = {{"device", p.device}, {"row_us", p.row_us}, {"repeats", p.repeats}};
  std::printf("MLP 784-256-128-10, batch %lld, %lld steps\n", static_cast<long long>(p.batch),
              static_cast<long long>(p.steps));
  print_header("workers");
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_workers, by_params;
  for (const auto& mode : p.modes)
    for (int w : p.workers) {
      const shape s{mode, w, {256, 128}, p.batch, p.steps};
      const auto m = run_shape(p, s);
      print_row(mode, w, m);
      std::fflush(stdout);
      by_workers[mode].first.push_back(w);
      by_workers[mode].second.push_back(phase(m, "fixed"));
      js["workers"].push_back(to_json(s, m));
    }
  if (!p.sizes.empty()) {
    std::printf("\nMLP 784-H-10 at %d workers, batch %lld, %lld steps\n", p.sweep_workers,
                static_cast<long long>(p.sweep_batch), static_cast<long long>(p.sweep_steps));
    print_header("~params");
    for (const auto& mode : p.modes)
      for (auto size : p.sizes) {
        // 784 h + h + 10 h + 10 parameters with one hidden layer of h units.
        const long long h = std::max(1LL, std::llround(static_cast<double>(size - 10) / 795.0));
        const shape s{mode, p.sweep_workers, {h}, p.sweep_batch, p.sweep_steps};
        const auto m = run_shape(p, s);
        print_row(mode, size, m);
        std::fflush(stdout);
        by_params[mode].first.push_back(static_cast<double>(m.params) / 1e6);
        by_params[mode].second.push_back(phase(m, "fixed"));
        js["params"].push_back(to_json(s, m));
      }
  }
  std::printf("\ngrowth of the fixed cost (least squares)\n");
  for (const auto& mode : p.modes) {
    const auto [a0, b0] = fit_line(by_workers[mode].first, by_workers[mode].second);
    std::printf("  %-10s fixed_us = %.0f + %.1f x workers", mode.c_str(), a0, b0);
    js["growth"][mode]["workers"] = {{"intercept_us", a0}, {"per_worker_us", b0}};
    if (!by_params[mode].first.empty()) {
      const auto [a1, b1] = fit_line(by_params[mode].first, by_params[mode].second);
      std::printf(";  fixed_us = %.0f + %.0f x Mparams (at %d workers)", a1, b1, p.sweep_workers);
      js["growth"][mode]["params"] = {{"intercept_us", a1}, {"per_mparam_us", b1}};
    }
    std::printf("\n");
  }
  json.write(js);
  return exit_ok;
}

const command_registrar reg{{"bench step", summary, usage, run, flags}};

}  // namespace
}  // namespace troupe::apps
