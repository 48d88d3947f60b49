#include "actors/agents/agent_roster.hpp"

#include <doctest/doctest.h>

using namespace troupe;
using troupe::actors::agent_roster;
using troupe::actors::join_tickets;

namespace {

msg::agent_hello hello(std::string name, std::string group, std::string version = "1.2.3",
                       std::int64_t pid = 7) {
  msg::agent_hello h;
  h.version = std::move(version);
  h.name = std::move(name);
  h.group = std::move(group);
  h.host = "h";
  h.pid = pid;
  return h;
}

}  // namespace

TEST_CASE("agent roster: who may join, and why not") {
  agent_roster r("1.2.3");
  const auto first = r.join(hello("a1", "g1"));
  REQUIRE(first.accepted);
  CHECK(first.member == 1);
  struct row {
    msg::agent_hello h;
    const char* why;  // in the refusal
  };
  const row refused[] = {
      {hello("a2", "g2", "9.9.9"), "Troupe version 9.9.9 cannot join version 1.2.3"},
      {hello("a1", "g2", "1.2.3", 8), "an agent named 'a1' has joined already"},
      {hello("a2", "g1"), "group 'g1' is hosted already by agent 'a1'"},
      {hello("", "g2"), "agent name"},
      {hello("a2", "g/2"), "group name"},
      {hello(std::string(65, 'a'), "g2"), "agent name"},
  };
  for (const auto& t : refused) {
    CAPTURE(t.why);
    const auto a = r.join(t.h);
    CHECK_FALSE(a.accepted);
    CHECK(a.reason.find(t.why) != std::string::npos);
  }
  auto zero = hello("a2", "g2");
  zero.count = 0;
  CHECK(r.join(zero).reason.find("count and threads") != std::string::npos);
  CHECK(r.size() == 1);
  // A lost agent leaves; the same name and group then join again, as a new member.
  REQUIRE(r.leave(first.member));
  CHECK_FALSE(r.leave(first.member));
  const auto again = r.join(hello("a1", "g1"));
  CHECK(again.accepted);
  CHECK(again.member == 2);
}

TEST_CASE("agent roster: the same agent joining again replaces its earlier membership") {
  agent_roster r("1.2.3");
  const auto first = r.join(hello("a1", "g1"));
  REQUIRE(first.accepted);
  REQUIRE(r.join(hello("b1", "g2")).accepted);
  // Its first answer came too late for the agent, which started over: same host and process.
  std::optional<troupe::actors::joined_agent> replaced;
  const auto again = r.join(hello("a1", "g1"), &replaced);
  REQUIRE(again.accepted);
  CHECK(again.member == 3);
  REQUIRE(replaced);
  CHECK(replaced->member == first.member);
  CHECK(r.size() == 2);
  CHECK_FALSE(r.leave(first.member));
  // Another process under that name is still refused, and replaces nothing.
  replaced.reset();
  const auto other = r.join(hello("a1", "g1", "1.2.3", 99), &replaced);
  CHECK_FALSE(other.accepted);
  CHECK(other.reason.find("has joined already") != std::string::npos);
  CHECK_FALSE(replaced);
  // A refused rejoin (here: a group it may not host) keeps the earlier membership.
  auto moved = hello("a1", "g2");
  CHECK_FALSE(r.join(moved, &replaced).accepted);
  CHECK_FALSE(replaced);
  CHECK(r.size() == 2);
  // Without a process id (not a real agent) a name is never taken for the same agent.
  auto anon = hello("c1", "g3", "1.2.3", 0);
  REQUIRE(r.join(anon).accepted);
  CHECK_FALSE(r.join(hello("c1", "g4", "1.2.3", 0)).accepted);
}

TEST_CASE("agent roster: a join ticket works once, for the agent it was issued to") {
  auto tickets = std::make_shared<join_tickets>();
  agent_roster r("1.2.3", tickets);
  auto h = hello("a1", "g1");
  CHECK(r.join(h).reason.find("no valid join ticket") != std::string::npos);
  h.ticket = tickets->issue("someone-else");
  CHECK_FALSE(r.join(h).accepted);  // issued to another name (and now used up)
  h.ticket = tickets->issue("a1");
  const auto first = r.join(h);
  CHECK(first.accepted);
  REQUIRE(r.leave(first.member));
  // The same hello again (replayed): its ticket is used.
  CHECK(r.join(h).reason.find("no valid join ticket") != std::string::npos);
  // An expired ticket is refused.
  auto brief = std::make_shared<join_tickets>(-1.0);
  agent_roster late("1.2.3", brief);
  h.ticket = brief->issue("a1");
  CHECK_FALSE(late.join(h).accepted);
  // A registry without tickets (in one process) takes any.
  agent_roster open("1.2.3");
  CHECK(open.join(hello("a2", "g2")).accepted);
}

TEST_CASE("agent roster: a log line names the agent, its group and where it runs") {
  auto h = hello("a1", "g1");
  h.count = 2;
  h.host = std::string(500, 'h');  // from the network: cut, not echoed whole
  const auto line = actors::describe(h);
  CHECK(line.find("agent a1 (group g1: 2 cpu devices, 1 thread each, host hhh") == 0);
  CHECK(line.size() < 200);
}
