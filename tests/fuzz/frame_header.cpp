// Fuzz target: the data plane's header frame (collectives/frame_header.hpp), which the ZeroMQ
// link unpacks from whatever its peer sends before it looks at the payload.
//
// Unpacking must answer true or false: an exception, a crash or a sanitizer report is a bug.
// A header that unpacks must pack and unpack to the same fields.
#include "collectives/frame_header.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace troupe::collectives;
  message_header h;
  if (!unpack_frame_header(data, size, h)) return 0;
  const std::string packed = pack_frame_header(h);
  message_header again;
  if (!unpack_frame_header(packed.data(), packed.size(), again) || !again.same_tag(h) ||
      again.bytes != h.bytes)
    troupe::fuzz::broken("a header changed through pack and unpack");
  return 0;
}
