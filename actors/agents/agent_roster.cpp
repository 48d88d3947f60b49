#include "actors/agents/agent_roster.hpp"

#include <algorithm>
#include <cctype>

namespace troupe::actors {
namespace {

bool is_name(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

// A hello from the process of a joined agent, under its name: that agent starting over. Without
// a process id (not a real agent) a name is never taken for the same agent.
bool same_agent(const msg::agent_hello& joined, const msg::agent_hello& h) {
  return h.pid > 0 && joined.pid == h.pid && joined.host == h.host && joined.name == h.name;
}

}  // namespace

msg::agent_answer agent_roster::join(const msg::agent_hello& h,
                                     std::optional<joined_agent>* replaced) {
  msg::agent_answer a;
  const auto refuse = [&](std::string why) {
    a.reason = std::move(why);
    return a;
  };
  // The version first: a peer of another version may mean something else by every other field.
  if (h.version != version_)
    return refuse("Troupe version " + h.version.substr(0, 32) + " cannot join version " + version_ +
                  " (run the same troupe on every host)");
  if (tickets_ && !tickets_->redeem(h.ticket, h.name))
    return refuse(
        "no valid join ticket: a ticket works once, within a minute, for the agent "
        "it was issued to (a replayed hello, or one that skipped the join endpoint)");
  if (!is_name(h.name))
    return refuse("the agent name must be 1 to 64 letters, digits, '_', '-' or '.'");
  if (!is_name(h.group))
    return refuse("the group name must be 1 to 64 letters, digits, '_', '-' or '.'");
  if (h.count < 1 || h.count > 4096 || h.threads < 1 || h.threads > 4096)
    return refuse("count and threads must be between 1 and 4096");
  if (!groups_.empty()) {
    const auto g = std::find_if(groups_.begin(), groups_.end(),
                                [&](const expected_group& e) { return e.name == h.group; });
    if (g == groups_.end()) {
      std::string names;
      for (const auto& e : groups_) names += (names.empty() ? "" : ", ") + e.name;
      return refuse("this run has no group '" + h.group +
                    "' for an agent (its agent groups: " + names + ")");
    }
    if (g->device != h.device || g->count != h.count)
      return refuse("group '" + h.group + "' is " + std::to_string(g->count) + " " +
                    name_of(g->device) + " device(s) in the run's config; this agent offers " +
                    std::to_string(h.count) + " " + name_of(h.device));
  }
  auto earlier = agents_.end();
  for (auto it = agents_.begin(); it != agents_.end(); ++it) {
    const auto& j = *it;
    if (same_agent(j.hello, h)) {
      earlier = it;
      continue;
    }
    if (j.hello.name == h.name)
      return refuse("an agent named '" + h.name + "' has joined already (from " +
                    j.hello.host.substr(0, 64) + " pid " + std::to_string(j.hello.pid) + ")");
    if (j.hello.group == h.group)
      return refuse("group '" + h.group + "' is hosted already by agent '" + j.hello.name + "'");
  }
  if (earlier != agents_.end()) {
    if (replaced) *replaced = *earlier;
    agents_.erase(earlier);
  }
  a.accepted = true;
  a.member = next_member_++;
  agents_.push_back({h, a.member});
  return a;
}

std::optional<joined_agent> agent_roster::leave(std::int64_t member) {
  const auto it = std::find_if(agents_.begin(), agents_.end(),
                               [&](const joined_agent& j) { return j.member == member; });
  if (it == agents_.end()) return std::nullopt;
  auto gone = *it;
  agents_.erase(it);
  return gone;
}

std::string describe(const msg::agent_hello& h) {
  return "agent " + h.name + " (group " + h.group + ": " + std::to_string(h.count) + " " +
         name_of(h.device) + (h.count == 1 ? " device" : " devices") + ", " +
         std::to_string(h.threads) + (h.threads == 1 ? " thread" : " threads") + " each, host " +
         h.host.substr(0, 64) + " pid " + std::to_string(h.pid) + ")";
}

}  // namespace troupe::actors
