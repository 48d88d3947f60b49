#include "collectives/zmq/zmq_link.hpp"

#include <zmq.hpp>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "core/hash.hpp"
#include "core/number_text.hpp"

#include "collectives/frame_header.hpp"
#include "collectives/send_tracker.hpp"

namespace troupe::collectives {
namespace {

// A header whose phase is `goodbye_phase` tells the peer we closed the link on purpose, so its
// waits fail at once instead of at their deadline.
constexpr std::uint32_t goodbye_phase = 0xffffffffu;
// What ZeroMQ's free callback needs to complete a ticket; deleted by the callback.
struct release_hint {
  std::shared_ptr<send_tracker> tracker;
  std::uint64_t ticket;
};

void release_payload(void*, void* hint) {
  std::unique_ptr<release_hint> h{static_cast<release_hint*>(hint)};
  h->tracker->complete(h->ticket);
}

// Payloads up to this size are copied into the message; larger ones (tensors) are sent from the
// caller's buffer, which must live until wait_sent (or close) returns.
constexpr std::uint64_t copied_payload_bytes = 4096;

// The links' context, ended on a thread of its own. zmq_ctx_term waits out each push socket's
// linger (200 ms, for the goodbye to leave), which a peer that is gone never cuts short: a rank
// that drops a generation's links for the next one (an agent whose ring lost a member) waited
// that long before every first reduction after a membership change. Nothing of the caller's is
// referenced by then: each link's close() waited for the payloads it had posted.
std::shared_ptr<zmq::context_t> make_context(int io_threads) {
  return std::shared_ptr<zmq::context_t>(new zmq::context_t(io_threads), [](zmq::context_t* c) {
    try {
      std::thread([c] { delete c; }).detach();
    } catch (...) {
      delete c;  // no thread to be had: end it here
    }
  });
}

class zmq_link final : public peer_link {
 public:
  zmq_link(std::shared_ptr<zmq::context_t> context, zmq::socket_t pull, zmq::socket_t push,
           peer_info peer, std::string bound_ipc_path)
      : context_(std::move(context)),
        pull_(std::move(pull)),
        push_(std::move(push)),
        peer_(std::move(peer)),
        bound_ipc_path_(std::move(bound_ipc_path)) {}
  ~zmq_link() override {
    close();
    pull_.close();
    if (!bound_ipc_path_.empty()) ::unlink(bound_ipc_path_.c_str());
  }

  const peer_info& peer() const override { return peer_; }

  std::uint64_t post(const message_header& header, const void* payload,
                     const op_context& ctx) override {
    if (closed_)
      throw collective_error(failure_kind::peer_closed, peer_,
                             ctx.op_name + ": link to " + peer_.describe() + " is closed");
    const auto ticket = tracker_->begin();  // completed by release_payload
    const std::string head = pack_frame_header(header);
    push_.send(zmq::buffer(head), zmq::send_flags::sndmore);
    zmq::message_t body;
    if (header.bytes <= copied_payload_bytes) {
      // Small payloads (requests, replies, control structs) are copied: a caller that posts one
      // from its stack and unwinds on an abort without waiting would otherwise leave ZeroMQ's
      // I/O thread reading a dead frame (ASan saw it when an agent was drained mid-call), and a
      // copy of a few KiB costs less than the bookkeeping of zero copy.
      if (header.bytes > 0) body = zmq::message_t{payload, static_cast<std::size_t>(header.bytes)};
      tracker_->complete(ticket);
    } else {
      // Zero copy: ZeroMQ reads the caller's buffer and calls release_payload when done.
      body = zmq::message_t{const_cast<void*>(payload), static_cast<std::size_t>(header.bytes),
                            release_payload, new release_hint{tracker_, ticket}};
    }
    push_.send(body, zmq::send_flags::none);
    return ticket;
  }

