#pragma once
// The closed sets a config, a report or the supervisor names, as enums with their one spelling
// each (core/names.hpp). The config loader parses every one of them once; past it, code compares
// enum values, never names. The spellings are the config's and the report's (config/README.md,
// docs/REPORT.md): renaming one breaks users' files.
#include "core/names.hpp"

namespace troupe {

// `cluster.groups[].device` and a sim group's `base`.
enum class device_kind { cpu, sim, cuda };
TROUPE_SPELLINGS(device_kind, cuda, "cpu", "sim", "cuda");

// `cluster.groups[].process`: where a group's device workers compute. local: threads of the
// control process; separate: a child agent process that the control process starts on its own
// host; agent: an agent started elsewhere (`troupe agent --join`) that offers the group.
enum class group_process { local, separate, agent };
TROUPE_SPELLINGS(group_process, agent, "local", "separate", "agent");

// `cluster.shares`: fixed job shares on shared devices, or the share_allocator's adaptive ones.
enum class share_mode { fixed, adaptive };
TROUPE_SPELLINGS(share_mode, adaptive, "fixed", "adaptive");

// `jobs[].data.dataset`.
enum class dataset_kind { fashion_mnist, idx, csv, synthetic };
TROUPE_SPELLINGS(dataset_kind, synthetic, "fashion-mnist", "idx", "csv", "synthetic");

// `jobs[].data.synthetic.kind`.
enum class synthetic_kind { blobs, linear, hard_easy };
TROUPE_SPELLINGS(synthetic_kind, hard_easy, "blobs", "linear", "hard-easy");

// `jobs[].data.split`: how the global batch is divided among the workers.
enum class split_kind { even, weighted, adaptive };
TROUPE_SPELLINGS(split_kind, adaptive, "even", "weighted", "adaptive");

// `jobs[].data.mode`: every worker samples the whole set, or each its own shard.
enum class data_mode { global, sharded };
TROUPE_SPELLINGS(data_mode, sharded, "global", "sharded");

// `jobs[].optimizer.kind`: the config's closed set of models' optimizer registry names.
enum class optimizer_kind { sgd, momentum, adam, adamw, adabelief, max_adabelief };
TROUPE_SPELLINGS(optimizer_kind, max_adabelief, "sgd", "momentum", "adam", "adamw", "adabelief",
                 "max-adabelief");

// `jobs[].optimizer.form`: optimizer state on every replica, or Max-AdaBelief's moments
// allreduced.
enum class optimizer_form { replicated, distributed };
TROUPE_SPELLINGS(optimizer_form, distributed, "replicated", "distributed");

// `jobs[].sync.mode`.
enum class sync_mode { ps, allreduce, local };
TROUPE_SPELLINGS(sync_mode, local, "ps", "allreduce", "local");

// `jobs[].placement`.
enum class placement_kind { uniform, resource_state };
TROUPE_SPELLINGS(placement_kind, resource_state, "uniform", "resource-state");

// `jobs[].faults[].action`.
// oom and device-error make the device itself fail, for real where it can: a cuda device asks
// the GPU for more memory than it has free, or runs a kernel that traps.
enum class fault_action { kill, hang, slow, delay, drop, partition, oom, device_error };
TROUPE_SPELLINGS(fault_action, device_error, "kill", "hang", "slow", "delay", "drop", "partition",
                 "oom", "device-error");

// `jobs[].faults[].phase`: where in its step a `kill` strikes. compute: before the worker
// computes its slice (every other action fires there too); reduce: when the step's reduction
// reaches the worker, before it contributes; apply: after the reduction, before the worker
// applies it (sync: allreduce, where workers reduce; in ps the shards do, and these two never
// fire); eval: as the worker evaluates the final model on its share of the test set, after the
// last step (the fault's step is the job's step count).
enum class fault_phase { compute, reduce, apply, eval };
TROUPE_SPELLINGS(fault_phase, eval, "compute", "reduce", "apply", "eval");

// A worker failure's class (policies/supervision.hpp says how each is found and handled); the
// keys of `jobs[].supervision`.
enum class failure_class { crash, hang, device_error, out_of_memory, lost_group };
TROUPE_SPELLINGS(failure_class, lost_group, "crash", "hang", "device-error", "out-of-memory",
                 "lost-group");

// What supervision does about a failure class: the values of `jobs[].supervision`.
enum class failure_policy { restart, migrate, fail_job };
TROUPE_SPELLINGS(failure_policy, fail_job, "restart", "migrate", "fail-job");

// How a job ended, or that it still runs: the report's `status`.
// interrupted: the run was asked to stop (SIGTERM, SIGINT, runtime::interrupt) and the job
// ended at a step boundary, after a last checkpoint where it takes them.
enum class job_status { queued, running, completed, failed, cancelled, interrupted };
TROUPE_SPELLINGS(job_status, interrupted, "queued", "running", "completed", "failed", "cancelled",
                 "interrupted");

}  // namespace troupe
