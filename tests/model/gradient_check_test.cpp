// The whole model's gradient against finite differences of its loss, for every parameter tensor.
// For each tensor the loss is differentiated numerically along two directions: the analytic
// gradient's own direction (which exposes a wrong scale: the derivative along g/|g| must equal
// |g|) and a random direction (which exposes a wrong transpose or a missing term).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "common/device_vector.h"
#include "common/bf16_sized_model.h"
#include "common/toy_batch.h"
#include "kernels/cpu/ops.h"
#include "kernels/profiling_backend.h"
#include "model/transformer.h"

namespace attn {
namespace {

struct GradientCase {
  const char* name;
  PositionEncoding positions;
  int window;
  float dropout;
  int logits_block_rows;  // 0: the whole batch in one block
  float activation_dropout = 0;
  bool attention_recomputed = false;  // backward computes attention again (else kept from forward)
};

class ModelGradientTest : public ::testing::TestWithParam<GradientCase> {};

TEST_P(ModelGradientTest, EveryTensorMatchesFiniteDifferences) {
  const GradientCase gc = GetParam();
  ModelConfig c = ModelConfig::preset("tiny");
  c.positions = gc.positions;
  c.attention_window = gc.window;
  c.dropout = gc.dropout;
  c.activation_dropout = gc.activation_dropout;
  c.vocab_size = 24;
  Transformer model(c);
  model.initialize(7);
  model.set_logits_block_rows(gc.logits_block_rows);
  if (gc.attention_recomputed) model.set_kept_attention_bytes(0);
  // Weights a little larger than at initialisation so that every path carries gradient.
  auto params = model.parameters_to_host();
  auto noise = testing::random_values(params.size(), 99, -0.05f, 0.05f);
  for (std::size_t i = 0; i < params.size(); ++i) params[i] += noise[i];
  model.set_parameters(params);

  // Two sentence pairs of different lengths: padding, causal masking and cross-attention all act.
  const testing::ToyBatch toy({{5, 6, 7, 8, 9}, {10, 11}}, {{12, 13, 14}, {15, 16, 17, 18, 19, 20}});
  const TokenBatch batch = toy.view();
  const nn::Dropout dropout{gc.dropout, 4242, gc.activation_dropout};
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
  double worst = 0;            // largest error as a fraction of its tolerance
  double tolerance_ratio = 0;  // largest tolerance as a fraction of the quantity compared
  int kinks = 0;               // directions checked on one side only
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
      // The loss along u, L(t) = loss(params + t u), in float32 as the model computes it.
      auto p = params;
      auto along = [&](double step) {
        for (std::int64_t i = 0; i < t.size; ++i)
          p[t.offset + i] = static_cast<float>(params[t.offset + i] + step * u[i]);
        return loss_at(p);
      };
      // The float32 loss's rounding noise, measured: its scatter about the least-squares parabola
      // through 9 points 1e-4 apart (curvature is fitted, not counted as noise), and at least one
      // unit in the last place.
      double noise = std::abs(along(0.0)) * std::ldexp(1.0, -23);
      {
        constexpr int n = 9;
        double ts[n], ls[n];
        for (int k = 0; k < n; ++k) ts[k] = (k - n / 2) * 1e-4, ls[k] = along(ts[k]);
        // Symmetric points: the odd and even parts fit separately (slope; constant and curvature).
        double s2 = 0, s4 = 0, sl = 0, stl = 0, sttl = 0;
        for (int k = 0; k < n; ++k) {
          const double t2 = ts[k] * ts[k];
          s2 += t2, s4 += t2 * t2, sl += ls[k], stl += ts[k] * ls[k], sttl += t2 * ls[k];
        }
        const double slope = stl / s2, curve = (n * sttl - s2 * sl) / (n * s4 - s2 * s2), icept = (sl - curve * s2) / n;
        for (int k = 0; k < n; ++k)
          noise = std::max(noise, std::abs(ls[k] - icept - slope * ts[k] - curve * ts[k] * ts[k]));
      }
      // Central differences at h and h/2, and their Richardson extrapolation (error O(h^4)); the
      // two differences' gap bounds the truncation error left. Rounding reaches the extrapolation
      // as (8 + 1) / 3 noise / h at most; twice that, plus the truncation bound, plus the analytic
      // gradient's own float32 rounding (relative to |g|). The smallest step whose tolerance is
      // within 3% of the quantity compared: small steps meet fewer ReLU kinks, larger ones less
      // rounding (directions with small gradients need them).
      double h = 0, numeric = 0, tolerance = 0;
      for (const double step : {5e-4, 2e-3, 8e-3}) {
        h = step;
        const double d_h = (along(h) - along(-h)) / (2 * h);
        const double d_half = (along(h / 2) - along(-h / 2)) / h;
        numeric = (4 * d_half - d_h) / 3;
        tolerance = std::abs(d_h - d_half) + 2 * 3 * noise / h + 1e-4 * norm;
        if (tolerance <= 0.03 * std::max(std::abs(analytic), norm)) break;
      }
      // A tolerance above 3% of the quantity compared would let real errors through: such a
      // direction fails as a check that does not discriminate.
      EXPECT_LE(tolerance, 0.03 * std::max(std::abs(analytic), norm))
          << t.name << ": the finite differences are too noisy to check this direction";
      tolerance_ratio = std::max(tolerance_ratio, tolerance / std::max(std::abs(analytic), norm));
      double error = std::abs(numeric - analytic);
      if (error > tolerance) {
        // ReLU makes the loss piecewise smooth: a kink within h of the point bends the central
        // difference. Then the side without it must agree: a second-order one-sided difference at
        // h (rounding: 8 noise / h, twice that), its gap to the one at h/2 bounding the truncation.
        const double l0 = along(0.0);
        auto side = [&](double s, double step) {
          return s * (-3 * l0 + 4 * along(s * step / 2) - along(s * step)) / step;
        };
        double estimate[2], truncation[2], bound[2];
        for (const int k : {0, 1}) {
          const double s = k == 0 ? 1.0 : -1.0;
          estimate[k] = side(s, h);
          truncation[k] = std::abs(estimate[k] - side(s, h / 2));
          bound[k] = truncation[k] + 2 * 8 * noise / h + 1e-4 * norm;
        }
        // A kink: the two sides differ beyond both bounds. The side that agrees must itself be
        // smooth (its own estimates at h and h/2 agree far better than the sides do), so a value
        // merely inside the kinked side's wide bound does not pass.
        const double gap = std::abs(estimate[0] - estimate[1]);
        for (const int k : {0, 1})
          if (gap > bound[0] + bound[1] && truncation[k] < 0.25 * gap && std::abs(estimate[k] - analytic) <= bound[k]) {
            std::printf("%s: a kink within %g on one side; the other side agrees\n", t.name.c_str(), h);
            ++kinks;
            error = 0;
            break;
          }
      }
      worst = std::max(worst, error / tolerance);
      EXPECT_LE(error, tolerance) << "numeric " << numeric << ", analytic " << analytic << ": " << t.name
                                  << (which == 0 ? " along its gradient" : " along a random direction")
                                  << " |g|=" << norm;
    }
  }
  std::printf("worst finite-difference error: %.3f of its tolerance; tolerances up to %.2g of the quantity; %d kinks\n",
              worst, tolerance_ratio, kinks);
  // A kink at the point is an accident of the point; many would mean the check mostly ran one-sided.
  EXPECT_LE(kinks, 2);
}

