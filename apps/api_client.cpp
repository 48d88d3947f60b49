#include "apps/api_client.hpp"

#include <httplib.h>

#include "apps/args.hpp"
#include "core/cluster_keys.hpp"
#include "core/error.hpp"
#include "core/launcher_env.hpp"
#include "core/tls_log.hpp"

namespace troupe::apps {
namespace {

nlohmann::json answer_of(const std::string& url, const std::string& what,
                         const httplib::Result& res) {
  if (!res && res.error() == httplib::Error::SSLServerVerification)
    throw input_error("the certificate of " + url +
                      " does not verify against the cluster CA (--ca, TROUPE_CA or "
                      "STATE/tls/ca.crt): another cluster's, or a name not in its certificate");
  if (!res)
    throw runtime_failure("cannot reach the service at " + url + " (" +
                          httplib::to_string(res.error()) +
                          "); is troupe serve running? (--server URL or TROUPE_SERVER)");
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (body.is_discarded())
    throw runtime_failure(url + ": " + what + ": the answer is not JSON (HTTP " +
                          std::to_string(res->status) + ")");
  if (res->status < 300) return body;
  const std::string error = body.is_object() && body.contains("error") && body["error"].is_string()
                                ? body["error"].get<std::string>()
                                : "HTTP " + std::to_string(res->status);
  if (res->status == 401)
    throw input_error(error + " (the service's token: --token, TROUPE_TOKEN, or STATE/token)");
  if (res->status < 500) throw input_error(error);
  throw runtime_failure(url + ": " + error);
}

httplib::Client client_of(const api_target& t) {
  httplib::Client c(t.url);
  if (!t.ca_path.empty()) {
    ignore_broken_pipes();
    c.set_ca_cert_path(t.ca_path);
    c.enable_server_certificate_verification(true);
  }
  if (!t.token.empty()) c.set_bearer_token_auth(t.token);
  // Every wait has a deadline: a service that accepts and then says nothing is a failure.
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(60, 0);
  c.set_write_timeout(30, 0);
  return c;
}

}  // namespace

flag_set client_flags(std::set<std::string> booleans, std::set<std::string> repeatable) {
  return {{"server", "token", "ca", "state"}, std::move(booleans), std::move(repeatable), {}};
}

api_target api_target_of(const args& a) {
  const auto env = process_env();
  api_target t;
  t.url = a.get("server").value_or(env("TROUPE_SERVER").value_or("https://127.0.0.1:7080"));
  if (t.url.rfind("https://", 0) == 0) {
    const auto keys = find_member_keys(a.get("token").value_or(""), a.get("ca").value_or(""),
                                       default_state_dir(a.get("state").value_or("")));
    t.token = keys.token;
    t.ca_path = keys.ca_path;
  } else {
    // A service with --insecure needs no token; one given is sent anyway.
    t.token = a.get("token").value_or(env("TROUPE_TOKEN").value_or(""));
  }
  return t;
}

api_client::api_client(api_target target) : target_(std::move(target)) {
  if (!client_of(target_).is_valid())
    throw input_error("--server '" + target_.url + "': not an http or https URL");
}

nlohmann::json api_client::get(const std::string& path) const {
  auto c = client_of(target_);
  return answer_of(target_.url, "GET " + path, c.Get(path));
}

nlohmann::json api_client::post(const std::string& path, const nlohmann::json& body) const {
  auto c = client_of(target_);
  return answer_of(target_.url, "POST " + path, c.Post(path, body.dump(), "application/json"));
}

}  // namespace troupe::apps
