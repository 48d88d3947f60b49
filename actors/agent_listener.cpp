#include "actors/agent_listener.hpp"

#include <caf/io/middleman.hpp>

#include "core/error.hpp"
#include "core/launcher_env.hpp"

namespace troupe::actors {

agent_listener listen_for_agents(caf::actor_system& sys, const agent_listen_options& options) {
  agent_listener out;
  const auto where = parse_join(options.address, "--listen", true);
  const auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  agent_registry_options o;
  o.version = troupe_version();
  o.token = options.token;
  o.records = out.records;
  o.t0 = options.t0;
  o.log = options.log;
  o.groups = options.groups;
  o.directory = options.directory;
  o.notify = options.notify;
  out.registry = sys.spawn(agent_registry, std::move(o));
  auto bound = sys.middleman().publish(out.registry, where.port, where.host.c_str(), true);
  if (!bound) {
    caf::anon_send_exit(out.registry, caf::exit_reason::user_shutdown);
    throw runtime_failure("--listen " + options.address +
                          ": cannot listen: " + failure_text(sys, bound.error()));
  }
  out.port = *bound;
  const auto at = where.host + ":" + std::to_string(out.port);
  log("listening for agents on " + at);
  if (options.token.empty() && !is_loopback(where.host))
    log("warning: --insecure: any host that reaches " + at + " may join, without a token");
  if (options.on_listening) options.on_listening(out.port);
  if (options.wait_agents <= 0) return out;
  caf::scoped_actor self{sys};
  std::string failure;
  self->request(out.registry, to_timespan(options.wait_seconds), msg::agents_atom_v,
                static_cast<std::int32_t>(options.wait_agents))
      .receive([](std::int32_t) {}, [&](caf::error& e) { failure = failure_text(sys, e); });
  if (!failure.empty()) {
    caf::anon_send(out.registry, msg::agent_bye_atom_v);
    throw runtime_failure("waited " + std::to_string(options.wait_seconds) + " s for " +
                          std::to_string(options.wait_agents) + " agents to join " + at + ": " +
                          failure);
  }
  return out;
}

}  // namespace troupe::actors
