#pragma once
// The one place that knows which CAF we build against (0.17.6, Debian's libcaf-dev). Every
// call whose spelling differs between 0.17 and 1.x goes through here, so a port touches one file:
// spawning detached actors, registering our id block, the deterministic test scheduler and how
// errors carry their text.
#include <chrono>
#include <exception>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/behavior.hpp>
#include <caf/error.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>
#include <caf/spawn_options.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/common/messages.hpp"
#include "core/error.hpp"

namespace troupe::actors {

// Seconds as a CAF duration, for delayed sends and request timeouts.
inline caf::timespan to_timespan(double seconds) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(seconds));
}

template <class State>
using stateful = caf::stateful_actor<State>;

// Registers the message types of core/messages.hpp (0.17: through the config; 1.x: global meta
// objects).
inline void register_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::troupe>();
}

// The deterministic scheduler of CAF's test kit (caf::scheduler::test_coordinator): nothing runs
// until the test calls run(); time is simulated.
inline void use_test_scheduler(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("testing"));
  cfg.set("logger.inline-output", true);
}

// Spawns an actor on its own thread, off the shared scheduler: for work that blocks (model
// compute, dataset loading) so the control plane stays responsive.
template <class Parent, class F, class... Ts>
caf::actor spawn_detached(Parent* self, F fun, Ts&&... xs) {
  return self->template spawn<caf::detached>(fun, std::forward<Ts>(xs)...);
}
template <class F, class... Ts>
caf::actor spawn_detached(caf::actor_system& sys, F fun, Ts&&... xs) {
  return sys.spawn<caf::detached>(fun, std::forward<Ts>(xs)...);
}

// Errors between our actors: an input error (exit 2) or a crash (exit 1), with text. Not
// runtime_failure: inside troupe::actors that name would hide troupe::runtime_failure, and a
// `throw runtime_failure(...)` there threw a caf::error, which no std::exception handler takes.
inline caf::error input_failure(std::string text) {
  return caf::make_error(caf::sec::invalid_argument, std::move(text));
}
inline caf::error crash_failure(std::string text) {
  return caf::make_error(caf::sec::runtime_error, std::move(text));
}
inline bool is_input_failure(const caf::error& e) {
  return e.category() == caf::atom("system") &&
         e.code() == static_cast<uint8_t>(caf::sec::invalid_argument);
}
// The text given to input_failure/crash_failure, or CAF's rendering of any other error.
inline std::string failure_text(caf::actor_system& sys, const caf::error& e) {
  // No error (a normal exit, e.g. the down message of an agent that left): CAF 0.17's
  // error::context() dereferences the error's data, which a "none" error does not have.
  if (!e) return "a normal exit";
  if (e.context().match_elements<std::string>()) return e.context().get_as<std::string>(0);
  return sys.render(e);
}

// An exception that escapes a handler stops the actor. CAF's default handler turns it into a bare
// sec::runtime_error, so the monitor that reports the death could only say "runtime_error"; this
// one keeps the exception's text (and an input_error stays an input failure, exit code 2).
inline void keep_exception_text(caf::scheduled_actor* self) {
  self->set_exception_handler([](caf::scheduled_actor*, std::exception_ptr& x) -> caf::error {
    try {
      std::rethrow_exception(x);
    } catch (const troupe::input_error& e) {
      return input_failure(e.what());
    } catch (const std::exception& e) {
      return crash_failure(std::string("uncaught exception: ") + e.what());
    } catch (...) {
      return crash_failure("an uncaught exception that is not a std::exception");
    }
  });
}

}  // namespace troupe::actors
