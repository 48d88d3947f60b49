#include "data/sample_ledger.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "core/error.hpp"

using troupe::data::sample_ledger;

namespace {
void record(sample_ledger& l, std::int64_t pass, std::vector<std::int64_t> idx) {
  l.record(pass, idx.data(), idx.size());
}
}  // namespace

TEST_CASE("a pass trained once counts nothing twice or never; holes and repeats are counted") {
  sample_ledger l(6);
  record(l, 0, {5, 0, 3});
  record(l, 0, {1, 4, 2});
  record(l, 1, {2, 2, 0});  // pass 0 ends here: complete
  auto t = l.totals();
  CHECK(t.passes_checked == 1);
  CHECK(t.counted_twice == 1);  // sample 2 twice in pass 1
  CHECK(t.never_counted == 0);
  CHECK(t.recorded == 9);
  l.end_pass();  // pass 1 ends with 1, 3, 4, 5 untrained
  t = l.totals();
  CHECK(t.passes_checked == 2);
  CHECK(t.never_counted == 4);
  CHECK(l.open_pass() == -1);
}

TEST_CASE("restored counts go on counting the interrupted pass; unknown ones check repeats only") {
  sample_ledger first(4);
  record(first, 3, {0, 1});
  sample_ledger resumed(4);
  resumed.restore(first.open_pass(), first.counts());
  record(resumed, 3, {2, 3});
  resumed.end_pass();
  CHECK(resumed.totals().never_counted == 0);
  CHECK(resumed.totals().counted_twice == 0);
  // Resumed after a step that trained sample 1 again: a repeat.
  sample_ledger again(4);
  again.restore(3, first.counts());
  record(again, 3, {1, 2, 3});
  again.end_pass();
  CHECK(again.totals().counted_twice == 1);

  sample_ledger unknown(4);
  unknown.resume_unknown(3);
  record(unknown, 3, {2, 3, 3});
  unknown.end_pass();
  CHECK(unknown.totals().never_counted == 0);  // 0 and 1 may have been trained before
  CHECK(unknown.totals().counted_twice == 1);
  CHECK(unknown.totals().passes_checked == 1);
}

TEST_CASE("bad calls are refused") {
  sample_ledger l(3);
  std::vector<std::int64_t> out{3};
  CHECK_THROWS_AS(l.record(0, out.data(), 1), troupe::runtime_failure);
  record(l, 2, {0});
  CHECK_THROWS_AS(record(l, 1, {1}), troupe::runtime_failure);
  CHECK_THROWS_AS(l.restore(0, std::vector<std::uint8_t>(2)), troupe::runtime_failure);
}
