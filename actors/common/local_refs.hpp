#pragma once
// The local-only message elements (local_ref<T>, actors/common/messages.hpp): shared buffers and
// payloads that travel between actors of one process and must never be serialised. Each is
// marked so to CAF here; the type-id block of messages.hpp leaves them out. Included by
// messages.hpp after msg::local_ref and the buffers it names are declared.

// Forward declarations of the local payloads defined in actors/ (they hold models, datasets and
// devices, which core must not know); only their handles are named here.
namespace troupe::actors {
struct worker_setup;
struct job_report_data;
struct job_request;
struct data_bundle;
struct run_report_data;
struct allreduce_session;  // sync: allreduce (actors/sync/allreduce_step.hpp)
struct ckpt_shard_part;    // checkpoints (actors/checkpoint/checkpoint_state.hpp)
struct job_snapshot;
struct group_slot;  // elastic growth (actors/job/job.hpp)
struct jobs_view;   // the task manager's queue and jobs (actors/common/payloads.hpp)
}  // namespace troupe::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::msg::index_list>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::msg::grad_buffer>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::msg::sample_loss_list>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::msg::grad_set>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::actors::worker_setup>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::actors::job_report_data>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::actors::job_request>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::actors::data_bundle>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::actors::run_report_data>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::actors::allreduce_session>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::actors::ckpt_shard_part>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::actors::job_snapshot>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::actors::group_slot>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::msg::local_ref<troupe::actors::jobs_view>)
