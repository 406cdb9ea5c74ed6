// Training with bf16 activations rounds the rows its products read once and keeps the rounding per
// layer (the layers' inputs and outputs, the sublayers' outputs, attention's context): the forward
// products read it, and the backward pass reads it instead of recomputing the layers' outputs. The
// truth here: the same model whose every product rounds its float rows itself and whose backward
// pass recomputes them (set_activations_rounded_once(false)). Losses, gradients and the updated
// weights must be the same bits, with attention's outputs kept per layer or recomputed; and the
// layer norms that no longer run again are counted by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/bf16_sized_model.h"
#include "kernels/cpu/ops.h"
#include "kernels/profiling_backend.h"
#include "model/transformer.h"
#include "train/adam_optimizer.h"

namespace attn {
namespace {

long calls(const ProfilingBackend& p, const char* op) {
  const auto it = p.stats().find(op);
  return it == p.stats().end() ? 0 : it->second.calls;
}

void run_pair(std::int64_t kept_attention_bytes) {
  const ModelConfig c = testing::bf16_sized_config(2);
  const testing::ToyBatch toy = testing::bf16_sized_batch();
  Backend& inner = cpu_backend(MatmulPrecision::bf16);
  ProfilingBackend po(inner), pe(inner);
  Transformer once(c, po), each(c, pe);
  once.initialize(5);
  each.initialize(5);
  each.set_activations_rounded_once(false);
  if (kept_attention_bytes >= 0) {
    once.set_kept_attention_bytes(kept_attention_bytes);
    each.set_kept_attention_bytes(kept_attention_bytes);
  }
  AdamOptimizer once_adam(once, AdamOptions{}), each_adam(each, AdamOptions{});
  for (int update = 0; update < 3; ++update) {
    SCOPED_TRACE("update " + std::to_string(update));
    once.zero_gradients();
    each.zero_gradients();
    po.reset(), pe.reset();
    const nn::Dropout dropout{0.1f, static_cast<std::uint64_t>(update + 1)};
    const LossSums lo = once.forward_backward(toy.view(), dropout, 0.02f);
    const LossSums le = each.forward_backward(toy.view(), dropout, 0.02f);
    EXPECT_EQ(lo.loss, le.loss);
    EXPECT_EQ(once.gradients_to_host(), each.gradients_to_host());
    // Forward: 2 layer norms per encoder layer, 3 per decoder layer (10). Recomputed in backward:
    // each encoder layer's middle (2), each decoder layer's two sublayer outputs (4), and the
    // inputs of the second layers (2).
    EXPECT_EQ(calls(po, "layernorm"), 10);
    EXPECT_EQ(calls(pe, "layernorm"), 18);
    once_adam.step(3e-3f, 0.9f);
    each_adam.step(3e-3f, 0.9f);
    EXPECT_EQ(once.parameters_to_host(), each.parameters_to_host());
  }
}

TEST(RoundedActivations, RoundedOnceTrainAsRoundedByEachProduct) {
  if (!cpu::bf16_matmul_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: precision bf16 does not exist here";
  run_pair(-1);
}

TEST(RoundedActivations, RoundedOnceWithAttentionRecomputedInBackward) {
  if (!cpu::bf16_matmul_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: precision bf16 does not exist here";
  run_pair(0);
}

}  // namespace
}  // namespace attn
