#include "data/sample_ledger.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace troupe::data {

sample_ledger::sample_ledger(std::size_t samples) : counts_(samples, 0) {}

void sample_ledger::record(std::int64_t pass, const std::int64_t* indices, std::size_t count) {
  if (pass < pass_)
    throw runtime_failure("sample ledger: pass " + std::to_string(pass) + " recorded after pass " +
                          std::to_string(pass_));
  if (pass > pass_) {
    end_pass();
    pass_ = pass;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const auto k = indices[i];
    if (k < 0 || static_cast<std::size_t>(k) >= counts_.size())
      throw runtime_failure("sample ledger: index " + std::to_string(k) + " outside [0, " +
                            std::to_string(counts_.size()) + ")");
    auto& c = counts_[static_cast<std::size_t>(k)];
    if (c > 0) ++totals_.counted_twice;
    if (c < 255) ++c;
  }
  totals_.recorded += static_cast<std::int64_t>(count);
}

void sample_ledger::end_pass() {
  if (pass_ < 0) return;
  if (!partial_)
    totals_.never_counted += std::count(counts_.begin(), counts_.end(), std::uint8_t{0});
  ++totals_.passes_checked;
  std::fill(counts_.begin(), counts_.end(), std::uint8_t{0});
  pass_ = -1;
  partial_ = false;
}

ledger_totals sample_ledger::totals() const {
  return totals_;
}

void sample_ledger::restore(std::int64_t pass, std::vector<std::uint8_t> counts) {
  if (counts.size() != counts_.size())
    throw runtime_failure("sample ledger: " + std::to_string(counts.size()) +
                          " counts for a training set of " + std::to_string(counts_.size()));
  counts_ = std::move(counts);
  pass_ = pass;
  partial_ = false;
}

void sample_ledger::resume_unknown(std::int64_t pass) {
  std::fill(counts_.begin(), counts_.end(), std::uint8_t{0});
  pass_ = pass;
  partial_ = true;
}

}  // namespace troupe::data
