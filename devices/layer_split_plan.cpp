#include "devices/layer_split_plan.hpp"

#include <cstdio>

#include "core/error.hpp"

namespace troupe::devices {

layer_split_plan plan_layer_split(const layer_split_inputs& in) {
  const std::size_t L = in.cpu_seconds.size();
  if (L == 0 || in.gpu_seconds.size() != L || in.out_bytes.size() != L ||
      in.param_bytes.size() != L || in.names.size() != L)
    throw input_error("layer split: per-layer inputs of different lengths or none");
  auto copy = [&](double bytes) { return in.latency + bytes * in.per_byte; };
  layer_split_plan plan;
  plan.predicted.assign(L + 1, 0.0);
  for (std::size_t cut = 0; cut <= L; ++cut) {
    double t = 0.0;
    for (std::size_t i = 0; i < cut; ++i) t += in.cpu_seconds[i];
    if (cut < L) {
      double params = 0.0;
      for (std::size_t i = cut; i < L; ++i) {
        t += in.gpu_seconds[i];
        params += in.param_bytes[i];
      }
      t += 2 * copy(params);  // parameters up, gradient down
      t += copy(cut == 0 ? in.input_bytes : in.out_bytes[cut - 1]);
      if (cut > 0) t += copy(in.out_bytes[cut - 1]);  // the input gradient down
    }
    plan.predicted[cut] = t;
    if (t < plan.predicted[plan.cut]) plan.cut = cut;
  }
  return plan;
}

std::string describe(const layer_split_plan& plan, const std::vector<std::string>& names,
                     std::size_t chosen) {
  const std::size_t L = plan.predicted.size() - 1;
  auto label = [&](std::size_t cut) {
    if (cut == 0) return std::string("whole model on the GPU");
    if (cut == L) return std::string("whole model on the CPU");
    return "cut after " + names[cut - 1] + " (" + std::to_string(cut) +
           (cut == 1 ? " layer" : " layers") + " on the CPU)";
  };
  auto ms = [](double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
    return std::string(buf);
  };
  std::string out = label(chosen) + ": " + ms(plan.predicted[chosen]) + " predicted";
  if (chosen != plan.cut) out += " (forced; the model's best: " + label(plan.cut) + ")";
  out += ";";
  for (std::size_t cut = 0; cut <= L; ++cut)
    if (cut != chosen) out += " " + label(cut) + " " + ms(plan.predicted[cut]) + ";";
  const bool split = chosen > 0 && chosen < L;
  const double best_whole = std::min(plan.predicted[0], plan.predicted[L]);
  if (split && plan.predicted[chosen] > best_whole) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " the split loses to one device by %.0f%%",
                  100.0 * (plan.predicted[chosen] / best_whole - 1.0));
    out += buf;
  } else if (!split) {
    out += " no split wins";
  }
  return out;
}

}  // namespace troupe::devices
