#pragma once
// Troupe as a library: embed the whole runtime (an in-process heterogeneous cluster) in your own
// program. No CAF types in this header.
//
//   troupe::runtime rt(troupe::config::load_config("cluster.yaml"));
//   troupe::runtime::register_model("my-net", [](const troupe::models::model_spec& s) { ... });
//   rt.on_metrics([](const troupe::live_metrics& m) { ... });   // live, one per step
//   rt.submit(job);                                              // besides the config's jobs
//   troupe::run_report report = rt.run();                        // start + wait
//
// The config's jobs are submitted by start(); submit() adds more before or after start(). The
// callbacks run on the runtime's metrics thread, one at a time: keep them short.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/common/live_metrics.hpp"
#include "actors/common/report.hpp"
#include "core/config.hpp"
#include "models/model.hpp"

namespace troupe {

struct runtime_options {
  // Where each job's log file (JOB.log) goes; empty: no log files.
  std::string log_dir;
  // No step (and no setup phase) of a job may take longer; the job fails instead of hanging.
  double step_deadline_seconds = 600.0;
  // wait() gives up after this long (0: never) and throws troupe::runtime_failure.
  double wait_seconds = 0.0;
  // CAF scheduler threads for the control plane (0: CAF's default). Device workers have their
  // own threads whatever this says.
  int scheduler_threads = 0;
  // CAF scheduler policy: "sharing" (one queue, sleeping workers) or "stealing" (CAF's default,
  // whose idle workers poll). Sharing is the default here: polling threads take CPU from the
  // device workers on small machines (measured on 2 cores: the default work-stealing scheduler
  // doubled the small-message round trip).
  std::string scheduler_policy = "sharing";
  // `troupe run --resume DIR`: each job continues from the newest valid checkpoint in
  // DIR/JOBNAME/ (starting fresh, logged, when there is none). Empty: every job starts fresh.
  std::string resume_dir;
  // `troupe run --listen HOST:PORT`: accept agents (`troupe agent --join`) on this address
  // (port 0: a free one; listen_port() says which). Empty: no listener, nothing leaves the
  // process. Joins, refusals and lost agents are logged through on_log as job "agents".
  std::string listen;
  // With listen: the port of the control connection agents hold after joining (mutual TLS), on
  // the listen address's interface. 0: a free one, which agents learn at the join endpoint; set
  // it where a firewall must name the ports to open.
  std::uint16_t control_port = 0;
  // With listen: before any job starts, wait until this many agents have joined, for at most
  // agent_wait_seconds (then start() throws runtime_failure saying how many came).
  int wait_agents = 0;
  double agent_wait_seconds = 60.0;
  // With listen: the cluster's credentials (a CA, the control certificate, the join token) are
  // in this state directory, made at the first start (core/cluster_keys.hpp; "": TROUPE_STATE,
  // else ./troupe-state). Agents join over TLS with the token and hold a mutual-TLS control
  // connection.
  std::string state_dir;
  // With listen: agents must bring this token instead of the state directory's (never logged).
  std::string join_token;
  // No TLS, no token: any host that reaches the listener may join. A warning is logged at start
  // and every minute.
  bool insecure = false;
  // The troupe executable, for `process: separate` groups: the runtime starts it as
  // `PROGRAM agent --join ...` once per such group (`troupe run` passes itself). Such a group
  // makes the runtime listen on 127.0.0.1 (a free port) when `listen` is empty, and every group
  // that is not local is waited for before any job starts.
  std::string agent_program;
  // `troupe serve`: jobs arrive while the runtime runs. A job waits until the agents of its
  // groups have joined (instead of the runtime waiting for every agent before any job starts),
  // and a job's log file is appended to, so a job resumed after a restart keeps its earlier lines.
  bool service = false;
  // "json": each line of a job's log file is one JSON object (time, level, job, generation,
  // step, message) for log shippers; "text" (default): a time and the line.
  std::string log_format = "text";
};

class runtime {
 public:
  // Checks what the config loader cannot (e.g. a sync mode this build does not run) and throws
  // troupe::input_error before anything starts.
  explicit runtime(config::run_config cfg, runtime_options opts = {});
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // Makes a model class available to jobs by `model.kind` (before the jobs that use it start).
  static void register_model(const std::string& kind, models::model_factory factory);

  // Subscriptions; call before start().
  void on_metrics(metrics_callback f);
  void on_log(log_callback f);
  // A job ended for good (not a preemption pause): its report.
  void on_job_end(job_end_callback f);
  // An event of a job's course as it happens (the report's `events`, live).
  void on_event(event_callback f);

  // Starts the cluster and submits the config's jobs. Idempotent.
  void start();
  // Queues another job (starts the runtime if needed). Throws input_error for an invalid job.
  void submit(config::job_config job);
  // Blocks until every submitted job has ended; returns the report.
  run_report wait();
  // Stops the run gracefully (SIGTERM, SIGINT, a preemption): nothing more starts; each running
  // job ends at its next step boundary, after a last checkpoint where it takes them, with
  // status interrupted, and wait() returns. Thread-safe; callable at any time, also before
  // start().
  void interrupt();
  // Cancels one job: a queued one now, a running one at its next step boundary (status
  // cancelled, its devices freed). Throws input_error naming the job when there is none of that
  // name or it has ended.
  void cancel(const std::string& job);
  // Injects a fault into a running job (the --inject grammar; without "@STEP" it fires at the
  // next step): kill, hang, drop, oom, device-error or partition. Throws input_error saying why a
  // job does not take it.
  void inject(const std::string& job, const std::string& spec);
  // Every job the runtime has: queued ones in the order they would start (with why they wait),
  // then running, then ended.
  std::vector<job_view> jobs() const;
  // The agents that joined so far (lost ones with when and why).
  std::vector<agent_report> agents() const;
  // Drains a joined agent: it leaves (its workers' share moves, by each job's supervision) and
  // exits 0. Throws input_error naming the agent when none of that name is joined.
  void drain_agent(const std::string& name);
  // The port `listen` bound (after start()); 0 without a listener.
  std::uint16_t listen_port() const;
  run_report run() {
    start();
    return wait();
  }

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace troupe
