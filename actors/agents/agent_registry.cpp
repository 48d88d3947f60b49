#include "actors/agents/agent_registry.hpp"

#include <map>
#include <memory>
#include <vector>

#include <caf/io/middleman.hpp>
#include <caf/response_promise.hpp>

#include "actors/agents/agent_roster.hpp"

namespace troupe::actors {
namespace {

struct registry_state {
  registry_state(std::string version, std::shared_ptr<join_tickets> tickets,
                 std::vector<expected_group> groups)
      : roster(std::move(version), std::move(tickets), std::move(groups)) {}
  agent_roster roster;
  struct watched {
    std::int64_t member = 0;
    caf::actor handle;
    steady::time_point joined;
    std::string name;
    std::string group;
  };
  std::map<caf::actor_addr, watched> joined;                            // by the agent's actor
  std::vector<std::pair<std::int32_t, caf::response_promise>> waiting;  // (agents wanted, who)
};

void answer_waiting(registry_state& st) {
  auto& w = st.waiting;
  for (auto it = w.begin(); it != w.end();) {
    if (st.roster.size() < static_cast<std::size_t>(it->first)) {
      ++it;
      continue;
    }
    it->second.deliver(static_cast<std::int32_t>(st.roster.size()));
    it = w.erase(it);
  }
}

}  // namespace

const char* troupe_version() {
  return TROUPE_VERSION;
}

void use_agent_middleman(caf::actor_system_config& cfg) {
  cfg.load<caf::io::middleman>();
  cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds(100)});
  cfg.set("middleman.connection-timeout", caf::timespan{std::chrono::milliseconds(800)});
}

