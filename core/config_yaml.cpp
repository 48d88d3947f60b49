#include "core/config_yaml.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/error.hpp"
#include "core/kinds.hpp"

namespace troupe::config::detail {

namespace {

// A failure class's policy, or the restart intensity.
std::vector<std::string> supervision_keys() {
  auto keys = all_names<failure_class>();
  keys.insert(keys.end(), {"max_restarts", "restart_window", "hang_floor_s"});
  return keys;
}

// The schema's maps, by pattern. Lists of maps (cluster.groups, jobs, faults) appear as "[]".
// Keep in step with config/README.md: this table is the public contract in code form.
const std::map<std::string, std::vector<std::string>>& schema() {
  static const std::map<std::string, std::vector<std::string>> s = {
      {"", {"cluster", "jobs"}},
      {"cluster", {"groups", "shares", "share_period", "share_floor"}},
      {"cluster.groups[]",
       {"name", "device", "count", "threads", "weight", "base", "slowdown", "row_seconds", "shared",
        "process", "layer_split"}},
      {"jobs[]",
       {"name",        "priority", "after",         "model",       "data",       "optimizer",
        "batch",       "epochs",   "max_steps",     "max_seconds", "sync",       "resources",
        "placement",   "seed",     "deterministic", "share",       "checkpoint", "faults",
        "supervision", "elastic",  "preemptible"}},
      {"jobs[].elastic", {"min_devices", "max_devices"}},
      {"jobs[].model", {"kind", "hidden", "conv_layers", "kernel"}},
      {"jobs[].data",
       {"dataset", "path", "preprocess", "split", "leave_out", "mode", "neighbour_exchange",
        "priority", "synthetic"}},
      {"jobs[].data.priority", {"alpha", "beta"}},
      {"jobs[].data.synthetic", {"kind", "samples"}},
      {"jobs[].optimizer",
       {"kind", "lr", "momentum", "nesterov", "beta1", "beta2", "eps", "weight_decay", "form"}},
      {"jobs[].sync", {"mode", "ps_shards", "block", "period", "codec"}},
      {"jobs[].resources", {"groups"}},
      {"jobs[].checkpoint", {"dir", "every_steps", "every_seconds"}},
      {"jobs[].faults[]", {"step", "action", "target", "factor", "seconds", "until_step", "phase"}},
      {"jobs[].supervision", supervision_keys()},
  };
  return s;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool all_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// A quoted scalar ("5", '5') is a string to YAML even when it looks like a number; yaml-cpp
// marks it with the non-specific tag "!". Numbers and booleans must be plain.
bool is_plain(const YAML::Node& n) {
  return n.Tag() != "!";
}

bool starts_with_path(const std::string& path, const std::string& prefix) {
  if (path.size() < prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return false;
  if (path.size() == prefix.size() || prefix.empty()) return true;
  const char next = path[prefix.size()];
  return next == '.' || next == '[';
}

// "(did you mean 'epochs'?)": a near miss at this level, else the same key one map down (`lr`
// written beside `optimizer` instead of inside it), else the list of known keys.
std::string key_hint(const std::string& pattern, const std::string& key,
                     const std::vector<std::string>& keys) {
  const auto near = closest(key, keys);
  if (!near.empty()) return "(did you mean '" + near + "'?)";
  for (const auto& k : keys)
    for (const char* suffix : {"", "[]"}) {
      const std::string child = (pattern.empty() ? "" : pattern + ".") + k + suffix;
      const auto it = schema().find(child);
      if (it != schema().end() &&
          std::find(it->second.begin(), it->second.end(), key) != it->second.end())
        return "(did you mean '" + k + "." + key + "'?)";
    }
  return "(known keys: " + join(keys) + ")";
}

}  // namespace

const std::vector<std::string>* schema_keys(const std::string& pattern) {
  const auto it = schema().find(pattern);
  return it == schema().end() ? nullptr : &it->second;
}

std::string pattern_of(const std::string& path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    out += path[i];
    if (path[i] == '[') {
      while (i + 1 < path.size() && path[i + 1] != ']') ++i;
    }
  }
  return out;
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string index_path(const std::string& parent, std::size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string w = lower(word);
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& c : candidates) {
    const std::string lc = lower(c);
    std::size_t d = edit_distance(w, lc);
    // batch_size -> batch, lrate -> lr: a shared prefix is a strong hint even when far in edits.
    const std::size_t common = std::min(w.size(), lc.size());
    if (common >= 2 && w.compare(0, common, lc, 0, common) == 0) d = std::min<std::size_t>(d, 1);
    if (d < best_d) best_d = d, best = c;
  }
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_d <= limit ? best : std::string{};
}

std::string shown(const std::string& value) {
  constexpr std::size_t limit = 60;
  if (value.size() <= limit) return value;
  return value.substr(0, limit) + "... (" + std::to_string(value.size()) + " characters)";
}

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "nothing (null)";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar:
      return (is_plain(n) ? "" : "the quoted string ") + ("\"" + shown(n.Scalar()) + "\"");
  }
  return "something else";
}

