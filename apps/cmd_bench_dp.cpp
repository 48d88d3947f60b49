// `troupe bench dp`: Troupe's multi-process data parallelism beside PyTorch DDP (gloo) on the
// same model, batch, data and thread count, for each process count. Troupe: P `process:
// separate` groups of one cpu worker with one thread, so the runtime starts P child `troupe
// agent`s that hold the replicas and do the forward/backward passes and the SGD steps (rows go
// down over ZeroMQ ipc; the gradients are allreduced in a ring of the agents and the control
// process, over shared memory on one host: actors/sync/process_ring.hpp). DDP:
// apps/bench/ddp_train.py, P processes spawned by torch.multiprocessing. Both take --batch rows
// per process (a global batch of --batch x P) and leave the first --warmup steps untimed; runs
// alternate (Troupe, DDP, for every P, then again) and the figures are medians over --runs: the
// machine is shared and noisy.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "apps/args.hpp"
#include "apps/bench_run.hpp"
#include "apps/command.hpp"
#include "apps/console.hpp"
#include "apps/json_output.hpp"
#include "core/error.hpp"
#include "core/median.hpp"

namespace troupe::apps {
namespace {

const char* usage =
    "usage: troupe bench dp --processes 1,2,4 --model mlp|cnn [--steps 200] [--batch 64]\n"
    "                       [--runs 3] [--warmup W] [--threads 1] [--lr 0.01] [--data DIR]\n"
    "                       [--script FILE] [--python PY] [--timeout 600] [--log-dir DIR]\n"
    "                       [--json FILE]\n\n"
    "Data-parallel training on Fashion-MNIST (MLP 784-256-128-10, or the CNN conv3x3 16 -> pool\n"
    "-> conv3x3 32 -> pool -> fc 128 -> 10; SGD --lr) with P processes of --threads threads, for\n"
    "each P of --processes: Troupe (P `process: separate` groups, one cpu worker each: P child\n"
    "`troupe agent`s hold the replicas and do forward/backward and the optimizer, sync allreduce\n"
    "through a ring of the agents and the control process) beside PyTorch DDP\n"
    "(apps/bench/ddp_train.py: torch.multiprocessing spawn, gloo on 127.0.0.1). --batch is per\n"
    "process: the global batch is --batch x P. Each run\n"
    "trains --steps steps; samples/s counts the steps after the first --warmup (default: 20, at\n"
    "most a quarter of --steps). Troupe and DDP runs alternate; prints the medians of --runs runs\n"
    "and the ratio Troupe/DDP. Without python3-torch (make bench-deps) only Troupe's figures are\n"
    "printed. --script defaults to apps/bench/ddp_train.py beside the build directory (or in the\n"
    "working directory); --python to /usr/bin/python3 (Debian's, where python3-torch lives).\n"
    "Every DDP run is limited to --timeout seconds, every Troupe run too.";

enum class model_kind { mlp, cnn };

struct params {
  std::vector<std::int64_t> processes;
  model_kind model = model_kind::mlp;
  std::int64_t steps = 200, batch = 64, warmup = 20, threads = 1;
  double lr = 0.01, timeout = 600;
  std::string data, log_dir;
};

const char* model_name(model_kind m) {
  return m == model_kind::mlp ? "mlp" : "cnn";
}

std::vector<std::int64_t> parse_processes(const std::string& text) {
  std::vector<std::int64_t> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v < 1 || v > 64)
      throw input_error("--processes must be a comma-separated list of integers 1 to 64, got '" +
                        text + "'");
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) throw input_error("--processes must name at least one process count");
  return out;
}

// --- Troupe -------------------------------------------------------------------------------

std::string config_yaml(const params& p, std::int64_t procs) {
  std::ostringstream y;
  y << "cluster:\n  groups:\n";
  for (std::int64_t k = 0; k < procs; ++k)
    y << "    - {name: g" << k << ", device: cpu, count: 1, threads: " << p.threads
      << ", process: separate}\n";
  y << "jobs:\n  - name: dp\n";
  if (p.model == model_kind::mlp)
    y << "    model: {kind: mlp, hidden: [256, 128]}\n";
  else
    y << "    model: {kind: cnn}\n";
  // The IDX loader scales pixels to [0,1], as ddp_train.py does: no preprocess step.
  y << "    data: {dataset: fashion-mnist, path: '" << p.data << "', split: even}\n"
    << "    optimizer: {kind: sgd, lr: " << p.lr << "}\n"
    << "    batch: " << p.batch * procs << "\n    epochs: 1000\n    max_steps: " << p.steps
    << "\n    sync: {mode: allreduce}\n    seed: 1\n    deterministic: true\n";
  return y.str();
}

