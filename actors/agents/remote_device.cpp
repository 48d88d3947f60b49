#include "actors/agents/remote_device.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>

#include <caf/scoped_actor.hpp>

#include "actors/agents/remote_wire.hpp"
#include "actors/common/caf_compat.hpp"
#include "collectives/communicator.hpp"
#include "collectives/store_actor.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "core/error.hpp"
#include "core/host_address.hpp"
#include "core/launcher_env.hpp"

namespace troupe::actors {
namespace {

namespace wire = remote_wire;

// How long the agent has to answer host_worker, and both ends to meet in the store.
constexpr double setup_seconds = 10.0;
// How long a starting worker waits for its group's agent to be there.
constexpr int agent_return_seconds = 30;
// How often a wait looks at the incarnation's cancel token.
constexpr auto cancel_slice = std::chrono::milliseconds(50);

class remote_device final : public devices::device, public agent_replica {
 public:
  remote_device(devices::device_spec spec, hosted_group agent, collectives::communicator comm,
                double capability, std::size_t features, std::shared_ptr<cancel_token> cancel,
                double call_seconds, ring_endpoint endpoint, std::size_t params)
      : spec_(std::move(spec)),
        agent_(std::move(agent)),
        comm_(std::move(comm)),
        capability_(capability),
        features_(features),
        cancel_(std::move(cancel)),
        call_seconds_(call_seconds),
        endpoint_(std::move(endpoint)),
        op_name_("agent '" + agent_.agent_name + "' (" + spec_.name + ")"),
        params_(params) {}
  ~remote_device() override {
    comm_.close();
    // A dead agent never takes our goodbye, and ZeroMQ's context lingers 200 ms on it when the
    // link is destroyed; the worker's down message (and so the job's recovery) would wait for
    // that. The payloads are released by close(), so the sockets may die on a thread of their own.
    if (agent_.lost->aborted() || (cancel_ && cancel_->cancelled()))
      std::thread([c = std::move(comm_)]() mutable { c = collectives::communicator{}; }).detach();
  }

  devices::device_kind kind() const override { return spec_.kind; }
  const std::string& name() const override { return spec_.name; }
  double capability() const override { return capability_; }
  void set_share(const std::string&, double weight) override { share_ = weight; }

  models::step_stats run_step(models::model& m, const float* params, const models::batch& b,
                              float* grad_sum, devices::step_timing* timing) override {
    return call(wire::call_kind::step, &m, params, b, grad_sum, timing);
  }
  // One call: the agent sums the blocks and sends them back in order.
  models::step_stats run_blocks(models::model& m, const float* params, const models::batch& b,
                                std::size_t, std::size_t block, float* grad_sums,
                                devices::step_timing* timing) override {
    if (block == 0) throw troupe::runtime_failure(op_name_ + ": a block of 0 rows");
    return call(wire::call_kind::step, &m, params, b, grad_sums, timing, nullptr, block);
  }
  models::step_stats run_eval(models::model& m, const float* params, const models::batch& b,
                              devices::step_timing* timing) override {
    return call(wire::call_kind::eval, &m, params, b, nullptr, timing);
  }

  bool synced() const override { return synced_; }
  void desync() override { synced_ = false; }
  std::shared_ptr<const collectives::abort_signal> lost() const override { return agent_.lost; }
  void abort_ring() override {
    if (!reduce_prefix_.empty() && agent_.agent)
      caf::anon_send(agent_.agent, msg::ring_abort_atom_v, reduce_prefix_);
  }

