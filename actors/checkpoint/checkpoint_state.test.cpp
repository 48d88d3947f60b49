// Job checkpoints as data: optimizer state survives a file round trip and a change of shard
// count bit for bit, and a checkpoint of another job or config is refused naming file and key.
#include "actors/checkpoint/checkpoint_state.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/testing.hpp"

namespace fs = std::filesystem;
using namespace troupe;
using namespace troupe::actors;

using troupe::testing::temp_dir;

namespace {

models::optimizer_spec spec_of(const std::string& kind) {
  models::optimizer_spec s;
  s.kind = kind;
  s.lr = 0.01;
  s.weight_decay = kind == "adamw" ? 0.01 : 0.0;
  return s;
}

std::vector<float> random_vec(rng& r, std::size_t n) {
  std::vector<float> v(n);
  for (auto& x : v) x = r.uniform_float(-1, 1);
  return v;
}

// `shards` optimizers over contiguous slices of n parameters, stepped together.
struct sharded {
  std::vector<std::pair<std::size_t, std::size_t>> slices;
  std::vector<std::unique_ptr<models::optimizer>> opts;
  sharded(const std::string& kind, std::size_t n, std::size_t shards) {
    std::size_t off = 0;
    for (std::size_t k = 0; k < shards; ++k) {
      const std::size_t c = n / shards + (k < n % shards ? 1 : 0);
      slices.emplace_back(off, c);
      opts.push_back(models::make_optimizer(spec_of(kind), c));
      off += c;
    }
  }
  void step(std::vector<float>& p, const std::vector<float>& g) {
    for (std::size_t k = 0; k < opts.size(); ++k)
      opts[k]->step(p.data() + slices[k].first, g.data() + slices[k].first);
  }
};

job_snapshot snapshot_of(const sharded& s, const std::vector<float>& params, std::int64_t step,
                         const std::string& identity) {
  job_snapshot snap;
  snap.step = step;
  snap.job = "j";
  snap.identity = identity;
  snap.optimizer_kind = s.opts[0]->kind();
  snap.pass_loss_sum = 12.5;
  snap.pass_samples = 99;
  snap.samples_total = 1234;
  snap.step_seconds_total = 0.25;
  // Parts handed in reverse: the encoder orders them by offset.
  for (std::size_t k = s.opts.size(); k-- > 0;) {
    auto part = std::make_shared<ckpt_shard_part>();
    part->offset = s.slices[k].first;
    part->params.assign(
        params.begin() + static_cast<std::ptrdiff_t>(s.slices[k].first),
        params.begin() + static_cast<std::ptrdiff_t>(s.slices[k].first + s.slices[k].second));
    part->optimizer = s.opts[k]->state();
    snap.parts.push_back(part);
  }
  return snap;
}

config::job_config job_cfg() {
  config::job_config c;
  c.name = "j";
  c.model.hidden = {32, 16};
  c.optimizer.kind = troupe::optimizer_kind::adam;
  c.batch = 64;
  return c;
}

}  // namespace

TEST_CASE("optimizer state: checkpoint file round trip continues bit for bit, 2 shards -> 3") {
  const std::size_t n = 101;
  for (const char* kind : {"sgd", "momentum", "adam", "adamw", "adabelief", "max-adabelief"}) {
    CAPTURE(kind);
    rng r(42);
    std::vector<float> p = random_vec(r, n), q = p;
    sharded whole(kind, n, 1), two(kind, n, 2);
    for (int s = 0; s < 4; ++s) {
      const auto g = random_vec(r, n);
      whole.step(p, g);
      two.step(q, g);
    }
    // Element-wise optimizers: shards give exactly one replica's result.
    REQUIRE(p == q);

    temp_dir dir;
    checkpoint_store store(dir.path.string(), 3);
    const std::string path = store.write(to_checkpoint(snapshot_of(two, q, 4, "id\n")));
    const job_snapshot back = from_checkpoint(read_checkpoint_file(path));
    CHECK(back.step == 4);
    CHECK(back.optimizer_kind == kind);
    CHECK(back.pass_loss_sum == 12.5);
    CHECK(back.pass_samples == 99);
    CHECK(back.samples_total == 1234);
    CHECK(back.step_seconds_total == 0.25);
    REQUIRE(back.parts.size() == 1);
    CHECK(back.parts[0]->params == q);
    CHECK(back.parts[0]->optimizer.step == 4);

    // Resume onto three shards from the whole-model state; both continue identically.
    sharded three(kind, n, 3);
    for (std::size_t k = 0; k < 3; ++k)
      three.opts[k]->load_state(
          slice_state(back.parts[0]->optimizer, three.slices[k].first, three.slices[k].second));
    std::vector<float> resumed = back.parts[0]->params;
    for (int s = 0; s < 3; ++s) {
      const auto g = random_vec(r, n);
      whole.step(p, g);
      three.step(resumed, g);
    }
    CHECK(resumed == p);
    // And the state mattered (a fresh optimizer diverges), except for stateless SGD.
    if (std::string(kind) != "sgd") {
      sharded fresh(kind, n, 1);
      std::vector<float> f = back.parts[0]->params;
      rng r2(42);
      for (int s = 0; s < 3; ++s) fresh.step(f, random_vec(r2, n));
      CHECK(f != p);
    }
  }
}

