// A worker whose replica lives in the agent (sync: allreduce across processes): this test, as
// the control process, sends the replica down (parameters and a momentum optimizer's state),
// computes a step on it there, and reduces with the agent in a two-rank ring; the agent's
// replica must then hold what the same update gives here. Calls out of order are answered with
// an error; a reduce call with a ring that cannot be ends that link only.
#include <doctest/doctest.h>

#include <cmath>
#include <thread>

#include "actors/agents/worker_host.hpp"
#include "actors/agents/worker_host_testing.hpp"
#include "actors/sync/process_ring.hpp"
#include "collectives/inproc/reduce_kernel.hpp"
#include "models/optimizer.hpp"

using namespace troupe;
using namespace troupe::actors::testing;
using actors::ring_transport;

namespace {

models::optimizer_spec momentum() {
  models::optimizer_spec o;
  o.kind = "momentum";
  o.lr = 0.1;
  o.momentum = 0.9;
  return o;
}

msg::host_worker with_optimizer(msg::host_worker w) {
  w.optimizer = momentum();
  return w;
}

// The replica as the control process sends it: parameters, 3 steps taken, a velocity.
struct replica_parts {
  wire::request_head head;
  std::vector<float> params, velocity;
  wire::optimizer_head optimizer;
};

replica_parts replica_of(const call_parts& c) {
  replica_parts r;
  r.head.kind = static_cast<std::uint32_t>(wire::call_kind::sync);
  r.head.features = features;
  r.head.params = c.params.size();
  r.params = c.params;
  for (std::size_t i = 0; i < c.params.size(); ++i)
    r.velocity.push_back(0.01f * static_cast<float>(i % 5) - 0.02f);
  r.optimizer.steps = 3;
  r.optimizer.buffers = 1;
  return r;
}

void send_replica(collectives::peer_link& link, std::uint32_t n, const replica_parts& r,
                  const collectives::op_context& ctx) {
  link.post(wire::tag(n, wire::request, sizeof r.head), &r.head, ctx);
  link.post(wire::tag(n, wire::params, r.params.size() * sizeof(float)), r.params.data(), ctx);
  link.post(wire::tag(n, wire::optimizer, sizeof r.optimizer), &r.optimizer, ctx);
  link.post(wire::tag(n, wire::optimizer_buffers, r.velocity.size() * sizeof(float)),
            r.velocity.data(), ctx);
  link.flush(ctx);
}

// A kept_step call of `step` with c's rows (no parameters: the agent's replica computes).
wire::reply_head kept_step(collectives::peer_link& link, std::uint32_t n, const call_parts& c,
                           std::int64_t step) {
  const auto ctx = within(30s);
  auto head = c.head;
  head.kind = static_cast<std::uint32_t>(wire::call_kind::kept_step);
  head.step = step;
  link.post(wire::tag(n, wire::request, sizeof head), &head, ctx);
  link.post(wire::tag(n, wire::rows, c.x.size() * sizeof(float)), c.x.data(), ctx);
  link.post(wire::tag(n, wire::labels, c.labels.size() * sizeof(std::int32_t)), c.labels.data(),
            ctx);
  link.flush(ctx);
  return wire::receive_struct<wire::reply_head>(link, n, wire::reply, ctx);
}

std::string error_text(collectives::peer_link& link, std::uint32_t n) {
  std::string text;
  link.receive(
      wire::tag(n, wire::error_text),
      [&](const std::byte* piece, std::size_t bytes, std::size_t, std::size_t) {
        text.append(reinterpret_cast<const char*>(piece), bytes);
      },
      within(30s));
  return text;
}

// A reduce call: ring rank 1 of 2 under `prefix`.
struct reduce_parts {
  wire::request_head head;
  wire::ring_head ring;
  std::string prefix;
};

reduce_parts reduce_call(const call_parts& c, const std::string& prefix, std::int64_t total) {
  reduce_parts r;
  r.head.kind = static_cast<std::uint32_t>(wire::call_kind::reduce);
  r.head.features = features;
  r.head.params = c.params.size();
  r.ring.job = 1;
  r.ring.generation = 1;
  r.ring.step = 0;
  r.ring.rank = 1;
  r.ring.size = 2;
  r.ring.transport = static_cast<std::uint32_t>(ring_transport::tcp);
  r.ring.contributed = 1;
  r.ring.samples = rows;
  r.ring.total_samples = total;
  r.ring.deadline_seconds = 30;
  r.prefix = prefix;
  r.ring.prefix_bytes = prefix.size();
  return r;
}

void post_reduce(collectives::peer_link& link, std::uint32_t n, const reduce_parts& r,
                 const collectives::op_context& ctx) {
  link.post(wire::tag(n, wire::request, sizeof r.head), &r.head, ctx);
  link.post(wire::tag(n, wire::ring, sizeof r.ring), &r.ring, ctx);
  link.post(wire::tag(n, wire::ring_prefix, r.prefix.size()), r.prefix.data(), ctx);
}

}  // namespace

