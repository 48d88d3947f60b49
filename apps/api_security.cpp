#include "apps/api_security.hpp"

#include "core/cluster_keys.hpp"
#include "core/launcher_env.hpp"
#include "core/secret.hpp"

namespace troupe::apps {

http_security api_security(const std::string& state_dir, const std::string& token,
                           const std::string& address, bool insecure,
                           std::function<void(const std::string&)> log) {
  http_security s;
  s.log = std::move(log);
  if (insecure) return s;
  const auto keys = open_cluster_keys(state_dir, {parse_join(address, "--http", true).host});
  s.cert_path = keys.control_cert_path;
  s.key_path = keys.control_key_path;
  register_secret(token);
  s.token = [token, dir = keys.state_dir] { return token.empty() ? read_token(dir) : token; };
  return s;
}

}  // namespace troupe::apps
