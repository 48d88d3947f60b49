#pragma once
// A job's membership and the rule that loses no step, as a plain class: events in, commands out.
// No CAF here; the job actor (actors/job/job_membership.cpp) turns the commands into messages, and
// membership.test.cpp drives every edge with tables.
//
// The rule: a step's gradient is a sum over sample slices, so when a member fails, its
// outstanding slices (same sample indices) are re-planned over the surviving members, which
// compute them with the same parameter version; the reduction then sums every slice in offset
// order. A survivor's result computed before the failure stays valid.
//
// Per rank:
//
//   MEMBER --1--> RESTARTING --2--> JOINING --3--> MEMBER
//   MEMBER --4--> MIGRATED
//   MEMBER, SET_ASIDE, JOINING, RESTARTING --7--> MIGRATED
//   MEMBER --6--> SET_ASIDE --bring_back--> JOINING
//   (new) --5--> RESTARTING
//
//   5. an elastic job took in a device that joined while it runs (add_rank): it waits for its
//      worker like a restarted rank, and enters at a step boundary with a new generation.
//
//   1. down with action restart (or the last worker down with migrate: there is nobody to move
//      its share to, so it is restarted instead, at most last_worker_restart_limit times).
//   2. the restarted incarnation is ready. With no member left it becomes a MEMBER at once and
//      takes over the step in flight (3 happens now).
//   3. at the next step boundary (join_at_boundary).
//   4. down with action migrate while other ranks remain: its weight is 0 from then on.
//   7. leaves at a step boundary (leave): its agent drains or stops on SIGTERM. Not a failure:
//      nothing is owed at a boundary, so nothing is computed again.
//   6. set aside by the leave-out policy (policies/leave_out.hpp) at a step boundary: a healthy
//      worker out of the steps, its weight 0, until bring_back makes it JOINING again.
//
// Every change of the member list starts a new generation (commands::new_generation): the job
// bumps the generation its messages carry, the prefetched plan is void, and the plan it waits
// for is asked again with the new split.
//
// Hang detection: each dispatch of the step in flight arms a timer of step_deadline::deadline()
// (a multiple of a high percentile of recent compute phases, with a floor); a member still
// owing a slice when it fires is reported to its supervisor as hung, or as lost-group when every
// member of a group of two or more is silent.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/report.hpp"
#include "policies/supervision.hpp"

namespace troupe::actors {

enum class member_status { member, restarting, joining, migrated, set_aside };

// How many times the last worker is restarted after its restart intensity escalated (there is
// nobody to migrate its share to) before the job fails.
inline constexpr int last_worker_restart_limit = 3;

struct slice_piece {
  std::int64_t offset = 0;  // into the step's index list
  std::int64_t count = 0;
};

// A slice to (re)send to a rank: compute_cmd for the step in flight.
struct slice_assignment {
  std::int32_t rank = 0;
  slice_piece piece;
};

struct slice_result {
  std::int32_t rank = 0;
  std::shared_ptr<const std::vector<float>> grad;
  std::int64_t count = 0;  // the slice's samples, from offset on (the sample ledger's record)
};

// A member the job reports to its supervisor (worker_failed).
struct silent_member {
  std::int32_t rank = 0;
  failure_class kind = failure_class::hang;  // hang | lost_group
  std::string reason;
};

// What a step deadline found: the members to declare failed, or a stall to wait out. Two or
// more members silent at once with none of the step's slices answered is as likely a stall of
// what they share (the host, the job's own process, the network to them all) as a hang of
// each, and declaring them all leaves the job nobody (allreduce then fails outright): the job
// waits again, twice as long each time, until the step has waited the first step's deadline
// (30 s at most), and only then names them.
struct deadline_verdict {
  std::vector<silent_member> silent;
  double wait_more = 0;  // > 0: arm the deadline again for this long
  std::string log;       // why it waits, when it does
};

// What the job does after an event, in this order: log `log`, send restart_worker for each of
// `restart`, start a new generation, send the `replan` slices and log `replan_log`, arm the step
// deadline; or fail the job with `fail`.
struct member_commands {
  std::vector<std::string> log;
  std::vector<std::int32_t> restart;
  bool new_generation = false;
  std::vector<slice_assignment> replan;
  std::string replan_log;
  bool arm_deadline = false;
  std::optional<std::string> fail;
};

// A worker_down as the job sees it.
struct down_event {
  std::int32_t rank = 0;
  failure_class kind = failure_class::crash;
  bool restart = false;  // the supervisor restarts it (else: migrate)
  std::string reason;    // what happened
  std::string decision;  // the supervisor's decision, for the log
};

class membership {
 public:
  // Per rank: its worker's name (GROUP/INDEX) and group. `watchdog_seconds` caps the first
  // step deadline; no deadline is below `floor_seconds` (the job's supervision.hang_floor_s).
  membership(std::vector<std::string> names, std::vector<std::string> groups,
             double watchdog_seconds,
             double floor_seconds = policies::deadline_params{}.floor_seconds);
  membership() = default;
  // The canonical reduction's block (config::reduction_block): a failed rank's slices are
  // re-planned in whole blocks, so every block is still computed as one. 0: any cut.
  void set_block(std::int64_t block) { block_ = block; }

