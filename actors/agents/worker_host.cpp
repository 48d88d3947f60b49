#include "actors/agents/worker_host.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>

#include "actors/agents/agent.hpp"
#include "actors/agents/hosted_replica.hpp"
#include "actors/agents/remote_wire.hpp"
#include "actors/sync/block_sums.hpp"
#include "collectives/communicator.hpp"
#include "collectives/inproc/reduce_kernel.hpp"
#include "collectives/store_actor.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "devices/device.hpp"
#include "models/model.hpp"

namespace troupe::actors {
namespace {

namespace wire = remote_wire;

// How long the control process has to meet us in the store.
constexpr auto connect_within = std::chrono::seconds(10);
// A call's parts after its head come at once: a peer that stops half-way is broken.
constexpr auto parts_within = std::chrono::seconds(30);

struct hosted {
  std::unique_ptr<devices::device> device;
  std::unique_ptr<models::model> model;
  std::size_t features = 0;
  // Buffers reused by every call.
  std::vector<float> params, x, targets, weights, grad, sample_loss;
  std::vector<std::int32_t> labels;
  // The worker's replica, when it lives here (sync: allreduce).
  hosted_replica replica;
  // What the replica's ring needs: the run's store and the interface tcp binds on.
  collectives::store* store = nullptr;
  std::string data_host;
  std::shared_ptr<const collectives::abort_signal> stop;

