#pragma once
// The run report (`troupe run --report FILE.json`; documented in docs/REPORT.md, a public
// contract): what each job did and what the cluster looked like. Plain structs, no CAF, so that
// embedding apps and tests read them directly; to_json() writes exactly the documented keys.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kinds.hpp"

namespace troupe {

struct worker_report {
  std::string name;  // GROUP/INDEX
  std::string group;
  std::string device;  // cpu | sim | cuda
  std::int64_t samples = 0;
  std::int64_t steps = 0;        // steps in which the worker had a non-empty slice
  std::int64_t first_step = -1;  // the first step it computed (-1: none); elastic joins show here
  std::int64_t wire_bytes = 0;   // moved between processes (a device in an agent; 0 here)
  double mean_batch = 0.0;
  double samples_per_second = 0.0;  // samples / compute_seconds
  double compute_seconds = 0.0;
  double busy_fraction = 0.0;  // compute_seconds / wall time of the job's steps
};

struct fault_report {
  std::int64_t injected = 0;
  std::int64_t failures = 0;
  std::map<std::string, std::int64_t> failures_by_class;  // crash, hang, ... -> count
  std::int64_t restarts = 0;
  std::int64_t migrations = 0;
  std::int64_t lost_steps = 0;
  // Steps some of whose samples were computed again: a lost member's slices re-planned, or the
  // whole step run again. A graceful leave (drain) recomputes nothing.
  std::int64_t recomputed_steps = 0;
  std::vector<double> recovery_ms;
  // Injected faults only: from the fault firing to the job seeing the failure (a worker_down, or
  // a step deadline for a silent worker), one per detected fault.
  std::vector<double> detect_ms;
};

// How the job synchronised its workers (`sync` in the JSON).
struct sync_report {
  sync_mode mode = sync_mode::ps;
  int period = 1;           // local: the final period (steps per average); 1 otherwise
  std::int64_t rounds = 0;  // reductions of gradients (ps, allreduce) or of parameters (local)
  struct change {
    std::int64_t step = 0;  // first step trained with `period`
    int period = 1;
  };
  std::vector<change> period_history;  // local: the start value and every change
  // allreduce with replicas in agents: the ring between processes, as the control process's
  // ring rank timed it (median of the reductions); busbw as `troupe bench allreduce` prints it.
  struct ring {
    int ranks = 0;
    std::string transport;         // shm | ipc | tcp
    std::string codec;             // sync.codec, "none" without one
    std::uint64_t bytes = 0;       // the buffer: (parameters + 1) x 4
    std::uint64_t wire_bytes = 0;  // sent per reduction, all ranks together
    std::int64_t reductions = 0;
    double median_ms = 0.0;
    double busbw_GBps = 0.0;
  };
  std::optional<ring> process_ring;
};

// Checkpoints of a job: written this run, and where a resumed run started.
struct checkpoint_stats {
  std::int64_t written = 0;
  std::int64_t failed = 0;
  std::int64_t last_step = -1;                    // newest durable checkpoint (-1: none)
  std::optional<std::int64_t> resumed_from_step;  // none: started fresh
  // The workers ("GROUP/INDEX device") of the run that wrote the checkpoint resumed from; the
  // report's `workers` are the new ones. Empty when fresh, or the checkpoint predates the list.
  std::vector<std::string> resumed_members;
  double write_ms_mean = 0.0;  // write + fsync + rename + dir fsync + prune
  double write_ms_max = 0.0;
  double hold_ms = 0.0;  // time completed steps waited for a write to become durable
};

// The sample ledger's count (data/sample_ledger.hpp): every index of every slice whose gradient
// was in an applied step, pass by pass, carried across a resume by the checkpoint.
struct sample_audit {
  std::int64_t passes_checked = 0;  // passes that ended
  std::int64_t counted_twice = 0;   // extra trainings of a sample within its pass
  std::int64_t never_counted = 0;   // samples an ended pass did not train
  std::int64_t recorded = 0;        // sample trainings counted by this run
  // The same verdicts of the runs before this one, from the checkpoint it resumed (0 when it
  // started fresh): a run resumed after a kill accounts for the passes the killed runs ended.
  std::int64_t earlier_passes_checked = 0;
  std::int64_t earlier_counted_twice = 0;
  std::int64_t earlier_never_counted = 0;
};

struct param_report {
  std::uint64_t count = 0;
  double l2 = 0.0;
  std::uint64_t fnv1a64 = 0;  // of the float bytes, in order; JSON: "0x" + 16 hex digits
};

// A job's course step by step (`series` in the JSON): at most 1000 points, every `every`-th step
// (doubled whenever the points would pass 1000), and the last step.
struct series_point {
  double t = 0.0;  // seconds since the job started
  std::int64_t step = 0;
  double loss = 0.0;                // this step's mean loss
  double samples_per_second = 0.0;  // this step: its samples over its time
  std::vector<std::int64_t> split;  // samples this step, by group (job_series::groups)
  std::vector<double> busy;         // compute over step time this step, by worker (rank)
  int sync_period = 1;              // steps per average (sync: local); 1 otherwise
  double share = 1.0;               // the job's share on shared devices
};
struct job_series {
  std::vector<std::string> groups;
  std::vector<std::string> workers;  // by rank
  std::int64_t every = 1;
  std::vector<series_point> points;
};
// What happened to a job, in order (`events` in the JSON): failures, detections and recoveries
// with their times, restarts, membership changes, rebalances, a resume. At most 1000.
struct job_event {
  double t = 0.0;  // seconds since the job started
  std::int64_t step = 0;
  std::string kind;  // failure, detected, recovered, restart, membership, rebalance, resume
  std::string detail;
  std::optional<double> ms;  // detected, recovered: how long it took
};

struct job_report {
  std::string name;
  job_status status = job_status::failed;  // completed | failed | cancelled | interrupted
  std::string error;        // why it failed (empty otherwise); not in the JSON when empty
  bool bad_input = false;   // failed on bad input (a dataset, a model spec): exit 2
  std::int64_t epochs = 0;  // passes over the training set begun
  std::int64_t steps = 0;
  std::int64_t global_batch = 0;
  double started_s = 0.0;  // since the run began
  double finished_s = 0.0;
  double wall_seconds = 0.0;
  double samples_per_second = 0.0;  // trained samples / time spent in steps
  // Bytes moved between processes per step of this run (devices in agents; 0 in one process).
  double wire_bytes_per_step = 0.0;
  double train_loss = 0.0;  // mean over the steps of the last pass
  double test_loss = 0.0;
  double test_accuracy = 0.0;
  param_report params;
  std::vector<worker_report> workers;
  fault_report faults;
  sync_report sync;
  checkpoint_stats checkpoints;
  // None where no ledger is kept: data.priority draws with replacement, data.mode: sharded
  // passes over shards of their own.
  std::optional<sample_audit> samples;
  std::int64_t rebalances = 0;
  // split: adaptive: the leave-out trial's verdict (policies/leave_out.hpp), if one was reached.
  struct leave_out {
    std::vector<std::string> workers;          // the candidates
    bool left_out = false;                     // they stayed out; else they were brought back
    double share = 0.0;                        // their fraction of the samples with everyone
    double with_sps = 0.0, without_sps = 0.0;  // median samples/s of a step
    std::string reason;                        // the sentence the log has
  };
  std::optional<leave_out> leave_out_trial;
  double imbalance_index = 0.0;       // mean over steps of the CV of per-worker compute seconds
  std::optional<double> noise_scale;  // smoothed gradient noise scale at the end (none: unknown)
  std::int64_t stale_dropped = 0;     // messages of an old generation that the job's actors dropped
  // On `shared` devices: the job's share at its end (fixed: its `share` key as a fraction of the
  // keys sharing with it when the last of them joined; adaptive: the allocator's last share) and
  // how many share decisions reached it. No share: the job held no shared device.
  std::optional<double> share;
  std::int64_t share_changes = 0;
  double step_seconds = 0.0;  // wall time of the job's steps (busy_fraction's denominator)
  // Median microseconds of each phase of a step over the last traced steps, in step order
  // (actors/observe/step_trace.hpp), and how many steps that is; empty when no step was traced.
  std::vector<std::pair<std::string, double>> step_phases_us;
  std::int64_t step_phases_steps = 0;
  job_series series;
  std::vector<job_event> events;
  // The final parameters, for embedding apps and tests (not in the JSON).
  std::shared_ptr<const std::vector<float>> final_params;
};

struct group_report {
  std::string name;
  std::string device;
  int count = 0;
  int threads = 1;
  double weight = 0.0;  // 0 when measured
  double slowdown = 1.0;
  double row_seconds = 0.0;  // sim: fixed seconds per sample; 0 when measured live
};

struct schedule_event {
  double at_s = 0.0;
  std::string job;
  std::string what;  // queued | started | completed | failed | cancelled | interrupted
  std::vector<std::string> groups;
};

struct cluster_report {
  std::vector<group_report> groups;
  int devices = 0;
  double wall_seconds = 0.0;
  std::vector<schedule_event> schedule;
};

// An agent that joined a listening run (`troupe run --listen`), one entry per join.
struct agent_report {
  std::string name;
  std::string group;
  std::string device;
  int count = 1;
  int threads = 1;
  std::string host;  // as the agent says
  std::int64_t pid = 0;
  std::int64_t member = 0;       // the join's number in this run, from 1
  double joined_s = 0.0;         // since the run began
  std::optional<double> lost_s;  // none: joined until the run's end
  std::string lost_reason;
};

struct run_report {
  std::string troupe_version;  // of the binary that ran it
  std::string created_at;      // when the run began: UTC, ISO 8601 ("2026-11-28T12:00:00.123Z")
  // The config as run (config::run_config::as_run, its source file and --set list); empty for a
  // runtime built without a file.
  std::string config_source;
  std::vector<std::string> config_sets;
  std::string config_yaml;
  std::vector<job_report> jobs;
  cluster_report cluster;
  std::vector<agent_report> agents;  // in join order
  // The process's peak resident set when the jobs ended (getrusage's ru_maxrss): datasets,
  // parameters, optimizer state, per-worker buffers and the runtime itself, all jobs together.
  std::uint64_t peak_rss_bytes = 0;
};

nlohmann::json to_json(const job_series& series);
nlohmann::json to_json(const std::vector<job_event>& events);
nlohmann::json to_json(const job_report& j);
nlohmann::json to_json(const run_report& r);
// 0 when every job completed, 2 when one failed on bad input, 1 when one failed otherwise.
int exit_code(const run_report& r);
// "0x" followed by 16 lower-case hex digits.
std::string hex64(std::uint64_t x);

}  // namespace troupe
