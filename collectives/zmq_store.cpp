#include "collectives/zmq_store.hpp"

#include <zmq.hpp>

#include "collectives/store_wire.hpp"
#include "core/error.hpp"

namespace troupe::collectives {

struct remote_store::impl {
  std::string address;
  zmq::context_t context{1};
  std::unique_ptr<zmq::socket_t> socket;

  void reconnect() {
    socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::req);
    socket->set(zmq::sockopt::linger, 0);
    socket->connect(address);
  }

  // One request/reply with a deadline; a REQ socket that timed out is replaced (it would refuse
  // the next send).
  wire::store_reply call(const wire::store_request& request, steady::time_point deadline) {
    socket->send(zmq::buffer(wire::pack(request)), zmq::send_flags::none);
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
      if (left.count() <= 0) {
        reconnect();
        throw runtime_failure("store at " + address + ": no answer to " + name_of(request.op) +
                              " before the deadline (is the store server running?)");
      }
      zmq::pollitem_t item{static_cast<void*>(*socket), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::min(left, std::chrono::milliseconds(100)));
      if (!(item.revents & ZMQ_POLLIN)) continue;
      zmq::message_t body;
      (void)socket->recv(body);
      auto reply = wire::unpack_reply(body.data(), body.size());
      if (reply.kind == wire::reply_kind::error)
        throw runtime_failure("store at " + address + ": " + reply.text);
      return reply;
    }
  }
};

remote_store::remote_store(const std::string& address) : impl_(std::make_unique<impl>()) {
  impl_->address = address;
  impl_->reconnect();
}
remote_store::~remote_store() = default;

void remote_store::set(const std::string& key, const std::string& value) {
  impl_->call({wire::store_op::set, key, value, {}, 0}, steady::now() + std::chrono::seconds(10));
}

std::optional<std::string> remote_store::get(const std::string& key) {
  auto reply =
      impl_->call({wire::store_op::get, key, {}, {}, 0}, steady::now() + std::chrono::seconds(10));
  if (!reply.found) return std::nullopt;
  return reply.text;
}

void remote_store::wait(const std::vector<std::string>& keys, steady::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
  auto reply =
      impl_->call({wire::store_op::wait, {}, {}, keys, std::max<long long>(0, left.count())},
                  deadline + std::chrono::seconds(2));
  if (!reply.text.empty()) throw runtime_failure("store: timed out waiting for keys " + reply.text);
}

}  // namespace troupe::collectives
