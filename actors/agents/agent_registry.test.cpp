#include "actors/agents/agent_registry.hpp"

#include <doctest/doctest.h>

#include "actors/common/actor_testing.hpp"

using namespace troupe;
using namespace troupe::actors;

namespace {

using answers = std::vector<msg::agent_answer>;

// Says hello once and keeps the answer; stays alive until told to exit (its down is what the
// registry watches).
caf::behavior hello_once(caf::event_based_actor* self, caf::actor registry, msg::agent_hello h,
                         std::shared_ptr<answers> out) {
  self->request(registry, std::chrono::seconds(10), std::move(h))
      .then([out](const msg::agent_answer& a) { out->push_back(a); });
  return {[](std::int32_t) {}};
}

msg::agent_hello hello(std::int64_t pid) {
  msg::agent_hello h;
  h.version = troupe_version();
  h.name = "a1";
  h.group = "g1";
  h.host = "h";
  h.pid = pid;
  return h;
}

std::size_t lines_with(const std::vector<std::string>& lines, const std::string& part) {
  std::size_t n = 0;
  for (const auto& l : lines) n += l.find(part) != std::string::npos ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE(
    "agent registry: an agent that joins again from the same process ends its earlier "
    "session") {
  testing::deterministic_system ds;
  auto lines = std::make_shared<std::vector<std::string>>();
  agent_registry_options o;
  o.version = troupe_version();
  o.log = [lines](const std::string& l) { lines->push_back(l); };
  o.records = std::make_shared<agent_records>();
  auto registry = ds.sys.spawn(agent_registry, o);
  auto got = std::make_shared<answers>();

  // The first session: its answer came (here) but, say, after the agent's deadline.
  auto first = ds.sys.spawn(hello_once, registry, hello(7), got);
  ds.sched.run();
  REQUIRE(got->size() == 1);
  REQUIRE(got->at(0).accepted);
  // The agent started over before the registry saw the first session end.
  auto second = ds.sys.spawn(hello_once, registry, hello(7), got);
  ds.sched.run();
  REQUIRE(got->size() == 2);
  CHECK(got->at(1).accepted);
  CHECK(got->at(1).member == got->at(0).member + 1);
  CHECK(lines_with(*lines, "lost agent a1") == 1);
  CHECK(lines_with(*lines, "joined again") == 1);
  {
    std::lock_guard<std::mutex> lock(o.records->mu);
    REQUIRE(o.records->list.size() == 2);
    CHECK(o.records->list[0].lost_reason.find("joined again") != std::string::npos);
    CHECK(o.records->list[1].lost_reason.empty());
  }
  // Another process under the name is refused while the second session lasts.
  auto other = ds.sys.spawn(hello_once, registry, hello(8), got);
  ds.sched.run();
  REQUIRE(got->size() == 3);
  CHECK_FALSE(got->at(2).accepted);

  // The first session's end is no loss of the member that replaced it...
  caf::anon_send_exit(first, caf::exit_reason::user_shutdown);
  ds.sched.run();
  CHECK(lines_with(*lines, "lost agent a1") == 1);
  // ...the second one's is.
  caf::anon_send_exit(second, caf::exit_reason::user_shutdown);
  ds.sched.run();
  CHECK(lines_with(*lines, "lost agent a1") == 2);
  for (auto& a : {other, registry}) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  ds.sched.run();
}
