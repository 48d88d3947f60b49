#pragma once
// The wire format between remote_store and store_server: one msgpack array per request and per
// reply. Requests: ["set", key, value] | ["get", key] | ["wait", [keys...], timeout_ms].
// Replies: ["ok"] | ["value", found, value] | ["done", missing_keys] | ["error", text].
// Internal to collectives/.
#include <msgpack.hpp>

#include <string>
#include <vector>

namespace troupe::collectives::wire {

struct store_request {
  std::string op;
  std::string key;
  std::string value;
  std::vector<std::string> keys;
  long long timeout_ms = 0;
};

struct store_reply {
  std::string kind;  // ok, value, done, error
  bool found = false;
  std::string text;  // the value, the missing keys or the error
};

inline std::string pack(const store_request& r) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> p{buffer};
  if (r.op == "set") {
    p.pack_array(3), p.pack(r.op), p.pack(r.key), p.pack(r.value);
  } else if (r.op == "get") {
    p.pack_array(2), p.pack(r.op), p.pack(r.key);
  } else {
    p.pack_array(3), p.pack(r.op), p.pack(r.keys), p.pack(r.timeout_ms);
  }
  return {buffer.data(), buffer.size()};
}

inline std::string pack(const store_reply& r) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> p{buffer};
  p.pack_array(3), p.pack(r.kind), p.pack(r.found), p.pack(r.text);
  return {buffer.data(), buffer.size()};
}

// Both throw std::exception on malformed input.
inline store_request unpack_request(const void* data, std::size_t size) {
  auto handle = msgpack::unpack(static_cast<const char*>(data), size);
  const msgpack::object& o = handle.get();
  if (o.type != msgpack::type::ARRAY || o.via.array.size < 2)
    throw std::runtime_error("not an array");
  const msgpack::object* f = o.via.array.ptr;
  store_request r;
  r.op = f[0].as<std::string>();
  if (r.op == "set" && o.via.array.size == 3) {
    r.key = f[1].as<std::string>();
    r.value = f[2].as<std::string>();
  } else if (r.op == "get") {
    r.key = f[1].as<std::string>();
  } else if (r.op == "wait" && o.via.array.size == 3) {
    r.keys = f[1].as<std::vector<std::string>>();
    r.timeout_ms = f[2].as<long long>();
  } else {
    throw std::runtime_error("unknown request " + r.op);
  }
  return r;
}

inline store_reply unpack_reply(const void* data, std::size_t size) {
  auto handle = msgpack::unpack(static_cast<const char*>(data), size);
  const msgpack::object& o = handle.get();
  if (o.type != msgpack::type::ARRAY || o.via.array.size != 3)
    throw std::runtime_error("bad reply");
  const msgpack::object* f = o.via.array.ptr;
  return {f[0].as<std::string>(), f[1].as<bool>(), f[2].as<std::string>()};
}

}  // namespace troupe::collectives::wire
