#include "service/agent_metrics.hpp"

#include <httplib.h>

#include "core/prometheus_text.hpp"

namespace troupe::service {

std::string agent_metrics_text(const actors::agent_options& o, const actors::agent_status& s) {
  prometheus_text out;
  const metric_labels agent = {{"agent", o.name}};
  out.family("troupe_agent_info", "gauge", "What the agent offers (always 1).");
  out.sample("troupe_agent_info",
             {{"agent", o.name},
              {"group", o.group},
              {"device", name_of(o.device)},
              {"count", std::to_string(o.count)}},
             1);
  out.family("troupe_agent_joined", "gauge", "1 while joined to a control process.");
  out.sample("troupe_agent_joined", agent, s.joined ? 1 : 0);
  out.family("troupe_agent_joins_total", "counter", "Accepted joins (a rejoin counts again).");
  out.sample("troupe_agent_joins_total", agent, static_cast<double>(s.joins));
  out.family("troupe_agent_control_losses_total", "counter", "Control processes lost.");
  out.sample("troupe_agent_control_losses_total", agent, static_cast<double>(s.losses));
  out.family("troupe_agent_workers_hosted_total", "counter",
             "Workers the agent built a device and model for.");
  out.sample("troupe_agent_workers_hosted_total", agent, static_cast<double>(s.workers_hosted));
  out.family("troupe_agent_workers_serving", "gauge", "Workers it serves now.");
  out.sample("troupe_agent_workers_serving", agent, s.serving);
  out.family("troupe_agent_calls_total", "counter", "Compute calls served.");
  out.sample("troupe_agent_calls_total", agent, static_cast<double>(s.calls));
  return out.text();
}

agent_metrics_server::agent_metrics_server(const std::string& address,
                                           actors::agent_options options,
                                           std::shared_ptr<const actors::agent_status> status,
                                           const std::string& token)
    : http_([&] {
        http_security s;
        if (!token.empty()) {
          s.token = [token] { return token; };
          s.open_path = [](const std::string& path) { return path == "/healthz"; };
        }
        return s;
      }()) {
  auto& srv = http_.server();
  srv.Get("/metrics", [options, status](const httplib::Request&, httplib::Response& res) {
    res.set_content(agent_metrics_text(options, *status),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  srv.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"alive"})", "application/json");
  });
  http_.start(address, "--metrics");
}

}  // namespace troupe::service
