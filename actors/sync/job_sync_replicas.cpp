// `sync: allreduce` and `sync: local` behind the job's synchronisation seam: every worker holds
// a parameter replica (job_allreduce) and its own optimizer; the job only starts each round.
#include <mutex>
#include <stdexcept>

#include "actors/checkpoint/checkpoint_state.hpp"
#include "actors/sync/allreduce_step.hpp"
#include "actors/sync/block_sums.hpp"
#include "actors/sync/job_sync.hpp"
#include "actors/sync/local_step.hpp"
#include "actors/sync/process_ring.hpp"
#include "collectives/allreduce.hpp"
#include "core/error.hpp"
#include "core/median.hpp"

namespace troupe::actors {
namespace {

class allreduce_sync : public job_sync {
 public:
  // one_replica: every replica is in this process (no group's lives in an agent).
  // reduction_block: the job's (config::reduction_block); > 0: the members add block sums.
  allreduce_sync(const config::job_config& cfg, double deadline_seconds, bool one_replica,
                 std::int64_t reduction_block = 0)
      : cfg_(cfg), replicas_(cfg, deadline_seconds, one_replica), block_(reduction_block) {}

  // Resumed: the store holds the checkpoint's parameters (every replica copies them); the
  // optimizer state goes to every worker's replica.
  void start(caf::event_based_actor*, const std::shared_ptr<param_store>&,
             const job_snapshot* resume) override {
    if (resume && distributed()) {
      // Each worker's own moments, by the rank that wrote them.
      replicas_.resume_moments(
          split_rank_states(resume->parts.at(0)->optimizer,
                            "checkpoint of step " + std::to_string(resume->step)),
          "checkpoint of step " + std::to_string(resume->step));
      return;
    }
    if (resume)
      resume_optimizer_ =
          std::make_shared<const models::optimizer_state>(resume->parts.at(0)->optimizer);
    replicas_.resume_from(resume_optimizer_);
  }

  std::shared_ptr<const models::optimizer_state> replica_optimizer_state() const override {
    return resume_optimizer_;
  }

  // After a step every replica holds the same parameters and optimizer state (replicated form:
  // the same mean gradient, the same updates), so one member's copy is the checkpoint. The
  // distributed form: the same parameters, and each member's own moments, so every member
  // sends its part and assemble() makes them one.
  bool checkpoints() const override { return true; }

  int capture(caf::event_based_actor* self, const msg::ckpt_capture& cap) override {
    if (members_.empty()) return 0;
    if (!distributed()) {
      self->send(members_.front(), cap);
      return 1;
    }
    for (const auto& m : members_) self->send(m, cap);
    return static_cast<int>(members_.size());
  }

