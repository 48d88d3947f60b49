// Writes the binary seeds of tests/fuzz/corpus with the project's own writers, so that each
// fuzz target starts from inputs in the exact format Troupe produces:
//
//   cmake --build build --target fuzz_make_seeds && build/fuzz_make_seeds tests/fuzz/corpus
//
// The text seeds (config files, HTTP requests) and the checkpoint a real run wrote are files in
// the corpus; tests/fuzz/README.md says where each came from.
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_serializer.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "collectives/frame_header.hpp"
#include "collectives/store_wire.hpp"
#include "core/checkpoint.hpp"
#include "tests/fuzz/control_messages.hpp"

namespace fs = std::filesystem;

namespace {

using namespace troupe;

void write_file(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error(path.string() + ": cannot write");
  std::cout << path.string() << " (" << bytes.size() << " bytes)\n";
}

void checkpoints(const fs::path& dir) {
  fs::create_directories(dir);
  checkpoint empty;
  write_checkpoint_file((dir / "empty.trp").string(), empty);

  // The sections a job's checkpoint has (actors/checkpoint/checkpoint_state.cpp), with a small
  // model.
  checkpoint job;
  job.step = 120;
  const std::vector<float> params = {0.5f, -1.25f, 3.0f, 0.0f, -0.0f, 1e-7f, 2.5e6f, -8.0f};
  job.set_string(ckpt_section::job, "mlp");
  job.set_u64(ckpt_section::config, 0x1234abcd5678ef90ULL);
  job.set_string("config_text", "batch=64\nmodel.kind=mlp\nseed=1\n");
  job.set_floats(ckpt_section::params, params);
  job.set_string("opt_kind", "adam");
  job.set_i64("opt_step", 120);
  job.set_floats(std::string(ckpt_section::optimizer_prefix) + "m", params);
  job.set_floats(std::string(ckpt_section::optimizer_prefix) + "v", params);
  job.set_u64s(ckpt_section::sampler, {1, 640});
  job.set_u64s(ckpt_section::rng, {1, 2, 3, 4});
  job.set_u64s("pass_stats", {0x3ff0000000000000ULL, 640, 512});
  job.set_u64s("progress", {7680, 0x4000000000000000ULL});
  write_checkpoint_file((dir / "job-sections.trp").string(), job);

  // Edge cases the format allows: an empty section name and an empty section.
  checkpoint odd;
  odd.step = -1;
  odd.set_bytes("", "x", 1);
  odd.set_bytes("empty", nullptr, 0);
  write_checkpoint_file((dir / "odd-sections.trp").string(), odd);
}

void store_messages(const fs::path& dir) {
  using namespace collectives::wire;
  write_file(dir / "request-set",
             pack(store_request{store_op::set, "zmq/0/addr", "tcp://h:1", {}, 0}));
  write_file(dir / "request-get", pack(store_request{store_op::get, "nccl/id", {}, {}, 0}));
  write_file(dir / "request-wait",
             pack(store_request{store_op::wait, {}, {}, {"ring/0", "ring/1", ""}, 5000}));
  write_file(dir / "reply-ok", pack(store_reply{reply_kind::ok, false, {}}));
  write_file(dir / "reply-value", pack(store_reply{reply_kind::value, true, "tcp://h:1"}));
  write_file(dir / "reply-done", pack(store_reply{reply_kind::done, false, "ring/1"}));
  write_file(dir / "reply-error", pack(store_reply{reply_kind::error, false, "not an array"}));
}

void frame_headers(const fs::path& dir) {
  using collectives::message_header;
  using collectives::pack_frame_header;
  write_file(dir / "zero", pack_frame_header(message_header{}));
  write_file(dir / "allreduce-chunk", pack_frame_header(message_header{3, 2, 17, 1, 4, 9, 65536}));
  write_file(dir / "goodbye", pack_frame_header(message_header{1, 1, 0, 0xffffffffu, 0, 0, 0}));
  write_file(dir / "largest",
             pack_frame_header(message_header{~0ull, ~0ull, ~0u, ~0u, ~0u, ~0u, ~0ull}));
}

class control_writer {
 public:
  control_writer() : sys_(config()) {}