  void sync(const float* params, std::size_t count,
            const models::optimizer_state& optimizer) override {
    const auto n = static_cast<std::uint32_t>(++calls_);
    auto& link = comm_.link(1);
    collectives::close_on_throw guard{comm_};
    auto ctx = call_context();
    wire::request_head h;
    h.kind = static_cast<std::uint32_t>(wire::call_kind::sync);
    h.features = features_;
    h.params = count;
    wire::optimizer_head o;
    o.steps = optimizer.step;
    o.buffers = optimizer.buffers.size();
    link.post(wire::tag(n, wire::request, sizeof h), &h, ctx);
    link.post(wire::tag(n, wire::params, count * sizeof(float)), params, ctx);
    link.post(wire::tag(n, wire::optimizer, sizeof o), &o, ctx);
    for (std::size_t i = 0; i < optimizer.buffers.size(); ++i) {
      const auto& buf = optimizer.buffers[i];
      link.post(wire::tag(n, wire::optimizer_buffers + static_cast<std::uint32_t>(i),
                          buf.size() * sizeof(float)),
                buf.data(), ctx);
    }
    answer_of(link, n, ctx);
    link.flush(ctx);
    synced_ = true;
    sync_bytes_ += (count + optimizer.buffers.size() * count) * sizeof(float);
  }

  models::step_stats kept_step(std::int64_t step, const models::batch& b,
                               devices::step_timing* timing, double* grad_sq, std::size_t block,
                               std::uint64_t first_block) override {
    kept_step_ = step;
    first_block_ = first_block;
    return call(wire::call_kind::kept_step, nullptr, nullptr, b, nullptr, timing, grad_sq, block);
  }

  agent_part reduce_part(std::int64_t step, bool contributed, std::int64_t samples,
                         std::int64_t total_samples, double deadline_seconds) override {
    reduce_posted_ = false;
    agent_part part;
    part.endpoint = endpoint_;
    part.start = [this, step, contributed, samples, total_samples,
                  deadline_seconds](const ring_plan& p) {
      const auto n = static_cast<std::uint32_t>(++calls_);
      auto& link = comm_.link(1);
      collectives::close_on_throw guard{comm_};
      auto ctx = call_context();
      // Posted without copies: the heads live in this object until finish_reduce flushes.
      reduce_request_ = wire::request_head{};
      reduce_request_.kind = static_cast<std::uint32_t>(wire::call_kind::reduce);
      reduce_request_.features = features_;
      reduce_request_.params = params_;
      reduce_ring_ = wire::ring_head{};
      reduce_ring_.job = p.job;
      reduce_ring_.generation = p.generation;
      reduce_ring_.step = step;
      reduce_ring_.rank = p.rank;
      reduce_ring_.size = p.size;
      reduce_ring_.transport = static_cast<std::uint32_t>(p.transport);
      reduce_ring_.contributed = contributed ? 1 : 0;
      reduce_ring_.samples = samples;
      reduce_ring_.total_samples = total_samples;
      reduce_ring_.deadline_seconds = deadline_seconds;
      reduce_ring_.block = p.block;
      reduce_prefix_ = p.prefix;
      reduce_ring_.prefix_bytes = reduce_prefix_.size();
      link.post(wire::tag(n, wire::request, sizeof reduce_request_), &reduce_request_, ctx);
      link.post(wire::tag(n, wire::ring, sizeof reduce_ring_), &reduce_ring_, ctx);
      link.post(wire::tag(n, wire::ring_prefix, reduce_prefix_.size()), reduce_prefix_.data(), ctx);
      reduce_call_ = n;
      reduce_posted_ = true;
    };
    return part;
  }

  void finish_reduce(std::shared_ptr<const collectives::abort_signal> abort) override {
    if (!reduce_posted_) return;
    reduce_posted_ = false;
    auto& link = comm_.link(1);
    auto ctx = call_context();
    ctx.abort = std::move(abort);
    try {
      answer_of(link, reduce_call_, ctx);
      link.flush(ctx);
    } catch (const collectives::collective_error& e) {
      // Dropped by the job (another member was lost) or answered with an error (not a
      // collective_error): the link is still in step, since the next call's receive drops this
      // call's late answer as a leftover. So the agent keeps serving this worker, which syncs
      // its replica again. A timeout, a closed peer or a protocol fault leave it unusable.
      if (e.kind() != collectives::failure_kind::aborted) comm_.close();
      throw;
    }
  }