  std::size_t size() const { return status_.size(); }
  bool is_member(std::size_t rank) const;
  member_status status(std::size_t rank) const { return status_.at(rank); }
  // `weights` by rank with 0 for non-members.
  std::vector<double> member_weights(std::vector<double> weights) const;
  // " a/0 b/1", or " (none)".
  std::string member_list() const;

  // A step begins: rank r owes the slice of counts[r] samples at its offset. Arm the deadline.
  void begin_step(std::int64_t step, const std::vector<std::int64_t>& counts);
  // Slices handed out and not answered yet (the re-planned ones included).
  int pending() const;
  // Rank `rank` answered its oldest owed slice of the step in flight (the job checked the step,
  // the generation and the sender). False when it owes nothing. `step_seconds`: since the step
  // began (feeds the deadline when the step completes without a failure).
  bool accept(std::int32_t rank, std::shared_ptr<const std::vector<float>> grad,
              double step_seconds);
  // The step's slices in offset order: the reduction order.
  const std::map<std::int64_t, slice_result>& results() const { return results_; }

  // A worker failed, and the job can go on without it (the job fails by itself on input
  // errors, the fail-job policy and sync modes that cannot lose a member). `now`: seconds
  // since the job began.
  // `weights`: the job's split weights by rank (re-planned slices follow them).
  member_commands on_down(const down_event& e, double now, const std::vector<double>& weights);
  // The step deadline of dispatch `seq` fired.
  deadline_verdict on_timeout(std::int64_t seq, double now);
  // The sequence number of the deadline to arm now (the latest dispatch of the step).
  std::int64_t next_deadline_seq() { return ++seq_; }
  double deadline_seconds() const { return deadline_.deadline(); }
  // A restarted incarnation is ready. Nothing when `rank` was not restarting (the ordinary
  // start-up path).
  std::optional<member_commands> on_restarted_ready(std::int32_t rank,
                                                    const std::vector<double>& weights);
  // A device joins the running job (elastic): its rank, from now on RESTARTING until its worker
  // is ready.
  std::int32_t add_rank(const std::string& name, const std::string& group);
  // At a step boundary: restarted workers become members. True when the member list changed.
  bool join_at_boundary();
  // At a step boundary: a member leaves the steps (6); false when `rank` is not a member.
  bool set_aside(std::int32_t rank);
  // At a step boundary: `rank` leaves the job for good (7); false when it was gone already.
  bool leave(std::int32_t rank);
  // A set-aside rank joins at the next boundary (join_at_boundary); false when it is not aside.
  bool bring_back(std::int32_t rank);
  // The step in flight runs again from its plan (a mode that cannot re-plan a lost member's
  // slices, or a reduction no member applied): nothing is owed or kept of it; the job begins it
  // again with begin_step.
  void abandon_step();
  // The step in flight was applied: `planned` samples, `computed` of them reached the sum.
  void step_completed(std::int64_t planned, std::int64_t computed, double now);

  // The report's faults section, as far as membership counts it.
  const fault_report& report() const { return report_; }
  // An injected fault was seen `ms` after it fired (the job measures it; see fault_plan).
  void record_detection(double ms) { report_.detect_ms.push_back(ms); }

 private:
  void replan(member_commands& out, const std::vector<double>& weights);
  void count_recomputed();

  std::vector<std::string> names_, groups_;
  std::vector<member_status> status_;
  std::int64_t block_ = 0;
  std::vector<std::deque<slice_piece>> owed_;  // by rank, in send order (answers come in order)
  std::vector<slice_piece> orphans_;           // of a failed rank, waiting for a member
  std::map<std::int64_t, slice_result> results_;
  std::int64_t step_ = 0;
  std::int64_t recomputed_step_ = -1;  // the last step counted in report_.recomputed_steps
  std::int64_t seq_ = 0;               // dispatches of the step in flight
  bool step_failed_ = false;           // a failure hit the step in flight: its time is not typical
  double stall_waited_ = 0;            // seconds the step in flight waited out as a stall
  double stall_cap_ = 0;               // the most a step waits out (the first step's deadline)
  std::vector<double> reported_at_;    // by rank: when the job reported it hung (-1: not)
  std::vector<double> open_recoveries_;  // detection times waiting for the next completed step
  policies::step_deadline deadline_;
  fault_report report_;
  int last_worker_restarts_ = 0;
  std::vector<bool> added_;  // by rank: joined the running job (add_rank), never a member yet
};

}  // namespace troupe::actors
