#include "actors/agents/join_endpoint.hpp"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "actors/agents/agent_registry.hpp"
#include "core/error.hpp"

namespace troupe::actors {
namespace {

using json = nlohmann::json;

constexpr int agent_cert_days = 30;
constexpr std::size_t max_join_body = 16 * 1024;  // a request is about 500 bytes

http_security security_of(const join_endpoint_options& o) {
  http_security s;
  if (o.keys) {
    s.cert_path = o.keys->control_cert_path;
    s.key_path = o.keys->control_key_path;
    s.token = o.token;
  }
  s.log = o.log;
  return s;
}

void answer(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // Text from the request (a path, a name) may be any bytes: invalid UTF-8 is replaced rather
  // than thrown past the server (which would end the process).
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

}  // namespace

std::string agent_common_name(const std::string& agent) {
  return "troupe agent " + agent;
}

join_endpoint::join_endpoint(join_endpoint_options options)
    : options_(std::move(options)), http_(security_of(options_)) {
  auto& srv = http_.server();
  srv.set_payload_max_length(max_join_body);
  srv.Post("/join", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string peer = req.remote_addr + ":" + std::to_string(req.remote_port);
    const auto refuse = [&](int status, const std::string& why) {
      if (options_.log) options_.log("refused a join from " + peer + ": " + why);
      answer(res, status, {{"error", why}});
    };
    const auto body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object())
      return refuse(400, "the join request must be a JSON object");
    const auto text = [&](const char* key) {
      const auto it = body.find(key);
      return it != body.end() && it->is_string() ? it->get<std::string>() : std::string{};
    };
    const auto name = text("name");
    const auto version = text("version");
    if (version != troupe_version())
      return refuse(409, "Troupe version '" + version.substr(0, 32) + "' cannot join version " +
                             troupe_version() + " (run the same troupe on every host)");
    if (name.empty() || name.size() > 64)
      return refuse(400, "the join request needs the agent's 'name' (1 to 64 characters)");
    json out = {{"version", troupe_version()}, {"control_port", options_.control_port}};
    if (options_.keys) {
      try {
        out["certificate"] =
            pki::sign_request(options_.keys->ca, text("csr"), agent_common_name(name),
                              pki::role::agent, {}, agent_cert_days);
      } catch (const input_error& e) {
        return refuse(400, e.what());
      }
    }
    out["ticket"] = options_.tickets->issue(name);
    answer(res, 200, out);
  });
  srv.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    answer(res, res.status,
           {{"error", res.status == 404 ? "no such endpoint: " + req.method + " " + req.path
                                        : "bad request"}});
  });
  srv.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        answer(res, 500, {{"error", "internal"}});
      });
  http_.start(options_.address, "--listen");
}

}  // namespace troupe::actors
