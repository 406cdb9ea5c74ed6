// Masked, scaled softmax over attention scores and its gradient. Padding sits at the end of a
// sentence and the causal and window masks cut a prefix/suffix, so the keys a query may see form
// one contiguous range [lo, hi): no mask tensor is needed.
#include <algorithm>

#include "kernels/cpu/fast_exp.h"
#include "kernels/cpu/key_range.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/reductions.h"

namespace attn::cpu {

void attention_softmax(float* scores, int batch, int heads, int tq, int tk, const AttentionMask& mask, float scale) {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * heads * tq;
#pragma omp parallel for schedule(static) if (rows * tk > (1 << 14))
  for (std::int64_t r = 0; r < rows; ++r) {
    const int b = static_cast<int>(r / (static_cast<std::int64_t>(heads) * tq));
    const int pos = static_cast<int>(r % tq) + mask.query_offset;
    // Plain ints, not a structured binding: OpenMP's simd regions below cannot capture one.
    const KeyRange keys =
        key_range(tk, mask.key_lengths ? static_cast<int>(mask.key_lengths[b]) : tk, pos, mask.causal, mask.window);
    const int lo = keys.lo, hi = keys.hi;
    float* row = scores + r * tk;
    for (int k = 0; k < lo; ++k) row[k] = 0.0f;
    for (int k = std::max(hi, lo); k < tk; ++k) row[k] = 0.0f;
    if (lo >= hi) continue;
    const float max = row_max(row + lo, hi - lo);
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int k = lo; k < hi; ++k) {
      const float e = fast_exp((row[k] - max) * scale);
      row[k] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int k = lo; k < hi; ++k) row[k] *= inv;
  }
}

void attention_softmax_backward(float* dprobs, const float* probs, std::int64_t rows, int tk, float scale) {
#pragma omp parallel for schedule(static) if (rows * tk > (1 << 14))
  for (std::int64_t r = 0; r < rows; ++r) {
    float* d = dprobs + r * tk;
    const float* p = probs + r * tk;
    float dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int k = 0; k < tk; ++k) dot += d[k] * p[k];
#pragma omp simd
    for (int k = 0; k < tk; ++k) d[k] = scale * p[k] * (d[k] - dot);
  }
}

}  // namespace attn::cpu
