#include "actors/agents/agent_listener.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/publish.hpp>

#include <cstdio>
#include <mutex>

#include "actors/agents/control_tls.hpp"
#include "core/error.hpp"
#include "core/launcher_env.hpp"

namespace troupe::actors {

agent_listener listen_for_agents(caf::actor_system& sys, const agent_listen_options& options) {
  agent_listener out;
  const auto where = parse_join(options.address, "--listen", true);
  const auto log = [&](const std::string& line) {
    if (options.registry.log) options.registry.log(line);
  };
  agent_registry_options o = options.registry;
  o.version = troupe_version();
  o.tickets = std::make_shared<join_tickets>();
  o.middleman = options.keys ? tls_middleman(sys) : sys.middleman().actor_handle();
  o.records = out.records;
  const auto tickets = o.tickets;
  out.registry = sys.spawn(agent_registry, std::move(o));
  // The control port, on the same interface: the one asked for, else a free one; agents learn
  // it at the join endpoint.
  const auto port = options.control_port;
  auto bound = options.keys ? caf::openssl::publish(out.registry, port, where.host.c_str(), true)
                            : sys.middleman().publish(out.registry, port, where.host.c_str(), true);
  if (!bound) {
    caf::anon_send_exit(out.registry, caf::exit_reason::user_shutdown);
    throw runtime_failure("--listen " + options.address +
                          (port ? " (--control-port " + std::to_string(port) + ")" : "") +
                          ": cannot listen: " + failure_text(sys, bound.error()));
  }
  out.control_port = *bound;
  join_endpoint_options jo;
  jo.address = options.address;
  jo.keys = options.keys;
  jo.token = options.token;
  jo.control_port = out.control_port;
  jo.tickets = tickets;
  jo.log = options.registry.log;
  try {
    out.endpoint = std::make_shared<join_endpoint>(std::move(jo));
  } catch (const std::exception& e) {
    caf::anon_send_exit(out.registry, caf::exit_reason::user_shutdown);
    throw runtime_failure("--listen " + options.address + ": cannot listen: " + e.what());
  }
  out.port = out.endpoint->port();
  const auto at = where.host + ":" + std::to_string(out.port);
  log("listening for agents on " + at);
  log(options.keys ? "agents join with the cluster's token over TLS, then hold a control "
                     "connection to port " +
                         std::to_string(out.control_port) +
                         " with mutual TLS (the cluster CA: " + options.keys->ca_path + ")"
                   : "warning: --insecure: any host that reaches " + at + " (control port " +
                         std::to_string(out.control_port) + ") may join, without a token or TLS");
  if (options.on_listening) options.on_listening(out.port);
  if (options.wait_agents <= 0) return out;
  caf::scoped_actor self{sys};
  bool joined = false;
  self->request(out.registry, to_timespan(options.wait_seconds), msg::agents_atom_v,
                static_cast<std::int32_t>(options.wait_agents))
      .receive([&](std::int32_t) { joined = true; }, [](caf::error&) {});
  if (!joined) {
    caf::anon_send(out.registry, msg::agent_bye_atom_v);
    std::size_t came = 0;
    {
      std::lock_guard<std::mutex> lock(out.records->mu);
      for (const auto& r : out.records->list) came += r.lost_s ? 0 : 1;
    }
    char waited[32];
    std::snprintf(waited, sizeof waited, "%g", options.wait_seconds);
    throw runtime_failure(std::string("waited ") + waited + " s for " +
                          std::to_string(options.wait_agents) + " agents to join " + at + "; " +
                          std::to_string(came) + " joined");
  }
  return out;
}

}  // namespace troupe::actors
