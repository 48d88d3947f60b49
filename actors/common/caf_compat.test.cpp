// An exception that escapes an actor's handler: with keep_exception_text the monitor's down
// reason carries the exception's text, and an input_error stays an input failure. Without it
// CAF 0.17 reports a bare runtime_error, which is how a job failure once read in a log.
#include "actors/common/caf_compat.hpp"

#include <doctest/doctest.h>

#include <string>

#include <caf/scoped_actor.hpp>

#include "actors/common/actor_testing.hpp"

using namespace troupe;
using namespace troupe::actors;

namespace {

// Throws `what` as an input_error when `input`, else as a runtime_failure, on any int.
caf::behavior thrower(caf::event_based_actor* self, bool keep, bool input, std::string what) {
  if (keep) keep_exception_text(self);
  return {[=](int) {
    if (input) throw troupe::input_error(what);
    throw troupe::runtime_failure(what);
  }};
}

// What the monitor of a thrower learns after it handled one message: its down reason, read as
// the runtime reads one.
struct down {
  bool input_failure = false;
  std::string text;
};

down down_of(bool keep, bool input) {
  testing::deterministic_system t;
  caf::scoped_actor watcher{t.sys, true};
  auto a = t.sys.spawn(thrower, keep, input, std::string("shard 3 lost its slice"));
  watcher->monitor(a);
  watcher->send(a, 1);
  t.sched.run();
  caf::error reason;
  watcher->receive([&](const caf::down_msg& d) { reason = d.reason; },
                   caf::after(std::chrono::seconds(5)) >> [] { FAIL("no down message"); });
  REQUIRE(reason);
  return {is_input_failure(reason), failure_text(t.sys, reason)};
}

}  // namespace

TEST_CASE("keep_exception_text: the down reason names what was thrown") {
  const auto d = down_of(true, false);
  CHECK_FALSE(d.input_failure);
  CHECK(d.text == "uncaught exception: shard 3 lost its slice");
}

TEST_CASE("keep_exception_text: an input_error stays an input failure") {
  const auto d = down_of(true, true);
  CHECK(d.input_failure);
  CHECK(d.text == "shard 3 lost its slice");
}

TEST_CASE("without it, CAF keeps no text") {
  CHECK(down_of(false, false).text.find("shard 3") == std::string::npos);
}