TEST_CASE("the members and the sample ledger survive a round trip; both are optional") {
  sharded one("sgd", 5, 1);
  auto snap = snapshot_of(one, std::vector<float>(5, 1.0f), 7, "id\n");
  auto plain = from_checkpoint(to_checkpoint(snap));
  CHECK(plain.members.empty());
  CHECK_FALSE(plain.has_ledger);

  snap.members = {"a/0 cpu", "b/0 sim"};
  snap.has_ledger = true;
  snap.ledger_pass = 2;
  snap.ledger = {1, 0, 1, 1};
  auto c = to_checkpoint(snap);
  const auto back = from_checkpoint(c);
  CHECK(back.members == snap.members);
  CHECK(back.has_ledger);
  CHECK(back.ledger_pass == 2);
  CHECK(back.ledger == snap.ledger);
  // One of the pair without the other is a damaged checkpoint.
  checkpoint half;
  for (const auto& sect : c.sections())
    if (sect.name != "ledger_pass") half.set_bytes(sect.name, sect.bytes.data(), sect.bytes.size());
  half.step = c.step;
  CHECK_THROWS_AS(from_checkpoint(half), runtime_failure);
}

TEST_CASE("to_checkpoint refuses slices with a gap or an overlap") {
  rng r(1);
  sharded two("adam", 10, 2);
  auto snap = snapshot_of(two, random_vec(r, 10), 1, "id\n");
  auto moved = std::make_shared<ckpt_shard_part>(*snap.parts[0]);
  moved->offset += 1;
  snap.parts[0] = moved;
  CHECK_THROWS_AS(to_checkpoint(snap), runtime_failure);
}

TEST_CASE("a checkpoint of another job or config is refused, naming the file and the key") {
  const auto cfg = job_cfg();
  const std::string mine = checkpoint_identity(cfg, 1000);
  auto other = cfg;
  other.optimizer.lr = 0.01;
  const std::string theirs = checkpoint_identity(other, 1000);
  REQUIRE(mine != theirs);
  CHECK(identity_fingerprint(mine) != identity_fingerprint(theirs));
  // Keys a resumed run may change do not enter the identity.
  auto longer = cfg;
  longer.epochs = 9;
  longer.max_steps = 5000;
  longer.sync.ps_shards = 4;
  longer.checkpoint.every_steps = 7;
  CHECK(checkpoint_identity(longer, 1000) == mine);

  rng r(3);
  sharded one("adam", 1000, 1);
  checkpoint c = to_checkpoint(snapshot_of(one, random_vec(r, 1000), 10, theirs));
  c.source = "/x/j/ckpt-000000010.trp";
  try {
    check_belongs(c, "j", mine);
    FAIL("expected a refusal");
  } catch (const input_error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("/x/j/ckpt-000000010.trp") != std::string::npos);
    CHECK(what.find("optimizer.lr") != std::string::npos);
  }
  try {
    check_belongs(c, "k", theirs);
    FAIL("expected a refusal");
  } catch (const input_error& e) {
    CHECK(std::string(e.what()).find("of job 'j', not of job 'k'") != std::string::npos);
  }
  CHECK_NOTHROW(check_belongs(c, "j", theirs));
  // A different model size is a different identity too.
  CHECK_THROWS_AS(check_belongs(c, "j", checkpoint_identity(other, 999)), input_error);
}

TEST_CASE("the sampler position of a step: cursor within the pass and the pass's RNG stream") {
  const auto a = position_of(25, 10, 64, 7);
  CHECK(a.pass == 2);
  CHECK(a.position == 5 * 64);
  CHECK(a.rng == rng{7}.fork(2).state());
  CHECK(position_of(30, 10, 64, 7).position == 0);
  CHECK(position_of(25, 10, 64, 8).rng != a.rng);
}

TEST_CASE("the distributed form's per-rank moments merge into one state and split back") {
  using troupe::actors::merge_rank_states;
  using troupe::actors::split_rank_states;
  troupe::models::optimizer_state a{7, {"m", "s", "s_max"}, {{1, 2}, {3, 4}, {5, 6}}};
  troupe::models::optimizer_state b{7, {"m", "s", "s_max"}, {{-1, -2}, {-3, -4}, {-5, -6}}};
  const auto merged = merge_rank_states({{0, a}, {12, b}});
  CHECK(merged.step == 7);
  CHECK(merged.names == std::vector<std::string>{"rank0/m", "rank0/s", "rank0/s_max", "rank12/m",
                                                 "rank12/s", "rank12/s_max"});
  const auto back = split_rank_states(merged, "ckpt");
  REQUIRE(back.size() == 2);
  CHECK(back[0].first == 0);
  CHECK(back[0].second.names == a.names);
  CHECK(back[0].second.buffers == a.buffers);
  CHECK(back[1].first == 12);
  CHECK(back[1].second.buffers == b.buffers);
  CHECK(back[1].second.step == 7);
  // Workers at different steps cannot be one checkpoint.
  b.step = 8;
  CHECK_THROWS_AS(merge_rank_states({{0, a}, {1, b}}), troupe::runtime_failure);
  // A replicated optimizer's state, or a damaged name, is not a worker's.
  for (const std::string bad : {"m", "rank/m", "rankx/m", "rank1/", "rank1234567890123/m"}) {
    troupe::models::optimizer_state s{1, {bad}, {{0}}};
    CAPTURE(bad);
    CHECK_THROWS_AS(split_rank_states(s, "ckpt"), troupe::input_error);
  }
}
