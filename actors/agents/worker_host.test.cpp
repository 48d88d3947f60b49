// The agent's side of a remote device (actors/agents/worker_host.hpp) fed by this test acting as
// the control process (rank 0 of the two-rank ZeroMQ link, actors/agents/remote_wire.hpp): a
// well-formed call is answered; bad input on the data port (a frame of the wrong size, a head that
// does not match the model, a call cut off half-way) ends only that worker's link, with a log line
// naming the peer, while another worker of the same agent goes on serving. Every wait has a
// deadline; nothing sleeps to let something happen.
#include "actors/agents/worker_host.hpp"

#include <doctest/doctest.h>

#include "actors/agents/worker_host_testing.hpp"

using namespace troupe;
using namespace troupe::actors::testing;

TEST_CASE_FIXTURE(host_fixture, "a well-formed step call gets the step's stats and gradient") {
  for (const bool same_host : {true, false}) {
    CAPTURE(same_host);  // ipc when the control process is on this host, else tcp
    const std::string name = same_host ? "ipc/0" : "tcp/0";
    auto comm = host_and_connect(worker(name, same_host));
    CHECK(peer_name(name).rfind(same_host ? "rank 0 (ipc://@" : "rank 0 (tcp://127.0.0.1:", 0) ==
          0);
    CHECK(hosts->serving() == 1);
    for (std::uint32_t n = 1; n <= 3; ++n) check_good_call(comm.link(1), n);
    comm.close();
    CHECK(serving_drops_to(0));
    CHECK(log.starting("done serving " + name + ": the control process closed the link") != "");
  }
}

TEST_CASE_FIXTURE(host_fixture, "the agent's stop ends a link that waits between calls") {
  auto comm = host_and_connect(worker("idle/0"));
  check_good_call(comm.link(1), 1);
  hosts->end_all("the test is over");
  CHECK(serving_drops_to(0));
  CHECK(log.starting("stopped serving idle/0: ").find("the test is over") != std::string::npos);
  // A host() after the stop serves again (a new run after a lost control process).
  auto again = host_and_connect(worker("again/0"));
  check_good_call(again.link(1), 1);
  again.close();
  CHECK(serving_drops_to(0));
}

TEST_CASE_FIXTURE(host_fixture, "a parameters frame of the wrong size ends only that link") {
  auto bad = good_call();
  SUBCASE("one float short") {
    bad.params.pop_back();
    check_bad_call_ends_only_its_link(*this, bad, "bytes where");
  }
  SUBCASE("one float more") {
    bad.params.push_back(1.0f);
    check_bad_call_ends_only_its_link(*this, bad, "bytes where");
  }
  SUBCASE("empty") {
    bad.params.clear();
    check_bad_call_ends_only_its_link(*this, bad, "sent 0 bytes where");
  }
}

TEST_CASE_FIXTURE(host_fixture,
                  "a request head that does not match the model ends only that link") {
  auto bad = good_call();
  SUBCASE("features") {
    bad.head.features = features - 1;
    check_bad_call_ends_only_its_link(*this, bad, "asked for 7 features");
  }
  SUBCASE("params") {
    bad.head.params += 1;
    check_bad_call_ends_only_its_link(*this, bad, "parameters; this model has");
  }
  SUBCASE("rows: more than the frames hold, absurdly many") {
    // Checked against the frames before any buffer grows: no terabyte allocation.
    bad.head.rows = std::uint64_t{1} << 40;
    check_bad_call_ends_only_its_link(*this, bad, "bytes where");
  }
  SUBCASE("rows: so many that rows x features overflows") {
    bad.head.rows = std::uint64_t{1} << 62;
    check_bad_call_ends_only_its_link(*this, bad, "rows");
  }
}

TEST_CASE_FIXTURE(host_fixture, "a call cut off after its head: the host thread ends") {
  auto comm = host_and_connect(worker("half/0"));
  check_good_call(comm.link(1), 1);
  const auto c = good_call();
  const auto ctx = within(30s);
  comm.link(1).post(wire::tag(2, wire::request, sizeof c.head), &c.head, ctx);
  comm.link(1).flush(ctx);
  comm.close();  // gone before the parameters
  REQUIRE_MESSAGE(serving_drops_to(0), log.all());
  INFO("log:\n" << log.all());
  // The goodbye ends the wait for the parameters at once ("done"); should it be lost, the
  // host's deadline for a call's parts does ("stopped ... timed out").
  CHECK((log.starting("done serving half/0: the control process closed the link") != "" ||
         log.starting("stopped serving half/0: ") != ""));
}