INSTANTIATE_TEST_SUITE_P(
    Configs, ModelGradientTest,
    ::testing::Values(GradientCase{"sinusoidal", PositionEncoding::Sinusoidal, 0, 0.0f, 0},
                      GradientCase{"learned_positions_window_dropout", PositionEncoding::Learned, 2, 0.1f, 0, 0.2f},
                      // 12 target rows as blocks of 5, 5 and 2: the output layer and loss in pieces
                      GradientCase{"output_layer_in_blocks", PositionEncoding::Sinusoidal, 0, 0.0f, 5},
                      // the workspace's other layout: one set of attention buffers for all layers
                      GradientCase{"attention_recomputed_in_backward", PositionEncoding::Learned, 2, 0.1f, 0, 0.2f,
                                   true}),
    [](const auto& info) { return std::string(info.param.name); });

// The output layer and loss computed in row blocks (to bound the logits' memory) is the same
// function as in one block: equal loss, and equal gradients up to the order of float32 sums.
TEST(ModelGradient, BlockedOutputLayerEqualsOneBlock) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.vocab_size = 24;
  c.dropout = 0;
  Transformer model(c);
  model.initialize(11);
  const testing::ToyBatch toy({{5, 6, 7, 8, 9}, {10, 11}, {4, 4, 4}}, {{12, 13, 14}, {15, 16, 17, 18, 19, 20}, {21}});
  auto run = [&](int block_rows) {
    model.set_logits_block_rows(block_rows);
    model.zero_gradients();
    const LossSums s = model.forward_backward(toy.view(), nn::Dropout{}, 1.0f / 13);
    return std::make_pair(s, model.gradients_to_host());
  };
  const auto [whole, g_whole] = run(0);
  for (const int rows : {1, 4, 5, 20}) {  // 21 target rows: blocks of 1, uneven, even-ish, one short
    const auto [blocked, g_blocked] = run(rows);
    EXPECT_EQ(blocked.tokens, whole.tokens);
    EXPECT_NEAR(blocked.loss, whole.loss, 1e-6 * std::abs(whole.loss)) << rows << " rows a block";
    EXPECT_NEAR(blocked.nll, whole.nll, 1e-6 * std::abs(whole.nll)) << rows << " rows a block";
    for (const ParameterInfo& t : model.layout().tensors()) {
      double diff = 0, norm = 0;
      for (std::int64_t i = 0; i < t.size; ++i) {
        const double a = g_whole[t.offset + i], b = g_blocked[t.offset + i];
        diff += (a - b) * (a - b);
        norm += a * a;
      }
      // Relative to the tensor's gradient; the key bias's true gradient is 0 (softmax ignores it).
      const double scale = t.name.ends_with("k_proj.bias") ? 1.0 : std::sqrt(norm);
      EXPECT_LE(std::sqrt(diff), 1e-5 * scale) << t.name << " with " << rows << " rows a block";
    }
  }
}

