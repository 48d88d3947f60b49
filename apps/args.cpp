#include "apps/args.hpp"

#include <cstdlib>
#include <sstream>

#include "core/error.hpp"

namespace troupe::apps {

namespace {
std::set<std::string> with(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}
}  // namespace

args::args(const std::vector<std::string>& argv, const flag_set& flags)
    : args(argv, with(flags.values, flags.internal), flags.booleans, flags.repeatable) {}

args::args(const std::vector<std::string>& argv, const std::set<std::string>& value_flags,
           const std::set<std::string>& bool_flags, const std::set<std::string>& repeatable) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      positionals_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (bool_flags.count(name)) {
      if (inline_value) throw input_error("flag --" + name + " takes no value");
      present_.insert(name);
      continue;
    }
    if (!value_flags.count(name) && !repeatable.count(name))
      throw input_error("unknown flag --" + name + " (see --help)");
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else {
      if (i + 1 >= argv.size()) throw input_error("flag --" + name + " needs a value");
      value = argv[++i];
    }
    if (present_.count(name) && !repeatable.count(name))
      throw input_error("flag --" + name + " given twice");
    present_.insert(name);
    values_[name].push_back(value);
  }
}

bool args::has(const std::string& flag) const {
  return present_.count(flag) > 0;
}

std::optional<std::string> args::get(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::string args::get_or(const std::string& flag, const std::string& fallback) const {
  auto v = get(flag);
  return v ? *v : fallback;
}

std::vector<std::string> args::all(const std::string& flag) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

long long args::get_int(const std::string& flag, long long fallback) const {
  auto v = get(flag);
  if (!v) return fallback;
  char* end = nullptr;
  long long x = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0')
    throw input_error("flag --" + flag + ": '" + *v + "' is not an integer");
  return x;
}

double args::get_double(const std::string& flag, double fallback) const {
  auto v = get(flag);
  if (!v) return fallback;
  char* end = nullptr;
  double x = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0')
    throw input_error("flag --" + flag + ": '" + *v + "' is not a number");
  return x;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

long long parse_size(const std::string& text, const std::string& what) {
  if (text.empty()) throw input_error(what + ": empty size");
  char* end = nullptr;
  long long x = std::strtoll(text.c_str(), &end, 10);
  std::string suffix = end;
  long long mult = 1;
  if (suffix == "K" || suffix == "k")
    mult = 1LL << 10;
  else if (suffix == "M" || suffix == "m")
    mult = 1LL << 20;
  else if (suffix == "G" || suffix == "g")
    mult = 1LL << 30;
  else if (!suffix.empty())
    throw input_error(what + ": '" + text + "' is not a size like 4K, 256M");
  if (x < 0) throw input_error(what + ": size must not be negative");
  return x * mult;
}

}  // namespace troupe::apps
