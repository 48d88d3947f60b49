#include "actors/common/specs.hpp"

#include <doctest/doctest.h>

using namespace troupe;

TEST_CASE("every model key of the config reaches the model spec") {
  config::model_config c;
  c.kind = "cnn";
  c.hidden = {8, 16, 64};
  c.conv_layers = 2;
  c.kernel = 5;
  data::dataset train;
  train.sample_shape = {1, 28, 28};
  train.classes = 10;
  const auto spec = actors::model_spec_of(c, train);
  CHECK(spec.kind == "cnn");
  CHECK(spec.hidden == std::vector<std::size_t>{8, 16, 64});
  CHECK(spec.conv_layers == 2);
  CHECK(spec.kernel == 5);
  CHECK(spec.input_shape == train.sample_shape);
  CHECK(spec.classes == 10);
  // The kernel changes the model: 5x5 convolutions have more weights than the 3x3 default.
  auto with3 = c;
  with3.kernel = 3;
  CHECK(models::make_model(spec)->param_count() >
        models::make_model(actors::model_spec_of(with3, train))->param_count());
}

TEST_CASE("every optimizer key of the config reaches the optimizer spec") {
  config::optimizer_config c;
  c.kind = optimizer_kind::adamw;
  c.lr = 0.02;
  c.momentum = 0.5;
  c.nesterov = true;
  c.beta1 = 0.8;
  c.beta2 = 0.95;
  c.eps = 1e-6;
  c.weight_decay = 0.1;
  const auto os = actors::optimizer_spec_of(c);
  CHECK(os.kind == "adamw");
  CHECK(os.lr == 0.02);
  CHECK(os.momentum == 0.5);
  CHECK(os.nesterov);
  CHECK(os.beta1 == 0.8);
  CHECK(os.beta2 == 0.95);
  CHECK(os.eps == 1e-6);
  CHECK(os.weight_decay == 0.1);
}