std::string apply_set(YAML::Node root, const std::string& source, const std::string& text) {
  auto fail = [&](const std::string& what) {
    throw input_error(source + ": --set '" + shown(text) + "': " + what);
  };
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) fail("expected PATH=VALUE, e.g. jobs.0.epochs=1");
  const std::string path = text.substr(0, eq);
  std::vector<std::string> segs;
  for (std::size_t start = 0;;) {
    const auto dot = path.find('.', start);
    segs.push_back(path.substr(start, dot == std::string::npos ? dot : dot - start));
    if (segs.back().empty()) fail("empty key in path '" + path + "'");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  YAML::Node value;
  try {
    value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    fail("the value is not valid YAML: " + e.msg);
  }

  // Node::operator= rebinds the *referenced* node in yaml-cpp, so walking uses reset(), and
  // assignment only ever writes the final value into the tree.
  YAML::Node cur = root;
  std::string display;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const std::string& seg = segs[i];
    const bool last = i + 1 == segs.size();
    const auto fresh = [&] {
      return YAML::Node(!last && all_digits(segs[i + 1]) ? YAML::NodeType::Sequence
                                                         : YAML::NodeType::Map);
    };
    if (cur.IsSequence()) {
      if (!all_digits(seg))
        fail((display.empty() ? "top level" : display) + " is a list; '" + seg +
             "' is not an index");
      const std::size_t idx = std::strtoull(seg.c_str(), nullptr, 10);
      // Index == size appends, so a --set can add a job, a group or a fault.
      if (idx > cur.size())
        fail(display + ": index " + seg + " out of range (the list has " +
             std::to_string(cur.size()) + " entries)");
      display = index_path(display, idx);
      if (idx == cur.size()) {
        cur.push_back(last ? value : fresh());
        if (last) return display;
      } else if (last) {
        cur[idx] = value;
        return display;
      }
      YAML::Node next = cur[idx];
      cur.reset(next);
      continue;
    }
    if (!cur.IsMap() && !cur.IsNull())
      fail(display + " is " + describe(cur) + ", not a map; it has no key '" + seg + "'");
    const YAML::Node& ccur = cur;
    const bool exists = ccur[seg].IsDefined();
    if (!exists) {
      const auto* keys = schema_keys(pattern_of(display));
      if (!keys || std::find(keys->begin(), keys->end(), seg) == keys->end()) {
        std::string what =
            "unknown key '" + seg + "' in " + (display.empty() ? "top level" : display);
        if (keys) what += " " + key_hint(pattern_of(display), seg, *keys);
        fail(what);
      }
    }
    display = child_path(display, seg);
    if (last) {
      cur[seg] = value;
      return display;
    }
    if (!exists) cur[seg] = fresh();
    YAML::Node next = cur[seg];
    cur.reset(next);
  }
  return display;
}

void context::add_set(std::string display_path, std::string text) {
  sets_.push_back({std::move(display_path), std::move(text)});
}

