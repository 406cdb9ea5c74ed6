// Masked, scaled softmax over attention scores and its gradient. Padding sits at the end of a
// sentence and the causal and window masks cut a prefix/suffix, so the keys a query may see form
// one contiguous range [lo, hi): no mask tensor is needed.
#include "kernels/cpu/ops.h"
#include "kernels/cpu/softmax_rows.h"

namespace attn::cpu {

void attention_softmax(float* scores, int batch, int heads, int tq, int tk, const AttentionMask& mask, float scale) {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * heads * tq;
#pragma omp parallel for schedule(static) if (rows * tk > (1 << 14))
  for (std::int64_t r = 0; r < rows; ++r) {
    const int b = static_cast<int>(r / (static_cast<std::int64_t>(heads) * tq));
    softmax_row(scores + r * tk, tk, query_keys(mask, b, static_cast<int>(r % tq), tk), scale);
  }
}

void attention_softmax_backward(float* dprobs, const float* probs, std::int64_t rows, int tk, float scale) {
#pragma omp parallel for schedule(static) if (rows * tk > (1 << 14))
  for (std::int64_t r = 0; r < rows; ++r) softmax_backward_row(dprobs + r * tk, probs + r * tk, tk, scale);
}

}  // namespace attn::cpu
