#include "actors/sync/allreduce_step.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>

#include "actors/common/specs.hpp"
#include "actors/sync/process_ring.hpp"
#include "collectives/allreduce.hpp"
#include "collectives/inproc/reduce_kernel.hpp"
#include "collectives/inproc/shared_allreduce.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/job_rules.hpp"
#include "models/max_adabelief.hpp"

namespace troupe::actors {
namespace {

namespace coll = troupe::collectives;

class shared_reducer final : public step_reducer {
 public:
  explicit shared_reducer(int members) : group_(members) {}
  int size() const override { return group_.size(); }
  int waiting() const override { return group_.waiting(); }
  reduce_outcome reduce(const reduce_call& c) override {
    const auto r = group_.allreduce(c);
    return reduce_outcome{r.values, r.total_weight, c.sq_norm ? r.sq_norm : -1.0};
  }

 private:
  coll::shared_allreduce_group group_;
};

// The ring over any transport. The weight travels as one extra element (exact for sample counts
// below 2^24), so one collective carries the sums and the sample count together.
class ring_reducer final : public step_reducer {
 public:
  ring_reducer(std::vector<coll::communicator> comms, std::uint64_t job, std::uint64_t generation)
      : comms_(std::move(comms)),
        work_(comms_.size()),
        next_(comms_.size(), 0),
        job_(job),
        epoch_(generation) {}
  int size() const override { return static_cast<int>(comms_.size()); }
  reduce_outcome reduce(const reduce_call& c) override {
    const auto r = static_cast<std::size_t>(c.rank);
    auto& buf = work_.at(r)[next_[r]];
    next_[r] ^= 1;
    buf.resize(c.count + 1);
    if (c.data)
      std::copy(c.data, c.data + c.count, buf.begin());
    else
      std::fill(buf.begin(), buf.end() - 1, 0.0f);
    buf[c.count] = static_cast<float>(c.weight);
    coll::allreduce_options o;
    o.comm = &comms_[r];
    o.job = job_;
    o.generation = epoch_;
    o.data = span<float>{buf.data(), c.op == coll::reduce_op::sum ? buf.size() : c.count};
    o.op = c.op;
    o.deadline = c.deadline;
    o.abort = c.abort;
    coll::allreduce(o);
    const double total = c.op == coll::reduce_op::sum ? static_cast<double>(buf[c.count]) : 0.0;
    if (c.divide_by_total_weight) {
      const float d = static_cast<float>(total);
      for (std::size_t i = 0; i < c.count; ++i) buf[i] /= d;
    }
    return reduce_outcome{span<const float>{buf.data(), c.count}, total};
  }