 private:
  collectives::op_context call_context() const {
    collectives::op_context ctx;
    ctx.op_name = op_name_;
    // The agent lost is this worker's failure (a closed peer), never an abort: an abort would
    // read as "the job dropped this reduction", and a member whose agent is gone must fail.
    ctx.gone = agent_.lost;
    ctx.deadline = steady::now() + std::chrono::duration_cast<steady::duration>(
                                       std::chrono::duration<double>(call_seconds_));
    return ctx;
  }

  // Call n's reply head; an error answer throws with the agent's text.
  wire::reply_head answer_of(collectives::peer_link& link, std::uint32_t n,
                             collectives::op_context& ctx) {
    const auto r = await_reply(link, n, ctx.deadline, ctx);
    if (r.error_bytes > 0) {
      std::string text;
      link.receive(
          wire::tag(n, wire::error_text),
          [&](const std::byte* piece, std::size_t bytes, std::size_t, std::size_t) {
            text.append(reinterpret_cast<const char*>(piece), std::min<std::size_t>(bytes, 4096));
          },
          ctx);
      throw troupe::runtime_failure(ctx.op_name + ": " + text);
    }
    return r;
  }

  // `m` and `params` are null for kept_step (the agent's replica computes).
  models::step_stats call(wire::call_kind kind, models::model* m, const float* params,
                          const models::batch& b, float* grad_sum, devices::step_timing* timing,
                          double* grad_sq = nullptr, std::size_t block = 0) {
    const auto n = static_cast<std::uint32_t>(++calls_);
    auto& link = comm_.link(1);
    collectives::close_on_throw guard{comm_};
    auto ctx = call_context();

    wire::request_head h;
    h.kind = static_cast<std::uint32_t>(kind);
    h.rows = b.size;
    h.features = features_;
    h.params = m ? m->param_count() : params_;
    h.start_lag_seconds = timing ? timing->start_lag_seconds : 0.0;
    h.share = share_;
    h.step = kept_step_;
    h.block = block;
    h.first_block = first_block_;
    // The gradient's floats: one sum, or one per block.
    const std::size_t grad_floats =
        h.params * (block > 0 ? (b.size + block - 1) / block : std::size_t{1});
    if (b.labels) h.flags |= wire::has_labels;
    if (b.targets) h.flags |= wire::has_targets;
    if (b.weights) h.flags |= wire::has_weights;
    if (b.sample_loss) h.flags |= wire::wants_sample_loss;
    auto post = [&](std::uint32_t part, const void* data, std::size_t bytes) {
      link.post(wire::tag(n, part, bytes), data, ctx);
    };
    post(wire::request, &h, sizeof h);
    if (params) post(wire::params, params, h.params * sizeof(float));
    post(wire::rows, b.x, b.size * features_ * sizeof(float));
    if (b.labels) post(wire::labels, b.labels, b.size * sizeof(std::int32_t));
    if (b.targets) post(wire::targets, b.targets, b.size * sizeof(float));
    if (b.weights) post(wire::weights, b.weights, b.size * sizeof(float));

    const auto r = answer_of(link, n, ctx);
    if (grad_sq) *grad_sq = r.grad_sq;
    if (grad_sum)
      link.receive_into(wire::tag(n, wire::gradient), reinterpret_cast<std::byte*>(grad_sum),
                        grad_floats * sizeof(float), ctx);
    if (b.sample_loss)
      link.receive_into(wire::tag(n, wire::sample_loss),
                        reinterpret_cast<std::byte*>(b.sample_loss), b.size * sizeof(float), ctx);
    link.flush(ctx);  // the rows and parameters may change once we return
    if (timing) {
      timing->compute_seconds = r.compute_seconds;
      timing->gate_wait_seconds = r.gate_wait_seconds;
      // The payloads only: the heads are a few dozen bytes. A sync since the last step counts
      // with this one.
      std::uint64_t moved = b.size * features_ * sizeof(float) + sync_bytes_;
      sync_bytes_ = 0;
      if (params) moved += h.params * sizeof(float);
      if (b.labels) moved += b.size * sizeof(std::int32_t);
      if (b.targets) moved += b.size * sizeof(float);
      if (b.weights) moved += b.size * sizeof(float);
      if (grad_sum) moved += grad_floats * sizeof(float);
      if (b.sample_loss) moved += b.size * sizeof(float);
      timing->transfer_bytes = moved;
    }
    models::step_stats s;
    s.loss_sum = r.loss_sum;
    s.samples = static_cast<std::size_t>(r.samples);
    s.correct = static_cast<std::size_t>(r.correct);
    return s;
  }

