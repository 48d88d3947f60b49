#include "actors/worker_host.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>

#include "actors/remote_wire.hpp"
#include "collectives/communicator.hpp"
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

devices::device_spec device_of(const msg::host_worker& w) {
  devices::device_spec d;
  d.kind = w.device;
  d.name = w.device_name;
  d.threads = w.threads;
  d.base = w.base;
  d.slowdown = w.slowdown;
  d.row_seconds = w.row_seconds;
  return d;
}

models::model_spec model_of(const msg::host_worker& w) {
  models::model_spec m;
  m.kind = w.model;
  m.input_shape.assign(w.input_shape.begin(), w.input_shape.end());
  m.classes = static_cast<std::size_t>(w.classes);
  m.hidden.assign(w.hidden.begin(), w.hidden.end());
  m.conv_layers = static_cast<std::size_t>(w.conv_layers);
  m.kernel = static_cast<std::size_t>(w.kernel);
  return m;
}

struct hosted {
  std::unique_ptr<devices::device> device;
  std::unique_ptr<models::model> model;
  std::size_t features = 0;
  // Buffers reused by every call.
  std::vector<float> params, x, targets, weights, grad, sample_loss;
  std::vector<std::int32_t> labels;
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

// One call: its parts in, the device run, the answer out. A failure of the model or device
// goes back as the answer's error; a broken peer throws.
void serve_call(hosted& h, collectives::peer_link& link, std::uint32_t n,
                const wire::request_head& head, const collectives::op_context& parts) {
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
  const auto rows = static_cast<std::size_t>(head.rows);
  take(link, n, wire::params, h.params, h.model->param_count(), parts);
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
  const bool step = head.kind == static_cast<std::uint32_t>(wire::call_kind::step);
  wire::reply_head r;
  std::string error;
  devices::step_timing timing;
  timing.start_lag_seconds = head.start_lag_seconds;
  try {
    h.device->set_share("remote", head.share);
    models::step_stats s;
    if (step) {
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
    r.error_bytes = error.size() ? error.size() : 1;
    if (error.empty()) error = "?";
  }
  link.post(wire::tag(n, wire::reply, sizeof r), &r, parts);
  if (!error.empty()) {
    link.post(wire::tag(n, wire::error_text, error.size()), error.data(), parts);
  } else {
    if (step)
      link.post(wire::tag(n, wire::gradient, h.grad.size() * sizeof(float)), h.grad.data(), parts);
    if (b.sample_loss)
      link.post(wire::tag(n, wire::sample_loss, rows * sizeof(float)), h.sample_loss.data(), parts);
  }
  link.flush(parts);  // the buffers are reused by the next call
}

}  // namespace

worker_hosts::worker_hosts(caf::actor_system& sys, std::string data_host,
                           std::function<void(const std::string&)> log)
    : sys_(sys), data_host_(std::move(data_host)), log_(std::move(log)) {}

worker_hosts::~worker_hosts() {
  end_all("the agent is exiting");
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& t : threads_)
    if (t.thread.joinable()) t.thread.join();
}

void worker_hosts::end_all(const std::string& why) {
  stop_->abort(why);
}

int worker_hosts::serving() const {
  return serving_->load();
}

msg::host_answer worker_hosts::host(const msg::host_worker& w) {
  msg::host_answer a;
  a.data_host = data_host_;
  auto h = std::make_shared<hosted>();
  try {
    if (!w.store) throw input_error("no rendezvous store in the request");
    const auto spec = model_of(w);
    h->device = devices::make_device(device_of(w));
    h->model = models::make_model(spec);
    h->features = spec.input_size();
  } catch (const std::exception& e) {
    a.reason = e.what();
    log_("cannot host " + w.device_name + ": " + a.reason);
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
  serving_thread t;
  t.thread = std::thread([this, w, h, stop, serving = serving_, done = t.done] {
    const std::string who = w.device_name;
    try {
      collectives::actor_store store{sys_, w.store};
      auto comm = collectives::zmq_connect(wire::link_options(
          1, w.prefix, store, w.control_host, data_host_, data_host_, connect_within));
      collectives::close_on_throw guard{comm};
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
    done->store(true);
  });
  threads_.push_back(std::move(t));
  return a;
}

}  // namespace troupe::actors
