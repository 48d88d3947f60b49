#pragma once
// Test helpers for the agent's side of a remote device (actors/agents/worker_host.hpp): this test
// process acts as the control process (rank 0 of the two-rank ZeroMQ link,
// actors/agents/remote_wire.hpp) of a real worker_hosts with a real store actor. Not installed.
#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/agents/remote_wire.hpp"
#include "actors/common/caf_compat.hpp"
#include "collectives/communicator.hpp"
#include "collectives/store_actor.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "core/clock.hpp"
#include "core/host_address.hpp"
#include "core/rng.hpp"
#include "devices/device.hpp"
#include "models/model.hpp"

namespace troupe::actors::testing {

using namespace std::chrono_literals;
namespace wire = troupe::actors::remote_wire;
using collectives::collective_error;
using collectives::failure_kind;

constexpr std::size_t features = 8;
constexpr std::size_t rows = 5;

// What the serving threads log, in order; they call it from their own threads.
class log_lines {
 public:
  void add(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(line);
  }
  // The first line that starts with `start`, or "" when there is none yet.
  std::string starting(const std::string& start) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& l : lines_)
      if (l.rfind(start, 0) == 0) return l;
    return "";
  }
  std::string all() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const auto& l : lines_) out += l + "\n";
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// Polls `done` until it holds or `within` has passed; returns whether it held.
template <class Pred>
bool eventually(Pred done, std::chrono::seconds within) {
  const auto until = steady::now() + within;
  while (!done()) {
    if (steady::now() >= until) return done();
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

inline models::model_spec model_spec() {
  models::model_spec m;
  m.kind = "mlp";
  m.input_shape = {features};
  m.classes = 3;
  m.hidden = {4};
  return m;
}

// One step call as actors/agents/remote_device.cpp sends it: labelled rows of the model above.
struct call_parts {
  wire::request_head head;
  std::vector<float> params, x;
  std::vector<std::int32_t> labels;
};

inline call_parts good_call() {
  const auto model = models::make_model(model_spec());
  call_parts c;
  c.head.kind = static_cast<std::uint32_t>(wire::call_kind::step);
  c.head.flags = wire::has_labels;
  c.head.rows = rows;
  c.head.features = features;
  c.head.params = model->param_count();
  c.params.resize(model->param_count());
  rng r{11};
  model->init_params(c.params.data(), r);
  for (std::size_t i = 0; i < rows * features; ++i)
    c.x.push_back(static_cast<float>(i % 7) * 0.25f - 0.5f);
  for (std::size_t i = 0; i < rows; ++i) c.labels.push_back(static_cast<std::int32_t>(i % 3));
  return c;
}

// What the same step gives in this process: the reference for the agent's answer.
inline std::vector<float> local_gradient(const call_parts& c, models::step_stats& stats) {
  devices::device_spec d;
  d.kind = device_kind::cpu;
  d.name = "reference";
  const auto device = devices::make_device(d);
  const auto model = models::make_model(model_spec());
  models::batch b;
  b.x = c.x.data();
  b.labels = c.labels.data();
  b.size = rows;
  std::vector<float> grad(model->param_count());
  stats = device->run_step(*model, c.params.data(), b, grad.data(), nullptr);
  return grad;
}

inline collectives::op_context within(std::chrono::seconds s) {
  collectives::op_context ctx;
  ctx.op_name = "test";
  ctx.deadline = steady::now() + s;
  return ctx;
}

// Posts call `n`'s parts as they are in `c` (the request head first); `flush`: waits until ZeroMQ
// has taken the buffers. A bad call is not flushed: the host may close its end before the last
// parts leave, and those then stay queued (and `c` in use) until our end is closed.
inline void send_call(collectives::peer_link& link, std::uint32_t n, const call_parts& c,
                      const collectives::op_context& ctx, bool flush = true) {
  link.post(wire::tag(n, wire::request, sizeof c.head), &c.head, ctx);
  link.post(wire::tag(n, wire::params, c.params.size() * sizeof(float)), c.params.data(), ctx);
  link.post(wire::tag(n, wire::rows, c.x.size() * sizeof(float)), c.x.data(), ctx);
  link.post(wire::tag(n, wire::labels, c.labels.size() * sizeof(std::int32_t)), c.labels.data(),
            ctx);
  if (flush) link.flush(ctx);
}

// Sends `c` as call `n` and checks the answer against the same step computed here.
inline void check_good_call(collectives::peer_link& link, std::uint32_t n) {
  const auto c = good_call();
  const auto ctx = within(30s);
  send_call(link, n, c, ctx);
  const auto r = wire::receive_struct<wire::reply_head>(link, n, wire::reply, ctx);
  REQUIRE(r.error_bytes == 0);
  CHECK(r.samples == rows);
  std::vector<float> grad(c.params.size(), -1.0f);
  link.receive_into(wire::tag(n, wire::gradient), reinterpret_cast<std::byte*>(grad.data()),
                    grad.size() * sizeof(float), ctx);
  models::step_stats here;
  const auto expected = local_gradient(c, here);
  CHECK(r.loss_sum == doctest::Approx(here.loss_sum).epsilon(1e-5));
  CHECK(r.correct == here.correct);
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < grad.size(); ++i) {
    diff += std::pow(double(grad[i]) - expected[i], 2);
    norm += std::pow(double(expected[i]), 2);
  }
  CHECK(norm > 0);
  CHECK(std::sqrt(diff) <= 1e-5 * std::sqrt(norm));
}

struct host_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::actor store_actor;
  log_lines log;
  std::unique_ptr<actors::worker_hosts> hosts;
  int serial = 0;

  static caf::actor_system_config& prepare(caf::actor_system_config& c) {
    actors::register_types(c);
    collectives::add_store_types(c);
    return c;
  }
  host_fixture()
      : sys(prepare(cfg)),
        store_actor(collectives::spawn_store_actor(sys)),
        hosts(std::make_unique<actors::worker_hosts>(
            sys, "127.0.0.1", [this](const std::string& line) { log.add(line); })) {}
  ~host_fixture() {
    hosts.reset();  // joins the serving threads, which use the store
    caf::anon_send_exit(store_actor, caf::exit_reason::user_shutdown);
  }

  // A worker of a cpu device named `name` under a prefix of its own. `same_host`: the control
  // process is on this host (ipc) or on another one (tcp on 127.0.0.1).
  msg::host_worker worker(const std::string& name, bool same_host = true) {
    msg::host_worker w;
    w.prefix = "remote/test/" + name + "/" + std::to_string(++serial);
    w.store = store_actor;
    w.control_host = same_host ? host_name() : "another-host.invalid";
    w.device.kind = device_kind::cpu;
    w.device.name = name;
    w.device.threads = 1;
    w.model = model_spec();
    return w;
  }

  // Hosts `w` and connects to it as rank 0, choosing the scheme as worker_host does.
  collectives::communicator host_and_connect(const msg::host_worker& w) {
    const auto a = hosts->host(w);
    REQUIRE_MESSAGE(a.accepted, a.reason);
    CHECK(a.data_host == "127.0.0.1");
    collectives::actor_store store{sys, store_actor};
    // The rule both ends use: the agent is on our host exactly when the request said we are on
    // its host.
    return collectives::zmq_connect(
        wire::link_options(0, w.prefix, store, w.control_host, "127.0.0.1", "127.0.0.1", 20s));
  }

  // How the host names us (rank 0), from its "serving NAME for PEER" line.
  std::string peer_name(const std::string& name) {
    const std::string start = "serving " + name + " for ";
    REQUIRE_MESSAGE(eventually([&] { return !log.starting(start).empty(); }, 20s), log.all());
    return log.starting(start).substr(start.size());
  }

  bool serving_drops_to(int n) {
    return eventually([&] { return hosts->serving() == n; }, 60s);
  }
};

