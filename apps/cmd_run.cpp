// `troupe run CONFIG [--set PATH=VALUE ...] [--report FILE.json] [--log-dir DIR] [--resume DIR]
// [--inject SPEC ...] [--fault-soak N] [--listen HOST:PORT ...] [--quiet]` (the usage text below
// has every flag): runs the config's jobs on the embedded runtime of actors/runtime.hpp, its
// groups in this process or in agents. On a terminal each job gets a live progress line redrawn in
// place; when stdout is not a terminal, plain log lines instead. Exit 0 when every job completed, 2
// on bad input (before any training), 1 when a job failed; after SIGTERM or SIGINT (the jobs
// stopped at a step boundary, with a last checkpoint and status interrupted), 128 + the signal.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "apps/api_security.hpp"
#include "apps/args.hpp"
#include "apps/command.hpp"
#include "apps/console.hpp"
#include "apps/stop_signals.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "core/cluster_keys.hpp"
#include "core/config_load.hpp"
#include "core/error.hpp"
#include "core/fault_spec.hpp"
#include "core/launcher_env.hpp"
#include "core/secret.hpp"
#include "core/writable_paths.hpp"
#include "service/http_api.hpp"
#include "service/run_view.hpp"

namespace troupe::apps {
namespace {

// The live view. Called from the runtime's metrics thread; the mutex guards against the main
// thread's final draw. Its lines go through the console logger (apps/console.hpp); only a
// terminal's redrawn progress lines, which are a display rather than a log, are printed here.
class progress_view {
 public:
  // json: no progress line (the console logger makes each log line one JSON object).
  progress_view(bool tty, bool quiet, bool json) : tty_(tty && !json), quiet_(quiet), json_(json) {}

  void on_step(const live_metrics& m) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!last_.count(m.job)) order_.push_back(m.job);
    last_[m.job] = m;
    steps_[m.job] = m.step;
    const auto now = std::chrono::steady_clock::now();
    if (quiet_ || json_) return;
    if (tty_) {
      if (now - drawn_at_ < std::chrono::milliseconds(100) && m.step != m.steps_total) return;
      drawn_at_ = now;
      redraw();
    } else {
      auto& at = printed_at_[m.job];
      if (now - at < std::chrono::seconds(5) && m.step != m.steps_total && m.step != 1) return;
      at = now;
      console::result(line(m));
    }
  }

  void on_log(const std::string& job, const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    if (quiet_) return;
    if (tty_) clear();
    console::job_line(job, steps_[job], text);
    if (tty_) redraw();
  }

  void done() {
    std::lock_guard<std::mutex> lock(mu_);
    if (tty_ && !quiet_) redraw();
  }

 private:
  static std::string line(const live_metrics& m) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%-14s epoch %lld/%lld  step %lld/%lld  loss %.4f  %.0f samples/s  split",
                  m.job.c_str(), static_cast<long long>(m.epoch + 1),
                  static_cast<long long>(m.epochs), static_cast<long long>(m.step),
                  static_cast<long long>(m.steps_total), m.loss, m.samples_per_second);
    std::string out = buf;
    for (const auto& [group, n] : m.split) out += " " + group + "=" + std::to_string(n);
    return out;
  }
  // Moves the cursor back over the lines drawn last time and erases them.
  void clear() {
    for (int i = 0; i < drawn_lines_; ++i) std::printf("\033[1A\r\033[K");
    drawn_lines_ = 0;
  }
  void redraw() {
    clear();
    for (const auto& job : order_) std::printf("\r\033[K%s\n", line(last_[job]).c_str());
    drawn_lines_ = static_cast<int>(order_.size());
    std::fflush(stdout);
  }

  bool tty_;
  bool quiet_;
  bool json_;
  std::map<std::string, std::int64_t> steps_;
  std::mutex mu_;
  std::map<std::string, live_metrics> last_;
  std::vector<std::string> order_;
  std::map<std::string, std::chrono::steady_clock::time_point> printed_at_;
  std::chrono::steady_clock::time_point drawn_at_{};
  int drawn_lines_ = 0;
};

std::string default_log_dir(const std::string& report) {
  if (report.empty()) return "troupe-logs";
  auto dir = std::filesystem::path(report).parent_path();
  return (dir.empty() ? std::filesystem::path("logs") : dir / "logs").string();
}

// `--inject SPEC` (repeatable) and `--fault-soak N` apply to every job of the config; a fault
// whose device a job does not use never fires there.
void add_faults(config::run_config& cfg, const std::vector<std::string>& specs,
                const std::string& soak) {
  for (const auto& text : specs) {
    const auto f = config::parse_fault(text, "--inject");
    config::check_fault_target(f, cfg.cluster, text, "--inject");
    for (auto& j : cfg.jobs) j.faults.push_back(f);
  }
  if (soak.empty()) return;
  std::size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(soak, &used);
  } catch (const std::exception&) {
  }
  if (used != soak.size() || n < 1)
    throw input_error("--fault-soak '" + soak + "': expected a count >= 1");
  for (auto& j : cfg.jobs) j.fault_soak = n;
}