struct troupe_result {
  double samples_per_second = 0;
  double timed_seconds = 0;
  double final_loss = 0;
};

// Samples over the steps after the warm-up, divided by the wall time from the end of the last
// warm-up step to the end of the last step (the job's own clock, gaps between steps included).
troupe_result run_troupe(const params& p, std::int64_t procs, const std::string& self) {
  runtime_options o;
  o.wait_seconds = p.timeout;  // a deadline, never a hang
  o.step_deadline_seconds = 120;
  o.agent_wait_seconds = 60;
  o.log_dir = p.log_dir;
  o.agent_program = self;
  const auto run = run_one_job(config_yaml(p, procs), "bench-dp.yaml", o, "bench dp");
  const auto& s = run.steps;
  if (s.size() != static_cast<std::size_t>(p.steps))
    throw runtime_failure("bench dp: expected " + std::to_string(p.steps) + " step metrics, got " +
                          std::to_string(s.size()));
  const auto w = static_cast<std::size_t>(p.warmup);
  const double t0 =
      w == 0 ? s.front().elapsed_seconds - s.front().step_seconds : s[w - 1].elapsed_seconds;
  double samples = 0;
  for (std::size_t i = w; i < s.size(); ++i)
    for (const auto& [group, count] : s[i].split) samples += static_cast<double>(count);
  const double seconds = s.back().elapsed_seconds - t0;
  if (!(seconds > 0)) throw runtime_failure("bench dp: no time measured over the timed steps");
  return {samples / seconds, seconds, s.back().loss};
}

// --- DDP ----------------------------------------------------------------------------------

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct command_output {
  int exit_code = -1;  // 124: `timeout` ended it
  std::string text;    // stdout and stderr together
};

// Runs `cmd` through the shell; its own `timeout` bounds the wait.
command_output run_command(const std::string& cmd) {
  command_output out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.text.append(buf, n);
  const int status = ::pclose(f);
  out.exit_code = status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return out;
}

std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return "";
  auto begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin + 1));
}

struct ddp_setup {
  std::string python, script;
  std::string unavailable;  // why DDP is not run; empty: it is
};

std::optional<std::string> default_script() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  // build-dir/troupe -> apps/bench/ddp_train.py of the source tree above it.
  if (!ec) {
    candidates.push_back(self.parent_path().parent_path() / "apps/bench/ddp_train.py");
    candidates.push_back(self.parent_path() / "apps/bench/ddp_train.py");
  }
  candidates.push_back(fs::current_path(ec) / "apps/bench/ddp_train.py");
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec)) return c.lexically_normal().string();
  return std::nullopt;
}

ddp_setup find_ddp(const args& a) {
  ddp_setup d;
  d.python =
      a.get_or("python", ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3");
  if (auto s = a.get("script")) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*s, ec))
      throw input_error("--script: no such file '" + *s + "'");
    d.script = *s;
  } else if (auto s2 = default_script()) {
    d.script = *s2;
  } else {
    d.unavailable = "DDP: apps/bench/ddp_train.py not found (pass --script FILE)";
    return d;
  }
  const auto probe =
      run_command("timeout -k 5 120 " + sh_quote(d.python) + " -c 'import torch' 2>&1");
  if (probe.exit_code != 0) d.unavailable = "DDP: python3-torch not installed (make bench-deps)";
  return d;
}

struct ddp_result {
  std::optional<double> samples_per_second;
  std::string error;
  nlohmann::json line;
};

