// Fuzz target: the rendezvous store's wire format (collectives/store_wire.hpp), the msgpack
// requests that store_server takes from any process that connects and the replies remote_store
// takes back. Every input is read as both.
//
// A malformed message must end in a std::runtime_error (msgpack's unpack errors and the wire's
// own) or msgpack::type_error, which store_server answers as an error reply; any other
// exception (std::bad_alloc: a length taken on trust), a crash or a sanitizer report is a bug.
// What unpacks must also pack and unpack to the same request or reply.
#include <stdexcept>

#include "collectives/store_wire.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

using namespace troupe::collectives::wire;

bool same(const store_request& a, const store_request& b) {
  return a.op == b.op && a.key == b.key && a.value == b.value && a.keys == b.keys &&
         a.timeout_ms == b.timeout_ms;
}

bool same(const store_reply& a, const store_reply& b) {
  return a.kind == b.kind && a.found == b.found && a.text == b.text;
}

template <class T, class Unpack>
void check(const std::uint8_t* data, std::size_t size, Unpack unpack) {
  T message;
  try {
    message = unpack(data, size);
  } catch (const std::runtime_error&) {
    return;
  } catch (const msgpack::type_error&) {
    return;
  }
  const std::string packed = pack(message);
  if (!same(unpack(packed.data(), packed.size()), message))
    troupe::fuzz::broken("a store message changed through pack and unpack");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check<store_request>(data, size,
                       [](const void* d, std::size_t n) { return unpack_request(d, n); });
  check<store_reply>(data, size, [](const void* d, std::size_t n) { return unpack_reply(d, n); });
  return 0;
}
