// Mixed precision (bf16 products, bf16-kept activations) against the same model in float32,
// whose gradients the finite-difference and PyTorch tests check. bf16 keeps 8 significant bits,
// so the loss agrees to ~1e-2 and every tensor's gradient points the same way; a layer that
// read another layer's activations (the float working copies are shared by all layers) instead
// of its own kept bf16 copy would not.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "common/toy_batch.h"
#include "kernels/cpu/ops.h"
#include "model/transformer.h"

namespace attn {
namespace {

TEST(MixedPrecision, LossAndEveryGradientAgreeWithFloat32) {
  if (!cpu::bf16_matmul_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  ModelConfig c = ModelConfig::preset("tiny");
  // Every side at least 128 (with 8 sentences × 20 tokens = 160 rows), so that the products run
  // in bf16 rather than falling back to float32.
  c.d_model = 128, c.d_ff = 256, c.heads = 4, c.d_k = c.d_v = 32;
  c.encoder_layers = c.decoder_layers = 2;
  c.vocab_size = 160;
  c.dropout = 0.1f;
  c.activation_dropout = 0.1f;  // masks the hidden layer before it is kept in bf16
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::int32_t> token(4, c.vocab_size - 1);
  std::vector<std::vector<std::int32_t>> src, tgt;
  for (int b = 0; b < 8; ++b) {
    src.emplace_back(19 - b % 3), tgt.emplace_back(19 - b % 4);  // ragged: padding acts
    for (auto& t : src.back()) t = token(rng);
    for (auto& t : tgt.back()) t = token(rng);
  }
  const testing::ToyBatch toy(src, tgt);
  const nn::Dropout dropout{c.dropout, 77, c.activation_dropout};

  auto run = [&](MatmulPrecision precision, std::vector<float>& grad) {
    Transformer model(c, cpu_backend(precision));
    model.initialize(3);
    model.zero_gradients();
    const LossSums sums = model.forward_backward(toy.view(), dropout, 1.0f / 160);
    grad = model.gradients_to_host();
    return sums;
  };
  std::vector<float> g32, g16;
  const LossSums l32 = run(MatmulPrecision::fp32, g32);
  const LossSums l16 = run(MatmulPrecision::bf16, g16);
  ASSERT_EQ(l32.tokens, l16.tokens);
  EXPECT_NEAR(l16.loss / l16.tokens, l32.loss / l32.tokens, 1e-2 * l32.loss / l32.tokens);

  Transformer layout_only(c);
  for (const ParameterInfo& t : layout_only.layout().tensors()) {
    if (t.name.ends_with("k_proj.bias")) continue;  // exactly zero in float32 (softmax ignores it)
    double dot = 0, n32 = 0, n16 = 0;
    for (std::int64_t i = t.offset; i < t.offset + t.size; ++i) {
      dot += static_cast<double>(g32[i]) * g16[i];
      n32 += static_cast<double>(g32[i]) * g32[i];
      n16 += static_cast<double>(g16[i]) * g16[i];
    }
    const double cosine = dot / std::sqrt(n32 * n16);
    EXPECT_GT(cosine, 0.99) << t.name;
    EXPECT_NEAR(std::sqrt(n16 / n32), 1.0, 0.05) << t.name;
  }
}

}  // namespace
}  // namespace attn