void context::fail(const YAML::Node& at, const std::string& path, const std::string& what) const {
  const std::string shown = path.empty() ? "(top level)" : path;
  // The last --set wins, as it did in the tree. A set below `path` explains a node that has no
  // line of its own (e.g. a job appended by --set and missing its name).
  const set_record* from = nullptr;
  for (auto it = sets_.rbegin(); it != sets_.rend() && !from; ++it)
    if (starts_with_path(path, it->path)) from = &*it;
  const bool no_line = !at.IsDefined() || at.Mark().is_null();
  // A node without a line was made by a --set (or is missing): blame the set that made the
  // nearest enclosing node, e.g. `jobs.1.batch=4` for a missing jobs[1].name.
  for (std::string p = path; !from && no_line && !p.empty();) {
    for (auto it = sets_.rbegin(); it != sets_.rend() && !from; ++it)
      if (starts_with_path(it->path, p)) from = &*it;
    const auto cut = p.find_last_of(".[");
    p = cut == std::string::npos ? std::string{} : p.substr(0, cut);
  }
  if (from)
    throw input_error(source_ + ": --set '" + detail::shown(from->text) + "': " + shown + ": " +
                      what);
  if (no_line) throw input_error(source_ + ": " + shown + ": " + what);
  throw input_error(source_ + ":" + std::to_string(at.Mark().line + 1) + ": " + shown + ": " +
                    what);
}

std::int64_t context::as_int(const YAML::Node& n, const std::string& path) const {
  const auto bad = [&] { fail(n, path, "expected an integer, got " + describe(n)); };
  if (!n.IsScalar() || !is_plain(n)) bad();
  const std::string& s = n.Scalar();
  const std::size_t digits_from = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (!all_digits(s.substr(digits_from))) bad();
  errno = 0;
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) fail(n, path, "integer out of range: " + shown(s));
  return v;
}

double context::as_double(const YAML::Node& n, const std::string& path) const {
  const auto bad = [&] { fail(n, path, "expected a number, got " + describe(n)); };
  if (!n.IsScalar() || !is_plain(n) || n.Scalar().empty()) bad();
  const std::string& s = n.Scalar();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) bad();
  return v;
}

bool context::as_bool(const YAML::Node& n, const std::string& path) const {
  if (n.IsScalar() && is_plain(n)) {
    const std::string s = lower(n.Scalar());
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  fail(n, path, "expected true or false, got " + describe(n));
}

std::string context::as_string(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) fail(n, path, "expected a string, got " + describe(n));
  return n.Scalar();
}

std::string context::one_of(const YAML::Node& n, const std::string& path,
                            const std::vector<std::string>& names) const {
  const std::string s = as_string(n, path);
  if (std::find(names.begin(), names.end(), s) != names.end()) return s;
  const auto near = closest(s, names);
  fail(n, path,
       "must be one of " + join(names) + "; got \"" + shown(s) + "\"" +
           (near.empty() ? "" : " (did you mean '" + near + "'?)"));
}

std::vector<std::string> context::as_string_list(const YAML::Node& n, const std::string& path,
                                                 bool single_ok) const {
  std::vector<std::string> out;
  if (n.IsNull()) return out;
  if (n.IsScalar() && single_ok) {
    out.push_back(n.Scalar());
    return out;
  }
  if (!n.IsSequence()) fail(n, path, "expected a list of strings, got " + describe(n));
  for (std::size_t i = 0; i < n.size(); ++i) out.push_back(as_string(n[i], index_path(path, i)));
  return out;
}

void context::check_map(const YAML::Node& n, const std::string& path) const {
  if (!n.IsMap()) fail(n, path, "expected a map (key: value lines), got " + describe(n));
  const auto* keys = schema_keys(pattern_of(path));
  std::vector<std::string> seen;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) fail(kv.first, path, "a key must be a plain name");
    const std::string key = kv.first.Scalar();
    const std::string at = child_path(path, key);
    if (keys && std::find(keys->begin(), keys->end(), key) == keys->end()) {
      fail(kv.first, at, "unknown key " + key_hint(pattern_of(path), key, *keys));
    }
    // yaml-cpp keeps both entries of a repeated key and lookups see only the first: say so
    // rather than silently ignoring the second.
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      fail(kv.first, at, "key given twice");
    seen.push_back(key);
  }
}

void context::check_seq(const YAML::Node& n, const std::string& path) const {
  if (!n.IsSequence() && !n.IsNull()) fail(n, path, "expected a list, got " + describe(n));
}

}  // namespace troupe::config::detail
