#include "core/host_address.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "core/error.hpp"

namespace troupe {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string local_address_towards(const std::string& peer) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  // Port 9 (discard): any port will do, connecting a UDP socket sends nothing.
  if (const int rc = ::getaddrinfo(peer.c_str(), "9", &hints, &found); rc != 0 || !found)
    throw runtime_failure("cannot resolve '" + peer + "': " + ::gai_strerror(rc));
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) {
    ::freeaddrinfo(found);
    throw runtime_failure(std::string("socket: ") + std::strerror(errno));
  }
  const int rc = ::connect(fd, found->ai_addr, found->ai_addrlen);
  ::freeaddrinfo(found);
  sockaddr_in local{};
  socklen_t len = sizeof local;
  const bool ok = rc == 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) throw runtime_failure("no route to '" + peer + "': " + std::strerror(err));
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof text);
  return text;
}

}  // namespace troupe