// Attention's probabilities and context kept per layer for the backward pass, or shared by all
// layers and computed again in backward: the same kernel on the same inputs, so the same loss and
// the same gradient to the bit (dropout, padding, a window and both masks acting).
TEST(ModelGradient, AttentionKeptForBackwardEqualsAttentionRecomputed) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.vocab_size = 24;
  c.dropout = 0.1f;
  c.attention_window = 2;
  Transformer model(c);
  model.initialize(13);
  const testing::ToyBatch toy({{5, 6, 7, 8, 9}, {10, 11}, {4, 4, 4}}, {{12, 13, 14}, {15, 16, 17, 18, 19, 20}, {21}});
  auto run = [&](std::int64_t kept_bytes) {
    model.set_kept_attention_bytes(kept_bytes);
    model.zero_gradients();
    const LossSums s = model.forward_backward(toy.view(), nn::Dropout{0.1f, 77}, 1.0f / 10);
    return std::make_pair(s.loss, model.gradients_to_host());
  };
  const auto [kept_loss, kept] = run(TrainingWorkspace::kKeptAttentionBytes);
  const auto [recomputed_loss, recomputed] = run(0);
  EXPECT_EQ(kept_loss, recomputed_loss);
  ASSERT_EQ(kept.size(), recomputed.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < kept.size(); ++i) differ += kept[i] != recomputed[i];
  EXPECT_EQ(differ, 0u) << "of " << kept.size() << " gradient values";
}

// bf16 products: the weights rounded once per forward_backward (RoundedWeights) or by each product
// that reads them: the same rounding (to nearest even), so the same loss and gradient to the bit.
// The model is just large enough (d_model, d_ff, vocabulary and each side's tokens at least 128)
// for every weight's products to run in bf16, which the profile of the call must show. Afterwards
// nothing of the rounding stays bound: once the parameters change, evaluate() gives what a model
// given those parameters from the start gives.
TEST(ModelGradient, WeightsRoundedOnceEqualWeightsRoundedByEachProduct) {
  if (!cpu::bf16_matmul_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: precision bf16 does not exist here";
  const ModelConfig c = testing::bf16_sized_config(1);
  ProfilingBackend profile(cpu_backend(MatmulPrecision::bf16));
  Transformer model(c, profile);
  model.initialize(21);
  const testing::ToyBatch toy = testing::bf16_sized_batch();
  auto run = [&](bool once) {
    model.set_weights_rounded_once(once);
    model.zero_gradients();
    profile.reset();
    const LossSums s = model.forward_backward(toy.view(), nn::Dropout{0.1f, 5}, 1.0f / 100);
    return std::make_pair(s.loss, model.gradients_to_host());
  };
  const auto [each_loss, each] = run(false);
  const auto [once_loss, once] = run(true);
  // Products reading a weight's rounding (the activations' roundings are RoundedActivations.*'s).
  const Bf16* weights = model.parameter_rounding();
  const auto weight = [&](const Bf16* r) { return r && r >= weights && r < weights + model.parameter_count(); };
  int rounded_products = 0;
  for (const auto& p : profile.products())
    rounded_products += (weight(p.a.rounded) || weight(p.b.rounded)) && std::min({p.m, p.n, p.k}) >= 128;
  // Per layer: q·k·v, out, fc1 and fc2 forward and the input's gradient (encoder 8, decoder 14), the
  // output layer's 2.
  EXPECT_EQ(rounded_products, 24);
  EXPECT_EQ(once_loss, each_loss);
  ASSERT_EQ(once.size(), each.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < once.size(); ++i) differ += once[i] != each[i];
  EXPECT_EQ(differ, 0u) << "of " << once.size() << " gradient values";

  std::vector<float> changed = model.parameters_to_host();
  for (std::size_t i = 0; i < changed.size(); ++i) changed[i] += 0.01f * static_cast<float>(i % 7) - 0.03f;
  model.set_parameters(changed);
  Transformer fresh(c, profile);
  fresh.set_parameters(changed);
  const LossSums after = model.evaluate(toy.view()), want = fresh.evaluate(toy.view());
  EXPECT_EQ(after.loss, want.loss);
}

}  // namespace
}  // namespace attn