  void wait_sent(std::uint64_t ticket, const op_context& ctx) override {
    tracker_->wait(ticket, ctx, peer_);
  }
  void flush(const op_context& ctx) override { tracker_->wait_all(ctx, peer_); }

  message_header receive(const message_header& expect, const consume_fn& consume,
                         const op_context& ctx) override {
    for (;;) {
      // What arrived earlier: a later op's messages, or any that check_open took meanwhile.
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->header.older_than(expect)) {  // leftover of an aborted op
          it = pending_.erase(it);
          continue;
        }
        if (it->header.same_tag(expect)) {
          auto found = std::move(*it);
          pending_.erase(it);
          deliver(found.header, found.payload, consume);
          return found.header;
        }
        ++it;
      }
      if (peer_gone_)
        throw collective_error(failure_kind::peer_closed, peer_,
                               ctx.op_name + ": " + peer_.describe() +
                                   " closed its link before sending the expected data");
      const std::size_t kept = pending_.size();
      ctx.check(peer_, "data from");
      // An op's watch (check_open) may have taken this link's messages meanwhile: look at them
      // before waiting a slice for more.
      if (pending_.size() != kept) continue;
      stashed got;
      if (take(got, std::chrono::duration_cast<std::chrono::milliseconds>(wait_slice), ctx) &&
          !got.header.older_than(expect))
        pending_.push_back(std::move(got));
    }
  }

  // Reads what has arrived, to find a goodbye among it; the rest waits in pending_.
  void check_open(const message_header& expect, const op_context& ctx) override {
    stashed got;
    while (!peer_gone_ && take(got, std::chrono::milliseconds(0), ctx))
      pending_.push_back(std::move(got));
    for (const auto& kept : pending_)
      if (kept.header.same_tag(expect)) return;
    if (peer_gone_)
      throw collective_error(failure_kind::peer_closed, peer_,
                             ctx.op_name + ": " + peer_.describe() + " closed its link");
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    // Payloads still queued point into the caller's buffers, which may be freed right after us:
    // drop them at once rather than linger.
    if (!tracker_->idle()) push_.set(zmq::sockopt::linger, 0);
    try {
      message_header bye;
      bye.phase = goodbye_phase;
      const std::string head = pack_frame_header(bye);
      push_.send(zmq::buffer(head), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
      push_.send(zmq::message_t{}, zmq::send_flags::dontwait);
    } catch (const zmq::error_t&) {
      // The peer may be gone already; nothing to tell.
    }
    // ZeroMQ drops what is still queued and calls release_payload for it; wait for that
    // (briefly) so that no caller buffer is referenced after close returns.
    op_context grace;
    grace.deadline = steady::now() + std::chrono::seconds(1);
    push_.close();
    try {
      tracker_->wait_all(grace, peer_);
    } catch (const collective_error&) {
      // Gave up waiting: the I/O thread still holds the payload; nothing more we can do.
    }
    tracker_->fail_all();
  }

 private:
  struct stashed {
    message_header header;
    zmq::message_t payload;
  };

  // Takes one message that arrives within `wait`; false when none did, or when it was the
  // peer's goodbye (peer_gone_ is then set).
  bool take(stashed& got, std::chrono::milliseconds wait, const op_context& ctx) {
    zmq::pollitem_t item{static_cast<void*>(pull_), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, wait);
    if (!(item.revents & ZMQ_POLLIN)) return false;
    zmq::message_t head;
    (void)pull_.recv(head, zmq::recv_flags::none);
    if (!head.more())
      throw collective_error(failure_kind::protocol, peer_,
                             ctx.op_name + ": " + peer_.describe() + " sent a lone frame");
    (void)pull_.recv(got.payload, zmq::recv_flags::none);
    if (!unpack_frame_header(head.data(), head.size(), got.header) ||
        got.header.bytes != got.payload.size())
      throw collective_error(
          failure_kind::protocol, peer_,
          ctx.op_name + ": " + peer_.describe() + " sent a malformed message header");
    if (got.header.phase == goodbye_phase) {
      peer_gone_ = true;
      return false;
    }
    return true;
  }

  static void deliver(const message_header& header, const zmq::message_t& payload,
                      const consume_fn& consume) {
    if (header.bytes > 0)
      consume(static_cast<const std::byte*>(payload.data()), payload.size(), 0, payload.size());
  }

  std::shared_ptr<zmq::context_t> context_;  // outlives the sockets
  zmq::socket_t pull_;
  zmq::socket_t push_;
  peer_info peer_;
  std::string bound_ipc_path_;  // removed on destruction: ZeroMQ leaves the file behind
  std::shared_ptr<send_tracker> tracker_ = std::make_shared<send_tracker>();
  std::deque<stashed> pending_;
  bool closed_ = false;
  bool peer_gone_ = false;
};

// Between a published address and its CURVE server key.
constexpr const char* curve_mark = " curve:";

// An ipc address of our own in Linux's abstract socket namespace ("@name"): no file, so nothing
// is left behind by a process killed with SIGKILL (a path under /tmp was, one per link).
// Unique per process, key prefix and link. Abstract names belong to the network namespace, as
// loopback does, so an ipc link joins exactly the processes a loopback link would.
std::string ipc_address(const std::string& prefix, int from, int to) {
  static std::atomic<unsigned> serial{0};
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(fnv1a64(prefix.data(), prefix.size())));
  return "ipc://@troupe-" + std::to_string(::getpid()) + "-" + hash + "-" + std::to_string(from) +
         "-" + std::to_string(to) + "-" + std::to_string(serial++);
}

}  // namespace

