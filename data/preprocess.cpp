#include "data/preprocess.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"
#include "core/number_text.hpp"

namespace troupe::data {
namespace {

// Images are {C, H, W}; a bare {H, W} is one channel.
struct image_dims {
  std::size_t c, h, w;
};

image_dims image_of(const shape_t& s, const std::string& who, const std::string& what) {
  if (s.size() == 3) return {s[0], s[1], s[2]};
  if (s.size() == 2) return {1, s[0], s[1]};
  throw input_error("preprocessing step \"" + who + "\" needs image samples {C,H,W}; " + what +
                    " has " + std::to_string(s.size()) + "-dimensional samples");
}

void require_fitted(bool fitted, const std::string& who) {
  if (!fitted) throw std::logic_error("preprocessing step \"" + who + "\" applied before fit");
}

class normalize_minmax final : public step {
 public:
  std::string name() const override { return "normalize"; }
  void fit(const dataset& train) override {
    if (train.x.empty()) throw input_error("normalize: training set " + train.name + " is empty");
    const auto [lo, hi] = std::minmax_element(train.x.begin(), train.x.end());
    lo_ = *lo;
    // A constant training set maps to 0 rather than dividing by zero.
    scale_ = *hi > *lo ? 1.0f / (*hi - *lo) : 1.0f;
    fitted_ = true;
  }
  void apply(dataset& d) const override {
    require_fitted(fitted_, name());
    for (auto& v : d.x) v = (v - lo_) * scale_;
  }

 private:
  float lo_ = 0, scale_ = 1;
  bool fitted_ = false;
};

class normalize_divide final : public step {
 public:
  explicit normalize_divide(float k, std::string spec) : k_(k), spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  void apply(dataset& d) const override {
    for (auto& v : d.x) v /= k_;
  }

 private:
  float k_;
  std::string spec_;
};

class standardize final : public step {
 public:
  explicit standardize(bool global) : global_(global) {}
  std::string name() const override { return global_ ? "standardize:global" : "standardize"; }
  void fit(const dataset& train) override {
    const std::size_t f = train.features();
    if (train.n == 0 || f == 0) {
      throw input_error(name() + ": training set " + train.name + " is empty");
    }
    const std::size_t groups = global_ ? 1 : f;
    std::vector<double> sum(groups, 0), sq(groups, 0);
    for (std::size_t i = 0; i < train.n * f; ++i) {
      const std::size_t g = global_ ? 0 : i % f;
      sum[g] += train.x[i];
    }
    const double per = static_cast<double>(train.n) * (global_ ? f : 1);
    for (auto& s : sum) s /= per;
    // Two passes: the mean first, then squared deviations, which stays accurate for data far
    // from zero (pixel values in 0..255, say).
    for (std::size_t i = 0; i < train.n * f; ++i) {
      const std::size_t g = global_ ? 0 : i % f;
      const double dv = train.x[i] - sum[g];
      sq[g] += dv * dv;
    }
    mean_.assign(groups, 0);
    inv_std_.assign(groups, 1);
    for (std::size_t g = 0; g < groups; ++g) {
      mean_[g] = static_cast<float>(sum[g]);
      const double sd = std::sqrt(sq[g] / per);
      // A constant feature carries no information; centring it is enough.
      inv_std_[g] = sd > 1e-12 ? static_cast<float>(1.0 / sd) : 1.0f;
    }
    features_ = f;
  }
  void apply(dataset& d) const override {
    require_fitted(features_ > 0, name());
    const std::size_t f = d.features();
    if (!global_ && f != features_) {
      throw input_error(name() + ": fitted on " + std::to_string(features_) +
                        " features, dataset " + d.name + " has " + std::to_string(f));
    }
    for (std::size_t i = 0; i < d.x.size(); ++i) {
      const std::size_t g = global_ ? 0 : i % f;
      d.x[i] = (d.x[i] - mean_[g]) * inv_std_[g];
    }
  }

