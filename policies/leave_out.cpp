#include "policies/leave_out.hpp"

#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/error.hpp"
#include "core/median.hpp"

namespace troupe::policies {

leave_out_trial::leave_out_trial(leave_out_options o, std::size_t ranks)
    : o_(o), samples_by_rank_(ranks, 0) {
  if (o_.first_step < 0) throw input_error("leave-out: first_step must be >= 0");
  if (o_.window < 2) throw input_error("leave-out: window must be >= 2");
  if (!(o_.max_share > 0.0 && o_.max_share < 1.0))
    throw input_error("leave-out: max_share must be in (0, 1)");
  if (!(o_.min_gain >= 0.0) || !std::isfinite(o_.min_gain))
    throw input_error("leave-out: min_gain must be >= 0");
}

leave_out_trial::action leave_out_trial::on_step(std::int64_t step, double seconds,
                                                 const std::vector<std::int64_t>& rank_samples) {
  const std::int64_t total =
      std::accumulate(rank_samples.begin(), rank_samples.end(), std::int64_t{0});
  const double sps = seconds > 0 ? static_cast<double>(total) / seconds : 0.0;
  switch (phase_) {
    case phase::waiting:
      if (step < o_.first_step) return action::none;
      phase_ = phase::with;
      [[fallthrough]];
    case phase::with: {
      with_.push_back(sps);
      for (std::size_t r = 0; r < rank_samples.size() && r < samples_by_rank_.size(); ++r)
        samples_by_rank_[r] += rank_samples[r];
      if (static_cast<std::int64_t>(with_.size()) < o_.window) return action::none;
      const std::int64_t all =
          std::accumulate(samples_by_rank_.begin(), samples_by_rank_.end(), std::int64_t{0});
      std::int64_t theirs = 0;
      std::size_t members = 0;
      for (std::size_t r = 0; r < samples_by_rank_.size(); ++r) {
        if (samples_by_rank_[r] <= 0) continue;
        ++members;
        if (static_cast<double>(samples_by_rank_[r]) < o_.max_share * static_cast<double>(all)) {
          candidates_.push_back(static_cast<std::int32_t>(r));
          theirs += samples_by_rank_[r];
        }
      }
      if (candidates_.empty() || candidates_.size() >= members) {
        candidates_.clear();
        phase_ = phase::done;
        return action::none;
      }
      verdict_ = leave_out_verdict{};
      verdict_->ranks = candidates_;
      verdict_->share = static_cast<double>(theirs) / static_cast<double>(all);
      verdict_->with_sps = median(with_);
      verdict_->window = o_.window;
      phase_ = phase::without;
      without_from_ = step + 2;  // the first step without them pays for the change
      return action::set_aside;
    }
    case phase::without:
      if (step < without_from_) return action::none;
      without_.push_back(sps);
      if (static_cast<std::int64_t>(without_.size()) < o_.window) return action::none;
      verdict_->without_sps = median(without_);
      verdict_->left_out = verdict_->without_sps > verdict_->with_sps * (1.0 + o_.min_gain);
      phase_ = phase::done;
      return verdict_->left_out ? action::none : action::bring_back;
    case phase::done:
      return action::none;
  }
  return action::none;
}

leave_out_trial::action leave_out_trial::abandon() {
  const bool out = phase_ == phase::without;
  phase_ = phase::done;
  if (out) verdict_.reset();
  return out ? action::bring_back : action::none;
}

std::string describe(const leave_out_verdict& v, const std::vector<std::string>& names) {
  std::string who;
  for (auto r : v.ranks)
    who += " " + (static_cast<std::size_t>(r) < names.size() ? names[r] : std::to_string(r));
  char buf[256];
  std::snprintf(buf, sizeof buf,
                ": %.0f samples/s without them against %.0f with them (medians of %lld steps); "
                "they computed %.1f%% of the samples",
                v.without_sps, v.with_sps, static_cast<long long>(v.window), 100.0 * v.share);
  return (v.left_out ? "left out" : "kept") + who + buf;
}

}  // namespace troupe::policies