  // The distributed form's parts (each member's parameters, the same bits, and its moments
  // named by its rank) into one: the lowest rank's parameters and every member's moments.
  void assemble(job_snapshot& snap) const override {
    if (!distributed() || snap.parts.size() < 2) return;
    std::vector<std::pair<std::int32_t, models::optimizer_state>> ranks;
    const ckpt_shard_part* lowest = nullptr;
    std::int32_t lowest_rank = 0;
    for (const auto& p : snap.parts) {
      for (auto& r :
           split_rank_states(p->optimizer, "checkpoint of step " + std::to_string(snap.step))) {
        if (!lowest || r.first < lowest_rank) {
          lowest = p.get();
          lowest_rank = r.first;
        }
        ranks.push_back(std::move(r));
      }
    }
    std::sort(ranks.begin(), ranks.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    auto one = std::make_shared<ckpt_shard_part>();
    one->offset = 0;
    one->params = lowest->params;
    one->optimizer = merge_rank_states(ranks);
    snap.parts = {std::move(one)};
  }

  std::shared_ptr<param_store> params_for(std::size_t rank,
                                          const std::shared_ptr<param_store>& store) override {
    return replicas_.replica(rank, store);
  }

  // allreduce (replicated form): the job owns the optimizer replicas, so a rank that joins a
  // running job takes a member's parameters and optimizer state at the boundary.
  // The distributed form too: the job keeps each rank's moments (a checkpoint reads them; a
  // joining rank starts from a member's).
  std::shared_ptr<replica_optimizer> optimizer_for(std::size_t rank) override {
    return replicas_.optimizer(rank);
  }
  bool bring_up_to_date(std::size_t rank, std::size_t reference) override {
    replicas_.copy_replica(reference, rank);
    return true;
  }

  void open_generation(caf::event_based_actor*, msg::job_id job, msg::generation_id generation,
                       const generation_members& m, bool) override {
    replicas_.open_generation(job, generation, m.member, m.in_agent);
    in_agent_ = m.in_agent;
    in_agents_ = false;
    for (std::size_t r = 0; r < m.member.size() && r < m.in_agent.size(); ++r)
      in_agents_ = in_agents_ || (m.member[r] && m.in_agent[r]);
  }

  // A lost member, with the replicated optimizer (with the distributed form a member's moments
  // are its own, so a restarted one cannot be brought back to the others'). While the step
  // computes in one process the others compute its slices (membership) and regroup() makes
  // each contribute what it computed; through a process ring the agents hold their gradients,
  // so the step runs again. While the members reduce, the job recovers from their answers.
  bool survives_member_loss() const override {
    return cfg_.optimizer.form == optimizer_form::replicated;
  }
  bool regroups_lost_slices() const override { return !in_agents_; }
  bool survives_losing_every_member() const override { return !in_agents_; }
  bool recovers_lost_reduction() const override { return survives_member_loss(); }

  // A member that applied had the whole step's mean (no reduction completes for anyone without
  // every member's part): the ones that dropped take its replica. None applied: no replica
  // changed, and the step runs again.
  reduction_recovery after_lost_reduction(const std::vector<reduce_answer>& answers,
                                          std::int64_t) override {
    reduction_recovery out;
    // One replica: the reduction applied it in full once every member had arrived, whoever
    // answered; a member lost after that (killed before it could say so) changes nothing.
    if (committed_before_ >= 0 && replicas_.one_replica_steps() > committed_before_) {
      out.next = reduction_recovery::action::complete;
      return out;
    }
    const auto from = applied_rank(answers);
    if (!from) return out;
    out.next = reduction_recovery::action::complete;
    out.from = static_cast<int>(*from);
    for (std::size_t r = 0; r < answers.size(); ++r)
      if (answers[r] == reduce_answer::dropped && bring_up_to_date(r, *from)) ++out.copied;
    return out;
  }

  int reduce(caf::event_based_actor* self, const reduce_round& round) override {
    // Every member reduces, one without samples this step too (replicas stay equal).
    msg::local_ref<allreduce_session> session{replicas_.session()};
    if (auto regrouped = regroup(*replicas_.session(), round)) session.ptr = std::move(regrouped);
    if (block_ > 0 && round.grads) {
      auto with_blocks = std::make_shared<allreduce_session>(*session.ptr);
      with_blocks->blocks = block_list_of(round, replicas_.store(0)->values.size());
      session.ptr = std::move(with_blocks);
    }
    committed_before_ = replicas_.one_replica_steps();  // before any member can commit
    members_ = members_of(*round.workers);
    for (const auto& w : members_) self->send(w, round.cmd, session);
    return static_cast<int>(members_.size());
  }

  std::optional<std::string> commit(std::int64_t step, double, double, double) override {
    replicas_.publish(step + 1);
    return {};
  }

  // Release workers blocked in a reduction; a completed run's replicas must agree. A completed
  // job releases them too: a worker lost in the last generation may still be waiting for a
  // ring that no other rank will join (the runtime's shutdown waits for every worker).
  std::string end(caf::event_based_actor*, job_status status) override {
    std::string verdict = status == job_status::completed ? replicas_.check_replicas() : "";
    replicas_.abort(std::string("job ") + name_of(status));
    return verdict;
  }

  void fill_report(job_report& r, std::int64_t steps) const override {
    fill_sync_report(r, cfg_, nullptr, steps);
    fill_ring_report(r, steps);
  }

  // The replicated form: member 0 sends |G_B|^2 with `applied`, from the reduced mean
  // (allreduce_and_apply). The distributed form reduces moments, not the mean: the job reads
  // the sums.
  bool grad_norm_from_applied() const override {
    return replicas_.session() && !replicas_.session()->distributed;
  }

 protected:
  bool distributed() const { return cfg_.optimizer.form == optimizer_form::distributed; }

  // A rank that applied the step's reduction: a member of the current generation if one did,
  // else a rank lost after it applied (its replica is here all the same).
  std::optional<std::size_t> applied_rank(const std::vector<reduce_answer>& answers) const {
    std::optional<std::size_t> from;
    const auto& index = replicas_.session()->index_of;
    for (std::size_t r = 0; r < answers.size(); ++r) {
      if (answers[r] != reduce_answer::applied) continue;
      const bool member = r < index.size() && index[r] >= 0;
      if (member) return r;
      if (!from) from = r;
    }
    return from;
  }

  // The generation's members among the workers (by rank): a rank still joining takes no part.
  std::vector<caf::actor> members_of(const std::vector<caf::actor>& workers) const {
    std::vector<caf::actor> out;
    const auto& index = replicas_.session()->index_of;
    for (std::size_t r = 0; r < workers.size() && r < index.size(); ++r)
      if (index[r] >= 0) out.push_back(workers[r]);
    return out;
  }

  // The ring's figures; its bytes join wire_bytes_per_step: n ranks send 2(n - 1) times the
  // buffer per reduction, all ranks together (n (n - 1) times a buffer small enough for one
  // step: collectives::allreduce_wire_bytes); with a codec, each rank sends n - 1
  // encoded blobs of one size (rank 0's sent bytes, n times; the count's own small allreduce
  // aside). busbw is then over the uncompressed buffer: the bandwidth the codec makes it seem.
  // The canonical reduction's block_allreduce counts what all ranks sent in each reduction.
  void fill_ring_report(job_report& r, std::int64_t steps) const {
    const auto ring = replicas_.ring();
    if (!ring) return;
    std::lock_guard<std::mutex> lock(ring->mu);
    if (ring->seconds.empty()) return;
    sync_report::ring g;
    g.ranks = ring->ranks;
    g.transport = ring->transport;
    g.codec = ring->codec.empty() ? "none" : ring->codec;
    g.bytes = ring->bytes;
    g.reductions = static_cast<std::int64_t>(ring->seconds.size());
    const double median_s = median(ring->seconds);
    g.median_ms = median_s * 1e3;
    const double n = g.ranks;
    g.busbw_GBps =
        median_s > 0 ? static_cast<double>(g.bytes) / median_s / 1e9 * 2.0 * (n - 1.0) / n : 0;
    if (ring->wire > 0)  // the mean: a step's blocks (the last step's may be fewer) set it
      g.wire_bytes = ring->wire / ring->seconds.size();
    else
      g.wire_bytes = ring->codec.empty() ? collectives::allreduce_wire_bytes(
                                               static_cast<std::uint64_t>(g.bytes), g.ranks)
                                         : static_cast<std::uint64_t>(n) * ring->sent;
    if (steps > 0)
      r.wire_bytes_per_step += static_cast<double>(g.wire_bytes) *
                               static_cast<double>(g.reductions) / static_cast<double>(steps);
    r.sync.process_ring = g;
  }

  // The step's slices were not one a member (a member computed two, or a member that computed
  // one left): a copy of the session that says what each member contributes, the sums of its
  // slices in offset order (the failed member's completed ones go to member 0). Null otherwise.
  static std::shared_ptr<const allreduce_session> regroup(const allreduce_session& s,
                                                          const reduce_round& round) {
    if (s.members <= 0 || s.process_ring || !round.grads) return nullptr;
    const auto& ranks = round.cmd.ranks;
    const auto& grads = *round.grads;
    if (grads.size() != ranks.size() || round.samples.size() != ranks.size()) return nullptr;
    std::vector<std::vector<std::size_t>> slices(static_cast<std::size_t>(s.members));
    bool needed = false;
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      const auto r = static_cast<std::size_t>(ranks[k]);
      int idx = r < s.index_of.size() ? s.index_of[r] : -1;
      if (idx < 0) {
        idx = 0;
        needed = true;
      }
      auto& mine = slices[static_cast<std::size_t>(idx)];
      mine.push_back(k);
      needed = needed || mine.size() > 1;
    }
    if (!needed) return nullptr;
    auto out = std::make_shared<allreduce_session>(s);
    out->contribution.assign(slices.size(), nullptr);
    out->contribution_samples.assign(slices.size(), 0);
    for (std::size_t m = 0; m < slices.size(); ++m) {
      if (slices[m].empty()) continue;
      auto sum = std::make_shared<std::vector<float>>(*grads[slices[m][0]]);
      out->contribution_samples[m] = round.samples[slices[m][0]];
      for (std::size_t j = 1; j < slices[m].size(); ++j) {
        const auto& g = *grads[slices[m][j]];
        for (std::size_t i = 0; i < sum->size() && i < g.size(); ++i) (*sum)[i] += g[i];
        out->contribution_samples[m] += round.samples[slices[m][j]];
      }
      out->contribution[m] = std::move(sum);
    }
    return out;
  }