  template <class T>
  void write(const fs::path& path, fuzz::control_message which, T value) {
    std::vector<char> bytes;
    caf::binary_serializer sink{sys_, bytes};
    if (auto err = sink(value)) throw std::runtime_error(path.string() + ": cannot serialise");
    std::string out(1, static_cast<char>(which));
    out.append(bytes.begin(), bytes.end());
    write_file(path, out);
  }

 private:
  static caf::actor_system_config& config() {
    static caf::actor_system_config cfg;
    cfg.add_message_types<caf::id_block::troupe>();
    cfg.add_message_types<caf::id_block::troupe_collectives>();
    return cfg;
  }
  caf::actor_system sys_;
};

void control_messages(const fs::path& dir) {
  using fuzz::control_message;
  namespace col = collectives;
  control_writer w;
  const msg::agent_hello hello{"0.1.0", "agent-0", "east", device_kind::cpu, 2,
                               1,       "node-3",  4242,   "s3cret"};
  const msg::agent_answer refused{false, "agent version 0.0.9, this run is 0.1.0", 0};
  const msg::agent_answer accepted{true, "", 1};
  msg::host_worker host;
  host.prefix = "remote/mlp/0/g1";
  host.control_host = "node-1";
  host.device = device_kind::sim;
  host.device_name = "sim:0";
  host.base = device_kind::cpu;
  host.slowdown = 3.0;
  host.row_seconds = 1e-4;
  host.model = "mlp";
  host.input_shape = {1, 28, 28};
  host.hidden = {256, 128};
  host.optimizer.kind = "adam";
  host.codec = "topk:0.01";
  const msg::host_answer answer{true, "", 1.75, "127.0.0.1"};
  const col::store_value value{true, "tcp://10.0.0.2:40123"};
  const col::store_keys keys{{"zmq/0", "zmq/1"}};

  w.write(dir / "agent-hello", control_message::agent_hello, hello);
  w.write(dir / "agent-answer-refused", control_message::agent_answer, refused);
  w.write(dir / "agent-answer-accepted", control_message::agent_answer, accepted);
  w.write(dir / "host-worker", control_message::host_worker, host);
  w.write(dir / "host-answer", control_message::host_answer, answer);
  w.write(dir / "store-value", control_message::store_value, value);
  w.write(dir / "store-keys", control_message::store_keys, keys);

  // Whole messages, as the middleman carries them between an agent and the control process.
  const auto any = control_message::any_message;
  w.write(dir / "message-agent-hello", any, caf::make_message(hello));
  w.write(dir / "message-agent-answer", any, caf::make_message(accepted));
  w.write(dir / "message-host-worker", any, caf::make_message(host));
  w.write(dir / "message-host-answer", any, caf::make_message(answer));
  w.write(dir / "message-store-set", any,
          caf::make_message(col::st_set_atom_v, std::string("k"), std::string("v")));
  w.write(dir / "message-store-get", any, caf::make_message(col::st_get_atom_v, std::string("k")));
  w.write(dir / "message-store-wait", any,
          caf::make_message(col::st_wait_atom_v, keys, std::uint64_t{7}, std::int64_t{5000}));
  w.write(dir / "message-store-done", any,
          caf::make_message(col::st_done_atom_v, std::uint64_t{7}, std::string("zmq/1")));
  w.write(dir / "message-store-value", any, caf::make_message(value));
  w.write(dir / "message-ring-abort", any,
          caf::make_message(msg::ring_abort_atom_v, std::string("ring/mlp/4")));
  w.write(dir / "message-agents", any, caf::make_message(msg::agents_atom_v, std::int32_t{2}));
  w.write(dir / "message-agent-bye", any, caf::make_message(msg::agent_bye_atom_v));
  w.write(dir / "message-agent-leave", any,
          caf::make_message(msg::agent_leave_atom_v, std::string("agent-0")));
  w.write(dir / "message-empty", any, caf::message{});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR   (tests/fuzz/corpus)\n";
    return 2;
  }
  const fs::path out = argv[1];
  checkpoints(out / "checkpoint");
  store_messages(out / "store_wire");
  frame_headers(out / "frame_header");
  control_messages(out / "control_messages");
  return 0;
}
