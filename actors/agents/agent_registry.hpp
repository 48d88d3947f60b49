#pragma once
// The control process's door for agents (`troupe run --listen`): published on the middleman, it
// answers agent_hello (agent_roster's rules), watches every joined agent (a down message: its
// process died, or the middleman's heartbeat timed out on a hang or a cut link) and, when the
// run ends, tells the agents to exit (agent_bye_atom).
//
// Edges:
//   1 agent_hello          -> agent_answer; accepted: monitored, logged "joined"
//   2 down of an agent     -> leaves the roster, logged "lost" with the reason and the seconds
//                             it stayed joined. agent_leave_atom (an agent stopping on SIGTERM;
//                             with a name, `troupe drain`) first asks the task manager that the
//                             agent's group leave its jobs at their next step boundary
//                             (group_leave_atom, bounded by msg::group_leave_seconds), then does
//                             the same and answers, so the agent may exit
//   3 (agents_atom, n)     -> answered once n agents are joined (start() waits on it); a request
//                             timeout is the caller's deadline
//   4 agent_bye_atom       -> every joined agent gets agent_bye_atom; the registry quits
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/io/middleman_actor.hpp>

#include "actors/agents/agent_roster.hpp"
#include "actors/common/agent_directory.hpp"
#include "actors/common/caf_compat.hpp"
#include "actors/common/report.hpp"
#include "core/clock.hpp"

namespace troupe::actors {

// The Troupe version this build speaks (the project's version).
const char* troupe_version();

// Loads CAF's middleman with the heartbeat every side of the agent protocol uses (100 ms; a peer
// silent for 0.8 s is down). Both ends must send it: without it a hung (stopped) or cut-off peer
// never looks lost.
void use_agent_middleman(caf::actor_system_config& cfg);

// Every join and loss, for the run report; written by the registry, read by whoever holds it.
struct agent_records {
  std::mutex mu;
  std::vector<agent_report> list;
};

struct agent_registry_options {
  std::string version;  // what agents must speak
  // What a hello must bring: a ticket the join endpoint issued (null: nothing; in one process).
  std::shared_ptr<join_tickets> tickets;
  // The middleman the registry is published on: asked for a refused peer's address.
  caf::io::middleman_actor middleman;
  std::function<void(const std::string&)> log;  // one line per join, refusal and loss
  std::shared_ptr<agent_records> records;       // optional
  std::vector<expected_group> groups;           // the config's agent groups (empty: any)
  // Where the run's workers find the agent of their group (optional).
  std::shared_ptr<agent_directory> directory;
  caf::actor notify;  // gets (group_up_atom, group) on every join (the task manager)
  steady::time_point t0 = steady::now();  // the run's start, for records' times
};

caf::behavior agent_registry(caf::event_based_actor* self, agent_registry_options options);

}  // namespace troupe::actors