// Sends `bad` as call 1 to a worker while a second worker of the same agent is connected, and
// checks that only the first link ends, with a log line naming us, and that the second worker
// still answers a good call.
inline void check_bad_call_ends_only_its_link(host_fixture& f, const call_parts& bad,
                                              const std::string& says) {
  auto broken = f.host_and_connect(f.worker("bad/0"));
  auto other = f.host_and_connect(f.worker("good/0"));
  REQUIRE(f.hosts->serving() == 2);
  const std::string us = f.peer_name("bad/0");
  CHECK(us.rfind("rank 0 (ipc://@", 0) == 0);

  send_call(broken.link(1), 1, bad, within(30s), false);
  // The host drops this link only: its thread ends, the other's goes on.
  REQUIRE_MESSAGE(f.serving_drops_to(1), f.log.all());
  const std::string line = f.log.starting("stopped serving bad/0: ");
  INFO("log:\n" << f.log.all());
  CHECK(line.find(us) != std::string::npos);
  CHECK(line.find(says) != std::string::npos);
  // No answer comes: the host closed its end (its goodbye ends our wait at once; should it
  // be lost, the deadline does).
  try {
    (void)wire::receive_struct<wire::reply_head>(broken.link(1), 1, wire::reply, within(10s));
    FAIL("the host answered a broken call");
  } catch (const collective_error& e) {
    CHECK((e.kind() == failure_kind::peer_closed || e.kind() == failure_kind::timeout));
  }
  broken.close();  // before `bad`, which the unsent parts point into, goes

  // The agent is unaffected: the other worker answers, twice.
  check_good_call(other.link(1), 1);
  check_good_call(other.link(1), 2);
  CHECK(f.hosts->serving() == 1);
  other.close();
  CHECK(f.serving_drops_to(0));
  CHECK(f.log.starting("done serving good/0: ") != "");
}

}  // namespace troupe::actors::testing