  // The canonical reduction: the block sums of every slice computed in this process, in offset
  // order (the slices'), so in block order, each with its place in the step's order (a slice
  // starts at a block boundary). A slice computed in an agent keeps its blocks there: the
  // process ring adds them.
  std::shared_ptr<const block_list> block_list_of(const reduce_round& round,
                                                  std::size_t params) const {
    auto out = std::make_shared<block_list>();
    out->held = round.grads.ptr;
    const auto& grads = *round.grads.ptr;
    std::int64_t offset = 0;
    for (std::size_t k = 0; k < grads.size(); ++k) {
      const std::int64_t samples = k < round.samples.size() ? round.samples[k] : 0;
      const auto rank = k < round.cmd.ranks.size() ? static_cast<std::size_t>(round.cmd.ranks[k])
                                                   : std::size_t{0};
      const bool in_agent = rank < in_agent_.size() && in_agent_[rank];
      const std::size_t before = out->blocks.size();
      if (grads[k] && !in_agent && append_block_sums(*grads[k], params, out->blocks)) {
        for (std::size_t b = before; b < out->blocks.size(); ++b)
          out->index.push_back(static_cast<std::uint32_t>(offset / block_ + (b - before)));
        out->samples += static_cast<std::uint64_t>(samples);
      }
      offset += samples;
    }
    return out;
  }