namespace {
std::atomic<bool> curve_default{true};

std::mutex data_ports_mu;
port_range data_ports_default;

// Binds `pull` on tcp://HOST: any free port, or the first free one of the range (starting at a
// random place in it, so that ranks binding at once rarely try the same port twice).
void bind_tcp(zmq::socket_t& pull, const std::string& host, port_range r) {
  if (r.any()) {
    pull.bind("tcp://" + host + ":*");
    return;
  }
  const unsigned span = static_cast<unsigned>(r.last - r.first) + 1;
  const unsigned start = static_cast<unsigned>(std::random_device{}()) % span;
  for (unsigned i = 0; i < span; ++i) {
    const unsigned port = r.first + (start + i) % span;
    try {
      pull.bind("tcp://" + host + ":" + std::to_string(port));
      return;
    } catch (const zmq::error_t& e) {
      if (e.num() != EADDRINUSE) throw;
    }
  }
  throw runtime_failure("--data-ports " + std::to_string(r.first) + "-" + std::to_string(r.last) +
                        ": every port is taken on " + host);
}

}  // namespace

void set_data_ports(port_range r) {
  std::lock_guard<std::mutex> lock(data_ports_mu);
  data_ports_default = r;
}

port_range data_ports() {
  std::lock_guard<std::mutex> lock(data_ports_mu);
  return data_ports_default;
}

port_range parse_port_range(const std::string& text, const std::string& flag) {
  // A port: a whole number of the part's every character, 1 to 65535; 0 otherwise.
  const auto port = [](const std::string& part) {
    const auto n = read_leading_number(part);
    const bool whole = !part.empty() && n.used == part.size() && n.value == std::floor(n.value);
    return whole && n.value >= 1 && n.value <= 65535 ? static_cast<std::uint16_t>(n.value)
                                                     : std::uint16_t{0};
  };
  const auto dash = text.find('-');
  const auto lo = dash == std::string::npos ? std::uint16_t{0} : port(text.substr(0, dash));
  const auto hi = dash == std::string::npos ? std::uint16_t{0} : port(text.substr(dash + 1));
  if (lo == 0 || hi < lo)
    throw input_error(flag + " '" + text + "': expected LO-HI, ports 1 to 65535 with LO <= HI");
  return {lo, hi};
}

