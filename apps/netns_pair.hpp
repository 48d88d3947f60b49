#pragma once
// Two network namespaces of a test's or a benchmark's own, joined by a veth pair, neither with a
// default route (a cut link must not send traffic out of the machine): `a` holds the control
// process at 10.231.X.1, `b` an agent's host at 10.231.X.2. Removed when the object goes,
// however its owner ends. Making them needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN),
// iproute2 and nftables; ok() says whether it worked. Header-only: tests/agents and
// `troupe bench faults --processes` share it.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace troupe::apps {

class netns_pair {
 public:
  netns_pair() {
    const auto id = std::to_string(::getpid() % 100000);
    a_ = "trp-" + id + "-a";
    b_ = "trp-" + id + "-b";
    veth_a_ = "tv" + id + "a";
    veth_b_ = "tv" + id + "b";
    const auto net = "10.231." + std::to_string(::getpid() % 250) + ".";
    control_ = net + "1";
    ok_ = sh("ip netns add " + a_) && sh("ip netns add " + b_) &&
          sh("ip link add " + veth_a_ + " type veth peer name " + veth_b_) &&
          sh("ip link set " + veth_a_ + " netns " + a_) &&
          sh("ip link set " + veth_b_ + " netns " + b_) &&
          sh(in(a_) + "ip addr add " + net + "1/30 dev " + veth_a_) &&
          sh(in(b_) + "ip addr add " + net + "2/30 dev " + veth_b_) &&
          sh(in(a_) + "ip link set lo up") && sh(in(b_) + "ip link set lo up") &&
          sh(in(a_) + "ip link set " + veth_a_ + " up") &&
          sh(in(b_) + "ip link set " + veth_b_ + " up") && sh("command -v nft");
  }
  ~netns_pair() {
    sh("ip netns del " + a_);
    sh("ip netns del " + b_);
    sh("ip link del " + veth_a_);  // only if it never left this namespace
  }
  netns_pair(const netns_pair&) = delete;
  netns_pair& operator=(const netns_pair&) = delete;

  bool ok() const { return ok_; }
  const std::string& control() const { return control_; }
  std::vector<std::string> exec_in_a() const { return {"ip", "netns", "exec", a_}; }
  std::vector<std::string> exec_in_b() const { return {"ip", "netns", "exec", b_}; }

  // A silent partition: b's packets vanish (both ends see nothing, as in a real one).
  bool drop_b(bool drop) const {
    return drop ? sh(in(b_) + "nft add table inet trp") &&
                      sh(in(b_) +
                         "nft add chain inet trp out '{ type filter hook output priority "
                         "0; policy drop; }'")
                : sh(in(b_) + "nft delete table inet trp");
  }
  // Moves the calling thread into namespace a until the returned guard goes; threads it starts
  // meanwhile stay there (a runtime made then listens and connects from a). Null when refused.
  class in_a {
   public:
    explicit in_a(int back) : back_(back) {}
    ~in_a() {
      if (back_ >= 0) {
        ::setns(back_, CLONE_NEWNET);
        ::close(back_);
      }
    }
    in_a(const in_a&) = delete;
    in_a& operator=(const in_a&) = delete;

   private:
    int back_;
  };
  bool enter_a(std::optional<in_a>& guard) const {
    const int back = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    const int into = ::open(("/var/run/netns/" + a_).c_str(), O_RDONLY | O_CLOEXEC);
    const bool ok = back >= 0 && into >= 0 && ::setns(into, CLONE_NEWNET) == 0;
    if (into >= 0) ::close(into);
    if (!ok) {
      if (back >= 0) ::close(back);
      return false;
    }
    guard.emplace(back);
    return true;
  }
  const std::string& ns_b() const { return b_; }
  // iproute2's `ip`, for a process started without a shell (no PATH search).
  static std::string ip() {
    for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
      if (::access(p, X_OK) == 0) return p;
    return "ip";
  }

  // A cut link: the control side's end goes down.
  bool link_a(bool up) const {
    return sh(in(a_) + "ip link set " + veth_a_ + (up ? " up" : " down"));
  }

 private:
  static std::string in(const std::string& ns) { return "ip netns exec " + ns + " "; }
  static bool sh(const std::string& cmd) {
    return std::system((cmd + " > /dev/null 2>&1").c_str()) == 0;
  }
  std::string a_, b_, veth_a_, veth_b_, control_;
  bool ok_ = false;
};

}  // namespace troupe::apps