  config::job_config cfg_;
  bool in_agents_ = false;  // a member of the generation has its replica in an agent
  job_allreduce replicas_;
  std::vector<caf::actor> members_;  // the last step's
  std::shared_ptr<const models::optimizer_state> resume_optimizer_;
  std::int64_t committed_before_ = -1;  // one replica: its commits when this step's reduce went
  std::int64_t block_ = 0;              // the job's reduction_block (0: not canonical)
  std::vector<bool> in_agent_;          // by rank: its replica lives in an agent
};

// Local SGD: the barrier per step is the job's; the parameter average runs every `period`
// steps (local_sync decides which).
class local_sgd_sync final : public allreduce_sync {
 public:
  local_sgd_sync(const config::job_config& cfg, double deadline_seconds)
      : allreduce_sync(cfg, deadline_seconds, false), schedule_(cfg) {}

  int reduce(caf::event_based_actor* self, const reduce_round& round) override {
    averaging_ = schedule_.averages(round.cmd.step, round.last);
    msg::local_cmd cmd;
    cmd.job = round.cmd.job;
    cmd.generation = round.cmd.generation;
    cmd.step = round.cmd.step;
    cmd.ranks = round.cmd.ranks;
    cmd.average = averaging_;
    // A member lost while the step computed: the survivors computed its slices, and each applies
    // the sum of what it computed in its local step (as allreduce contributes it).
    std::shared_ptr<const allreduce_session> session = replicas_.session();
    if (auto regrouped = regroup(*session, round)) session = std::move(regrouped);
    if (averaging_) session = with_fold(std::move(session));
    remember_told(session, round);
    members_ = members_of(*round.workers);
    for (const auto& w : members_) self->send(w, cmd, msg::local_ref<allreduce_session>{session});
    return static_cast<int>(members_.size());
  }

