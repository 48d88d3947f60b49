#include "actors/agents/agent_enroll.hpp"

#include <httplib.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "actors/agents/agent_registry.hpp"
#include "actors/agents/join_endpoint.hpp"
#include "core/pki.hpp"
#include "core/tls_log.hpp"
#include "core/tls_probe.hpp"

namespace troupe::actors {
namespace {

using json = nlohmann::json;
using outcome = enroll_answer::outcome;

enroll_answer failed(outcome o, std::string why) {
  enroll_answer a;
  a.result = o;
  a.why = std::move(why);
  return a;
}

std::unique_ptr<httplib::ClientImpl> client_for(const enroll_request& r) {
  if (r.ca_path.empty()) return std::make_unique<httplib::ClientImpl>(r.host, r.port);
  ignore_broken_pipes();
  auto c = std::make_unique<httplib::SSLClient>(r.host, r.port);
  c->set_ca_cert_path(r.ca_path.c_str());
  c->enable_server_certificate_verification(true);
  c->set_bearer_token_auth(r.token.c_str());
  return c;
}

}  // namespace

enroll_answer enroll(const enroll_request& r) {
  const std::string where = r.host + ":" + std::to_string(r.port);
  if (!r.ca_path.empty()) {
    // The server's certificate, checked inside a handshake of our own first: a mismatch ends
    // with an alert, which the control process logs with our address.
    bool reached = false;
    const auto bad =
        probe_server_certificate(r.host, r.port, r.ca_path, r.timeout_seconds, reached);
    if (!reached) return failed(outcome::unreachable, where + ": " + bad);
    if (bad == "no TLS handshake")
      return failed(outcome::unreachable, "no TLS handshake with " + where +
                                              " (a control process started with --insecure "
                                              "needs --insecure here too)");
    if (!bad.empty())
      return failed(outcome::refused, "the certificate of " + where +
                                          " does not verify against the cluster CA " + r.ca_path +
                                          ": " + bad);
  }
  auto client = client_for(r);
  const auto t = std::chrono::duration<double>(r.timeout_seconds);
  client->set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(t));
  client->set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(t));
  client->set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(t));
  json body = {{"version", troupe_version()}, {"name", r.name}};
  if (!r.ca_path.empty()) body["csr"] = pki::make_request(r.key_pem, agent_common_name(r.name));
  const auto res = client->Post("/join", body.dump(), "application/json");
  if (!res) {
    const auto e = res.error();
    if (e == httplib::Error::SSLServerVerification)
      return failed(outcome::refused, "the certificate of " + where +
                                          " does not verify against the cluster CA " + r.ca_path +
                                          " (another cluster's CA, or " + r.host +
                                          " is not a name in its certificate)");
    if (e == httplib::Error::SSLConnection)
      return failed(outcome::unreachable, "no TLS connection to " + where +
                                              " (a control process started with --insecure "
                                              "needs --insecure here too)");
    return failed(outcome::unreachable, httplib::to_string(e));
  }
  const auto answer = json::parse(res->body, nullptr, false);
  const auto error = answer.is_object() && answer.contains("error") && answer["error"].is_string()
                         ? answer["error"].get<std::string>().substr(0, 300)
                         : std::string("HTTP ") + std::to_string(res->status);
  if (res->status == 401)
    return failed(outcome::refused, "the join token was refused (" + error + ")");
  if (res->status != 200) return failed(outcome::refused, error);
  enroll_answer a;
  try {
    a.control_port = answer.at("control_port").get<std::uint16_t>();
    a.ticket = answer.at("ticket").get<std::string>();
    if (!r.ca_path.empty()) a.certificate = answer.at("certificate").get<std::string>();
  } catch (const std::exception&) {
    return failed(outcome::refused, where + " gave a join answer without its fields");
  }
  a.result = outcome::joined;
  return a;
}

}  // namespace troupe::actors
