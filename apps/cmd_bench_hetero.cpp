// `troupe bench hetero`: one MLP job over three sim devices of speeds 1:2:4 (sim
// slowdowns 4, 2, 1 over cpu: the stretch is idle time, so two real cores emulate them) under the
// even, weighted-by-config and adaptive splits; then again with the fastest device slowed 3x
// mid-run (a `slow` fault). Efficiency is achieved samples/s over the sum of each device's SOLO
// samples/s, measured in the same invocation by a short job on that device alone (so control and
// reduce overheads are in both numerator and denominator), right before and right after each run.
// Both rates leave out the first step (the cold start). Configurations alternate inside each
// repeat and every figure is the median over repeats: the machine is shared and noisy. By default
// (--pace fixed) the devices have fixed speeds (sim row_seconds, calibrated once at the start),
// as real devices do; --pace live lets them follow the host's drifting speed.
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>

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
#include "policies/rebalance.hpp"

namespace troupe::apps {
namespace {

// --pace: sim devices of fixed speed (calibrated once), or following the host's speed.
enum class device_pace { fixed, live };

}  // namespace
}  // namespace troupe::apps

namespace troupe {
TROUPE_SPELLINGS(apps::device_pace, live, "fixed", "live");
}  // namespace troupe

namespace troupe::apps {
namespace {

const char* usage =
    "usage: troupe bench hetero [--batch 1024] [--steps 40] [--slow-steps 50] [--slow-at 15]\n"
    "                           [--slow-factor 3] [--solo-steps 16] [--repeats 3]\n"
    "                           [--tolerance 0.02] [--scale auto|K] [--pace fixed|live]\n"
    "                           [--data DIR] [--log-dir DIR] [--json FILE]\n\n"
    "One MLP (784-256-128-10, Adam) on Fashion-MNIST over sim devices of speeds 1:2:4 under the\n"
    "even, weighted (config weights 1:2:4) and adaptive splits (adaptive: started from the probe,\n"
    "and adaptive-even: started from an even split), then with the fastest device slowed\n"
    "--slow-factor x at step --slow-at. Prints samples/s, efficiency (achieved samples/s over the\n"
    "sum of each device's solo samples/s, measured here), idle fraction per device, rebalances,\n"
    "and the steps until the split re-converged (policies::steps_to_reconverge: every later split\n"
    "within --tolerance of the settled one); `balance` divides by the sum of the devices' own\n"
    "speeds in the same steps instead (robust to load from other processes). Medians over\n"
    "--repeats. --scale K multiplies every sim slowdown (speeds stay 1:2:4): the real CPU the\n"
    "three devices need at equal finish is 1.75 / K cores. auto (the default): the smallest K,\n"
    "in halves from 1, that leaves one of the host's cores to the control plane (2 on 2 cores,\n"
    "1 from 3 cores up); with less, the run measures the host's scheduler instead of the split.\n"
    "--pace fixed (the default) gives every sim device a fixed speed (group key row_seconds):\n"
    "the per-sample cost of one cpu thread, measured once at the start by a short job, times 1.25\n"
    "(headroom for the host's drift); live: the devices follow the host's speed as it drifts.";

struct device_def {
  std::string name;
  double slowdown;
  double weight;
  bool sim = true;  // false: a plain cpu device (the pace calibration)
};
const std::vector<device_def> devices_124 = {{"s4", 4, 1}, {"s2", 2, 2}, {"s1", 1, 4}};

struct params {
  std::int64_t batch = 1024, steps = 40, slow_steps = 50, slow_at = 15, solo_steps = 16;
  double slow_factor = 3, tolerance = 0.02, scale = 1;
  double row_seconds = 0;  // --pace fixed: every sim group's row_seconds; 0: live
  std::string data, log_dir;
};

// The weights a run starts from: none in the config (the start-up probe measures them), the
// devices' true speeds, or 1 each.
enum class start_weights { probe, speeds, ones };

// `split`: the config's data.split, written as it is.
std::string config_yaml(const params& p, const std::vector<device_def>& devs,
                        const std::string& split, start_weights start, std::int64_t steps,
                        const std::string& faults) {
  std::string y = "cluster:\n  groups:\n";
  for (const auto& d : devs) {
    char buf[200];
    if (!d.sim) {
      y += "    - {name: " + d.name + ", device: cpu, count: 1, threads: 1}\n";
      continue;
    }
    std::snprintf(buf, sizeof buf,
                  "    - {name: %s, device: sim, base: cpu, slowdown: %g, count: 1, threads: 1",
                  d.name.c_str(), d.slowdown * p.scale);
    y += buf;
    if (p.row_seconds > 0) {
      std::snprintf(buf, sizeof buf, ", row_seconds: %.9g", p.row_seconds);
      y += buf;
    }
    if (start == start_weights::speeds) y += ", weight: " + std::to_string(d.weight);
    if (start == start_weights::ones) y += ", weight: 1";
    y += "}\n";
  }
  y += "jobs:\n  - name: hetero\n    model: {kind: mlp, hidden: [256, 128]}\n";
  y += "    data: {dataset: fashion-mnist, path: '" + p.data +
       "', preprocess: [normalize], split: " + split + "}\n";
  y += "    optimizer: {kind: adam, lr: 1.0e-3}\n";
  y += "    batch: " + std::to_string(p.batch) + "\n    max_steps: " + std::to_string(steps) +
       "\n    epochs: 1000\n    sync: {mode: ps, ps_shards: 1}\n    seed: 42\n";
  if (!faults.empty()) y += "    faults:\n" + faults;
  return y;
}

// The cores this process may run on (its affinity mask), at least 1.
int host_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// The devices need 1.75 cores at scale 1; leave one core for the job, shards and distributor.
double auto_scale(int cores) {
  const double spare = std::max(1, cores - 1);
  return std::max(1.0, std::ceil(2.0 * 1.75 / spare) / 2.0);
}

using run_result = job_run;

run_result run_job(const params& p, const std::string& yaml) {
  runtime_options o;
  o.wait_seconds = 300;  // a deadline, never a hang
  o.step_deadline_seconds = 60;
  o.log_dir = p.log_dir;
  return run_one_job(yaml, "bench-hetero.yaml", o, "bench hetero");
}

double rate(const std::vector<live_metrics>& s, std::size_t from, std::size_t to) {
  double n = 0, t = 0;
  for (std::size_t i = from; i < to && i < s.size(); ++i) {
    for (const auto& [g, c] : s[i].split) n += static_cast<double>(c);
    t += s[i].step_seconds;
  }
  return t > 0 ? n / t : 0.0;
}

// Achieved samples/s over steps [from, to) divided by the sum of the devices' own speeds in those
// steps (samples / device compute seconds, each measured in this run): how well the split used
// the devices as they ran here, whatever else the machine was doing at the time.
double balance(const std::vector<live_metrics>& s, std::size_t from, std::size_t to) {
  std::vector<double> n, t;
  for (std::size_t i = from; i < to && i < s.size(); ++i) {
    const auto& m = s[i];
    n.resize(std::max(n.size(), m.worker_samples.size()));
    t.resize(n.size());
    for (std::size_t r = 0; r < m.worker_samples.size() && r < m.worker_compute_seconds.size();
         ++r) {
      n[r] += static_cast<double>(m.worker_samples[r]);
      t[r] += m.worker_compute_seconds[r];
    }
  }
  double speeds = 0;
  for (std::size_t r = 0; r < n.size(); ++r)
    if (t[r] > 0) speeds += n[r] / t[r];
  return speeds > 0 ? rate(s, from, to) / speeds : 0.0;
}

// --pace fixed: the per-sample seconds of one cpu thread on this job, the median over the steps
// of a short solo job (first left out), times `headroom` so that a device at slowdown 1 is not
// late whenever the host is a little slower than when it was measured.
double calibrate_row_seconds(const params& p, double headroom) {
  auto r = run_job(
      p, config_yaml(p, {{"cpu", 1, 1, false}}, "even", start_weights::probe, p.solo_steps, ""));
  std::vector<double> per_row;
  for (std::size_t i = 1; i < r.steps.size(); ++i) {
    const auto& m = r.steps[i];
    if (!m.worker_samples.empty() && m.worker_samples[0] > 0 && !m.worker_compute_seconds.empty())
      per_row.push_back(m.worker_compute_seconds[0] / static_cast<double>(m.worker_samples[0]));
  }
  if (per_row.empty())
    throw runtime_failure("bench hetero: the pace calibration recorded no steps");
  return headroom * median(per_row);
}

std::vector<std::int64_t> split_of(const live_metrics& m) {
  std::vector<std::int64_t> v;
  for (const auto& [g, c] : m.split) v.push_back(c);
  return v;
}

// Figures per configuration, one value per repeat.
using figures = std::map<std::string, std::vector<double>>;

std::string cell(const figures& f, const std::string& key, const char* fmt) {
  auto it = f.find(key);
  if (it == f.end() || it->second.empty()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, median(it->second));
  return buf;
}

const flag_set flags{{"batch", "steps", "slow-steps", "slow-at", "slow-factor", "solo-steps",
                      "repeats", "tolerance", "scale", "pace", "data", "log-dir", "json"},
                     {},
                     {}};

int run(const std::vector<std::string>& argv) {
  args a(argv, flags);
  json_output json(a.get("json"));
  a.no_positionals();
  params p;
  p.batch = a.get_int("batch", 1024);
  p.steps = a.get_int("steps", 40);
  p.slow_steps = a.get_int("slow-steps", 50);
  p.slow_at = a.get_int("slow-at", 15);
  p.slow_factor = a.get_double("slow-factor", 3.0);
  p.solo_steps = a.get_int("solo-steps", 16);
  p.tolerance = a.get_double("tolerance", 0.02);
  const std::string scale = a.get_or("scale", "auto");
  p.scale = scale == "auto" ? auto_scale(host_cores()) : a.get_double("scale", 1.0);
  if (!(p.scale >= 1)) throw input_error("--scale must be auto or a number >= 1");
  p.data = a.get_or("data", "/usr/share/datasets/fashion-mnist");
  p.log_dir = a.get_or("log-dir", "");
  const auto repeats = a.get_int("repeats", 3);
  if (p.batch < 3 || p.steps < 4 || p.solo_steps < 2 || repeats < 1)
    throw input_error("--batch >= 3, --steps >= 4, --solo-steps >= 2, --repeats >= 1");
  if (p.slow_at < 1 || p.slow_at + 4 > p.slow_steps)
    throw input_error("--slow-at must be >= 1 and at least 4 steps before --slow-steps");
  if (p.slow_factor < 1) throw input_error("--slow-factor must be >= 1");
  const auto pace = a.get_enum("pace", device_pace::fixed);
  constexpr double headroom = 1.25;
  if (pace == device_pace::fixed) p.row_seconds = calibrate_row_seconds(p, headroom);

  const std::string slow_fault =
      "      - {step: " + std::to_string(p.slow_at) +
      ", action: slow, target: s1, factor: " + std::to_string(p.slow_factor) + "}\n";
  struct mode {
    std::string label, split;
    start_weights start;
  };
  // The first is the baseline the others are held against (vs_even).
  const std::vector<mode> modes = {{"even", "even", start_weights::probe},
                                   {"weighted", "weighted", start_weights::speeds},
                                   {"adaptive", "adaptive", start_weights::probe},
                                   {"adaptive-even", "adaptive", start_weights::ones}};
  std::map<std::string, figures> table;  // "solo", "124/<mode>", "slow/<mode>"
  nlohmann::json raw = nlohmann::json::array();

  // Solo rates: each device alone, and the fastest one slowed as it is after the fault. A set
  // is measured before the first run and after every run, and each run is held against the mean
  // of the sets either side of it: this host's speed drifts by 20% over a minute (other
  // tenants), so a denominator measured once per repeat compared runs with another machine.
  auto solos = devices_124;
  solos.push_back({"s1x", p.slow_factor, 1});
  using solo_set = std::map<std::string, double>;
  auto measure_solos = [&] {
    solo_set s;
    for (const auto& d : solos) {
      auto r = run_job(p, config_yaml(p, {d}, "even", start_weights::probe, p.solo_steps, ""));
      // The first step carries the cold start (allocation, caches): leave it out.
      s[d.name] = rate(r.steps, 1, r.steps.size());
      table["solo"][d.name].push_back(s[d.name]);
    }
    table["solo"]["sum"].push_back(s["s4"] + s["s2"] + s["s1"]);
    table["solo"]["sum_slow"].push_back(s["s4"] + s["s2"] + s["s1x"]);
    return s;
  };
  solo_set before = measure_solos();
  // The solo sums around one run: {before, after} averaged; `after` becomes the next `before`.
  auto bracket = [&](double& sum, double& sum_slow) {
    const solo_set after = measure_solos();
    solo_set mean;
    for (const auto& [name, v] : after) mean[name] = 0.5 * (v + before.at(name));
    sum = mean["s4"] + mean["s2"] + mean["s1"];
    sum_slow = mean["s4"] + mean["s2"] + mean["s1x"];
    before = after;
  };

  for (long long rep = 0; rep < repeats; ++rep) {
    double even_sps = 0.0;
    for (const auto& m : modes) {
      auto r = run_job(p, config_yaml(p, devices_124, m.split, m.start, p.steps, ""));
      double solo_sum = 0, solo_sum_slow = 0;
      bracket(solo_sum, solo_sum_slow);
      auto& f = table["124/" + m.label];
      // Without the first step, as the solo rates are.
      const double sps = rate(r.steps, 1, r.steps.size());
      if (&m == &modes.front()) even_sps = sps;
      f["sps"].push_back(sps);
      f["eff"].push_back(sps / solo_sum);
      const auto half = r.steps.size() / 2;
      f["eff_last_half"].push_back(rate(r.steps, half, r.steps.size()) / solo_sum);
      f["balance"].push_back(balance(r.steps, 0, r.steps.size()));
      if (even_sps > 0) f["vs_even"].push_back(sps / even_sps);
      for (std::size_t w = 0; w < r.job.workers.size(); ++w)
        f["idle_" + std::to_string(w)].push_back(1.0 - r.job.workers[w].busy_fraction);
      f["rebalances"].push_back(static_cast<double>(r.job.rebalances));
      f["imbalance"].push_back(r.job.imbalance_index);
      if (r.job.noise_scale) f["b_noise"].push_back(*r.job.noise_scale);
      nlohmann::json per_step = nlohmann::json::array();
      for (const auto& st : r.steps)
        per_step.push_back({{"step_s", st.step_seconds},
                            {"slices", st.worker_samples},
                            {"compute_s", st.worker_compute_seconds}});
      raw.push_back({{"repeat", rep},
                     {"steps", per_step},
                     {"scenario", "1:2:4"},
                     {"mode", m.label},
                     {"sps", sps},
                     {"solo_sum", solo_sum},
                     {"report", to_json(r.job)}});
    }
    for (const auto& m : modes) {
      auto r = run_job(p, config_yaml(p, devices_124, m.split, m.start, p.slow_steps, slow_fault));
      double solo_sum = 0, solo_sum_slow = 0;
      bracket(solo_sum, solo_sum_slow);
      auto& f = table["slow/" + m.label];
      const auto at = static_cast<std::size_t>(p.slow_at);
      if (r.steps.size() <= at) throw runtime_failure("bench hetero: too few steps recorded");
      std::vector<std::vector<std::int64_t>> history;
      for (std::size_t i = at; i < r.steps.size(); ++i) history.push_back(split_of(r.steps[i]));
      const auto k = policies::steps_to_reconverge(history, p.tolerance);
      const double after = rate(r.steps, at, r.steps.size());
      f["sps_after"].push_back(after);
      f["eff_after"].push_back(after / solo_sum_slow);
      f["balance_after"].push_back(balance(r.steps, at, r.steps.size()));
      if (k) {
        f["reconverge"].push_back(static_cast<double>(*k));
        f["eff_reconverged"].push_back(rate(r.steps, at + *k, r.steps.size()) / solo_sum_slow);
        f["balance_reconverged"].push_back(balance(r.steps, at + *k, r.steps.size()));
      } else {
        f["not_reconverged"].push_back(1.0);
      }
      for (std::size_t w = 0; w < r.job.workers.size(); ++w)
        f["idle_" + std::to_string(w)].push_back(1.0 - r.job.workers[w].busy_fraction);
      f["rebalances"].push_back(static_cast<double>(r.job.rebalances));
      nlohmann::json splits = nlohmann::json::array();
      for (const auto& s : r.steps) splits.push_back(split_of(s));
      raw.push_back({{"repeat", rep},
                     {"scenario", "slow"},
                     {"mode", m.label},
                     {"sps_after", after},
                     {"solo_sum_slow", solo_sum_slow},
                     {"reconverge_steps", k ? nlohmann::json(*k) : nlohmann::json(nullptr)},
                     {"splits", splits},
                     {"report", to_json(r.job)}});
    }
    console::info("repeat " + std::to_string(rep + 1) + "/" + std::to_string(repeats) + " done");
  }

  const auto& solo = table["solo"];
  std::printf(
      "troupe bench hetero: MLP 784-256-128-10 on Fashion-MNIST, batch %lld, ps (1 shard), sim "
      "devices s4/s2/s1 = slowdowns %g/%g/%g over cpu (speeds 1:2:4, %.3g cores at equal finish, "
      "host %d cores); median of %lld repeats\n",
      static_cast<long long>(p.batch), 4 * p.scale, 2 * p.scale, p.scale, 1.75 / p.scale,
      host_cores(), repeats);
  if (p.row_seconds > 0)
    std::printf(
        "pace fixed: row_seconds %.3g (one cpu thread's %.3g s per sample, measured at the start, "
        "x %g)\n\n",
        p.row_seconds, p.row_seconds / headroom, headroom);
  else
    std::printf("pace live: the devices follow the host's speed\n\n");
  std::printf(
      "solo samples/s (%lld steps, first left out; median of the sets measured around the runs):"
      " s4 %s  s2 %s  s1 %s  s1 slowed %gx %s  | sum %s, sum after slowdown %s\n\n",
      static_cast<long long>(p.solo_steps), cell(solo, "s4", "%.0f").c_str(),
      cell(solo, "s2", "%.0f").c_str(), cell(solo, "s1", "%.0f").c_str(), p.slow_factor,
      cell(solo, "s1x", "%.0f").c_str(), cell(solo, "sum", "%.0f").c_str(),
      cell(solo, "sum_slow", "%.0f").c_str());
  std::printf("speeds 1:2:4, %lld steps\n", static_cast<long long>(p.steps));
  std::printf("%-14s %10s %6s %9s %8s %8s %20s %6s %9s %9s\n", "split", "samples/s", "eff",
              "eff(2nd½)", "balance", "vs even", "idle s4/s2/s1", "rebal", "imbalance", "b_noise");
  for (const auto& m : modes) {
    const auto& f = table["124/" + m.label];
    const std::string idle = cell(f, "idle_0", "%.2f") + "/" + cell(f, "idle_1", "%.2f") + "/" +
                             cell(f, "idle_2", "%.2f");
    std::printf("%-14s %10s %6s %9s %8s %8s %20s %6s %9s %9s\n", m.label.c_str(),
                cell(f, "sps", "%.0f").c_str(), cell(f, "eff", "%.3f").c_str(),
                cell(f, "eff_last_half", "%.3f").c_str(), cell(f, "balance", "%.3f").c_str(),
                cell(f, "vs_even", "%.2fx").c_str(), idle.c_str(),
                cell(f, "rebalances", "%.0f").c_str(), cell(f, "imbalance", "%.3f").c_str(),
                cell(f, "b_noise", "%.0f").c_str());
  }
  std::printf(
      "\ns1 slowed %gx at step %lld of %lld (efficiency over the solo sum after the "
      "slowdown)\n",
      p.slow_factor, static_cast<long long>(p.slow_at), static_cast<long long>(p.slow_steps));
  std::printf("%-14s %15s %9s %15s %13s %16s %11s %20s %6s\n", "split", "samples/s after",
              "eff after", "eff reconverged", "balance after", "bal. reconverged", "reconverge",
              "idle s4/s2/s1", "rebal");
  for (const auto& m : modes) {
    const auto& f = table["slow/" + m.label];
    const std::string idle = cell(f, "idle_0", "%.2f") + "/" + cell(f, "idle_1", "%.2f") + "/" +
                             cell(f, "idle_2", "%.2f");
    std::string reconv = cell(f, "reconverge", "%.0f steps");
    if (f.count("not_reconverged"))
      reconv += " (" + std::to_string(f.at("not_reconverged").size()) + " runs never)";
    std::printf("%-14s %15s %9s %15s %13s %16s %11s %20s %6s\n", m.label.c_str(),
                cell(f, "sps_after", "%.0f").c_str(), cell(f, "eff_after", "%.3f").c_str(),
                cell(f, "eff_reconverged", "%.3f").c_str(),
                cell(f, "balance_after", "%.3f").c_str(),
                cell(f, "balance_reconverged", "%.3f").c_str(), reconv.c_str(), idle.c_str(),
                cell(f, "rebalances", "%.0f").c_str());
  }
  if (json.wanted()) {
    nlohmann::json medians;
    for (const auto& [scenario, f] : table)
      for (const auto& [key, values] : f) medians[scenario][key] = median(values);
    json.write({{"pace", name_of(pace)},
                {"row_seconds", p.row_seconds},
                {"scale", p.scale},
                {"medians", medians},
                {"runs", raw}});
  }
  return exit_ok;
}

const command_registrar reg{{"bench hetero",
                             "one job over sim speeds 1:2:4: even, weighted and adaptive splits",
                             usage, run, flags}};

}  // namespace
}  // namespace troupe::apps
