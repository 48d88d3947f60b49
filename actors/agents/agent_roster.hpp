#pragma once
// Who has joined the control process: the rules of admission, without CAF. The agent_registry
// actor feeds it hellos and losses; it answers what the registry sends back.
//
// An agent is admitted when it speaks this Troupe version, brings a join ticket the join
// endpoint issued to its name (when the run has tickets; each works once) and neither its name
// nor its group is
// taken by an agent still joined. When the run's config names the groups that agents host
// (`process: agent` or `separate`), only those may join, each with the config's device kind and
// count. A lost agent (its process died, hung past the heartbeat
// timeout, or was cut off) leaves the roster, so the same agent may join again as a new member.
// A hello from the host and process of an agent still joined under that name is the same agent
// joining again before its loss was seen (the answer to its first hello missed the agent's
// deadline, so it started over): its earlier membership ends and the hello is judged anew.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memory>

#include "actors/agents/join_tickets.hpp"
#include "actors/common/messages.hpp"

namespace troupe::actors {

// A group of the config that an agent hosts.
struct expected_group {
  std::string name;
  device_kind device = device_kind::cpu;
  std::int32_t count = 1;
};

struct joined_agent {
  msg::agent_hello hello;
  std::int64_t member = 0;
};

class agent_roster {
 public:
  // `tickets` null: any hello is taken (an in-process registry, the unit tests).
  explicit agent_roster(std::string version, std::shared_ptr<join_tickets> tickets = nullptr,
                        std::vector<expected_group> groups = {})
      : version_(std::move(version)), tickets_(std::move(tickets)), groups_(std::move(groups)) {}

  // Admits `h` (accepted, with its member number) or refuses it, naming why. When it admits the
  // same agent joining again, the earlier membership leaves and goes to `*replaced`.
  msg::agent_answer join(const msg::agent_hello& h,
                         std::optional<joined_agent>* replaced = nullptr);
  // The agent with this member number left; returns it, or nothing when it was not joined.
  std::optional<joined_agent> leave(std::int64_t member);

  const std::vector<joined_agent>& agents() const { return agents_; }
  std::size_t size() const { return agents_.size(); }

 private:
  std::string version_;
  std::shared_ptr<join_tickets> tickets_;
  std::vector<expected_group> groups_;  // empty: any group
  std::vector<joined_agent> agents_;
  std::int64_t next_member_ = 1;
};

// One log line for an agent: "agent a1 (group g: 2 cpu devices, 1 thread each, host h pid 7)".
std::string describe(const msg::agent_hello& h);

}  // namespace troupe::actors
