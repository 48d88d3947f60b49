#pragma once
// The job and cluster configuration: the parsed, validated form of a YAML config file (schema in
// config/README.md, a public contract). Parsing lives in core/config_load.*; nothing here knows
// YAML. Every field has its default here, declared once.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/kinds.hpp"

namespace troupe::config {

struct group_config {
  std::string name;
  device_kind device = device_kind::cpu;
  int count = 1;                 // devices in the group
  int threads = 1;               // BLAS threads per device
  std::optional<double> weight;  // relative compute per device; measured at start when absent
  device_kind base = device_kind::cpu;  // sim: the backend it wraps (cpu or cuda)
  double slowdown = 1.0;                // sim: compute stretch factor
  // sim: the base's seconds per training sample that the slowdown multiplies (a device of fixed
  // speed); absent: measured live, so the device follows the host's speed.
  std::optional<double> row_seconds;
  // sim: jobs may run on these devices at the same time, each getting a time share of every
  // device (cluster.shares, job `share`), instead of holding them exclusively.
  bool shared = false;
  // Where the group's workers compute (core/kinds.hpp); anything but local needs a listening
  // control process (`troupe run` listens on loopback by itself for separate groups).
  group_process process = group_process::local;
  // cuda: -1 ("off") the whole model on the GPU; -2 ("auto") the first layers on the host's CPU,
  // cut where a measured cost model says; K >= 0 the first K layers on the CPU.
  int layer_split = -1;
};

struct cluster_config {
  std::vector<group_config> groups;
  share_mode shares = share_mode::fixed;  // virtual device shares across jobs
  double share_period = 1.0;              // adaptive: seconds between share_allocator decisions
  double share_floor = 0.05;              // adaptive: minimum share of a job on a shared device
};

struct model_config {
  std::string kind = "mlp";         // softmax | mlp | cnn | registered name
  std::vector<std::size_t> hidden;  // empty: the kind's default
  // cnn only: how many leading entries of hidden are conv channels (0: all but the last), and
  // the odd conv kernel size. Mirrors models::model_spec.
  std::size_t conv_layers = 0;
  std::size_t kernel = 3;
};

struct priority_config {
  double alpha = 0.0;  // 0 = uniform sampling
  double beta = 0.0;   // importance-weight correction exponent
};

struct data_config {
  dataset_kind dataset = dataset_kind::fashion_mnist;
  std::string path;                     // directory (idx, fashion-mnist) or file (csv)
  std::vector<std::string> preprocess;  // step names, e.g. "normalize", "standardize"
  split_kind split = split_kind::weighted;
  // split: adaptive, sync: ps: try the job once without the members that get a sliver of each
  // batch, and keep them out when it trains faster without them (policies/leave_out.hpp).
  bool leave_out = true;
  data_mode mode = data_mode::global;
  double neighbour_exchange = 0.0;    // sharded: fraction q passed to the ring neighbour
  std::size_t synthetic_samples = 0;  // synthetic: size (0 = default)
  synthetic_kind generator = synthetic_kind::blobs;  // synthetic: which data it makes
  std::optional<priority_config> priority;
};

struct optimizer_config {
  optimizer_kind kind = optimizer_kind::adam;
  double lr = 0.001;
  double momentum = 0.9;
  bool nesterov = false;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  optimizer_form form = optimizer_form::replicated;
};

struct sync_config {
  sync_mode mode = sync_mode::ps;
  int ps_shards = 1;
  // ps and allreduce with `deterministic: true`: samples per block of the canonical reduction.
  // Slices are cut at block boundaries and each block's gradient is summed on its own, then the
  // blocks in order, so the bits do not depend on who computed which block
  // (actors/sync/parameter_server.hpp, config::reduction_block).
  std::int64_t block = 32;
  // local: steps between averages (period), or chosen live by the AdaComm tuner
  // (`period: adaptive`, policies/sync_period.hpp).
  std::int64_t period = 1;
  bool adaptive_period = false;
  // allreduce: the codec of the gradients that cross processes (the process ring between the
  // control process and agents): fp16, bf16, topk[:ratio], powersgd[:rank]; "" for none.
  // Checked by the runtime (core cannot see collectives/).
  std::string codec;
};

struct checkpoint_config {
  std::string dir;  // empty: no checkpoints
  std::int64_t every_steps = 0;
  double every_seconds = 0.0;
  // One more at a graceful stop (SIGTERM, a preemption), also with no interval: what a service
  // and a preemptible job resume from. Not a YAML key: set for them.
  bool at_stop = false;
};

struct fault_config {
  std::int64_t step = 0;
  fault_action action = fault_action::kill;
  std::string target;                        // GROUP/INDEX
  double factor = 1.0;                       // slow
  double seconds = 0.0;                      // delay, hang
  std::int64_t until_step = -1;              // slow: last step of the slow window
  fault_phase phase = fault_phase::compute;  // kill: where in the step
};

// jobs[].elastic: the job runs with a varying number of devices. It starts once min_devices of
// its groups' devices are present (a group with `process: agent` is present while its agent is
// joined) and takes in the devices of an agent that joins while it runs, at the next step
// boundary, up to max_devices.
struct elastic_config {
  int min_devices = 1;
  int max_devices = 1 << 20;
};

struct job_config {
  std::string name;
  int priority = 0;
  std::vector<std::string> after;  // jobs that must complete first
  // May be paused at a checkpoint boundary for a higher-priority job that cannot otherwise start,
  // and resumed later from that checkpoint (needs checkpoint.dir).
  bool preemptible = false;
  model_config model;
  data_config data;
  optimizer_config optimizer;
  std::int64_t batch = 64;  // global batch
  std::int64_t epochs = 1;
  std::optional<std::int64_t> max_steps;
  std::optional<double> max_seconds;
  sync_config sync;
  std::vector<std::string> resources;  // group names; empty = all groups
  placement_kind placement = placement_kind::uniform;
  std::uint64_t seed = 1;
  bool deterministic = false;
  double share = 1.0;  // weight on shared devices (cluster.shares: fixed)
  checkpoint_config checkpoint;
  std::vector<fault_config> faults;
  std::int64_t fault_soak = 0;  // `troupe run --fault-soak N`: N random faults (no YAML key)
  std::map<failure_class, failure_policy> supervision;  // overrides of the default policies
  // supervision's restart intensity: at most max_restarts per worker in restart_window seconds,
  // then the worker's share migrates (policies::restart_limits).
  int max_restarts = 3;
  double restart_window = 60.0;
  // The step deadline's floor (supervision.hang_floor_s): a worker silent past max(this, 4 x the
  // 95th percentile of recent steps) is declared hung. Raise it where steps are short but a
  // stall of the host (swapping, a noisy neighbour) must not count as a hang.
  double hang_floor_s = 0.5;
  std::optional<elastic_config> elastic;
};

struct run_config {
  std::string source;  // file the config came from (for messages)
  cluster_config cluster;
  std::vector<job_config> jobs;
  // Things the loader accepted but the user should hear about (e.g. a file's ps_shards left
  // unused after --set switched the sync mode); `troupe run` prints them.
  std::vector<std::string> notes;
  // The document as run: the file with every --set applied, written out again as YAML (comments
  // dropped; defaults left to the loader). A report keeps it, so that `troupe run` on it runs the
  // same jobs again. The --set list as given is kept beside it.
  std::string as_run;
  std::vector<std::string> sets;
};

}  // namespace troupe::config
