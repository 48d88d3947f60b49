#include "core/cluster_keys.hpp"

#include <ifaddrs.h>
#include <netdb.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/file_text.hpp"
#include "core/host_address.hpp"
#include "core/launcher_env.hpp"
#include "core/secret.hpp"

namespace troupe {
namespace fs = std::filesystem;
namespace {

constexpr int control_cert_days = 365;

void write_public_file(const std::string& path, const std::string& content) {
  write_private_file(path, content);
  ::chmod(path.c_str(), 0644);  // a certificate is public: agents' operators may copy it
}

void make_private_dir(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw runtime_failure("cannot create " + path + ": " + ec.message());
  ::chmod(path.c_str(), 0700);
}

// Holds an exclusive lock on STATE/tls/.lock while alive, so that two control processes
// starting on one state directory make one CA, not two.
class dir_lock {
 public:
  explicit dir_lock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) throw runtime_failure("cannot lock " + path + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~dir_lock() { ::close(fd_); }
  dir_lock(const dir_lock&) = delete;
  dir_lock& operator=(const dir_lock&) = delete;

 private:
  int fd_ = -1;
};

// This host's names and IPv4/IPv6 interface addresses, for the control certificate: an agent
// checks the name it dialled against them (a host-name check, as a browser does).
std::vector<std::string> local_names() {
  std::vector<std::string> out = {"localhost", "127.0.0.1", "::1", host_name()};
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (auto* a = list; a; a = a->ifa_next) {
      if (!a->ifa_addr) continue;
      const int family = a->ifa_addr->sa_family;
      if (family != AF_INET && family != AF_INET6) continue;
      char host[NI_MAXHOST];
      const socklen_t len =
          family == AF_INET ? sizeof(sockaddr_in) : static_cast<socklen_t>(sizeof(sockaddr_in6));
      if (::getnameinfo(a->ifa_addr, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
        continue;
      std::string h = host;
      if (h.find('%') != std::string::npos) continue;  // link-local with a scope: not dialled
      out.push_back(h);
    }
    ::freeifaddrs(list);
  }
  return out;
}

// The names of the control certificate a new one replaces, kept: `troupe serve` opens the keys
// for its API's address and again for the agents' port, and `troupe token` or a second control
// process on the directory opens them too; each would otherwise drop names the others serve.
// Only a certificate this CA issued for this key counts: a stale or foreign one adds nothing.
// Removing the file starts over from the current names.
std::vector<std::string> names_kept(const cluster_keys& k, const std::string& control_key) {
  if (!fs::exists(k.control_cert_path)) return {};
  try {
    const auto before = read_file_text(k.control_cert_path);
    if (!pki::key_matches(control_key, before)) return {};
    return pki::verify(before, k.ca.cert_pem, pki::role::control).names;
  } catch (const input_error&) {
    return {};
  }
}

}  // namespace

std::string default_state_dir(const std::string& flag_value) {
  if (!flag_value.empty()) return flag_value;
  if (auto v = process_env()("TROUPE_STATE"); v && !v->empty()) return *v;
  return "troupe-state";
}

void ensure_state_dir(const std::string& dir) {
  if (dir.empty()) throw input_error("the state directory is an empty path");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (fs::exists(dir, ec)) throw input_error(dir + ": the state directory is not a directory");
    fs::create_directories(dir, ec);
    // Only a directory we create is narrowed to 0700: one the user made keeps the mode they chose.
    if (!ec) fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    if (ec) throw input_error(dir + ": cannot create the state directory: " + ec.message());
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw input_error(dir + ": the state directory is not writable: " + std::strerror(errno));
}

std::string read_token(const std::string& state_dir) {
  const std::string path = (fs::path(state_dir) / "token").string();
  std::string t = read_private_file(path);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  if (t.size() < 16) throw input_error(path + ": a join token must be at least 16 characters");
  register_secret(t);
  return t;
}

std::string rotate_token(const std::string& state_dir) {
  make_private_dir(state_dir);
  const std::string t = random_hex(32);
  register_secret(t);
  write_private_file((fs::path(state_dir) / "token").string(), t + "\n");
  return t;
}

cluster_keys open_cluster_keys(const std::string& state_dir, std::vector<std::string> names) {
  cluster_keys k;
  k.state_dir = state_dir;
  const fs::path tls = fs::path(state_dir) / "tls";
  make_private_dir(state_dir);
  make_private_dir(tls.string());
  k.token_path = (fs::path(state_dir) / "token").string();
  k.ca_path = (tls / "ca.crt").string();
  k.ca_key_path = (tls / "ca.key").string();
  k.control_key_path = (tls / "control.key").string();
  k.control_cert_path = (tls / "control.crt").string();
  dir_lock lock((tls / ".lock").string());
  if (!fs::exists(k.token_path)) {
    rotate_token(state_dir);
    k.created = true;
  }
  read_token(state_dir);
  if (!fs::exists(k.ca_key_path)) {
    k.ca = pki::make_authority("troupe cluster CA " + random_hex(4));
    write_private_file(k.ca_key_path, k.ca.key_pem);
    write_public_file(k.ca_path, k.ca.cert_pem);
    k.created = true;
  } else {
    k.ca.key_pem = read_private_file(k.ca_key_path);
    k.ca.cert_pem = read_file_text(k.ca_path);
    try {
      if (!pki::key_matches(k.ca.key_pem, k.ca.cert_pem))
        throw input_error("the key does not belong to the certificate");
    } catch (const input_error& e) {
      throw input_error(k.ca_key_path + " and " + k.ca_path + ": " + e.what() + " (remove " +
                        tls.string() +
                        " to make a new CA; agents then need the "
                        "new ca.crt)");
    }
  }
  if (!fs::exists(k.control_key_path)) write_private_file(k.control_key_path, pki::make_key());
  const std::string control_key = read_private_file(k.control_key_path);
  for (auto& n : local_names()) names.push_back(n);
  for (auto& n : names_kept(k, control_key)) names.push_back(n);
  // Names a peer dials that this host cannot know: a Kubernetes Service, a load balancer.
  if (const auto extra = process_env()("TROUPE_CERT_NAMES")) {
    std::stringstream list(*extra);
    for (std::string n; std::getline(list, n, ',');) names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  names.erase(std::remove_if(names.begin(), names.end(),
                             [](const std::string& n) {
                               return n.empty() || n == "0.0.0.0" || n == "::" || n == "[::]";
                             }),
              names.end());
  write_public_file(k.control_cert_path,
                    pki::issue(k.ca, control_key, "troupe control " + host_name(),
                               pki::role::control, names, control_cert_days));
  return k;
}

member_keys find_member_keys(const std::string& token_flag, const std::string& ca_flag,
                             const std::string& state_dir) {
  member_keys m;
  const auto env = process_env();
  const fs::path state = state_dir;
  if (!token_flag.empty()) {
    m.token = token_flag;
  } else if (auto v = env("TROUPE_TOKEN"); v && !v->empty()) {
    m.token = *v;
  } else if (fs::exists(state / "token")) {
    m.token = read_token(state_dir);
  } else {
    throw input_error(
        "no join token: pass --token, set TROUPE_TOKEN, or run on the control "
        "process's machine with its state directory (--state or TROUPE_STATE; "
        "looked for " +
        (state / "token").string() + ")");
  }
  // A token copied from the file (a Kubernetes Secret, $(cat token)) may end in a newline.
  while (!m.token.empty() && std::isspace(static_cast<unsigned char>(m.token.back())))
    m.token.pop_back();
  register_secret(m.token);
  if (!ca_flag.empty()) {
    m.ca_path = ca_flag;
  } else if (auto v = env("TROUPE_CA"); v && !v->empty()) {
    m.ca_path = *v;
  } else {
    m.ca_path = (state / "tls" / "ca.crt").string();
    if (!fs::exists(m.ca_path))
      throw input_error(
          "no cluster CA certificate: pass --ca FILE, set TROUPE_CA, or run on the "
          "control process's machine with its state directory (--state or "
          "TROUPE_STATE; looked for " +
          m.ca_path + ")");
  }
  if (!fs::exists(m.ca_path)) throw input_error(m.ca_path + ": no such CA certificate file");
  return m;
}

}  // namespace troupe