TEST_CASE_FIXTURE(host_fixture, "a replica in the agent: sync, a kept step, a ring, the update") {
  const auto c = good_call();
  auto comm = host_and_connect(with_optimizer(worker("replica/0")));
  auto& link = comm.link(1);

  // Out of order: no replica to compute on yet. An error answer, and the link stays.
  const auto early = kept_step(link, 1, c, 0);
  REQUIRE(early.error_bytes > 0);
  CHECK(error_text(link, 1).find("no replica here") != std::string::npos);

  const auto r = replica_of(c);
  send_replica(link, 2, r, within(30s));
  const auto synced = wire::receive_struct<wire::reply_head>(link, 2, wire::reply, within(30s));
  REQUIRE(synced.error_bytes == 0);

  // The step on the replica: the stats and |gradient|^2 of the same step here.
  const auto step = kept_step(link, 3, c, 0);
  REQUIRE(step.error_bytes == 0);
  models::step_stats here;
  const auto g = local_gradient(c, here);
  CHECK(step.samples == rows);
  CHECK(step.loss_sum == doctest::Approx(here.loss_sum).epsilon(1e-6));
  CHECK(step.grad_sq == doctest::Approx(collectives::sq_norm(g.data(), g.size())).epsilon(1e-5));

  // The ring: this process is rank 0 with a gradient of its own over 2 samples.
  std::vector<float> mine(c.params.size() + 1);
  for (std::size_t i = 0; i < c.params.size(); ++i) mine[i] = 0.5f - 0.001f * float(i % 13);
  mine.back() = 2.0f;
  const auto red = reduce_call(c, "test/replica/ring", rows + 2);
  collectives::actor_store store{sys, store_actor};
  double total = 0;
  std::string ring_error;
  std::thread rank0([&] {
    try {
      auto ring = actors::connect_ring(ring_transport::tcp, 0, 2, red.prefix, store, "127.0.0.1",
                                       steady::now() + 30s);
      total = actors::ring_reduce_mean(ring, 1, 1, mine, steady::now() + 30s, nullptr);
      ring.close();
    } catch (const std::exception& e) {
      ring_error = e.what();
    }
  });
  const auto ctx = within(30s);
  post_reduce(link, 4, red, ctx);
  const auto reduced = wire::receive_struct<wire::reply_head>(link, 4, wire::reply, ctx);
  link.flush(ctx);
  rank0.join();
  REQUIRE_MESSAGE(ring_error.empty(), ring_error);
  REQUIRE(reduced.error_bytes == 0);
  CHECK(total == rows + 2);
  CHECK(reduced.ring_seconds >= 0);

  // The same update here: the momentum optimizer from the sent state, the ring's mean.
  auto opt = models::make_optimizer(momentum(), c.params.size());
  auto state = opt->state();
  state.step = r.optimizer.steps;
  state.buffers = {r.velocity};
  opt->load_state(state);
  auto expected = c.params;
  opt->step(expected.data(), mine.data());
  // The agent's replica computes the next step: its loss is the loss at those parameters.
  auto at_expected = c;
  at_expected.params = expected;
  models::step_stats want;
  local_gradient(at_expected, want);
  const auto next = kept_step(link, 5, c, 1);
  REQUIRE(next.error_bytes == 0);
  CHECK(next.loss_sum == doctest::Approx(want.loss_sum).epsilon(1e-9));
  CHECK(next.loss_sum != doctest::Approx(here.loss_sum).epsilon(1e-9));  // it did move
  comm.close();
  CHECK(serving_drops_to(0));
}

TEST_CASE_FIXTURE(host_fixture, "a reduce call with a ring that cannot be ends only that link") {
  const auto c = good_call();
  auto comm = host_and_connect(with_optimizer(worker("ringbad/0")));
  const std::string us = peer_name("ringbad/0");
  auto bad = reduce_call(c, "test/replica/bad", rows);
  SUBCASE("rank 0 is the control process's") {
    bad.ring.rank = 0;
  }
  SUBCASE("a rank beyond the ring") {
    bad.ring.rank = 2;
  }
  SUBCASE("an unknown transport") {
    bad.ring.transport = 7;
  }
  post_reduce(comm.link(1), 1, bad, within(30s));
  REQUIRE_MESSAGE(serving_drops_to(0), log.all());
  const std::string line = log.starting("stopped serving ringbad/0: ");
  INFO("log:\n" << log.all());
  CHECK(line.find(us) != std::string::npos);
  CHECK(line.find("ring head out of range") != std::string::npos);
  comm.close();
}

TEST_CASE_FIXTURE(host_fixture, "an unknown call kind ends only that link") {
  auto bad = good_call();
  bad.head.kind = 9;
  check_bad_call_ends_only_its_link(*this, bad, "asked for call kind 9");
}
