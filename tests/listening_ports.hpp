#pragma once
// The TCP ports a process listens on, as `ss -ltnp` shows them: /proc/net/tcp{,6} rows in state
// LISTEN whose socket inode is among the process's open files.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace troupe::testing {

struct listening_port {
  std::string address;  // 127.0.0.1, 0.0.0.0, ::1, ::, ...
  int port = 0;
};

namespace detail {

inline std::set<std::string> socket_inodes(pid_t pid) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const auto target = std::filesystem::read_symlink(e.path(), ec).string();
    if (target.rfind("socket:[", 0) == 0) out.insert(target.substr(8, target.size() - 9));
  }
  return out;
}

// "0100007F" -> "127.0.0.1"; a 32-digit IPv6 one -> "::1" for loopback, "::" for any, else hex.
inline std::string address_of(const std::string& hex) {
  if (hex.size() == 8) {
    const auto v = static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16));
    return std::to_string(v & 0xff) + "." + std::to_string((v >> 8) & 0xff) + "." +
           std::to_string((v >> 16) & 0xff) + "." + std::to_string(v >> 24);
  }
  if (hex == std::string(32, '0')) return "::";
  if (hex == "00000000000000000000000001000000") return "::1";
  return hex;
}

}  // namespace detail

inline std::vector<listening_port> listening_ports(pid_t pid) {
  const auto inodes = detail::socket_inodes(pid);
  std::vector<listening_port> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string slot, local, remote, state, queues, timer, retr, uid, timeout, inode;
      f >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
      if (state != "0A" || !inodes.count(inode)) continue;  // 0A: LISTEN
      const auto colon = local.find(':');
      out.push_back({detail::address_of(local.substr(0, colon)),
                     std::stoi(local.substr(colon + 1), nullptr, 16)});
    }
  }
  return out;
}

}  // namespace troupe::testing
