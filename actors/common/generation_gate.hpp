#pragma once
// The stale-message rule: every job message carries (job, generation); an actor accepts
// only its current generation and counts what it drops, so a reply from before a membership change
// can never be mistaken for one of the current step.
#include <cstdint>

#include "actors/common/messages.hpp"

namespace troupe::actors {

class generation_gate {
 public:
  generation_gate() = default;  // job 0 at generation 1, until the actor knows its job
  explicit generation_gate(msg::job_id job, msg::generation_id generation)
      : job_(job), epoch_(generation) {}

  // True when the message belongs to this job's current generation; counts it as dropped otherwise.
  template <class Message>
  bool admit(const Message& m) {
    if (m.job == job_ && m.generation == epoch_) return true;
    ++dropped_;
    return false;
  }

  // For actors that only follow the job's generations (workers, distributor, policy actors): a
  // newer generation becomes the current one (only the job makes generations, so newer means a
  // membership change happened); an older one is dropped.
  template <class Message>
  bool follow(const Message& m) {
    if (m.job == job_ && m.generation >= epoch_) {
      epoch_ = m.generation;
      return true;
    }
    ++dropped_;
    return false;
  }

  // For the job: a result of work handed out in generation `since` or later is still valid after
  // the membership changed (a survivor's gradient of the step in flight, a shard's `applied`).
  template <class Message>
  bool admit_since(const Message& m, msg::generation_id since) {
    if (m.job == job_ && m.generation >= since && m.generation <= epoch_) return true;
    ++dropped_;
    return false;
  }

  msg::job_id job() const { return job_; }
  msg::generation_id generation() const { return epoch_; }
  void advance_to(msg::generation_id e) { epoch_ = e; }
  std::int64_t dropped() const { return dropped_; }

 private:
  msg::job_id job_ = 0;
  msg::generation_id epoch_ = 1;
  std::int64_t dropped_ = 0;
};

}  // namespace troupe::actors