  hosted(models::optimizer_spec optimizer, std::size_t params, const std::string& codec)
      : replica(std::move(optimizer), params, codec) {}
};

// Receives `count` values of T as part `part` of call `call`. The frame's size is checked
// before the buffer grows, so a head that claims absurd counts is a protocol error naming the
// peer, not an allocation of that size; and after the receive too, since an empty frame
// passes no piece to the callback (receive_into would take it for any size).
template <class T>
void take(collectives::peer_link& link, std::uint32_t call, std::uint32_t part,
          std::vector<T>& into, std::size_t count, const collectives::op_context& ctx) {
  const auto check = [&](std::size_t total) {
    if (total % sizeof(T) != 0 || total / sizeof(T) != count)
      throw collectives::collective_error(collectives::failure_kind::protocol, link.peer(),
                                          ctx.op_name + ": " + link.peer().describe() + " sent " +
                                              std::to_string(total) + " bytes where " +
                                              std::to_string(count) + " values of " +
                                              std::to_string(sizeof(T)) + " bytes were expected");
  };
  const auto got = link.receive(
      wire::tag(call, part),
      [&](const std::byte* piece, std::size_t bytes, std::size_t offset, std::size_t total) {
        if (offset == 0) {
          check(total);
          into.resize(count);
        }
        std::memcpy(reinterpret_cast<std::byte*>(into.data()) + offset, piece, bytes);
      },
      ctx);
  check(got.bytes);
  into.resize(count);
}

// The answer to call n: the reply head, then the error text when `error` is not empty.
void answer(collectives::peer_link& link, std::uint32_t n, wire::reply_head& r,
            const std::string& error, const collectives::op_context& parts) {
  if (!error.empty()) r.error_bytes = error.size();
  link.post(wire::tag(n, wire::reply, sizeof r), &r, parts);
  if (!error.empty()) link.post(wire::tag(n, wire::error_text, error.size()), error.data(), parts);
}

// sync: the worker's replica (parameters, optimizer state) becomes this agent's.
void serve_sync(hosted& h, collectives::peer_link& link, std::uint32_t n,
                const collectives::op_context& parts) {
  const auto count = h.model->param_count();
  take(link, n, wire::params, h.params, count, parts);
  const auto o = wire::receive_struct<wire::optimizer_head>(link, n, wire::optimizer, parts);
  if (o.buffers > 16)
    throw collectives::collective_error(collectives::failure_kind::protocol, link.peer(),
                                        "peer " + link.peer().describe() + " sent " +
                                            std::to_string(o.buffers) + " optimizer buffers");
  std::vector<std::vector<float>> buffers(static_cast<std::size_t>(o.buffers));
  for (std::size_t i = 0; i < buffers.size(); ++i)
    take(link, n, wire::optimizer_buffers + static_cast<std::uint32_t>(i), buffers[i], count,
         parts);
  wire::reply_head r;
  std::string error;
  try {
    h.replica.load(h.params, o.steps, std::move(buffers));
  } catch (const std::exception& e) {
    error = std::string("replica: ") + e.what();
  }
  answer(link, n, r, error, parts);
  link.flush(parts);
}

// reduce: this worker's part in the step's process ring; the mean goes to the replica.
void serve_reduce(hosted& h, collectives::peer_link& link, std::uint32_t n,
                  const collectives::op_context& parts) {
  const auto t = wire::receive_struct<wire::ring_head>(link, n, wire::ring, parts);
  if (t.prefix_bytes == 0 || t.prefix_bytes > 4096 || t.size < 2 || t.rank < 1 ||
      t.rank >= t.size || t.transport > 2)
    throw collectives::collective_error(
        collectives::failure_kind::protocol, link.peer(),
        "peer " + link.peer().describe() + " sent a ring head out of range (rank " +
            std::to_string(t.rank) + " of " + std::to_string(t.size) + ")");
  std::vector<char> prefix;
  take(link, n, wire::ring_prefix, prefix, static_cast<std::size_t>(t.prefix_bytes), parts);
  ring_turn turn;
  turn.prefix.assign(prefix.begin(), prefix.end());
  turn.job = t.job;
  turn.generation = t.generation;
  turn.step = t.step;
  turn.rank = t.rank;
  turn.size = t.size;
  turn.transport = static_cast<ring_transport>(t.transport);
  turn.contributed = t.contributed != 0;
  turn.samples = t.samples;
  turn.total_samples = t.total_samples;
  turn.deadline_seconds = t.deadline_seconds;
  turn.block = t.block;
  wire::reply_head r;
  std::string error;
  try {
    r.ring_seconds = h.replica.reduce(turn, *h.store, h.data_host, h.stop);
  } catch (const std::exception& e) {
    error = std::string("reduce: ") + e.what();
  }
  answer(link, n, r, error, parts);
  link.flush(parts);
}

// One call: its parts in, the device run, the answer out. A failure of the model or device
// goes back as the answer's error; a broken peer throws.
void serve_call(hosted& h, collectives::peer_link& link, std::uint32_t n,
                const wire::request_head& head, const collectives::op_context& parts) {
  const auto kind = static_cast<wire::call_kind>(head.kind);
  if (head.kind < 1 || head.kind > 5)
    throw collectives::collective_error(
        collectives::failure_kind::protocol, link.peer(),
        "peer " + link.peer().describe() + " asked for call kind " + std::to_string(head.kind));
  if (head.features != h.features || head.params != h.model->param_count())
    throw collectives::collective_error(
        collectives::failure_kind::protocol, link.peer(),
        "peer " + link.peer().describe() + " asked for " + std::to_string(head.features) +
            " features and " + std::to_string(head.params) + " parameters; this model has " +
            std::to_string(h.features) + " and " + std::to_string(h.model->param_count()));
  if (h.features > 0 &&
      head.rows > std::numeric_limits<std::size_t>::max() / sizeof(float) / h.features)
    throw collectives::collective_error(collectives::failure_kind::protocol, link.peer(),
                                        "peer " + link.peer().describe() + " asked for " +
                                            std::to_string(head.rows) + " rows of " +
                                            std::to_string(h.features) + " features");
  // A sum per block: bounded, so a peer's head cannot make this host allocate without limit.
  constexpr std::uint64_t max_block_floats = std::uint64_t{1} << 30;
  if (head.block > 0 && (head.rows + head.block - 1) / head.block >
                            max_block_floats / std::max<std::uint64_t>(1, head.params))
    throw collectives::collective_error(collectives::failure_kind::protocol, link.peer(),
                                        "peer " + link.peer().describe() + " asked for blocks of " +
                                            std::to_string(head.block) + " of " +
                                            std::to_string(head.rows) + " rows: more than " +
                                            std::to_string(max_block_floats) + " gradient floats");
  if (kind == wire::call_kind::sync) return serve_sync(h, link, n, parts);
  if (kind == wire::call_kind::reduce) return serve_reduce(h, link, n, parts);
  const bool kept = kind == wire::call_kind::kept_step;
  const auto rows = static_cast<std::size_t>(head.rows);
  if (!kept) take(link, n, wire::params, h.params, h.model->param_count(), parts);
  take(link, n, wire::rows, h.x, rows * h.features, parts);
  models::batch b;
  b.x = h.x.data();
  b.size = rows;
  if (head.flags & wire::has_labels) {
    take(link, n, wire::labels, h.labels, rows, parts);
    b.labels = h.labels.data();
  }
  if (head.flags & wire::has_targets) {
    take(link, n, wire::targets, h.targets, rows, parts);
    b.targets = h.targets.data();
  }
  if (head.flags & wire::has_weights) {
    take(link, n, wire::weights, h.weights, rows, parts);
    b.weights = h.weights.data();
  }
  if (head.flags & wire::wants_sample_loss) {
    h.sample_loss.assign(rows, 0.0f);
    b.sample_loss = h.sample_loss.data();
  }
  const bool step = kind == wire::call_kind::step;
  wire::reply_head r;
  std::string error;
  devices::step_timing timing;
  timing.start_lag_seconds = head.start_lag_seconds;
  try {
    h.device->set_share("remote", head.share);
    models::step_stats s;
    if (kept) {
      if (!h.replica.loaded()) throw runtime_failure("no replica here to compute on");
      const std::size_t n_params = h.model->param_count();
      if (head.block > 0) {
        const auto block = static_cast<std::size_t>(head.block);
        const std::size_t blocks = (rows + block - 1) / block;
        float* g = h.replica.slice_blocks(head.step, head.first_block, blocks);
        s = h.device->run_blocks(*h.model, h.replica.params(), b, h.features, block, g, &timing);
        r.grad_sq = block_sums_sq_norm(g, blocks, n_params, h.grad);
      } else {
        float* g = h.replica.slice_gradient(head.step);
        s = h.device->run_step(*h.model, h.replica.params(), b, g, &timing);
        r.grad_sq = collectives::sq_norm(g, n_params);
        h.replica.keep(head.step);
      }
    } else if (step && head.block > 0) {
      const std::size_t blocks = (rows + head.block - 1) / head.block;
      h.grad.resize(blocks * h.model->param_count());
      s = h.device->run_blocks(*h.model, h.params.data(), b, h.features,
                               static_cast<std::size_t>(head.block), h.grad.data(), &timing);
    } else if (step) {
      h.grad.resize(h.model->param_count());
      s = h.device->run_step(*h.model, h.params.data(), b, h.grad.data(), &timing);
    } else {
      s = h.device->run_eval(*h.model, h.params.data(), b, &timing);
    }
    r.loss_sum = s.loss_sum;
    r.samples = s.samples;
    r.correct = s.correct;
    r.compute_seconds = timing.compute_seconds;
    r.gate_wait_seconds = timing.gate_wait_seconds;
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "?";
  }
  answer(link, n, r, error, parts);
  if (error.empty()) {
    if (step)
      link.post(wire::tag(n, wire::gradient, h.grad.size() * sizeof(float)), h.grad.data(), parts);
    if (b.sample_loss)
      link.post(wire::tag(n, wire::sample_loss, rows * sizeof(float)), h.sample_loss.data(), parts);
  }
  link.flush(parts);  // the buffers are reused by the next call
}

}  // namespace

worker_hosts::worker_hosts(caf::actor_system& sys, std::string data_host,
                           std::function<void(const std::string&)> log,
                           std::shared_ptr<agent_status> status)
    : sys_(sys),
      data_host_(std::move(data_host)),
      log_(std::move(log)),
      status_(std::move(status)) {}

worker_hosts::~worker_hosts() {
  end_all("the agent is exiting");
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& t : threads_)
    if (t.thread.joinable()) t.thread.join();
}

