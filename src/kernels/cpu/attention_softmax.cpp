// Masked, scaled softmax over attention scores and its gradient. Padding sits at the end of a
// sentence and the causal and window masks cut a prefix/suffix, so the keys a query may see form
// one contiguous range [lo, hi): no mask tensor is needed.
#include "kernels/cpu/ops.h"
#include "kernels/cpu/softmax_rows.h"

namespace attn::cpu {

void attention_softmax(float* scores, int batch, int heads, int tq, int tk, const AttentionMask& mask, float scale) {
  // Per (sentence, head) block, its rows sixteen at a time (softmax_rows).
  const int blocks = batch * heads;
  const std::int64_t block = static_cast<std::int64_t>(tq) * tk;
#pragma omp parallel for schedule(static) if (blocks * block > (1 << 14))
  for (int i = 0; i < blocks; ++i) {
    const int b = i / heads;
    softmax_rows(
        scores + i * block, tq, tk, [&](int r) { return query_keys(mask, b, r, tk); }, scale);
  }
}

void attention_softmax_backward(float* dprobs, const float* probs, std::int64_t rows, int tk, float scale) {
#pragma omp parallel for schedule(static) if (rows * tk > (1 << 14))
  for (std::int64_t r = 0; r < rows; ++r) softmax_backward_row(dprobs + r * tk, probs + r * tk, tk, scale);
}

}  // namespace attn::cpu