 private:
  bool global_;
  std::size_t features_ = 0;
  std::vector<float> mean_, inv_std_;
};

// A random per-sample change of an image that keeps its shape: it checks at fit that the samples
// are images, and leaves the dataset itself alone.
class image_augmentation : public step {
 public:
  explicit image_augmentation(std::string spec) : spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  bool is_augmentation() const override { return true; }
  void fit(const dataset& train) override { image_of(train.sample_shape, spec_, train.name); }
  void apply(dataset&) const override {}

 protected:
  image_dims image_of_sample(const shape_t& shape) const {
    return image_of(shape, spec_, "the sample");
  }

 private:
  std::string spec_;
};

class flip final : public image_augmentation {
 public:
  flip(double p, std::string spec) : image_augmentation(std::move(spec)), p_(p) {}
  void augment(float* s, const shape_t& shape, rng& r) const override {
    const auto im = image_of_sample(shape);
    if (r.uniform() >= p_) return;
    for (std::size_t row = 0; row < im.c * im.h; ++row)
      std::reverse(s + row * im.w, s + (row + 1) * im.w);
  }

 private:
  double p_;
};

class crop final : public image_augmentation {
 public:
  crop(std::size_t pad, std::string spec) : image_augmentation(std::move(spec)), pad_(pad) {}
  void augment(float* s, const shape_t& shape, rng& r) const override {
    const auto im = image_of_sample(shape);
    // Window origin in padded coordinates is in [0, 2 pad]; relative to the image, [-pad, pad].
    const auto dy = static_cast<long>(r.below(2 * pad_ + 1)) - static_cast<long>(pad_);
    const auto dx = static_cast<long>(r.below(2 * pad_ + 1)) - static_cast<long>(pad_);
    std::vector<float> out(im.c * im.h * im.w, 0.0f);
    const long h = static_cast<long>(im.h), w = static_cast<long>(im.w);
    for (std::size_t c = 0; c < im.c; ++c) {
      for (long y = 0; y < h; ++y) {
        const long sy = y + dy;
        if (sy < 0 || sy >= h) continue;
        for (long x = 0; x < w; ++x) {
          const long sx = x + dx;
          if (sx >= 0 && sx < w) out[(c * im.h + y) * im.w + x] = s[(c * im.h + sy) * im.w + sx];
        }
      }
    }
    std::copy(out.begin(), out.end(), s);
  }

 private:
  std::size_t pad_;
};

class resize final : public step {
 public:
  resize(std::size_t h, std::size_t w, std::string spec) : h_(h), w_(w), spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  void fit(const dataset& train) override { image_of(train.sample_shape, spec_, train.name); }
  void apply(dataset& d) const override {
    const auto im = image_of(d.sample_shape, spec_, d.name);
    std::vector<float> out(d.n * im.c * h_ * w_);
    // Corner-aligned sampling: first and last pixels map onto each other, so a linear signal
    // stays exactly linear and a constant stays constant.
    const auto coords = [](std::size_t out_n, std::size_t in_n) {
      std::vector<std::pair<std::size_t, float>> m(out_n);
      for (std::size_t i = 0; i < out_n; ++i) {
        const double src =
            out_n == 1 ? (in_n - 1) / 2.0 : static_cast<double>(i) * (in_n - 1) / (out_n - 1);
        const auto i0 = std::min(static_cast<std::size_t>(src), in_n - 1);
        m[i] = {i0, static_cast<float>(src - i0)};
      }
      return m;
    };
    const auto ys = coords(h_, im.h), xs = coords(w_, im.w);
    for (std::size_t k = 0; k < d.n * im.c; ++k) {
      const float* src = d.x.data() + k * im.h * im.w;
      float* dst = out.data() + k * h_ * w_;
      for (std::size_t y = 0; y < h_; ++y) {
        const auto [y0, fy] = ys[y];
        const std::size_t y1 = std::min(y0 + 1, im.h - 1);
        for (std::size_t x = 0; x < w_; ++x) {
          const auto [x0, fx] = xs[x];
          const std::size_t x1 = std::min(x0 + 1, im.w - 1);
          const float top = src[y0 * im.w + x0] + fx * (src[y0 * im.w + x1] - src[y0 * im.w + x0]);
          const float bot = src[y1 * im.w + x0] + fx * (src[y1 * im.w + x1] - src[y1 * im.w + x0]);
          dst[y * w_ + x] = top + fy * (bot - top);
        }
      }
    }
    d.x = std::move(out);
    d.sample_shape = d.sample_shape.size() == 3 ? shape_t{im.c, h_, w_} : shape_t{h_, w_};
  }

