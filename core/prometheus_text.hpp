#pragma once
// The Prometheus text exposition format (version 0.0.4), written by hand: Debian packages no
// prometheus-cpp, and the format is small. Families are declared once (HELP and TYPE lines) and
// followed by their samples; label values are escaped (backslash, double quote, newline);
// numbers are written so that they read back exactly, with +Inf, -Inf and NaN spelled as the
// format wants. Names and label names are ours, not users': a bad one is a bug and throws.
//
//   prometheus_text out;
//   out.family("troupe_samples_total", "counter", "Samples trained.");
//   out.sample("troupe_samples_total", {{"job", "mlp-1"}}, 12800);
//   out.histogram("troupe_recovery_seconds", {{"job", "mlp-1"}}, {0.01, 0.1, 1}, {0.004, 0.2});
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace troupe {

using metric_labels = std::vector<std::pair<std::string, std::string>>;

class prometheus_text {
 public:
  // type: counter, gauge or histogram.
  void family(const std::string& name, const std::string& type, const std::string& help);
  void sample(const std::string& name, const metric_labels& labels, double value);
  // A histogram's _bucket (cumulative, with le="+Inf"), _sum and _count from its observations;
  // `bounds` ascending.
  void histogram(const std::string& name, const metric_labels& labels,
                 const std::vector<double>& bounds, const std::vector<double>& observations);
  // The same from counts kept as they came: `counts[b]` observations fell in bucket b (at most
  // bounds[b]; the last, past every bound), their `sum`.
  void histogram_counts(const std::string& name, const metric_labels& labels,
                        const std::vector<double>& bounds, const std::vector<std::uint64_t>& counts,
                        double sum);
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace troupe
