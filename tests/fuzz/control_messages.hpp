#pragma once
// The control messages that travel between processes over CAF's middleman, in the order the
// control_messages fuzz target's first input byte picks them (modulo their count); the seed
// writer (make_seeds.cpp) uses the same order. The last entry is a whole caf::message, as the
// middleman reads one off the wire: its type names pick any type the id blocks register.
#include <caf/message.hpp>

#include "actors/common/messages.hpp"
#include "collectives/store_messages.hpp"

namespace troupe::fuzz {

enum class control_message : std::uint8_t {
  agent_hello,
  agent_answer,
  host_worker,
  host_answer,
  store_value,
  store_keys,
  any_message,
  count
};

}  // namespace troupe::fuzz
