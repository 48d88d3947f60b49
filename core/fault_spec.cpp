#include "core/fault_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace troupe::config {
namespace {

const std::vector<std::string>& actions() {
  static const std::vector<std::string> a = all_names<fault_action>();
  return a;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// A cursor over the spec; every error points at a column.
class parser {
 public:
  parser(const std::string& text, const std::string& flag) : t_(text), flag_(flag) {}

  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw input_error(flag_ + " '" + t_ + "': column " + std::to_string(at + 1) + ": " + what +
                      "\n  " + t_ + "\n  " + std::string(at, ' ') + "^");
  }

  std::size_t pos() const { return pos_; }
  bool at_end() const { return pos_ >= t_.size(); }
  char peek() const { return at_end() ? '\0' : t_[pos_]; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  // What stands at the cursor, for messages.
  std::string found() const {
    return at_end() ? std::string("the end") : "'" + std::string(1, t_[pos_]) + "'";
  }
  void expect(char c, const std::string& why) {
    if (!eat(c)) fail(pos_, "expected '" + std::string(1, c) + "' " + why + ", found " + found());
  }

  fault_action action() {
    const auto colon = t_.find(':');
    if (colon == std::string::npos)
      fail(0, "expected ACTION:TARGET... (actions: " + join(actions()) + ")");
    const std::string a = t_.substr(0, colon);
    const auto parsed = parse_name<fault_action>(a);
    if (!parsed) {
      std::string hint;
      for (const auto& k : actions())
        if (edit_distance(a, k) <= 2) hint = "; did you mean '" + k + "'?";
      fail(0, "unknown action '" + a + "' (expected one of " + join(actions()) + ")" + hint);
    }
    pos_ = colon + 1;
    return *parsed;
  }

  // After "kill:DEVICE@STEP:": where in the step it strikes.
  fault_phase phase() {
    const std::size_t start = pos_;
    while (!at_end() && is_name_char(peek())) ++pos_;
    const std::string p = t_.substr(start, pos_ - start);
    const auto parsed = parse_name<fault_phase>(p);
    if (!parsed)
      fail(start, "expected PHASE (compute, reduce, apply or eval) after ':', found " +
                      (p.empty() ? found() : "'" + p + "'"));
    return *parsed;
  }

  std::string group(char terminator, const std::string& next) {
    const std::size_t start = pos_;
    while (!at_end() && is_name_char(peek())) ++pos_;
    if (pos_ == start) fail(pos_, "expected GROUP (letters, digits, _, -, .), found " + found());
    std::string g = t_.substr(start, pos_ - start);
    if (peek() != terminator)
      fail(pos_, found() + " cannot follow GROUP '" + g + "': expected '" +
                     std::string(1, terminator) + "' then " + next);
    ++pos_;
    return g;
  }

  // Digits only; `what` names the field for messages.
  std::int64_t integer(const std::string& what, std::size_t max_digits = 18) {
    const std::size_t start = pos_;
    while (!at_end() && is_digit(peek())) ++pos_;
    if (pos_ == start) fail(start, "expected " + what + " (digits), found " + found());
    if (pos_ - start > max_digits) fail(start, what + " is too large");
    return std::stoll(t_.substr(start, pos_ - start));
  }

  double number(const std::string& what) {
    const std::size_t start = pos_;
    while (!at_end() && is_digit(peek())) ++pos_;
    if (pos_ == start) fail(start, "expected " + what + ", found " + found());
    if (eat('.')) {
      const std::size_t frac = pos_;
      while (!at_end() && is_digit(peek())) ++pos_;
      if (pos_ == frac) fail(pos_, "expected digits after '.' in " + what + ", found " + found());
    }
    if (pos_ - start > 30) fail(start, what + " is too long");
    return std::strtod(t_.substr(start, pos_ - start).c_str(), nullptr);
  }

  // FIRST "-" [LAST]; fills step and until_step. `single_ok`: a lone FIRST means that step only.
  void window(fault_config& f, bool single_ok) {
    const std::string action = name_of(f.action);
    f.step = integer("STEP");
    if (!eat('-')) {
      if (!single_ok)
        fail(pos_,
             action + " needs a window: @FIRST-LAST, or @FIRST- to the end; found " + found());
      f.until_step = f.step;
      return;
    }
    if (at_end()) {
      f.until_step = -1;
      return;
    }
    const std::size_t last_at = pos_;
    f.until_step = integer("LAST step");
    if (f.until_step < f.step)
      fail(last_at, "LAST step " + std::to_string(f.until_step) + " is before FIRST step " +
                        std::to_string(f.step));
  }

  void single_step(fault_config& f) {
    f.step = integer("STEP");
    if (peek() == '-')
      fail(pos_, std::string(name_of(f.action)) +
                     " fires at one step; a window FIRST-LAST is only for slow, delay and "
                     "partition");
  }

  void finish() const {
    if (!at_end()) fail(pos_, "unexpected '" + t_.substr(pos_) + "' after the spec");
  }

 private:
  const std::string& t_;
  const std::string& flag_;
  std::size_t pos_ = 0;
};

// The shortest fixed-point text that reads back as the same double (the grammar has no
// exponents, so %g is out).
std::string exact_decimal(double v, const std::string& what) {
  if (!std::isfinite(v) || v < 0)
    throw input_error("fault " + what + " " + std::to_string(v) + " cannot be written as a spec");
  char buf[512];
  for (int p = 0; p <= 40; ++p) {
    std::snprintf(buf, sizeof buf, "%.*f", p, v);
    if (std::strtod(buf, nullptr) == v) return buf;
  }
  return buf;
}

// ms for a delay: the shortest text whose value / 1000 is `seconds` again, as parse computes it.
std::string delay_ms(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    throw input_error("fault delay " + std::to_string(seconds) + " s cannot be written as a spec");
  char buf[512];
  for (int p = 0; p <= 40; ++p) {
    std::snprintf(buf, sizeof buf, "%.*f", p, seconds * 1000.0);
    if (std::strtod(buf, nullptr) / 1000.0 == seconds) return buf;
  }
  return buf;
}

double round2(double v) {
  return std::round(v * 100.0) / 100.0;
}

}  // namespace

fault_config parse_fault(const std::string& text, const std::string& flag) {
  parser p(text, flag);
  fault_config f;
  f.action = p.action();
  if (f.action == fault_action::partition) {
    f.target = p.group('@', "FIRST-LAST steps");
    p.window(f, false);
    p.finish();
    return f;
  }
  f.target = p.group('/', "INDEX (a device of the group)");
  f.target += "/" + std::to_string(p.integer("INDEX", 8));
  switch (f.action) {
    case fault_action::kill:
    case fault_action::drop:
    case fault_action::hang:
    case fault_action::oom:
    case fault_action::device_error:
      p.expect('@', "then STEP");
      p.single_step(f);
      if (f.action == fault_action::hang && p.eat('+'))
        f.seconds = p.number("SECONDS (how long it hangs)");
      if (f.action == fault_action::kill && p.eat(':')) f.phase = p.phase();
      break;
    case fault_action::slow: {
      p.expect('x', "then FACTOR (slow:GROUP/INDEXxFACTOR@FIRST-LAST)");
      const std::size_t at = p.pos();
      f.factor = p.number("FACTOR (a number >= 1) after 'x'");
      if (f.factor < 1.0) p.fail(at, "FACTOR must be >= 1 (a stretch of compute time)");
      p.expect('@', "then FIRST-LAST steps");
      p.window(f, false);
      break;
    }
    case fault_action::delay:
      p.expect('+', "then MS (delay:GROUP/INDEX+MS@STEP)");
      f.seconds = p.number("MS (milliseconds of delay)") / 1000.0;
      p.expect('@', "then STEP or FIRST-LAST");
      p.window(f, true);
      break;
    case fault_action::partition:  // parsed above
      break;
  }
  p.finish();
  return f;
}

std::string fault_to_string(const fault_config& f) {
  const auto bad = [&](const std::string& why) -> void {
    throw input_error(std::string("fault '") + name_of(f.action) + "' on '" + f.target +
                      "' at step " + std::to_string(f.step) +
                      " cannot be written as a spec: " + why);
  };
  const bool device = f.target.find('/') != std::string::npos;
  const auto window = [&] {
    if (f.until_step != -1 && f.until_step < f.step) bad("until_step is before step");
    return std::to_string(f.step) + "-" + (f.until_step == -1 ? "" : std::to_string(f.until_step));
  };
  const std::string head = name_of(f.action) + (":" + f.target);
  if (f.phase != fault_phase::compute && f.action != fault_action::kill)
    bad("only a kill takes a phase");
  if (f.action == fault_action::partition) {
    if (device) bad("partition takes a group, not a device");
    return head + "@" + window();
  }
  if (!device) bad("a GROUP/INDEX target is needed");
  switch (f.action) {
    case fault_action::kill:
    case fault_action::drop:
    case fault_action::hang:
    case fault_action::oom:
    case fault_action::device_error: {
      if (f.until_step != -1) bad("it fires at one step, it has no window");
      std::string s = head + "@" + std::to_string(f.step);
      if (f.action == fault_action::hang && f.seconds != 0.0)
        s += "+" + exact_decimal(f.seconds, "seconds");
      if (f.phase != fault_phase::compute) s += std::string(":") + name_of(f.phase);
      return s;
    }
    case fault_action::slow:
      if (!(f.factor >= 1.0)) bad("factor must be >= 1");
      return head + "x" + exact_decimal(f.factor, "factor") + "@" + window();
    case fault_action::delay:
    case fault_action::partition:
      break;
  }
  const std::string at = f.until_step == f.step ? std::to_string(f.step) : window();
  return head + "+" + delay_ms(f.seconds) + "@" + at;
}

void check_fault_target(const fault_config& f, const cluster_config& cluster,
                        const std::string& text, const std::string& flag) {
  const auto slash = f.target.find('/');
  const std::string group = f.target.substr(0, slash);
  std::vector<std::string> names;
  for (const auto& g : cluster.groups) names.push_back(g.name);
  const auto g = std::find_if(cluster.groups.begin(), cluster.groups.end(),
                              [&](const group_config& c) { return c.name == group; });
  const std::string where = flag + " '" + text + "': ";
  if (g == cluster.groups.end())
    throw input_error(where + "group '" + group +
                      "' is not defined in cluster.groups (defined: " + join(names) + ")");
  if (slash != std::string::npos) {
    const std::string idx = f.target.substr(slash + 1);
    const bool ok = !idx.empty() && idx.size() < 9 &&
                    idx.find_first_not_of("0123456789") == std::string::npos &&
                    std::stoi(idx) < g->count;
    if (!ok)
      throw input_error(where + "device index " + idx + " is not in group '" + group + "' (count " +
                        std::to_string(g->count) + ")");
  }
}

std::vector<fault_config> random_faults(std::size_t n, std::uint64_t seed,
                                        const fault_space& space) {
  const auto bad = [](const std::string& why) -> void {
    throw input_error("--fault-soak: " + why);
  };
  if (space.groups.empty()) bad("no groups to inject faults into");
  if (space.kinds.empty()) bad("no fault kinds to draw from");
  if (space.first_step < 0 || space.last_step < space.first_step)
    bad("empty step range [" + std::to_string(space.first_step) + ", " +
        std::to_string(space.last_step) + "]");
  if (space.max_window < 1) bad("max_window must be >= 1");
  std::int64_t devices = 0;
  for (const auto& g : space.groups) {
    if (g.second < 1) bad("group '" + g.first + "' has no devices");
    devices += g.second;
  }

  // A fixed stream id, so that other users of the job seed do not draw the same numbers.
  rng r = rng(seed).fork(0xfa17);
  const auto between = [&](double lo, double hi) {
    return lo + (std::max(hi, lo) - lo) * r.uniform();
  };
  const auto steps = static_cast<std::uint64_t>(space.last_step - space.first_step + 1);
  std::vector<fault_config> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    fault_config f;
    f.action = space.kinds[r.below(space.kinds.size())];
    f.step = space.first_step + static_cast<std::int64_t>(r.below(steps));
    // Devices are drawn uniformly (not groups), so a big group takes its share of the faults.
    std::int64_t d = static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(devices)));
    std::size_t gi = 0;
    while (d >= space.groups[gi].second) d -= space.groups[gi++].second;
    const std::string& group = space.groups[gi].first;
    const auto window_end = [&] {
      const auto len =
          static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(space.max_window)));
      return std::min(space.last_step, f.step + len);
    };
    f.target = group + "/" + std::to_string(d);
    switch (f.action) {
      case fault_action::partition:
        f.target = group;
        f.until_step = window_end();
        break;
      case fault_action::hang:
        f.seconds = r.below(2) == 0 ? 0.0 : round2(between(0.1, space.max_hang_seconds));
        break;
      case fault_action::slow:
        f.factor = round2(between(1.5, space.max_slow_factor));
        f.until_step = window_end();
        break;
      case fault_action::delay:
        f.seconds = round2(between(1.0, space.max_delay_ms)) / 1000.0;
        f.until_step = window_end();
        break;
      case fault_action::kill:
      case fault_action::drop:
      case fault_action::oom:
      case fault_action::device_error:
        break;
    }
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const fault_config& a, const fault_config& b) { return a.step < b.step; });
  return out;
}

}  // namespace troupe::config