void worker_hosts::end_all(const std::string& why) {
  stop_->abort(why);
}

void worker_hosts::abort_ring(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = replicas_.begin(); it != replicas_.end();) {
    if (auto r = it->lock()) {
      r->abort_ring(prefix);
      ++it;
    } else {
      it = replicas_.erase(it);
    }
  }
}

int worker_hosts::serving() const {
  return serving_->load();
}

msg::host_answer worker_hosts::host(const msg::host_worker& w) {
  msg::host_answer a;
  a.data_host = data_host_;
  std::shared_ptr<hosted> h;
  try {
    if (!w.store) throw input_error("no rendezvous store in the request");
    const auto& spec = w.model;
    auto model = models::make_model(spec);
    h = std::make_shared<hosted>(w.optimizer, model->param_count(), w.codec);
    h->device = devices::make_device(w.device);
    h->model = std::move(model);
    h->features = spec.input_size();
  } catch (const std::exception& e) {
    a.reason = e.what();
    log_("cannot host " + w.device.name + ": " + a.reason);
    return a;
  }
  a.accepted = true;
  a.capability = h->device->capability();
  // A new run after a lost control process: the old stop no longer applies.
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_->aborted()) stop_ = std::make_shared<collectives::abort_signal>();
  const auto stop = stop_;
  for (auto it = threads_.begin(); it != threads_.end();) {
    if (!it->done->load()) {
      ++it;
      continue;
    }
    it->thread.join();
    it = threads_.erase(it);
  }
  ++*serving_;
  if (status_) {
    ++status_->workers_hosted;
    ++status_->serving;
  }
  replicas_.push_back(std::shared_ptr<hosted_replica>(h, &h->replica));
  serving_thread t;
  t.thread = std::thread([this, w, h, stop, serving = serving_, done = t.done, status = status_] {
    const std::string who = w.device.name;
    try {
      collectives::actor_store store{sys_, w.store};
      auto comm = collectives::zmq_connect(wire::link_options(
          1, w.prefix, store, w.control_host, data_host_, data_host_, connect_within));
      collectives::close_on_throw guard{comm};
      h->store = &store;
      h->data_host = data_host_;
      h->stop = stop;
      auto& link = comm.link(0);
      log_("serving " + who + " for " + link.peer().describe());
      for (std::uint32_t n = 1;; ++n) {
        // Between calls the worker may be idle for long (evaluation, other jobs): no deadline,
        // but the link's close and the agent's stop end the wait.
        collectives::op_context idle;
        idle.op_name = who;
        idle.abort = stop;
        const auto head = wire::receive_struct<wire::request_head>(link, n, wire::request, idle);
        collectives::op_context parts = idle;
        parts.deadline = steady::now() + parts_within;
        serve_call(*h, link, n, head, parts);
        if (status) ++status->calls;
      }
    } catch (const collectives::collective_error& e) {
      if (e.kind() == collectives::failure_kind::peer_closed)
        log_("done serving " + who + ": the control process closed the link");
      else
        log_("stopped serving " + who + ": " + e.what());
    } catch (const std::exception& e) {
      log_("stopped serving " + who + ": " + e.what());
    }
    --*serving;
    if (status) --status->serving;
    done->store(true);
  });
  threads_.push_back(std::move(t));
  return a;
}

}  // namespace troupe::actors
