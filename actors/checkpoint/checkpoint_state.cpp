#include "actors/checkpoint/checkpoint_state.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <sstream>

#include "core/bit_cast.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/rng.hpp"

namespace troupe::actors {
namespace {

namespace sec = ckpt_section;
constexpr const char* config_text = "config_text";
constexpr const char* opt_kind = "opt_kind";
constexpr const char* opt_step = "opt_step";
constexpr const char* pass_stats = "pass_stats";
constexpr const char* progress = "progress";
constexpr const char* members = "members";
constexpr const char* ledger_pass = "ledger_pass";
constexpr const char* ledger = "ledger";
constexpr const char* ledger_totals = "ledger_totals";

// %.17g: a double printed this way reads back to the same bits, so equal configs give equal text.
std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

template <class T>
std::string joined(const std::vector<T>& v) {
  std::ostringstream s;
  for (std::size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string key_of(const std::string& line) {
  return line.substr(0, line.find('='));
}

}  // namespace

std::string checkpoint_identity(const config::job_config& c, std::size_t param_count) {
  std::ostringstream s;
  s << "model.kind=" << c.model.kind << "\n"
    << "model.hidden=" << joined(c.model.hidden) << "\n"
    << "model.conv_layers=" << c.model.conv_layers << "\n"
    << "model.kernel=" << c.model.kernel << "\n"
    << "data.dataset=" << name_of(c.data.dataset) << "\n"
    << "data.path=" << c.data.path << "\n"
    << "data.preprocess=" << joined(c.data.preprocess) << "\n"
    << "data.mode=" << name_of(c.data.mode) << "\n"
    << "data.synthetic.kind=" << name_of(c.data.generator) << "\n"
    << "data.synthetic.samples=" << c.data.synthetic_samples << "\n"
    << "data.priority="
    << (c.data.priority ? num(c.data.priority->alpha) + "," + num(c.data.priority->beta) : "")
    << "\n"
    << "optimizer.kind=" << name_of(c.optimizer.kind) << "\n"
    << "optimizer.lr=" << num(c.optimizer.lr) << "\n"
    << "optimizer.momentum=" << num(c.optimizer.momentum) << "\n"
    << "optimizer.nesterov=" << c.optimizer.nesterov << "\n"
    << "optimizer.beta1=" << num(c.optimizer.beta1) << "\n"
    << "optimizer.beta2=" << num(c.optimizer.beta2) << "\n"
    << "optimizer.eps=" << num(c.optimizer.eps) << "\n"
    << "optimizer.weight_decay=" << num(c.optimizer.weight_decay) << "\n"
    << "optimizer.form=" << name_of(c.optimizer.form) << "\n"
    << "batch=" << c.batch << "\n"
    << "seed=" << c.seed << "\n"
    << "parameters=" << param_count << "\n";
  return s.str();
}

std::uint64_t identity_fingerprint(const std::string& identity) {
  return fnv1a64(identity.data(), identity.size());
}

sampler_position position_of(std::int64_t step, std::int64_t steps_per_pass, std::int64_t batch,
                             std::uint64_t seed) {
  sampler_position p;
  p.pass = static_cast<std::uint64_t>(step / steps_per_pass);
  p.position = static_cast<std::uint64_t>((step % steps_per_pass) * batch);
  // The stream data::epoch_sampler draws pass p's permutation from.
  p.rng = rng{seed}.fork(p.pass).state();
  return p;
}

checkpoint to_checkpoint(const job_snapshot& s) {
  if (s.parts.empty())
    throw runtime_failure("checkpoint of step " + std::to_string(s.step) + ": no parameter slices");
  auto parts = s.parts;
  std::sort(parts.begin(), parts.end(),
            [](const auto& a, const auto& b) { return a->offset < b->offset; });
  std::size_t n = 0;
  const auto& first = parts.front()->optimizer;
  for (const auto& p : parts) {
    const auto what = "checkpoint of step " + std::to_string(s.step) + ": slice at " +
                      std::to_string(p->offset) + ": ";
    if (p->offset != n)
      throw runtime_failure(what + "expected offset " + std::to_string(n) + " (gap or overlap)");
    if (p->optimizer.names != first.names || p->optimizer.step != first.step)
      throw runtime_failure(what + "optimizer state differs from the first slice's");
    for (const auto& b : p->optimizer.buffers)
      if (b.size() != p->params.size())
        throw runtime_failure(what + "optimizer buffer size differs from the slice's");
    n += p->params.size();
  }

  checkpoint c;
  c.step = s.step;
  c.set_string(sec::job, s.job);
  c.set_u64(sec::config, identity_fingerprint(s.identity));
  c.set_string(config_text, s.identity);
  std::vector<float> flat;
  flat.reserve(n);
  for (const auto& p : parts) flat.insert(flat.end(), p->params.begin(), p->params.end());
  c.set_floats(sec::params, flat);
  c.set_string(opt_kind, s.optimizer_kind);
  c.set_i64(opt_step, first.step);
  for (std::size_t b = 0; b < first.names.size(); ++b) {
    flat.clear();
    for (const auto& p : parts)
      flat.insert(flat.end(), p->optimizer.buffers[b].begin(), p->optimizer.buffers[b].end());
    c.set_floats(std::string(sec::optimizer_prefix) + first.names[b], flat);
  }
  c.set_u64s(sec::sampler, {s.pass, s.position});
  c.set_u64s(sec::rng, {s.rng[0], s.rng[1], s.rng[2], s.rng[3]});
  c.set_u64s(pass_stats,
             {bit_cast<std::uint64_t>(s.pass_loss_sum), s.pass_samples, s.pass_correct});
  c.set_u64s(progress, {s.samples_total, bit_cast<std::uint64_t>(s.step_seconds_total)});
  std::string names;
  for (const auto& m : s.members) names += m + "\n";
  c.set_string(members, names);
  if (s.has_ledger) {
    c.set_i64(ledger_pass, s.ledger_pass);
    c.set_bytes(ledger, s.ledger.data(), s.ledger.size());
    const auto& t = s.ledger_totals;
    c.set_u64s(ledger_totals, {static_cast<std::uint64_t>(t.passes_checked),
                               static_cast<std::uint64_t>(t.counted_twice),
                               static_cast<std::uint64_t>(t.never_counted)});
  }
  return c;
}

job_snapshot from_checkpoint(const checkpoint& c) {
  const auto fail = [&](const std::string& what) -> void {
    throw runtime_failure((c.source.empty() ? std::string("checkpoint") : c.source) + ": " + what);
  };
  job_snapshot s;
  s.step = c.step;
  s.job = c.string(sec::job);
  s.identity = c.string(config_text);
  if (c.u64(sec::config) != identity_fingerprint(s.identity))
    fail("config fingerprint does not match its config_text section");
  auto part = std::make_shared<ckpt_shard_part>();
  part->params = c.floats(sec::params);
  s.optimizer_kind = c.string(opt_kind);
  part->optimizer.step = c.i64(opt_step);
  const std::string prefix = sec::optimizer_prefix;
  for (const auto& sect : c.sections()) {
    if (sect.name.compare(0, prefix.size(), prefix) != 0) continue;
    part->optimizer.names.push_back(sect.name.substr(prefix.size()));
    part->optimizer.buffers.push_back(c.floats(sect.name));
    if (part->optimizer.buffers.back().size() != part->params.size())
      fail("section '" + sect.name + "' has " +
           std::to_string(part->optimizer.buffers.back().size()) + " floats for " +
           std::to_string(part->params.size()) + " parameters");
  }
  const auto cursor = c.u64s(sec::sampler);
  const auto r = c.u64s(sec::rng);
  const auto ps = c.u64s(pass_stats);
  const auto pr = c.u64s(progress);
  if (cursor.size() != 2) fail("section 'sampler': expected 2 values");
  if (r.size() != 4) fail("section 'rng': expected 4 values");
  if (ps.size() != 3) fail("section 'pass_stats': expected 3 values");
  if (pr.size() != 2) fail("section 'progress': expected 2 values");
  s.pass = cursor[0];
  s.position = cursor[1];
  s.rng = {r[0], r[1], r[2], r[3]};
  s.pass_loss_sum = bit_cast<double>(ps[0]);
  s.pass_samples = ps[1];
  s.pass_correct = ps[2];
  s.samples_total = pr[0];
  s.step_seconds_total = bit_cast<double>(pr[1]);
  if (c.has(members)) s.members = lines_of(c.string(members));
  if (c.has(ledger) != c.has(ledger_pass))
    fail("sections 'ledger' and 'ledger_pass' come together");
  if (c.has(ledger)) {
    s.has_ledger = true;
    s.ledger_pass = c.i64(ledger_pass);
    s.ledger = c.bytes(ledger);
  }
  if (c.has(ledger_totals)) {
    const auto t = c.u64s(ledger_totals);
    if (t.size() != 3)
      fail("section 'ledger_totals' holds " + std::to_string(t.size()) + " values, not 3");
    s.ledger_totals.passes_checked = static_cast<std::int64_t>(t[0]);
    s.ledger_totals.counted_twice = static_cast<std::int64_t>(t[1]);
    s.ledger_totals.never_counted = static_cast<std::int64_t>(t[2]);
  }
  s.parts.push_back(std::move(part));
  return s;
}

void check_belongs(const checkpoint& c, const std::string& job, const std::string& identity) {
  const std::string file = c.source.empty() ? std::string("checkpoint") : c.source;
  const std::string theirs_job = c.string(sec::job);
  if (theirs_job != job)
    throw input_error("--resume: " + file + " is a checkpoint of job '" + theirs_job +
                      "', not of job '" + job + "'");
  const std::string theirs = c.string(config_text);
  if (theirs == identity && c.u64(sec::config) == identity_fingerprint(identity)) return;
  const auto a = lines_of(theirs), b = lines_of(identity);
  std::string diff;
  for (const auto& line : b) {
    const auto k = key_of(line);
    auto it = std::find_if(a.begin(), a.end(), [&](const auto& l) { return key_of(l) == k; });
    if (it == a.end() || *it != line) {
      diff = k + " is '" + (it == a.end() ? std::string("(absent)") : it->substr(k.size() + 1)) +
             "' there, '" + line.substr(k.size() + 1) + "' here";
      break;
    }
  }
  if (diff.empty()) diff = "the fingerprint differs";
  throw input_error("--resume: " + file + " was written by a different config for job '" + job +
                    "': " + diff +
                    " (model, data, optimizer, batch and seed must match; epochs, max_steps and "
                    "devices may change)");
}

models::optimizer_state slice_state(const models::optimizer_state& whole, std::size_t offset,
                                    std::size_t count) {
  models::optimizer_state out;
  out.step = whole.step;
  out.names = whole.names;
  for (const auto& b : whole.buffers) {
    if (offset + count > b.size())
      throw runtime_failure("optimizer state slice [" + std::to_string(offset) + ", +" +
                            std::to_string(count) + ") past its " + std::to_string(b.size()) +
                            " floats");
    out.buffers.emplace_back(b.begin() + static_cast<std::ptrdiff_t>(offset),
                             b.begin() + static_cast<std::ptrdiff_t>(offset + count));
  }
  return out;
}

models::optimizer_state merge_rank_states(
    const std::vector<std::pair<std::int32_t, models::optimizer_state>>& ranks) {
  models::optimizer_state out;
  bool first = true;
  for (const auto& [rank, st] : ranks) {
    if (!first && st.step != out.step)
      throw runtime_failure("distributed optimizer: rank " + std::to_string(rank) + " is at step " +
                            std::to_string(st.step) + ", another at " + std::to_string(out.step));
    out.step = st.step;
    first = false;
    for (std::size_t i = 0; i < st.names.size() && i < st.buffers.size(); ++i) {
      out.names.push_back("rank" + std::to_string(rank) + "/" + st.names[i]);
      out.buffers.push_back(st.buffers[i]);
    }
  }
  return out;
}

std::vector<std::pair<std::int32_t, models::optimizer_state>> split_rank_states(
    const models::optimizer_state& merged, const std::string& source) {
  std::vector<std::pair<std::int32_t, models::optimizer_state>> out;
  for (std::size_t i = 0; i < merged.names.size() && i < merged.buffers.size(); ++i) {
    const auto& name = merged.names[i];
    const auto slash = name.find('/');
    const bool ok = name.rfind("rank", 0) == 0 && slash != std::string::npos && slash > 4 &&
                    slash <= 13 && slash + 1 < name.size() &&
                    name.find_first_not_of("0123456789", 4) == slash;
    if (!ok)
      throw input_error(source + ": optimizer buffer '" + name.substr(0, 64) +
                        "' is not a worker's (rank<R>/<name>): a checkpoint of "
                        "optimizer.form: distributed holds each worker's moments");
    const auto rank = static_cast<std::int32_t>(std::stol(name.substr(4, slash - 4)));
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == rank; });
    if (it == out.end()) {
      out.emplace_back(rank, models::optimizer_state{});
      it = std::prev(out.end());
      it->second.step = merged.step;
    }
    it->second.names.push_back(name.substr(slash + 1));
    it->second.buffers.push_back(merged.buffers[i]);
  }
  return out;
}

}  // namespace troupe::actors