ddp_result run_ddp(const params& p, const ddp_setup& d, std::int64_t procs) {
  std::ostringstream cmd;
  cmd << "OMP_NUM_THREADS=" << p.threads << " timeout -k 10 " << static_cast<long long>(p.timeout)
      << " " << sh_quote(d.python) << " " << sh_quote(d.script) << " --procs " << procs
      << " --model " << model_name(p.model) << " --batch " << p.batch << " --steps " << p.steps
      << " --warmup " << p.warmup << " --threads " << p.threads << " --lr " << p.lr << " --timeout "
      << static_cast<long long>(p.timeout) << " --data " << sh_quote(p.data) << " 2>&1";
  const auto out = run_command(cmd.str());
  ddp_result r;
  // The JSON line is the last line of stdout; warnings may come before it.
  std::istringstream lines(out.text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{') continue;
    try {
      auto j = nlohmann::json::parse(line);
      if (j.contains("samples_per_second") && j["samples_per_second"].is_number()) {
        r.line = j;
        r.samples_per_second = j["samples_per_second"].get<double>();
      }
    } catch (const nlohmann::json::exception&) {
    }
  }
  if (out.exit_code == 0 && r.samples_per_second) return r;
  r.samples_per_second.reset();
  if (out.exit_code == 124 || out.exit_code == 128 + 9)
    r.error = "timed out after " + std::to_string(static_cast<long long>(p.timeout)) + " s";
  else
    r.error = "exit " + std::to_string(out.exit_code) + ": " + last_line(out.text);
  return r;
}

// --- the table ----------------------------------------------------------------------------

std::string runs_text(const std::vector<double>& v) {
  if (v.empty()) return "-";
  std::string s;
  for (double x : v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.0f", s.empty() ? "" : ",", x);
    s += buf;
  }
  return s;
}

const flag_set flags{{"processes", "model", "steps", "batch", "runs", "warmup", "threads", "lr",
                      "data", "script", "python", "timeout", "log-dir", "json"},
                     {},
                     {}};

int run(const std::vector<std::string>& argv) {
  args a(argv, flags);
  json_output json(a.get("json"));
  a.no_positionals();
  params p;
  p.processes = parse_processes(a.get_or("processes", "1,2,4"));
  const std::string model = a.get_or("model", "mlp");
  if (model == "mlp")
    p.model = model_kind::mlp;
  else if (model == "cnn")
    p.model = model_kind::cnn;
  else
    throw input_error("--model must be mlp or cnn, got '" + model + "'");
  p.steps = a.get_int("steps", 200);
  p.batch = a.get_int("batch", 64);
  p.threads = a.get_int("threads", 1);
  p.lr = a.get_double("lr", 0.01);
  p.timeout = a.get_double("timeout", 600);
  p.data = a.get_or("data", "/usr/share/datasets/fashion-mnist");
  p.log_dir = a.get_or("log-dir", "");
  const auto runs = a.get_int("runs", 3);
  if (p.steps < 2) throw input_error("--steps must be >= 2");
  p.warmup = a.get_int("warmup", std::min<std::int64_t>(20, p.steps / 4));
  if (p.warmup < 0 || p.warmup >= p.steps)
    throw input_error("--warmup must be >= 0 and below --steps");
  if (p.batch < 1 || p.batch > 60000) throw input_error("--batch must be 1 to 60000");
  if (p.threads < 1 || p.threads > 256) throw input_error("--threads must be 1 to 256");
  if (runs < 1 || runs > 100) throw input_error("--runs must be 1 to 100");
  if (!(p.lr > 0)) throw input_error("--lr must be > 0");
  if (!(p.timeout >= 10)) throw input_error("--timeout must be >= 10 (seconds)");
  if (p.data.find('\'') != std::string::npos) throw input_error("--data must not contain a quote");

  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || self.empty()) throw runtime_failure("bench dp: cannot read /proc/self/exe");
  const auto ddp = find_ddp(a);
  if (!ddp.unavailable.empty()) console::warn(ddp.unavailable);

  std::map<std::int64_t, std::vector<double>> troupe_sps, ddp_sps;
  std::map<std::int64_t, std::vector<std::string>> ddp_errors;
  std::string torch_version;
  for (long long rep = 0; rep < runs; ++rep) {
    for (const auto procs : p.processes) {
      const auto t = run_troupe(p, procs, self);
      troupe_sps[procs].push_back(t.samples_per_second);
      char line[160];
      std::snprintf(line, sizeof line, "run %lld/%lld, %lld processes: troupe %.0f samples/s",
                    rep + 1, runs, static_cast<long long>(procs), t.samples_per_second);
      std::string progress = line;
      if (ddp.unavailable.empty()) {
        const auto d = run_ddp(p, ddp, procs);
        if (d.samples_per_second) {
          ddp_sps[procs].push_back(*d.samples_per_second);
          if (torch_version.empty() && d.line.contains("torch"))
            torch_version = d.line["torch"].get<std::string>();
          std::snprintf(line, sizeof line, ", ddp %.0f samples/s", *d.samples_per_second);
          progress += line;
        } else {
          ddp_errors[procs].push_back(d.error);
          progress += ", ddp failed: " + d.error;
        }
      }
      console::info(progress);
    }
  }

  const char* model_text = p.model == model_kind::mlp
                               ? "MLP 784-256-128-10"
                               : "CNN conv3x3 16 -> pool -> conv3x3 32 -> pool -> fc 128 -> 10";
  std::printf(
      "troupe bench dp: %s on Fashion-MNIST, SGD lr %g, batch %lld per process (global batch "
      "%lld x P), %lld steps per run of which the first %lld are untimed, %lld thread(s) per "
      "process, host with %u cores; medians of %lld runs, Troupe and DDP alternating\n",
      model_text, p.lr, static_cast<long long>(p.batch), static_cast<long long>(p.batch),
      static_cast<long long>(p.steps), static_cast<long long>(p.warmup),
      static_cast<long long>(p.threads), std::thread::hardware_concurrency(), runs);
  std::printf(
      "Troupe: P `process: separate` groups of one cpu worker: P child `troupe agent`s hold the "
      "replicas and do forward/backward and the optimizer (rows down over ZeroMQ ipc); sync "
      "allreduce through a ring of the agents and the control process (its transport is in each "
      "run's report: sync.process_ring)\n");
  if (ddp.unavailable.empty())
    std::printf(
        "DDP: PyTorch%s%s DistributedDataParallel, gloo on 127.0.0.1, P processes "
        "(torch.multiprocessing spawn), torch.set_num_threads(%lld)\n\n",
        torch_version.empty() ? "" : " ", torch_version.c_str(), static_cast<long long>(p.threads));
  else
    std::printf("%s\n\n", ddp.unavailable.c_str());
  std::printf("%-9s %12s %17s %14s %12s   %-24s %s\n", "processes", "global batch",
              "troupe samples/s", "ddp samples/s", "troupe/ddp", "troupe runs", "ddp runs");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto procs : p.processes) {
    const double t = median(troupe_sps[procs]);
    const auto& dv = ddp_sps[procs];
    char d_cell[32] = "-", ratio[32] = "-";
    if (!dv.empty()) {
      std::snprintf(d_cell, sizeof d_cell, "%.0f", median(dv));
      std::snprintf(ratio, sizeof ratio, "%.2f", t / median(dv));
    }
    std::printf("%-9lld %12lld %17.0f %14s %12s   %-24s %s\n", static_cast<long long>(procs),
                static_cast<long long>(p.batch * procs), t, d_cell, ratio,
                runs_text(troupe_sps[procs]).c_str(), runs_text(dv).c_str());
    rows.push_back({{"processes", procs},
                    {"global_batch", p.batch * procs},
                    {"troupe_samples_per_second", t},
                    {"troupe_runs", troupe_sps[procs]},
                    {"ddp_samples_per_second",
                     dv.empty() ? nlohmann::json(nullptr) : nlohmann::json(median(dv))},
                    {"ddp_runs", dv},
                    {"ddp_errors", ddp_errors[procs]}});
  }
  for (const auto& [procs, errors] : ddp_errors)
    if (!errors.empty())
      std::printf("DDP with %lld processes failed %zu of %lld runs; last: %s\n",
                  static_cast<long long>(procs), errors.size(), runs, errors.back().c_str());
  if (json.wanted()) {
    json.write({{"model", model_name(p.model)},
                {"batch_per_process", p.batch},
                {"steps", p.steps},
                {"warmup_steps", p.warmup},
                {"threads", p.threads},
                {"runs", runs},
                {"ddp", ddp.unavailable.empty() ? nlohmann::json("gloo")
                                                : nlohmann::json(ddp.unavailable)},
                {"rows", rows}});
  }
  return exit_ok;
}

const command_registrar reg{
    {"bench dp",
     "multi-process data parallel: Troupe's agents beside PyTorch DDP (gloo), samples/s", usage,
     run, flags}};

}  // namespace
}  // namespace troupe::apps