  // Waits for call n's reply head in slices until `until`, so that a cancelled incarnation (the
  // job declared this worker hung) stops waiting at once instead of at the deadline.
  wire::reply_head await_reply(collectives::peer_link& link, std::uint32_t n,
                               steady::time_point until, collectives::op_context& ctx) {
    for (;;) {
      ctx.deadline = std::min(until, steady::now() + cancel_slice);
      try {
        const auto r = wire::receive_struct<wire::reply_head>(link, n, wire::reply, ctx);
        ctx.deadline = until;
        return r;
      } catch (const collectives::collective_error& e) {
        if (e.kind() != collectives::failure_kind::timeout || steady::now() >= until) throw;
      }
      if (cancel_ && cancel_->cancelled())
        throw troupe::runtime_failure(ctx.op_name +
                                      ": released while waiting for the agent's answer");
    }
  }

  devices::device_spec spec_;
  hosted_group agent_;
  collectives::communicator comm_;
  double capability_;
  std::size_t features_;
  std::shared_ptr<cancel_token> cancel_;
  double call_seconds_;
  ring_endpoint endpoint_;
  std::string op_name_;  // how errors name this device's agent
  double share_ = 1.0;
  std::uint64_t calls_ = 0;
  // The replica in the agent.
  std::size_t params_ = 0;  // the model's parameter count
  bool synced_ = false;
  std::uint64_t sync_bytes_ = 0;  // moved by syncs not yet counted with a step
  std::int64_t kept_step_ = -1;
  std::uint64_t first_block_ = 0;  // kept_step's, under the canonical reduction
  bool reduce_posted_ = false;
  std::uint32_t reduce_call_ = 0;
  wire::request_head reduce_request_;
  wire::ring_head reduce_ring_;
  std::string reduce_prefix_;
};

// The agent that hosts the worker's group, waiting for one (a restarted child agent, or one
// that rejoins after a partition) up to agent_return_seconds, as long as the incarnation is not
// released.
hosted_group agent_of(const worker_setup& setup) {
  const auto until = steady::now() + std::chrono::seconds(agent_return_seconds);
  for (;;) {
    if (auto h = setup.agents->find(setup.group); h && !h->lost->aborted()) return *h;
    if (setup.cancel && setup.cancel->cancelled())
      throw troupe::runtime_failure("released while waiting for an agent of group '" + setup.group +
                                    "'");
    if (steady::now() >= until)
      throw troupe::runtime_failure("no agent hosts group '" + setup.group + "' (waited " +
                                    std::to_string(agent_return_seconds) + " s)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

msg::host_worker request_of(const worker_setup& setup, const std::string& prefix) {
  msg::host_worker w;
  w.prefix = prefix;
  w.store = setup.agents->store();
  w.control_host = host_name();
  w.device = setup.device;
  w.model = setup.model_spec;
  w.optimizer = setup.optimizer;
  w.codec = setup.codec;
  return w;
}

// Asks the group's agent to host the worker, and waits up to setup_seconds for its answer. An
// agent whose session ends while it holds the request (stopped past the heartbeat, cut off,
// killed) never answers it: the request goes at once to the agent that hosts the group now (the
// same one rejoined, or a restarted child) under a new prefix, with a deadline of its own, as
// long as agent_return_seconds have not passed since the first. Waiting out the deadline
// instead kept a worker out for 10 s after a 1 s SIGSTOP. `agent` and `prefix` are those of
// the request answered.
msg::host_answer request_hosting(caf::actor_system& sys, const worker_setup& setup,
                                 hosted_group& agent, std::string& prefix) {
  // One link per worker incarnation (and per request): a restarted worker meets the agent
  // under new keys.
  static std::atomic<std::uint64_t> serial{0};
  const auto seconds = [](double s) {
    return std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(s));
  };
  const auto give_up = steady::now() + seconds(agent_return_seconds);
  for (;;) {
    agent = agent_of(setup);
    prefix = "remote/" + setup.job_name + "/" + setup.device.name + "/" +
             std::to_string(::getpid()) + "/" + std::to_string(++serial);
    const auto until = steady::now() + seconds(setup_seconds);
    caf::scoped_actor self{sys};
    self->send(agent.agent, request_of(setup, prefix));
    for (;;) {
      std::optional<msg::host_answer> answer;
      self->receive([&](msg::host_answer& a) { answer = std::move(a); },
                    caf::after(cancel_slice) >> [] {});
      if (answer) return std::move(*answer);
      if (setup.cancel && setup.cancel->cancelled())
        throw troupe::runtime_failure("released while asking agent '" + agent.agent_name +
                                      "' to host " + setup.device.name);
      if (steady::now() >= until)
        throw troupe::runtime_failure("agent '" + agent.agent_name +
                                      "' did not answer a request to host " + setup.device.name +
                                      " within " + std::to_string(static_cast<int>(setup_seconds)) +
                                      " s");
      if (agent.lost->aborted()) break;
    }
    if (steady::now() >= give_up)
      throw troupe::runtime_failure("agent '" + agent.agent_name +
                                    "' was lost while asked to host " + setup.device.name +
                                    ", again for " + std::to_string(agent_return_seconds) + " s");
  }
}

}  // namespace

std::unique_ptr<devices::device> make_remote_device(caf::actor_system& sys,
                                                    const worker_setup& setup) {
  hosted_group agent;
  std::string prefix;
  const auto answer = request_hosting(sys, setup, agent, prefix);
  const std::string who = "agent '" + agent.agent_name + "'";
  if (!answer.accepted)
    throw troupe::runtime_failure(who + " cannot host " + setup.device.name + ": " +
                                  answer.reason.substr(0, 300));
  // From another process: a capability that is not a positive finite number would poison the
  // split (and CAF 0.17's serialiser loops forever on an infinity, were it ever sent on).
  if (!(answer.capability > 0) || !std::isfinite(answer.capability) || answer.capability > 1e12)
    throw troupe::runtime_failure(who +
                                  " answered a device capability that is not a positive "
                                  "finite number");

  ring_endpoint endpoint;
  endpoint.store = std::make_shared<collectives::actor_store>(sys, setup.agents->store());
  // tcp binds on the interface that routes to the agent (unused for ipc); so does the job's
  // process ring (actors/sync/process_ring.hpp).
  const bool loopback = is_loopback(answer.data_host);
  endpoint.bind_host = loopback ? answer.data_host : local_address_towards(answer.data_host);
  const auto options = wire::link_options(
      0, prefix, *endpoint.store, agent.host, answer.data_host, endpoint.bind_host,
      std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(setup_seconds)));
  endpoint.ipc = options.scheme == collectives::zmq_scheme::ipc;
  auto comm = collectives::zmq_connect(options);
  return std::make_unique<remote_device>(
      setup.device, agent, std::move(comm), answer.capability, setup.model_spec.input_size(),
      setup.cancel, setup.max_hang_seconds, std::move(endpoint), setup.prototype->param_count());
}

}  // namespace troupe::actors