caf::behavior agent_registry(caf::event_based_actor* self, agent_registry_options options) {
  auto st = std::make_shared<registry_state>(options.version, options.tickets, options.groups);
  auto log = [options](const std::string& line) {
    if (options.log) options.log(line);
  };
  // A member that left the roster: its groups' workers are lost to the run, and it is logged.
  auto report_lost = [=](const registry_state::watched& w, const joined_agent& gone,
                         const std::string& why) {
    const auto member = w.member;
    const double joined_s = seconds_since(w.joined);
    if (options.directory) options.directory->lose(member, why);
    log("lost " + describe(gone.hello) + " after " + std::to_string(joined_s) + " s: " + why);
    if (options.records) {
      std::lock_guard<std::mutex> lock(options.records->mu);
      for (auto& r : options.records->list)
        if (r.member == member) {
          r.lost_s = seconds_since(options.t0);
          r.lost_reason = why;
        }
    }
  };
  // Edge 2: an agent is gone (down: killed, hung, cut off; or it said it leaves).
  auto lose = [=](const caf::actor_addr& source, const std::string& why) {
    const auto it = st->joined.find(source);
    if (it == st->joined.end()) return;
    const auto w = it->second;
    st->joined.erase(it);
    if (const auto gone = st->roster.leave(w.member)) report_lost(w, *gone, why);
  };
  // A graceful leave: the jobs holding the agent's group let it go at their next step boundary
  // (the task manager asks them), then it leaves the roster, and `then` runs. Where a job cannot
  // or does not answer in time, the leave is a loss for it, as a crash would be.
  auto depart = [=](const caf::actor_addr& source, const std::string& why,
                    std::function<void()> then) {
    const auto it = st->joined.find(source);
    if (it == st->joined.end() || !options.notify) {
      lose(source, why);
      then();
      return;
    }
    const auto name = it->second.name;
    log("agent '" + name + "' leaves: its jobs let group '" + it->second.group +
        "' go at their next step boundary");
    self->request(options.notify, to_timespan(msg::group_leave_seconds + 5),
                  msg::group_leave_atom_v, it->second.group)
        .then(
            [=](std::int32_t jobs) {
              log("agent '" + name + "': " + std::to_string(jobs) +
                  " job(s) let its group go at a step boundary");
              lose(source, why);
              then();
            },
            [=](const caf::error&) {
              log("agent '" + name + "': its jobs did not let its group go in time");
              lose(source, why);
              then();
            });
  };
  // The same agent joined again (agent_roster::join): its earlier session is over, whether or
  // not its down message has come yet.
  auto end_earlier = [=](const joined_agent& earlier) {
    for (auto it = st->joined.begin(); it != st->joined.end(); ++it) {
      if (it->second.member != earlier.member) continue;
      const auto w = it->second;
      self->demonitor(w.handle);
      st->joined.erase(it);
      report_lost(w, earlier, "it joined again from the same process (its earlier session ended)");
      return;
    }
  };
  self->set_down_handler(
      [=](const caf::down_msg& d) { lose(d.source, failure_text(self->system(), d.reason)); });
  return {
      // Edge 1.
      [=](const msg::agent_hello& h) -> msg::agent_answer {
        const auto sender = caf::actor_cast<caf::actor>(self->current_sender());
        std::optional<joined_agent> earlier;
        const auto a = sender ? st->roster.join(h, &earlier)
                              : msg::agent_answer{false, "a hello must come from an actor", 0};
        if (earlier) end_earlier(*earlier);
        if (!a.accepted) {
          const std::string line = "refused agent '" + h.name.substr(0, 64) + "': " + a.reason;
          const auto node =
              self->current_sender() ? self->current_sender()->node() : caf::node_id{};
          if (!options.middleman || node == caf::node_id{}) {
            log(line);
            return a;
          }
          // The peer's address, as the middleman knows it (the hello's host field is its own say).
          self->request(options.middleman, std::chrono::seconds(2), caf::get_atom_v, node)
              .then(
                  [=](const caf::node_id&, const std::string& addr, std::uint16_t port) {
                    log(line + " (from " + addr + ":" + std::to_string(port) + ")");
                  },
                  [=](const caf::error&) { log(line); });
          return a;
        }
        self->monitor(sender);
        st->joined[sender.address()] = {a.member, sender, steady::now(), h.name, h.group};
        log("joined: " + describe(h));
        if (options.directory) {
          hosted_group g;
          g.agent = sender;
          g.agent_name = h.name;
          g.host = h.host;
          g.member = a.member;
          options.directory->put(h.group, std::move(g));
        }
        if (options.notify) self->send(options.notify, msg::group_up_atom_v, h.group);
        if (options.records) {
          agent_report r;
          r.name = h.name;
          r.group = h.group;
          r.device = name_of(h.device);
          r.count = h.count;
          r.threads = h.threads;
          r.host = h.host.substr(0, 64);
          r.pid = h.pid;
          r.member = a.member;
          r.joined_s = seconds_since(options.t0);
          std::lock_guard<std::mutex> lock(options.records->mu);
          options.records->list.push_back(std::move(r));
        }
        answer_waiting(*st);
        return a;
      },
      // Edge 3.
      [=](msg::agents_atom, std::int32_t wanted) -> caf::result<std::int32_t> {
        if (st->roster.size() >= static_cast<std::size_t>(wanted))
          return static_cast<std::int32_t>(st->roster.size());
        auto promise = self->make_response_promise();
        st->waiting.emplace_back(wanted, promise);
        return promise;
      },
      // Edge 2 as well: the agent leaves by itself (SIGTERM); answered once its jobs let its
      // group go, so that it may exit.
      [=](msg::agent_leave_atom) -> caf::result<msg::agent_leave_atom> {
        const auto addr =
            self->current_sender() ? self->current_sender()->address() : caf::actor_addr{};
        auto promise = self->make_response_promise();
        depart(addr, "it left the run (stopping on a signal)",
               [promise]() mutable { promise.deliver(msg::agent_leave_atom_v); });
        return promise;
      },
      // Edge 2 on the operator's word (`troupe drain AGENT`): its jobs let its group go at a
      // step boundary, then it leaves the roster and is told the run is over, so it exits 0.
      // "" once drained, else why not.
      [=](msg::agent_leave_atom, const std::string& name) -> caf::result<std::string> {
        for (const auto& [addr, w] : st->joined)
          if (w.name == name) {
            const auto handle = w.handle;
            auto promise = self->make_response_promise();
            depart(addr, "drained by the operator", [=]() mutable {
              self->send(handle, msg::agent_bye_atom_v);
              promise.deliver(std::string());
            });
            return promise;
          }
        return "no agent named '" + name + "' is joined";
      },
      // Edge 4.
      [=](msg::agent_bye_atom) {
        for (const auto& [addr, w] : st->joined) self->send(w.handle, msg::agent_bye_atom_v);
        self->quit();
      },
  };
}

}  // namespace troupe::actors
