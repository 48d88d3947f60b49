#include "service/api_backend.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace troupe::service {

nlohmann::json read_log(const std::string& log_dir, const std::string& id, std::uint64_t offset,
                        std::size_t max_bytes, bool ended) {
  std::string text;
  std::ifstream in(std::filesystem::path(log_dir) / (id + ".log"), std::ios::binary);
  if (in) {
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::uint64_t>(in.tellg());
    offset = std::min(offset, size);
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(size - offset, max_bytes));
    text.resize(n);
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(text.data(), static_cast<std::streamsize>(n));
    text.resize(static_cast<std::size_t>(in.gcount()));
  }
  return {{"id", id}, {"text", text}, {"offset", offset + text.size()}, {"ended", ended}};
}

nlohmann::json agents_json(const std::vector<agent_report>& agents) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& a : agents) {
    nlohmann::json j = {
        {"name", a.name},   {"group", a.group},       {"device", a.device},
        {"count", a.count}, {"threads", a.threads},   {"host", a.host},
        {"pid", a.pid},     {"joined_s", a.joined_s}, {"health", a.lost_s ? "lost" : "joined"}};
    if (a.lost_s) {
      j["lost_s"] = *a.lost_s;
      j["lost_reason"] = a.lost_reason;
    }
    out.push_back(std::move(j));
  }
  return {{"agents", out}};
}

}  // namespace troupe::service
