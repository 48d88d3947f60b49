#include "apps/api_client.hpp"

#include <httplib.h>

#include "apps/args.hpp"
#include "core/error.hpp"
#include "core/launcher_env.hpp"

namespace troupe::apps {
namespace {

nlohmann::json answer_of(const std::string& url, const std::string& what,
                         const httplib::Result& res) {
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
  if (res->status < 500) throw input_error(error);
  throw runtime_failure(url + ": " + error);
}

httplib::Client client_of(const std::string& url) {
  httplib::Client c(url);
  // Every wait has a deadline: a service that accepts and then says nothing is a failure.
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(60, 0);
  c.set_write_timeout(30, 0);
  return c;
}

}  // namespace

std::string server_url(const args& a) {
  return a.get("server").value_or(process_env()("TROUPE_SERVER").value_or("http://127.0.0.1:7080"));
}

api_client::api_client(std::string url) : url_(std::move(url)) {
  if (!client_of(url_).is_valid()) throw input_error("--server '" + url_ + "': not an http URL");
}

nlohmann::json api_client::get(const std::string& path) const {
  auto c = client_of(url_);
  return answer_of(url_, "GET " + path, c.Get(path));
}

nlohmann::json api_client::post(const std::string& path, const nlohmann::json& body) const {
  auto c = client_of(url_);
  return answer_of(url_, "POST " + path, c.Post(path, body.dump(), "application/json"));
}

}  // namespace troupe::apps