 private:
  std::size_t h_, w_;
  std::string spec_;
};

double parse_number(const std::string& text, const std::string& spec) {
  const auto [v, used] = read_leading_number(text);
  if (text.empty() || used != text.size() || !std::isfinite(v)) {
    throw input_error("preprocessing step \"" + spec + "\": \"" + text + "\" is not a number");
  }
  return v;
}

std::size_t parse_count(const std::string& text, const std::string& spec) {
  const double v = parse_number(text, spec);
  if (v < 0 || v != std::floor(v) || v > 1e6) {
    throw input_error("preprocessing step \"" + spec + "\": \"" + text +
                      "\" is not a non-negative whole number");
  }
  return static_cast<std::size_t>(v);
}

}  // namespace

std::unique_ptr<step> make_step(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const bool has_arg = colon != std::string::npos;
  const std::string arg = has_arg ? spec.substr(colon + 1) : "";
  const auto bad = [&](const std::string& why) {
    return input_error("preprocessing step \"" + spec + "\": " + why);
  };
  if (kind == "normalize" || kind == "normalise") {
    if (!has_arg) return std::make_unique<normalize_minmax>();
    const double k = parse_number(arg, spec);
    if (k == 0) throw bad("cannot divide by zero");
    return std::make_unique<normalize_divide>(static_cast<float>(k), spec);
  }
  if (kind == "standardize" || kind == "standardise") {
    if (has_arg && arg != "global") throw bad("the only option is \"global\"");
    return std::make_unique<standardize>(has_arg);
  }
  if (kind == "flip") {
    const double p = has_arg ? parse_number(arg, spec) : 0.5;
    if (p < 0 || p > 1) throw bad("probability must be in [0, 1]");
    return std::make_unique<flip>(p, spec);
  }
  if (kind == "crop") return std::make_unique<crop>(has_arg ? parse_count(arg, spec) : 4, spec);
  if (kind == "resize") {
    const auto x = arg.find('x');
    if (!has_arg || x == std::string::npos) throw bad("expected resize:HxW");
    const auto h = parse_count(arg.substr(0, x), spec), w = parse_count(arg.substr(x + 1), spec);
    if (h == 0 || w == 0) throw bad("height and width must be positive");
    return std::make_unique<resize>(h, w, spec);
  }
  throw input_error("unknown preprocessing step \"" + spec +
                    "\" (known: normalize, standardize, flip, crop, resize:HxW)");
}

pipeline::pipeline(const std::vector<std::string>& specs) {
  for (const auto& s : specs) add(make_step(s));
}

pipeline& pipeline::add(std::unique_ptr<step> s) {
  steps_.push_back(std::move(s));
  fitted_ = false;
  return *this;
}

std::vector<std::string> pipeline::names() const {
  std::vector<std::string> out;
  for (const auto& s : steps_) out.push_back(s->name());
  return out;
}

void pipeline::fit_apply(dataset& train) {
  for (auto& s : steps_) {
    s->fit(train);
    s->apply(train);
  }
  fitted_ = true;
}

void pipeline::fit(const dataset& train) {
  dataset copy = train;
  fit_apply(copy);
}

void pipeline::apply(dataset& d) const {
  if (!fitted_) throw std::logic_error("preprocessing pipeline applied before fit");
  for (const auto& s : steps_) s->apply(d);
}

void pipeline::augment(float* sample, const shape_t& shape, rng& r) const {
  for (const auto& s : steps_) {
    if (s->is_augmentation()) s->augment(sample, shape, r);
  }
}

void pipeline::augment(dataset& d, rng& r) const {
  for (std::size_t i = 0; i < d.n; ++i) augment(d.row(i), d.sample_shape, r);
}

bool pipeline::has_augmentation() const {
  return std::any_of(steps_.begin(), steps_.end(),
                     [](const auto& s) { return s->is_augmentation(); });
}

}  // namespace troupe::data
