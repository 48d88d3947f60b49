#include "core/launcher_env.hpp"

#include <cstdlib>

#include "core/error.hpp"

namespace troupe {

env_lookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
}

join_address parse_join(const std::string& text, const std::string& from, bool any_port) {
  const auto colon = text.rfind(':');
  const std::string port = colon == std::string::npos ? "" : text.substr(colon + 1);
  const bool digits = !port.empty() && port.size() <= 5 &&
                      port.find_first_not_of("0123456789") == std::string::npos;
  const unsigned long n = digits ? std::stoul(port) : 70000;
  const unsigned long lowest = any_port ? 0 : 1;
  if (colon == std::string::npos || colon == 0 || n < lowest || n > 65535)
    throw input_error(from + ": expected HOST:PORT with a port from " + std::to_string(lowest) +
                      " to 65535, got '" + text.substr(0, 80) + "'");
  return {text.substr(0, colon), static_cast<std::uint16_t>(n), from};
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string first_slurm_host(const std::string& nodelist) {
  const auto bad = [&]() -> std::string {
    throw input_error("SLURM_STEP_NODELIST: cannot read a host from '" + nodelist.substr(0, 80) +
                      "'");
  };
  const auto open = nodelist.find('[');
  const auto comma = nodelist.find(',');
  if (open == std::string::npos || (comma != std::string::npos && comma < open)) {
    const std::string host = nodelist.substr(0, comma);
    return host.empty() ? bad() : host;
  }
  const auto close = nodelist.find(']', open);
  if (open == 0 || close == std::string::npos) return bad();
  // The first entry of the range list, and of a range its start (zero padding kept).
  const std::string ranges = nodelist.substr(open + 1, close - open - 1);
  const std::string first = ranges.substr(0, ranges.find_first_of(",-"));
  if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos) return bad();
  return nodelist.substr(0, open) + first;
}

std::optional<std::string> launcher_rank(const env_lookup& env) {
  if (auto r = env("SLURM_PROCID")) return r;
  return env("RANK");
}

join_address resolve_join(const std::optional<std::string>& flag, const env_lookup& env) {
  if (flag) return parse_join(*flag, "--join");
  if (auto v = env("TROUPE_JOIN")) return parse_join(*v, "TROUPE_JOIN");
  const auto addr = env("MASTER_ADDR"), port = env("MASTER_PORT");
  if (addr && port) return parse_join(*addr + ":" + *port, "MASTER_ADDR:MASTER_PORT");
  if (auto nodes = env("SLURM_STEP_NODELIST")) {
    const auto p = env("TROUPE_PORT");
    if (!p)
      throw input_error(
          "SLURM_STEP_NODELIST names the control host, but TROUPE_PORT (its --listen port) is "
          "not set");
    return parse_join(first_slurm_host(*nodes) + ":" + *p, "SLURM_STEP_NODELIST:TROUPE_PORT");
  }
  throw input_error(
      "where is the control process? give --join HOST:PORT (or TROUPE_JOIN, "
      "MASTER_ADDR/MASTER_PORT, or SLURM_STEP_NODELIST with TROUPE_PORT)");
}

}  // namespace troupe
