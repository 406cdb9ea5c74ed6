// Adam's one pass (AdamOptimizer::step): besides the update, it zeroes the gradient and, where the
// model's bf16 products read the weights rounded once, writes that rounding for the next
// forward_backward. The truth here: a model whose every product rounds the weights itself
// (set_weights_rounded_once(false)) and whose gradient is zeroed by its own fill, updated by the same
// steps; losses, gradients and weights must be the same bits, also after the weights were written
// between updates (the rounding dropped) and when the model's gradient was taken to write in between
// (a zero_gradients that must not be skipped).
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

void run_pair(Backend& inner, bool bf16) {
  const ModelConfig c = testing::bf16_sized_config(1);
  const testing::ToyBatch toy = testing::bf16_sized_batch();
  ProfilingBackend pf(inner), pe(inner);
  Transformer fused(c, pf), each(c, pe);
  fused.initialize(3);
  each.initialize(3);
  each.set_weights_rounded_once(false);
  EXPECT_EQ(fused.parameter_rounding() != nullptr, bf16) << "a rounding buffer only where products round to bf16";
  EXPECT_EQ(each.parameter_rounding(), nullptr);
  AdamOptimizer fused_adam(fused, AdamOptions{}), each_adam(each, AdamOptions{});
  const std::vector<float> zeros(static_cast<std::size_t>(fused.parameter_count()), 0.0f);
  for (int update = 0; update < 4; ++update) {
    SCOPED_TRACE("update " + std::to_string(update));
    if (update == 2) {  // weights written between updates: the kept rounding must be dropped
      std::vector<float> w = fused.parameters_to_host();
      for (std::size_t i = 0; i < w.size(); ++i) w[i] += 0.002f * static_cast<float>(i % 5) - 0.004f;
      fused.set_parameters(w);
      each.set_parameters(w);
    }
    if (update == 3) {  // one weight written through parameters(), and the gradient taken to write
      const float bump = 0.25f, junk = 3.0f;
      pf.copy_to_device(fused.parameters() + 7, &bump, sizeof bump);
      pe.copy_to_device(each.parameters() + 7, &bump, sizeof bump);
      pf.copy_to_device(fused.gradients() + 11, &junk, sizeof junk);
    }
    pf.reset();
    fused.zero_gradients();
    each.zero_gradients();
    // After Adam's pass and nothing written since, zero_gradients has nothing to do.
    if (update == 1 || update == 2) {
      EXPECT_EQ(calls(pf, "fill"), 0) << "the gradient was zeroed by Adam's pass";
    } else if (update == 3) {
      EXPECT_EQ(calls(pf, "fill"), 1) << "the gradient was taken to write since Adam's pass";
    }
    pf.reset(), pe.reset();
    const nn::Dropout dropout{0.1f, static_cast<std::uint64_t>(update)};
    const LossSums lf = fused.forward_backward(toy.view(), dropout, 0.02f);
    const LossSums le = each.forward_backward(toy.view(), dropout, 0.02f);
    EXPECT_EQ(lf.loss, le.loss);
    EXPECT_EQ(fused.gradients_to_host(), each.gradients_to_host());
    // The activations' bf16 copies are the same in both; the fused model rounds its parameters in a
    // pass of its own only where nothing rounded them since they were last written.
    const bool rounds_itself = bf16 && (update == 0 || update >= 2);
    EXPECT_EQ(calls(pf, "to_bf16"), calls(pe, "to_bf16") + (rounds_itself ? 1 : 0));
    fused_adam.step(3e-3f, 0.9f);
    each_adam.step(3e-3f, 0.9f);
    EXPECT_EQ(fused.parameters_to_host(), each.parameters_to_host());
    EXPECT_EQ(fused.gradients_to_host(), zeros) << "Adam's pass leaves the gradient zeroed";
  }
  // Finally the model evaluates as one given the same weights from the start.
  Transformer fresh_model(c, inner);
  fresh_model.set_parameters(fused.parameters_to_host());
  EXPECT_EQ(fused.evaluate(toy.view()).loss, fresh_model.evaluate(toy.view()).loss);
}

TEST(AdamPass, Bf16WeightsRoundedInAdamsPassTrainAsWeightsRoundedByEachProduct) {
  if (!cpu::bf16_matmul_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: precision bf16 does not exist here";
  run_pair(cpu_backend(MatmulPrecision::bf16), true);
}

TEST(AdamPass, Fp32GradientZeroedInAdamsPassTrainsAsAFilledOne) { run_pair(cpu_backend(MatmulPrecision::fp32), false); }

}  // namespace
}  // namespace attn
