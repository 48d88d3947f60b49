// `sync: allreduce` (actors/sync/allreduce_step.hpp) against `sync: ps`: the same 50 deterministic
// steps over 3 heterogeneous workers with a weighted split must train the same model (
// sums divided by the total, whatever the aggregation path), and the distributed Max-AdaBelief
// form must run with every replica identical at the end (the job fails a run whose replicas
// differ, so `completed` is the consistency check).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "actors/runtime.hpp"
#include "core/config_load.hpp"
#include "core/error.hpp"
#include "tests/run_support.hpp"

namespace {

using troupe::testing::relative_l2;

troupe::job_report run_one(const std::string& yaml) {
  return troupe::testing::run_one(yaml, "allreduce.yaml", 50);
}

std::string config_text(const std::string& optimizer, const std::string& sync) {
  return troupe::testing::small_mlp_config("eq", troupe::testing::three_workers, optimizer, sync,
                                           50);
}

}  // namespace

TEST_CASE("sync: allreduce trains the same model as sync: ps (3 heterogeneous workers)") {
  for (const std::string opt : {"{kind: sgd, lr: 0.05}", "{kind: adam, lr: 0.01}"}) {
    CAPTURE(opt);
    const auto ar = run_one(config_text(opt, "{mode: allreduce}"));
    const auto ps = run_one(config_text(opt, "{mode: ps, ps_shards: 2}"));
    REQUIRE(ar.workers.size() == 3);
    // Weights 1 : 1 : 0.5 over 3 blocks of 32 (the canonical reduction's default): one each.
    CHECK(ar.workers[0].mean_batch > 0);
    CHECK(ar.workers[2].mean_batch > 0);
    CHECK(ar.train_loss < 1.0);  // it trained: not a comparison of two initialisations
    const double rel = relative_l2(*ar.final_params, *ps.final_params);
    MESSAGE("relative L2 allreduce vs ps (" << opt << "): " << rel);
    CHECK(rel < 1e-5);
    // Deterministic: both add the same block sums in block order (the canonical reduction), the
    // shared reducer divides as the shards do, and element-wise optimizers give the same bits
    // on a whole replica as on shard slices.
    CHECK(ar.params.fnv1a64 == ps.params.fnv1a64);
    CHECK(ar.test_accuracy == doctest::Approx(ps.test_accuracy).epsilon(1e-3));
  }
}

TEST_CASE("distributed Max-AdaBelief runs under sync: allreduce with identical replicas") {
  const auto dist = run_one(
      config_text("{kind: max-adabelief, lr: 0.01, form: distributed}", "{mode: allreduce}"));
  const auto repl = run_one(config_text("{kind: max-adabelief, lr: 0.01}", "{mode: allreduce}"));
  // `completed` means the job found every replica bit-identical (fnv1a64) at the end.
  CHECK(dist.train_loss < 1.0);
  CHECK(dist.test_accuracy > 0.5);
  // A different algorithm (moments from local gradients), so not the replicated parameters, but
  // the same neighbourhood of quality.
  const double rel = relative_l2(*dist.final_params, *repl.final_params);
  MESSAGE("relative L2 distributed vs replicated max-adabelief: " << rel);
  CHECK(rel > 0.0);
  CHECK(dist.test_accuracy == doctest::Approx(repl.test_accuracy).epsilon(0.1));
}

TEST_CASE("optimizer.form: distributed is refused outside max-adabelief + sync: allreduce") {
  for (const auto& [opt, sync] :
       {std::pair<std::string, std::string>{"{kind: adam, form: distributed}", "{mode: allreduce}"},
        {"{kind: max-adabelief, form: distributed}", "{mode: ps}"}}) {
    CAPTURE(opt);
    try {
      troupe::config::parse_config(config_text(opt, sync), "bad.yaml");
      FAIL("accepted");
    } catch (const troupe::input_error& e) {
      const std::string what = e.what();
      CHECK(what.find("jobs[0].optimizer.form") != std::string::npos);
      CHECK(what.find("max-adabelief") != std::string::npos);
    }
  }
}
