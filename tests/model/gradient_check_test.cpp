// The whole model's gradient against finite differences of its loss, for every parameter tensor.
// For each tensor the loss is differentiated numerically along two directions: the analytic
// gradient's own direction (which exposes a wrong scale: the derivative along g/|g| must equal
// |g|) and a random direction (which exposes a wrong transpose or a missing term).
#include <cmath>

#include <gtest/gtest.h>

#include "common/device_vector.h"
#include "common/toy_batch.h"
#include "model/transformer.h"

namespace attn {
namespace {

struct GradientCase {
  const char* name;
  PositionEncoding positions;
  int window;
  float dropout;
  int logits_block_rows;  // 0: the whole batch in one block
};

class ModelGradientTest : public ::testing::TestWithParam<GradientCase> {};

TEST_P(ModelGradientTest, EveryTensorMatchesFiniteDifferences) {
  const GradientCase gc = GetParam();
  ModelConfig c = ModelConfig::preset("tiny");
  c.positions = gc.positions;
  c.attention_window = gc.window;
  c.dropout = gc.dropout;
  c.vocab_size = 24;
  Transformer model(c);
  model.initialize(7);
  model.set_logits_block_rows(gc.logits_block_rows);
  // Weights a little larger than at initialisation so that every path carries gradient.
  auto params = model.parameters_to_host();
  auto noise = testing::random_values(params.size(), 99, -0.05f, 0.05f);
  for (std::size_t i = 0; i < params.size(); ++i) params[i] += noise[i];
  model.set_parameters(params);

  // Two sentence pairs of different lengths: padding, causal masking and cross-attention all act.
  const testing::ToyBatch toy({{5, 6, 7, 8, 9}, {10, 11}}, {{12, 13, 14}, {15, 16, 17, 18, 19, 20}});
  const TokenBatch batch = toy.view();
  const nn::Dropout dropout{gc.dropout, 4242};
  const float scale = 1.0f / 11;  // mean over the 11 target tokens

  model.zero_gradients();
  const LossSums base = model.forward_backward(batch, dropout, scale);
  ASSERT_EQ(base.tokens, 11);
  const std::vector<float> grad = model.gradients_to_host();

  auto loss_at = [&](const std::vector<float>& p) {
    model.set_parameters(p);
    model.zero_gradients();
    return model.forward_backward(batch, dropout, 0.0f).loss / 11;
  };
  for (const ParameterInfo& t : model.layout().tensors()) {
    double norm = 0;
    for (std::int64_t i = 0; i < t.size; ++i) norm += static_cast<double>(grad[t.offset + i]) * grad[t.offset + i];
    norm = std::sqrt(norm);
    if (t.name.ends_with("k_proj.bias")) {
      // Adding b_k to every key adds q·b_k to a whole row of scores, which softmax ignores:
      // the true gradient is exactly zero.
      EXPECT_LT(norm, 1e-6) << t.name;
      continue;
    }
    ASSERT_GT(norm, 1e-5) << t.name << " receives no gradient";
    const auto random_dir = testing::random_values(t.size, static_cast<unsigned>(t.offset) + 1);
    for (int which = 0; which < 2; ++which) {
      // direction u (unit length over this tensor)
      std::vector<double> u(t.size);
      double un = 0;
      for (std::int64_t i = 0; i < t.size; ++i) {
        u[i] = which == 0 ? grad[t.offset + i] : random_dir[i];
        un += u[i] * u[i];
      }
      un = std::sqrt(un);
      double analytic = 0;
      for (std::int64_t i = 0; i < t.size; ++i) {
        u[i] /= un;
        analytic += u[i] * grad[t.offset + i];
      }
      const double h = 1e-2;
      auto p = params;
      for (std::int64_t i = 0; i < t.size; ++i) p[t.offset + i] = static_cast<float>(params[t.offset + i] + h * u[i]);
      const double up = loss_at(p);
      for (std::int64_t i = 0; i < t.size; ++i) p[t.offset + i] = static_cast<float>(params[t.offset + i] - h * u[i]);
      const double down = loss_at(p);
      const double numeric = (up - down) / (2 * h);
      // float32 forward: ~1e-6 relative noise on a loss of ~3, divided by 2h.
      const double tolerance = 2e-2 * std::abs(analytic) + 2e-2 * norm * (which == 1) + 1e-5;
      EXPECT_NEAR(numeric, analytic, tolerance)
          << t.name << (which == 0 ? " along its gradient" : " along a random direction") << " |g|=" << norm;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, ModelGradientTest,
    ::testing::Values(GradientCase{"sinusoidal", PositionEncoding::Sinusoidal, 0, 0.0f, 0},
                      GradientCase{"learned_positions_window_dropout", PositionEncoding::Learned, 2, 0.1f, 0},
                      // 12 target rows as blocks of 5, 5 and 2: the output layer and loss in pieces
                      GradientCase{"output_layer_in_blocks", PositionEncoding::Sinusoidal, 0, 0.0f, 5}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace attn