void set_curve_by_default(bool on) {
  curve_default = on;
}

bool curve_by_default() {
  return curve_default;
}

communicator zmq_connect(const zmq_connect_options& options) {
  if (!options.rendezvous) throw input_error("zmq_connect: no rendezvous store");
  // CURVE: one key pair per call, the server key of this rank's PULL sockets and the client key
  // of its PUSH sockets.
  char public_key[41] = {}, secret_key[41] = {};
  if (options.curve) {
    if (!zmq_has("curve"))
      throw runtime_failure("zmq_connect: this libzmq has no CURVE (built without libsodium)");
    if (zmq_curve_keypair(public_key, secret_key) != 0)
      throw runtime_failure("zmq_connect: zmq_curve_keypair failed");
  }
  const std::vector<int> peers =
      options.peers.empty() ? default_peers(options.rank, options.size) : options.peers;
  auto context = make_context(options.io_threads);

  std::vector<zmq::socket_t> pulls;
  std::vector<std::string> ipc_paths;
  for (int peer : peers) {
    zmq::socket_t pull{*context, zmq::socket_type::pull};
    pull.set(zmq::sockopt::linger, 0);
    if (options.curve) {
      pull.set(zmq::sockopt::curve_server, true);
      pull.set(zmq::sockopt::curve_secretkey, std::string(secret_key, 40));
    }
    pull.set(zmq::sockopt::rcvhwm, 0);  // the algorithm bounds what is in flight
    if (options.scheme == zmq_scheme::tcp)
      bind_tcp(pull, options.host, options.ports);
    else
      pull.bind(ipc_address(options.prefix, peer, options.rank));
    const std::string bound = pull.get(zmq::sockopt::last_endpoint);
    // An abstract name ("ipc://@...") has no file to remove.
    ipc_paths.push_back(options.scheme == zmq_scheme::ipc && bound.rfind("ipc:///", 0) == 0
                            ? bound.substr(6)
                            : std::string{});
    publish_end(options, "zmq", peer, options.curve ? bound + curve_mark + public_key : bound);
    pulls.push_back(std::move(pull));
  }
  std::vector<std::shared_ptr<peer_link>> links(static_cast<std::size_t>(options.size));
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const int peer = peers[i];
    std::string address = await_peer_end(options, "zmq", peer, "zmq_connect", "its address");
    zmq::socket_t push{*context, zmq::socket_type::push};
    push.set(zmq::sockopt::linger, 200);  // long enough for the goodbye to leave
    const auto mark = address.find(curve_mark);
    if (mark == std::string::npos && options.curve)
      throw runtime_failure("zmq_connect: rank " + std::to_string(peer) +
                            " published a link without CURVE keys; this rank requires them "
                            "(one side runs with --insecure)");
    if (mark != std::string::npos) {
      const std::string server_key = address.substr(mark + std::strlen(curve_mark));
      address.resize(mark);
      if (server_key.size() != 40)
        throw runtime_failure("zmq_connect: rank " + std::to_string(peer) +
                              " published a malformed CURVE key");
      if (!options.curve && zmq_curve_keypair(public_key, secret_key) != 0)
        throw runtime_failure("zmq_connect: zmq_curve_keypair failed");
      push.set(zmq::sockopt::curve_serverkey, server_key);
      push.set(zmq::sockopt::curve_publickey, std::string(public_key, 40));
      push.set(zmq::sockopt::curve_secretkey, std::string(secret_key, 40));
    }
    push.set(zmq::sockopt::sndhwm, 0);
    push.connect(address);
    links[static_cast<std::size_t>(peer)] = std::make_shared<zmq_link>(
        context, std::move(pulls[i]), std::move(push), peer_info{peer, address}, ipc_paths[i]);
  }
  return communicator{options.rank, options.size, std::move(links)};
}

}  // namespace troupe::collectives
