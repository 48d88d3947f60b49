#include "collectives/codecs/codec.hpp"

#include "core/error.hpp"

namespace troupe::collectives {

std::unique_ptr<codec> make_codec(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
  try {
    if (name == "fp16" && arg.empty()) return make_fp16_codec();
    if (name == "bf16" && arg.empty()) return make_bf16_codec();
    if (name == "topk") return make_topk_codec(arg.empty() ? 0.01 : std::stod(arg));
    if (name == "powersgd") return make_powersgd_codec(arg.empty() ? 4 : std::stoi(arg));
    if (name == "spd-tri" && arg.empty()) return make_spd_codec(false);
    if (name == "spd-chol" && arg.empty()) return make_spd_codec(true);
  } catch (const std::logic_error&) {
    throw input_error("codec '" + spec + "': '" + arg + "' is not a number");
  }
  throw input_error("unknown codec '" + spec +
                    "' (known: fp16, bf16, topk[:ratio], powersgd[:rank], spd-tri, spd-chol)");
}

}  // namespace troupe::collectives
