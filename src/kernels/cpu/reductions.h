#pragma once
// The largest element of a row, and a row's range: GCC 12 leaves `max = std::max(max, x[j])` loops
// scalar even under `omp simd reduction(max)` (one dependent vmaxss per element: most of
// log_softmax's time over a vocabulary), so with AVX-512 they are written out, 16 lanes at a time.
// NaN is treated as std::max / std::min treat it, skipped unless it is the starting value:
// _mm512_max_ps(v, acc) returns acc where either lane is NaN.
#include <algorithm>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace attn::cpu {

// max(x[0], ..., x[n-1]) for n >= 1, as the loop max = x[0]; max = std::max(max, x[j]) gives it.
inline float row_max(const float* x, int n) {
  float max = x[0];
  int j = 1;
#if defined(__AVX512F__)
  if (n >= 17) {
    __m512 acc = _mm512_set1_ps(max);  // (zero-masked forms: GCC 12 warns about the plain ones)
    for (; j + 16 <= n; j += 16) acc = _mm512_maskz_max_ps(0xffff, _mm512_loadu_ps(x + j), acc);
    float lanes[16];
    _mm512_storeu_ps(lanes, acc);
    for (const float v : lanes) max = std::max(max, v);
  }
#endif
  for (; j < n; ++j) max = std::max(max, x[j]);
  return max;
}

// lo = min(0, x[0..n)), hi = max(0, x[0..n)), NaN skipped.
inline void range_with_zero(const float* x, int n, float& lo, float& hi) {
  lo = 0, hi = 0;
  int j = 0;
#if defined(__AVX512F__)
  __m512 vlo = _mm512_setzero_ps(), vhi = _mm512_setzero_ps();
  for (; j + 16 <= n; j += 16) {
    const __m512 v = _mm512_loadu_ps(x + j);
    vlo = _mm512_maskz_min_ps(0xffff, v, vlo), vhi = _mm512_maskz_max_ps(0xffff, v, vhi);
  }
  float l[16], h[16];
  _mm512_storeu_ps(l, vlo), _mm512_storeu_ps(h, vhi);
  lo = *std::min_element(l, l + 16), hi = *std::max_element(h, h + 16);
#endif
  for (; j < n; ++j) lo = std::min(lo, x[j]), hi = std::max(hi, x[j]);
}

}  // namespace attn::cpu
