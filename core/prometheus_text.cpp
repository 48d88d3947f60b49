#include "core/prometheus_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace troupe {
namespace {

bool valid_name(const std::string& name, bool label) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!label && c == ':');
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

void check_name(const std::string& name, bool label) {
  if (!valid_name(name, label))
    throw std::logic_error("not a Prometheus " + std::string(label ? "label" : "metric") +
                           " name: '" + name + "'");
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // The shortest of 15 to 17 digits that reads back as the same double: 0.1, not
  // 0.10000000000000001.
  char buf[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string escaped(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string label_text(const metric_labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (const auto& [k, v] : labels) {
    check_name(k, true);
    if (out.size() > 1) out += ',';
    out += k + "=\"" + escaped(v) + "\"";
  }
  return out + "}";
}

}  // namespace

void prometheus_text::family(const std::string& name, const std::string& type,
                             const std::string& help) {
  check_name(name, false);
  if (type != "counter" && type != "gauge" && type != "histogram")
    throw std::logic_error("not a metric type here: '" + type + "'");
  std::string h;
  for (const char c : help)
    h += c == '\n' ? std::string("\\n") : c == '\\' ? "\\\\" : std::string(1, c);
  text_ += "# HELP " + name + " " + h + "\n# TYPE " + name + " " + type + "\n";
}

void prometheus_text::sample(const std::string& name, const metric_labels& labels, double value) {
  check_name(name, false);
  text_ += name + label_text(labels) + " " + number(value) + "\n";
}

void prometheus_text::histogram(const std::string& name, const metric_labels& labels,
                                const std::vector<double>& bounds,
                                const std::vector<double>& observations) {
  std::vector<std::uint64_t> counts(bounds.size() + 1, 0);
  double sum = 0;
  for (const double o : observations) {
    sum += o;
    std::size_t b = 0;
    while (b < bounds.size() && o > bounds[b]) ++b;
    ++counts[b];
  }
  histogram_counts(name, labels, bounds, counts, sum);
}

void prometheus_text::histogram_counts(const std::string& name, const metric_labels& labels,
                                       const std::vector<double>& bounds,
                                       const std::vector<std::uint64_t>& counts, double sum) {
  if (counts.size() != bounds.size() + 1)
    throw std::logic_error(name + ": one count per bucket, and one past the last bound");
  std::uint64_t below = 0;
  for (std::size_t b = 0; b <= bounds.size(); ++b) {
    below += counts[b];
    auto with_le = labels;
    with_le.emplace_back("le", number(b < bounds.size() ? bounds[b] : INFINITY));
    sample(name + "_bucket", with_le, static_cast<double>(below));
  }
  sample(name + "_sum", labels, sum);
  sample(name + "_count", labels, static_cast<double>(below));
}

}  // namespace troupe