const flag_set flags{
    {"report", "log-dir", "resume", "fault-soak", "listen", "wait-agents", "agent-wait", "token",
     "http", "log-format", "state", "control-port", "data-ports"},
    {"quiet", "insecure"},
    {"set", "inject"}};

int run(const std::vector<std::string>& argv) {
  args a(argv, flags);
  const bool quiet = a.has("quiet");
  console::configure("troupe run", console::parse_format(a.get_or("log-format", "text")), quiet);
  if (a.positionals().size() != 1)
    // The flags are named once, in the help: a second list here had already fallen behind it.
    throw input_error(
        "expected one CONFIG file (usage: troupe run CONFIG [FLAGS...]; see "
        "troupe run --help)");
  // Bad input fails here, before any actor starts: exit 2 through main's input_error handler.
  auto cfg = config::load_config(a.positionals()[0], a.all("set"));
  for (const auto& note : cfg.notes) console::info("note: " + note);
  add_faults(cfg, a.all("inject"), a.get_or("fault-soak", ""));
  const std::string report_path = a.get_or("report", "");
  runtime_options opts;
  opts.log_dir = a.get_or("log-dir", default_log_dir(report_path));
  // Where the run writes, checked before anything trains (exit 2): a report that cannot be
  // written at the end would lose the run's record.
  if (!report_path.empty()) require_writable_file(report_path, "--report");
  require_writable_dir(opts.log_dir, "--log-dir");
  opts.resume_dir = a.get_or("resume", "");
  if (a.has("resume") && !std::filesystem::is_directory(opts.resume_dir))
    throw input_error("--resume " + opts.resume_dir + ": not a directory (expected the " +
                      "checkpoint.dir of a previous run, holding one subdirectory per job)");
  opts.listen = a.get_or("listen", "");
  opts.control_port = control_port_flag(a);
  if (const auto ports = a.get("data-ports"))
    collectives::set_data_ports(collectives::parse_port_range(*ports, "--data-ports"));
  opts.wait_agents = static_cast<int>(a.get_int("wait-agents", 0));
  opts.agent_wait_seconds = a.get_double("agent-wait", 60.0);
  opts.join_token = a.get("token").value_or(process_env()("TROUPE_TOKEN").value_or(""));
  opts.state_dir = default_state_dir(a.get_or("state", ""));
  opts.insecure = a.has("insecure");
  opts.log_format = a.get_or("log-format", "text");
  // process: separate groups: this very executable is their agent.
  std::error_code self_error;
  opts.agent_program = std::filesystem::read_symlink("/proc/self/exe", self_error).string();
  if (opts.wait_agents < 0 || opts.wait_agents > 4096 || !(opts.agent_wait_seconds > 0))
    throw input_error("--wait-agents must be 0 to 4096 and --agent-wait positive");
  if (opts.wait_agents > 0 && opts.listen.empty())
    throw input_error("--wait-agents needs --listen HOST:PORT (where the agents join)");
  // SIGTERM / SIGINT: the jobs end at their next step boundary, after a last checkpoint
  // (status interrupted, the report written, exit 128 + signal); a second signal stops at once.
  std::mutex stop_mu;
  runtime* running = nullptr;
  stop_signals stop([&](int sig) {
    console::info(std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") +
                  ": finishing the step in flight, then a checkpoint where the jobs take them "
                  "(again to stop at once)");
    std::lock_guard<std::mutex> lock(stop_mu);
    if (running) running->interrupt();
  });
  runtime rt(std::move(cfg), opts);
  {
    std::lock_guard<std::mutex> lock(stop_mu);
    running = &rt;
    if (stop.received()) rt.interrupt();
  }

  // --http: the dashboard, /metrics and the read side of the API for this run, up while it runs.
  std::unique_ptr<service::run_view> backend;
  std::unique_ptr<service::http_api> http;
  if (a.has("http")) {
    service::http_options h;
    h.address = a.get_or("http", "");
    const auto host = parse_join(h.address, "--http", true).host;
    h.security = api_security(opts.state_dir, opts.join_token, h.address, opts.insecure,
                              [](const std::string& line) { console::info(line); });
    backend = std::make_unique<service::run_view>(rt, opts.log_dir);
    http = std::make_unique<service::http_api>(*backend, h);
    if (opts.insecure)
      console::warn("--insecure: the dashboard and API take requests without a token or TLS");
    console::info(std::string("dashboard on ") + (opts.insecure ? "http" : "https") + "://" + host +
                  ":" + std::to_string(http->port()) + "/");
  }

  progress_view view(isatty(STDOUT_FILENO) == 1, quiet, opts.log_format == "json");
  rt.on_metrics([&view](const live_metrics& m) { view.on_step(m); });
  rt.on_log([&view](const std::string& job, const std::string& text) { view.on_log(job, text); });
  const run_report report = rt.run();
  view.done();

  for (const auto& j : report.jobs) {
    char figures[256];
    std::snprintf(figures, sizeof figures,
                  "%s: %s  steps %lld  test_accuracy %.4f  test_loss %.4f  %.0f samples/s  %.1f s",
                  j.name.c_str(), name_of(j.status), static_cast<long long>(j.steps),
                  j.test_accuracy, j.test_loss, j.samples_per_second, j.wall_seconds);
    std::string summary = figures;
    if (j.checkpoints.resumed_from_step)
      summary += "  resumed from step " + std::to_string(*j.checkpoints.resumed_from_step);
    if (!j.error.empty()) summary += "  error: " + j.error;
    console::result(summary);
    // A job that trained on while its checkpoints failed has less to resume from than the user
    // thinks: say so where the run ends (the report has the counts under `checkpoints`).
    if (j.checkpoints.failed > 0)
      console::job_warning(j.name,
                           std::to_string(j.checkpoints.failed) + " checkpoint(s) failed, " +
                               std::to_string(j.checkpoints.written) + " written" +
                               (j.checkpoints.written == 0 ? ": nothing to resume from" : "") +
                               " (see the job's log)");
  }
  char rss[64];
  std::snprintf(rss, sizeof rss, "peak RSS %.1f MiB",
                static_cast<double>(report.peak_rss_bytes) / (1 << 20));
  console::result(rss);
  if (!report_path.empty()) {
    const auto parent = std::filesystem::path(report_path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    std::ofstream out(report_path);
    if (!out) throw runtime_failure("cannot write the report to " + report_path);
    out << redact(to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace))
        << '\n';
    if (!quiet) console::result("report: " + report_path + "  logs: " + opts.log_dir + "/");
  }
  std::lock_guard<std::mutex> lock(stop_mu);
  running = nullptr;
  return stop.received() ? 128 + stop.received() : exit_code(report);
}