  int rerun_average(caf::event_based_actor* self, const msg::local_cmd& cmd,
                    const std::vector<caf::actor>& workers) override {
    auto again = cmd;
    again.average = true;
    again.average_only = true;
    averaging_ = true;
    const auto session = with_fold(replicas_.session());
    members_ = members_of(workers);
    for (const auto& w : members_) self->send(w, again, msg::local_ref<allreduce_session>{session});
    return static_cast<int>(members_.size());
  }

  std::shared_ptr<local_replica> local_state_for(std::size_t rank) override {
    if (locals_.size() <= rank) locals_.resize(rank + 1);
    if (!locals_[rank]) locals_[rank] = std::make_shared<local_replica>();
    return locals_[rank];
  }

  // A lost member's replica is the job's: its training since the last average joins the next
  // one (fold), and a restarted worker goes on with its optimizer state.
  bool survives_member_loss() const override { return true; }
  bool regroups_lost_slices() const override { return true; }
  bool recovers_lost_reduction() const override { return true; }
  // Local steps reduce no mean gradient: the job reads the sums (through a process ring, which
  // holds them in the agents, rank 0 reports).
  bool grad_norm_from_applied() const override {
    return replicas_.session() && replicas_.session()->process_ring;
  }

  // Lost while the members apply:
  // - a lost member that had not applied its local step gets it from the job, which holds its
  //   gradient sum and its replica, so its samples are trained;
  // - a step without an average is then complete (the survivors applied theirs alone);
  // - an average that a member completed had every member's part: the others take its
  //   parameters (their optimizer state is their own), and the lost one's part is in it;
  // - an average that nobody completed runs again over the survivors, folding the lost
  //   replica in.
  reduction_recovery after_lost_reduction(const std::vector<reduce_answer>& answers,
                                          std::int64_t step) override {
    for (std::size_t r = 0; r < answers.size(); ++r)
      if (answers[r] == reduce_answer::lost) apply_local_step(r, step);
    reduction_recovery out;
    out.next = reduction_recovery::action::complete;
    if (!averaging_) return out;
    const auto from = applied_rank(answers);
    if (!from) {
      out.next = reduction_recovery::action::rerun_average;
      return out;
    }
    out.from = static_cast<int>(*from);
    for (std::size_t r = 0; r < answers.size(); ++r) {
      if (answers[r] != reduce_answer::dropped && answers[r] != reduce_answer::lost) continue;
      if (answers[r] == reduce_answer::dropped) {
        replicas_.copy_params(*from, r);
        ++out.copied;
      }
      if (r < locals_.size() && locals_[r]) locals_[r]->samples_since_average = 0;
    }
    return out;
  }

  std::optional<std::string> commit(std::int64_t step, double compute_seconds,
                                    double reduce_seconds, double loss) override {
    replicas_.publish(step + 1);
    averaged_ = averaging_;
    // The replicas folded into this average trained nothing since.
    if (averaging_)
      for (const auto& f : folded_) f->samples_since_average = 0;
    folded_.clear();
    try {
      return schedule_.on_applied(step, averaging_, compute_seconds, reduce_seconds, loss);
    } catch (const std::exception& e) {
      throw runtime_failure(std::string("sync period: ") + e.what());
    }
  }

  // Each replica's optimizer stepped on its own gradients (local_state_for holds it): none
  // stands for another's. A rank that comes back takes a member's parameters and goes on with
  // its own optimizer state, its training since the last average having joined an average.
  std::shared_ptr<replica_optimizer> optimizer_for(std::size_t) override { return nullptr; }
  bool bring_up_to_date(std::size_t rank, std::size_t reference) override {
    replicas_.copy_params(reference, rank);
    if (rank < locals_.size() && locals_[rank]) locals_[rank]->samples_since_average = 0;
    return true;
  }

  // Stop on time only after an average: the step deciding it saw the time was up.
  bool may_stop_on_time() const override { return averaging_; }

