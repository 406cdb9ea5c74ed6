#pragma once
// One row of attention's masked, scaled softmax and of its gradient: attention_softmax.cpp runs
// them over every row of a batch, the fused attention kernel (attention.cpp) over one (sentence,
// head) block at a time; the same code, so both give the same bits.
#include <cstdint>

#include "kernels/backend.h"
#include "kernels/cpu/fast_exp.h"
#include "kernels/cpu/key_range.h"
#include "kernels/cpu/reductions.h"

namespace attn::cpu {

#if defined(__AVX512F__)
// The largest and the sum of sixteen lanes (written out: GCC 12 warns inside _mm512_reduce_*).
inline float lanes_max(__m512 v) {
  alignas(64) float x[16];
  _mm512_store_ps(x, v);
  float m = x[0];
  for (int i = 1; i < 16; ++i) m = m > x[i] ? m : x[i];
  return m;
}
inline float lanes_sum(__m512 v) {
  alignas(64) float x[16];
  _mm512_store_ps(x, v);
  float s = 0;
  for (int i = 0; i < 16; ++i) s += x[i];
  return s;
}
#endif

// row[0, tk): scores in, probabilities out, over the keys [lo, hi) (exactly 0 elsewhere; all 0
// when the range is empty). With AVX-512, sixteen keys at a time under lane masks: a 32-key row
// (the cpu-hour preset's) in two steps, where GCC's vectorised loops spent most of their time in
// their scalar prologues and tails.
inline void softmax_row(float* row, int tk, KeyRange keys, float scale) {
  // Plain ints, not a structured binding: OpenMP's simd regions below cannot capture one.
  const int lo = keys.lo, hi = keys.hi;
  for (int k = 0; k < lo; ++k) row[k] = 0.0f;
  for (int k = hi > lo ? hi : lo; k < tk; ++k) row[k] = 0.0f;
  if (lo >= hi) return;
#if defined(__AVX512F__)
  __m512 vmax = _mm512_set1_ps(row[lo]);
  for (int k = lo; k < hi; k += 16) {
    const __mmask16 m = hi - k >= 16 ? __mmask16(0xffff) : __mmask16((1u << (hi - k)) - 1);
    vmax = _mm512_mask_max_ps(vmax, m, _mm512_maskz_loadu_ps(m, row + k), vmax);
  }
  const __m512 max = _mm512_set1_ps(lanes_max(vmax)), vscale = _mm512_set1_ps(scale);
  __m512 vsum = _mm512_setzero_ps();
  for (int k = lo; k < hi; k += 16) {
    const __mmask16 m = hi - k >= 16 ? __mmask16(0xffff) : __mmask16((1u << (hi - k)) - 1);
    const __m512 e = fast_exp(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + k), max), vscale));
    _mm512_mask_storeu_ps(row + k, m, e);
    vsum = _mm512_mask_add_ps(vsum, m, vsum, e);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / lanes_sum(vsum));
  for (int k = lo; k < hi; k += 16) {
    const __mmask16 m = hi - k >= 16 ? __mmask16(0xffff) : __mmask16((1u << (hi - k)) - 1);
    _mm512_mask_storeu_ps(row + k, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + k), inv));
  }
#else
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
#endif
}

// In place: d (∂L/∂probs of one row) becomes ∂L/∂scores, scale included, given the row's probabilities.
inline void softmax_backward_row(float* d, const float* p, int tk, float scale) {
  float dot = 0;
#pragma omp simd reduction(+ : dot)
  for (int k = 0; k < tk; ++k) dot += d[k] * p[k];
#pragma omp simd
  for (int k = 0; k < tk; ++k) d[k] = scale * p[k] * (d[k] - dot);
}

// The keys query row r (of tq per sentence and head) of sentence b may see.
inline KeyRange query_keys(const AttentionMask& mask, int b, int r, int tk) {
  return key_range(tk, mask.key_lengths ? static_cast<int>(mask.key_lengths[b]) : tk, r + mask.query_offset,
                   mask.causal, mask.window);
}

}  // namespace attn::cpu