const command_registrar reg{
    {"run", "run the jobs of a config on an in-process heterogeneous cluster",
     "usage: troupe run CONFIG [--set PATH=VALUE ...] [--report FILE.json] [--log-dir DIR] "
     "[--resume DIR] [--inject SPEC ...] [--fault-soak N] [--listen HOST:PORT [--wait-agents N]\n"
     "[--agent-wait SECONDS] [--state DIR] [--token T | --insecure] [--control-port P]\n"
     "[--data-ports LO-HI]] [--http HOST:PORT]\n"
     "[--quiet]\n\n"
     "  --set PATH=VALUE  override a config key by dotted path (jobs.0.epochs=1,\n"
     "                    cluster.groups.1.slowdown=4); repeatable\n"
     "  --report FILE     write the run report as JSON (docs/REPORT.md)\n"
     "  --log-dir DIR     one log file per job, DIR/JOB.log (default: logs/ next to the\n"
     "                    report, else ./troupe-logs)\n"
     "  --resume DIR      continue each job from its newest valid checkpoint in DIR/JOB/\n"
     "                    (a torn or corrupt one is skipped; none: the job starts fresh)\n"
     "  --quiet           no progress line or log lines; only the summary\n"
     "  --log-format F    text (default) or json: each line of the job files, of stdout and\n"
     "                    of stderr one JSON object (time, level, job, generation, step,\n"
     "                    message); no progress line\n"
     "  --inject SPEC     inject a fault (kill:GROUP/INDEX@STEP, hang:GROUP/INDEX@STEP[+SECONDS],\n"
     "                    drop:..., slow:..., partition:GROUP@FIRST-LAST); repeatable\n"
     "  --fault-soak N    N random faults over each job's steps, drawn from the job seed\n"
     "  --listen H:P      accept agents (troupe agent --join H:P) on this address; port 0\n"
     "                    picks a free one (logged as [agents] listening for agents on H:P)\n"
     "  --control-port P  with --listen: the port agents hold their control connection on\n"
     "                    (default: a free one, which they learn when they join)\n"
     "  --data-ports LO-HI  the ports tcp data links between hosts bind here (default: any\n"
     "                    free one); open them, --listen's and --control-port's to agents\n"
     "  --wait-agents N   with --listen: start the jobs once N agents joined (at most\n"
     "                    --agent-wait seconds, default 60; then exit 1)\n"
     "  --state DIR       with --listen or --http: the cluster's CA, certificates and token,\n"
     "                    made at the first start (TROUPE_STATE; default ./troupe-state);\n"
     "                    agents and clients on this machine find them there\n"
     "  --token T         agents and clients must bring this token instead of STATE/token\n"
     "                    (also TROUPE_TOKEN)\n"
     "  --insecure        no TLS and no token on --listen and --http (a warning every minute)\n"
     "  --http H:P        the dashboard (/), /metrics and the API for this run over HTTPS with\n"
     "                    the token (port 0: a free one, logged)\n\n"
     "exit: 0 no job failed (each completed, or was cancelled: a dependency of it did not\n"
     "      complete, or it was drained), 1 a job failed, 2 bad input: the config, a flag or\n"
     "      where it writes (nothing trained), or a job refused at its start for its data or\n"
     "      model (other jobs may have trained), 128 + the signal after SIGTERM or SIGINT\n"
     "      (the jobs stopped at a step boundary, the report written)",
     run, flags}};

}  // namespace
}  // namespace troupe::apps
