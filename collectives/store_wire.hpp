#pragma once
// The wire format between remote_store and store_server: one msgpack array per request and per
// reply. Requests: ["set", key, value] | ["get", key] | ["wait", [keys...], timeout_ms].
// Replies: ["ok"] | ["value", found, value] | ["done", missing_keys] | ["error", text].
// Internal to collectives/.
#include <msgpack.hpp>

#include <string>
#include <vector>

#include "collectives/bounded_unpack.hpp"
#include "core/names.hpp"

namespace troupe::collectives::wire {

enum class store_op { set, get, wait };
enum class reply_kind { ok, value, done, error };

}  // namespace troupe::collectives::wire

namespace troupe {

TROUPE_SPELLINGS(collectives::wire::store_op, wait, "set", "get", "wait");

TROUPE_SPELLINGS(collectives::wire::reply_kind, error, "ok", "value", "done", "error");

}  // namespace troupe

namespace troupe::collectives::wire {

struct store_request {
  store_op op = store_op::get;
  std::string key;
  std::string value;
  std::vector<std::string> keys;
  long long timeout_ms = 0;
};

struct store_reply {
  reply_kind kind = reply_kind::ok;
  bool found = false;
  std::string text;  // the value, the missing keys or the error
};

inline std::string pack(const store_request& r) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> p{buffer};
  const std::string op = name_of(r.op);
  switch (r.op) {
    case store_op::set:
      p.pack_array(3), p.pack(op), p.pack(r.key), p.pack(r.value);
      break;
    case store_op::get:
      p.pack_array(2), p.pack(op), p.pack(r.key);
      break;
    case store_op::wait:
      p.pack_array(3), p.pack(op), p.pack(r.keys), p.pack(r.timeout_ms);
      break;
  }
  return {buffer.data(), buffer.size()};
}

inline std::string pack(const store_reply& r) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> p{buffer};
  p.pack_array(3), p.pack(std::string(name_of(r.kind))), p.pack(r.found), p.pack(r.text);
  return {buffer.data(), buffer.size()};
}

// Both throw std::exception on malformed input.
inline store_request unpack_request(const void* data, std::size_t size) {
  auto handle = bounded_unpack(data, size);
  const msgpack::object& o = handle.get();
  if (o.type != msgpack::type::ARRAY || o.via.array.size < 2)
    throw std::runtime_error("not an array");
  const msgpack::object* f = o.via.array.ptr;
  const auto name = f[0].as<std::string>();
  const auto op = parse_name<store_op>(name);
  const std::size_t fields = op == store_op::get ? 2 : 3;
  if (!op || o.via.array.size != fields) throw std::runtime_error("unknown request " + name);
  store_request r;
  r.op = *op;
  if (r.op == store_op::wait) {
    r.keys = f[1].as<std::vector<std::string>>();
    r.timeout_ms = f[2].as<long long>();
  } else {
    r.key = f[1].as<std::string>();
    if (r.op == store_op::set) r.value = f[2].as<std::string>();
  }
  return r;
}

inline store_reply unpack_reply(const void* data, std::size_t size) {
  auto handle = bounded_unpack(data, size);
  const msgpack::object& o = handle.get();
  if (o.type != msgpack::type::ARRAY || o.via.array.size != 3)
    throw std::runtime_error("bad reply");
  const msgpack::object* f = o.via.array.ptr;
  const auto name = f[0].as<std::string>();
  const auto kind = parse_name<reply_kind>(name);
  if (!kind) throw std::runtime_error("unknown reply " + name);
  return {*kind, f[1].as<bool>(), f[2].as<std::string>()};
}

}  // namespace troupe::collectives::wire