 private:
  std::vector<coll::communicator> comms_;
  std::vector<std::array<std::vector<float>, 2>> work_;
  std::vector<int> next_;
  std::uint64_t job_, epoch_;
};

// The members step one replica (allreduce_session::one_replica): the optimizer runs inside the
// reduction, on each piece of the mean as it is reduced, on whichever member's thread reduced
// it. `opt` and step.params are the same objects on every member.
double reduce_and_apply_one(replica_optimizer& opt, const allreduce_session& session,
                            const replica_step& step, reduce_call& call, step_reducer& reducer) {
  call.data = step.contributed ? step.grad : nullptr;
  if (session.blocks) {
    call.inputs = &session.blocks->blocks;
    call.blocks = session.blocks.get();
  }
  call.weight = step.contributed ? static_cast<double>(step.samples) : 0.0;
  call.divide_by_total_weight = true;
  call.sq_norm = true;
  // Run once, by the last member to arrive, under the group's lock: nobody applies yet.
  call.on_open = [&opt, &session, count = step.count] {
    if (!opt.replicated) {
      opt.replicated = models::make_optimizer(session.optimizer, count);
      if (opt.resume) opt.replicated->load_state(*opt.resume);
      opt.resume.reset();
    }
    opt.replicated->begin_step();
    opt.committed.fetch_add(1);
  };
  call.on_piece = [&opt, params = step.params](const float* mean, std::size_t lo, std::size_t n) {
    opt.replicated->update(params, mean, lo, n);
  };
  stopwatch clock;
  const auto mean = reducer.reduce(call);
  // The optimizer ran inside: the whole is the sum phase's, none of it apply's.
  if (step.timing) step.timing->sum += clock.seconds();
  if (mean.total_weight != static_cast<double>(step.total_samples))
    throw runtime_failure("allreduce: members reduced " + std::to_string(mean.total_weight) +
                          " samples where the step has " + std::to_string(step.total_samples) +
                          " (and applied them to the one replica)");
  // The step is applied to the one replica whatever this member does now.
  if (step.before_apply) step.before_apply();
  return step.rank == 0 ? mean.sq_norm : 0.0;
}

}  // namespace

reduce_outcome step_reducer::reduce(const reduce_call&, const agent_part&) {
  throw runtime_failure("allreduce: a member whose replica lives in an agent needs a process ring");
}

step_reducer& allreduce_session::reducer_for(int rank, const char* mode) const {
  if (!reducer)
    throw runtime_failure(std::string(mode) + ": generation " + std::to_string(generation) +
                          " has no members, yet rank " + std::to_string(rank) + " reduces");
  return *reducer;
}

std::shared_ptr<step_reducer> make_shared_reducer(int members) {
  return std::make_shared<shared_reducer>(members);
}

std::shared_ptr<step_reducer> make_ring_reducer(std::vector<coll::communicator> comms,
                                                std::uint64_t job, std::uint64_t generation) {
  return std::make_shared<ring_reducer>(std::move(comms), job, generation);
}

double allreduce_and_apply(replica_optimizer& opt, const allreduce_session& session,
                           const replica_step& step) {
  reduce_call call;
  call.rank = step.rank;
  call.count = step.count;
  call.deadline = steady::now() + std::chrono::duration_cast<steady::duration>(
                                      std::chrono::duration<double>(session.deadline_seconds));
  call.abort = session.abort;
  call.gone = step.gone;
  auto& reducer = session.reducer_for(step.rank, "allreduce");

  if (session.one_replica) return reduce_and_apply_one(opt, session, step, call, reducer);
  if (!session.distributed) {
    if (!opt.replicated) {
      opt.replicated = models::make_optimizer(session.optimizer, step.count);
      if (opt.resume) opt.replicated->load_state(*opt.resume);
      opt.resume.reset();
    }
    call.data = step.contributed ? step.grad : nullptr;
    if (session.blocks) {
      call.inputs = &session.blocks->blocks;
      call.blocks = session.blocks.get();
    }
    call.weight = step.contributed ? static_cast<double>(step.samples) : 0.0;
    call.divide_by_total_weight = true;
    call.sq_norm = true;  // |G_B|^2 for the job's statistics, from the pieces as they are reduced
    stopwatch sum_clock;
    const auto mean = step.agent ? reducer.reduce(call, *step.agent) : reducer.reduce(call);
    if (step.timing) step.timing->sum += sum_clock.seconds();
    // The allreduced sample count must be the job's: otherwise a member reduced another step.
    if (mean.total_weight != static_cast<double>(step.total_samples))
      throw runtime_failure("allreduce: members reduced " + std::to_string(mean.total_weight) +
                            " samples where the step has " + std::to_string(step.total_samples));
    if (step.before_apply) step.before_apply();
    stopwatch apply_clock;
    opt.replicated->step(step.params, mean.values.data());
    if (step.timing) step.timing->apply += apply_clock.seconds();
    // Member 0 reports |G_B|^2 with `applied`: the job then reads no gradient on its own thread
    // while the members reduce and apply (a core they need).
    if (step.rank != 0) return 0.0;
    return mean.sq_norm >= 0.0 ? mean.sq_norm
                               : collectives::sq_norm(mean.values.data(), step.count);
  }

  // Distributed Max-AdaBelief: local moments from the local mean gradient.
  const std::size_t n = step.count;
  // Zero moments before step 1; a resumed or joining replica brings its own (scratch anew).
  if (opt.m.size() != n || opt.s.size() != n || opt.s_max.size() != n)
    for (auto* v : {&opt.m, &opt.s, &opt.s_max}) v->assign(n, 0.0f);
  for (auto* v : {&opt.local, &opt.m_hat, &opt.s_hat})
    if (v->size() != n) v->assign(n, 0.0f);
  if (step.contributed && step.samples > 0) {
    const float b = static_cast<float>(step.samples);
    for (std::size_t i = 0; i < n; ++i) opt.local[i] = step.grad[i] / b;
  } else {
    std::fill(opt.local.begin(), opt.local.end(), 0.0f);
  }
  ++opt.t;
  models::max_adabelief::local_moments(session.optimizer, opt.t, n, step.params, opt.local.data(),
                                       opt.m.data(), opt.s.data(), opt.s_max.data(),
                                       opt.m_hat.data(), opt.s_hat.data());
  call.data = opt.m_hat.data();
  call.weight = 1.0;  // every member counts once: the plain average over workers
  call.divide_by_total_weight = true;
  const auto m_avg = reducer.reduce(call);
  call.data = opt.s_hat.data();
  call.op = coll::reduce_op::max;
  call.weight = 0.0;
  call.divide_by_total_weight = false;
  const auto s_max = reducer.reduce(call);  // m_avg stays valid: two result slots
  models::max_adabelief::apply_update(session.optimizer, n, step.params, m_avg.values.data(),
                                      s_max.values.data());
  return 0.0;
}

models::optimizer_state moments_of(const replica_optimizer& opt) {
  models::optimizer_state s;
  s.step = opt.t;
  s.names = {"m", "s", "s_max"};
  s.buffers = {opt.m, opt.s, opt.s_max};
  return s;
}

void load_moments(replica_optimizer& opt, const models::optimizer_state& state, std::size_t n,
                  const std::string& source) {
  const std::vector<std::string> want{"m", "s", "s_max"};
  if (state.names != want || state.buffers.size() != want.size() || state.step < 0)
    throw input_error(source + ": a worker's moments must be m, s and s_max at a step >= 0");
  for (std::size_t i = 0; i < want.size(); ++i)
    if (state.buffers[i].size() != n)
      throw input_error(source + ": moment " + want[i] + " has " +
                        std::to_string(state.buffers[i].size()) + " floats, the model " +
                        std::to_string(n));
  opt.t = state.step;
  opt.m = state.buffers[0];
  opt.s = state.buffers[1];
  opt.s_max = state.buffers[2];
  for (auto* v : {&opt.local, &opt.m_hat, &opt.s_hat}) v->assign(n, 0.0f);
}

void job_allreduce::resume_moments(
    std::vector<std::pair<std::int32_t, models::optimizer_state>> ranks, std::string source) {
  std::sort(ranks.begin(), ranks.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  resume_moments_ = std::move(ranks);
  resume_source_ = std::move(source);
}

job_allreduce::job_allreduce(const config::job_config& cfg, double deadline_seconds,
                             bool one_replica)
    : cfg_(cfg),
      deadline_seconds_(deadline_seconds),
      one_replica_(one_replica && cfg.optimizer.form == optimizer_form::replicated) {}

std::int64_t job_allreduce::one_replica_steps() const {
  if (!one_replica_) return -1;
  return one_ ? one_->committed.load() : 0;
}

void job_allreduce::resume_from(std::shared_ptr<const models::optimizer_state> state) {
  resume_ = std::move(state);
}

std::shared_ptr<replica_optimizer> job_allreduce::optimizer(std::size_t rank) const {
  return rank < optimizers_.size() ? optimizers_[rank] : nullptr;
}

void job_allreduce::copy_params(std::size_t from, std::size_t to) {
  if (from == to || from >= replicas_.size() || to >= replicas_.size() || !replicas_[from] ||
      !replicas_[to] || replicas_[from] == replicas_[to])
    return;
  auto& dst = *replicas_[to];
  const auto& src = *replicas_[from];
  dst.values = src.values;
  dst.version.store(src.version.load());
}

void job_allreduce::copy_replica(std::size_t from, std::size_t to) {
  if (from == to || from >= replicas_.size() || to >= replicas_.size()) return;
  // One replica: `to` already holds it (and making its optimizer anew would drop the state).
  if (optimizers_[from] == optimizers_[to]) return;
  copy_params(from, to);
  const auto& so = *optimizers_[from];
  auto& d = *optimizers_[to];
  if (so.replicated) {
    d.replicated =
        models::make_optimizer(optimizer_spec_of(cfg_.optimizer), replicas_[to]->values.size());
    d.replicated->load_state(so.replicated->state());
    d.resume.reset();
  } else {
    d.replicated.reset();
    d.resume = so.resume;  // neither stepped yet: both start from the same state
  }
  // The distributed form: the joining rank starts from the reference's moments (no fresh worker
  // could make the same update at this step, so it inherits one).
  d.t = so.t;
  d.m = so.m;
  d.s = so.s;
  d.s_max = so.s_max;
}

std::shared_ptr<param_store> job_allreduce::replica(std::size_t rank,
                                                    const std::shared_ptr<param_store>& initial) {
  if (replicas_.size() <= rank) replicas_.resize(rank + 1);
  if (optimizers_.size() <= rank) optimizers_.resize(rank + 1);
  if (one_replica_) {
    // Every incarnation of every rank: the one store and optimizer, as they are.
    if (!one_) {
      one_ = std::make_shared<replica_optimizer>();
      one_->resume = resume_;
    }
    optimizers_[rank] = one_;
    replicas_[rank] = initial;
    return initial;
  }
  optimizers_[rank] = std::make_shared<replica_optimizer>();
  if (!resume_moments_.empty()) {
    auto it = std::find_if(resume_moments_.begin(), resume_moments_.end(), [&](const auto& p) {
      return p.first == static_cast<std::int32_t>(rank);
    });
    const auto& from = it != resume_moments_.end() ? it->second : resume_moments_.front().second;
    load_moments(*optimizers_[rank], from, initial->values.size(), resume_source_);
  }
  if (rank == 0) {
    replicas_[0] = initial;
  } else {
    replicas_[rank] = std::make_shared<param_store>(initial->values.size());
    replicas_[rank]->values = initial->values;
    replicas_[rank]->version.store(initial->version.load());
  }
  return replicas_[rank];
}

void job_allreduce::open_generation(std::uint32_t job, std::uint32_t generation,
                                    const std::vector<bool>& member,
                                    const std::vector<bool>& in_agent) {
  if (session_)
    abort("generation " + std::to_string(generation) + " replaces generation " +
          std::to_string(session_->generation));
  std::vector<int> index_of(member.size(), -1);
  std::vector<bool> agent;  // by member index
  int members = 0;
  for (std::size_t r = 0; r < member.size(); ++r) {
    if (!member[r]) continue;
    index_of[r] = members++;
    agent.push_back(r < in_agent.size() && in_agent[r]);
  }
  auto s = std::make_shared<allreduce_session>();
  s->job = job;
  s->generation = generation;
  s->members = members;
  s->index_of = std::move(index_of);
  s->optimizer = optimizer_spec_of(cfg_.optimizer);
  s->distributed = cfg_.optimizer.form == optimizer_form::distributed;
  s->deadline_seconds = deadline_seconds_;
  const bool ring =
      !s->distributed && std::any_of(agent.begin(), agent.end(), [](bool a) { return a; });
  // Every rank out at once (failed or restarting): nobody reduces in this generation, so it gets
  // no reducer (a group of zero ranks cannot exist).
  if (members == 0) {
    session_ = std::move(s);
    return;
  }
  if (ring && one_replica_)
    throw runtime_failure("allreduce: generation " + std::to_string(generation) +
                          " has a replica in an agent, but the job keeps one replica here");
  if (ring) {
    if (!ring_) ring_ = std::make_shared<ring_record>();
    // Unique per job, generation and control process: a resumed run or another run's control
    // process on the same store never meets this ring.
    static std::atomic<std::uint64_t> serial{0};
    const std::string prefix = "ring/" + std::to_string(job) + "/" + std::to_string(generation) +
                               "/" + std::to_string(::getpid()) + "/" + std::to_string(++serial);
    s->process_ring = true;
    const auto block = static_cast<std::uint64_t>(config::reduction_block(cfg_, true));
    s->reducer =
        make_process_ring_reducer(agent, job, generation, prefix, ring_, cfg_.sync.codec, block);
  } else if (one_replica_) {
    s->one_replica = true;
    s->reducer = make_shared_reducer(members);
  } else {
    s->reducer = make_shared_reducer(members);
  }
  session_ = std::move(s);
}

void job_allreduce::abort(const std::string& reason) {
  if (session_) session_->abort->abort(reason);
}

void job_allreduce::publish(std::int64_t version) {
  // Rank 0's replica is the job's own copy (evaluation, checkpoints, the report read it): while
  // rank 0 is out of the membership (failed), it follows the first member's. The members are
  // idle here: the step is applied everywhere.
  if (session_ && !session_->index_of.empty() && session_->index_of[0] < 0 && replicas_[0])
    for (std::size_t r = 1; r < session_->index_of.size() && r < replicas_.size(); ++r)
      if (session_->index_of[r] >= 0 && replicas_[r]) {
        if (replicas_[r] != replicas_[0]) replicas_[0]->values = replicas_[r]->values;
        break;
      }
  // publish, not a plain store of the version: it also stamps the moment, from which a worker
  // with a parked slice counts its start lag (as under ps, whose one store is published so).
  for (auto& r : replicas_)
    if (r) r->publish(version);
}

// The members of the last generation must agree; a rank out of it (failed, or still joining)
// keeps the replica it had, which the next join overwrites.
std::string job_allreduce::check_replicas() const {
  auto member = [&](std::size_t r) {
    return r < replicas_.size() && replicas_[r] &&
           (!session_ || (r < session_->index_of.size() && session_->index_of[r] >= 0));
  };
  std::size_t first = 0;
  while (first < replicas_.size() && !member(first)) ++first;
  if (first >= replicas_.size()) return {};
  const auto& ref = replicas_[first]->values;
  const auto h0 = fnv1a64(ref.data(), ref.size() * sizeof(float));
  for (std::size_t r = first + 1; r < replicas_.size(); ++r) {
    if (!member(r)) continue;
    const auto& v = replicas_[r]->values;
    const auto h = fnv1a64(v.data(), v.size() * sizeof(float));
    if (h != h0)
      return "parameter replica of rank " + std::to_string(r) + " differs from rank " +
             std::to_string(first) + " (fnv1a64 " + std::to_string(h) + " vs " +
             std::to_string(h0) + ")";
  }
  return {};
}

}  // namespace troupe::actors