  // Checkpoints right after an average, when the replicas' parameters are one: the parameters
  // and member 0's optimizer state (each replica's optimizer stepped on its own gradients, and
  // the checkpoint holds one state; a resumed run starts every replica from it, which is exact
  // for an optimizer without state, plain SGD). A due checkpoint waits for the next average.
  bool checkpoints() const override { return true; }
  int sync_period() const override { return schedule_.period(); }
  bool at_capture_point() const override { return averaged_; }

  void fill_report(job_report& r, std::int64_t steps) const override {
    fill_sync_report(r, cfg_, &schedule_, steps);
  }

 private:
  // The session of an averaging step: member 0 also brings in the replicas of ranks out of the
  // membership that trained since the last average.
  std::shared_ptr<const allreduce_session> with_fold(std::shared_ptr<const allreduce_session> s) {
    folded_.clear();
    std::vector<allreduce_session::folded> fold;
    for (std::size_t r = 0; r < locals_.size(); ++r) {
      const bool member = r < s->index_of.size() && s->index_of[r] >= 0;
      if (member || !locals_[r] || locals_[r]->samples_since_average <= 0 || !replicas_.store(r))
        continue;
      fold.push_back({replicas_.store(r), locals_[r]});
      folded_.push_back(locals_[r]);
    }
    if (fold.empty()) return s;
    auto out = std::make_shared<allreduce_session>(*s);
    out->fold = std::move(fold);
    return out;
  }

  // What each member was told to apply in its local step, by rank: its contribution after a
  // regroup, else its own slice (the job applies it for a member lost before it did).
  void remember_told(const std::shared_ptr<const allreduce_session>& session,
                     const reduce_round& round) {
    const auto& s = *session;
    told_.assign(s.index_of.size(), {});
    told_session_ = session;
    for (std::size_t r = 0; r < s.index_of.size(); ++r) {
      const int m = s.index_of[r];
      if (m < 0) continue;
      if (!s.contribution.empty()) {
        const auto mi = static_cast<std::size_t>(m);
        told_[r] = {s.contribution[mi], s.contribution_samples[mi]};
        continue;
      }
      if (!round.grads) continue;
      for (std::size_t k = 0; k < round.cmd.ranks.size() && k < round.grads->size(); ++k)
        if (static_cast<std::size_t>(round.cmd.ranks[k]) == r && k < round.samples.size())
          told_[r] = {(*round.grads)[k], round.samples[k]};
    }
  }

  // The local step of rank `rank` at `step`, by the job, when its worker was lost before it.
  void apply_local_step(std::size_t rank, std::int64_t step) {
    if (rank >= told_.size() || rank >= locals_.size() || !locals_[rank] || !told_session_) return;
    auto& rep = *locals_[rank];
    const auto& t = told_[rank];
    const auto store = replicas_.store(rank);
    if (rep.stepped == step || !t.grad || t.samples <= 0 || !store) return;
    replica_step rs;
    rs.contributed = true;
    rs.grad = t.grad->data();
    rs.samples = t.samples;
    rs.params = store->values.data();
    rs.count = store->values.size();
    rs.step = step;
    local_step_apply(rep, *told_session_, rs, false);
  }

  struct told {
    std::shared_ptr<const std::vector<float>> grad;
    std::int64_t samples = 0;
  };

  local_sync schedule_;
  bool averaging_ = false;  // the step in flight ends with an average
  bool averaged_ = false;   // the last applied step did (a resumed run starts after one)
  std::vector<std::shared_ptr<local_replica>> locals_;  // by rank
  std::vector<std::shared_ptr<local_replica>> folded_;  // into the step in flight's average
  std::vector<told> told_;                              // by rank, the step in flight
  std::shared_ptr<const allreduce_session> told_session_;
};

}  // namespace

std::unique_ptr<job_sync> make_allreduce_sync(const config::job_config& cfg,
                                              double deadline_seconds, bool one_replica,
                                              std::int64_t reduction_block) {
  return std::make_unique<allreduce_sync>(cfg, deadline_seconds, one_replica, reduction_block);
}

std::unique_ptr<job_sync> make_local_sync(const config::job_config& cfg, double deadline_seconds) {
  return std::make_unique<local_sgd_sync>(cfg, deadline_seconds);
}

}  // namespace troupe::actors
