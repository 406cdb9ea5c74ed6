// Incremental decoding's attention: one new query per row over keys and values cached position
// by position, read through the table of which cached row holds each position (beam search
// reorders hypotheses by rewriting that table: nothing in the cache moves). Fused: scores,
// masked softmax (the same scaling and exponential as attention_softmax) and the weighted sum of
// values, per row and head, with no batched product calls of one query each. With AVX-512 and
// d_k = d_v = 64 the scores are taken 16 keys at a time: one vector of partial sums per key, then the 16
// vectors summed across their lanes together (a tree of shuffles), not one horizontal sum per key,
// whose chain of dependent additions was most of this kernel's time.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/avx512_blocks.h"
#include "kernels/cpu/fast_exp.h"
#include "kernels/cpu/key_range.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/reductions.h"

namespace attn::cpu {

namespace {

#if defined(__AVX512F__)
// row[p] = q·k_p for p in [lo, hi), d_k = 64.
template <typename Key>
void scores64(const float* q, Key key, int lo, int hi, float* row) {
  const __m512 q0 = _mm512_loadu_ps(q), q1 = _mm512_loadu_ps(q + 16), q2 = _mm512_loadu_ps(q + 32),
               q3 = _mm512_loadu_ps(q + 48);
  for (int p0 = lo; p0 < hi; p0 += 16) {
    const int n = std::min(16, hi - p0);
    __m512 acc[16];
    avx512::unrolled<16>([&](auto j) {
      if (j < n) {
        const float* k = key(p0 + j);
        acc[j] = _mm512_fmadd_ps(
            q3, _mm512_loadu_ps(k + 48),
            _mm512_fmadd_ps(q2, _mm512_loadu_ps(k + 32),
                            _mm512_fmadd_ps(q1, _mm512_loadu_ps(k + 16), _mm512_mul_ps(q0, _mm512_loadu_ps(k)))));
      } else {
        acc[j] = _mm512_setzero_ps();
      }
    });
    const __m512 s = avx512::sum_lanes16(acc, [](__m512 x, __m512 y) { return _mm512_add_ps(x, y); });
    _mm512_mask_storeu_ps(row + p0, avx512::first_lanes(n), s);
  }
}
#endif

// One row and head. D > 0: d_k = d_v = D known at compile time (the presets' 64), so the dot
// products and the weighted sum of values unroll into registers; D = 0: any sizes.
template <int D>
void one_head(const CachedAttention& a, int r, int h, float scale, float* row, float* out) {
  const int d_k = D ? D : a.d_k, d_v = D ? D : a.d_v;
  const std::int32_t* rows_of = a.rows_of + (a.rows_of_stride ? r * a.rows_of_stride : r);
  auto cached = [&](int p) {
    const std::int32_t c = rows_of[a.rows_of_stride ? p : 0];
    return a.cache + c * a.row_stride + static_cast<std::int64_t>(p) * a.ld_cache;
  };
  // The cache holds the keys up to the query (causal by construction).
  const KeyRange keys = key_range(a.keys, a.key_lengths ? static_cast<int>(a.key_lengths[rows_of[0]]) : a.keys,
                                  a.query_position, false, a.window);
  const int lo = keys.lo, hi = keys.hi;  // plain ints: OpenMP's simd regions cannot capture a structured binding
  std::fill(row, row + a.keys, 0.0f);
  std::fill(out, out + d_v, 0.0f);
  if (lo >= hi) return;
  const float* q = a.q + static_cast<std::int64_t>(r) * a.ld_q + h * d_k;
  float max = -INFINITY;
#if defined(__AVX512F__)
  if constexpr (D == 64) {
    scores64(
        q, [&](int p) { return cached(p) + h * D; }, lo, hi, row);
    max = row_max(row + lo, hi - lo);
  } else
#endif
  {
    for (int p = lo; p < hi; ++p) {
      const float* k = cached(p) + h * d_k;
      float s = 0;
#pragma omp simd reduction(+ : s)
      for (int i = 0; i < d_k; ++i) s += q[i] * k[i];
      row[p] = s;
      max = std::max(max, s);
    }
  }
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int p = lo; p < hi; ++p) {
    const float e = fast_exp((row[p] - max) * scale);
    row[p] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
  const std::int64_t value_offset = static_cast<std::int64_t>(a.heads) * d_k + h * d_v;
#if defined(__AVX512F__)
  if constexpr (D == 64) {
    // Two keys at a time into two sets of accumulators: one set's chain of dependent
    // multiply-adds would wait on each other's latency.
    __m512 acc0[4], acc1[4];
    avx512::unrolled<4>([&](auto i) { acc0[i] = acc1[i] = _mm512_setzero_ps(); });
    int p = lo;
    for (; p + 2 <= hi; p += 2) {
      const float w0 = row[p] *= inv, w1 = row[p + 1] *= inv;
      const float *v0 = cached(p) + value_offset, *v1 = cached(p + 1) + value_offset;
      const __m512 vw0 = _mm512_set1_ps(w0), vw1 = _mm512_set1_ps(w1);
      avx512::unrolled<4>([&](auto i) {
        acc0[i] = _mm512_fmadd_ps(vw0, _mm512_loadu_ps(v0 + 16 * i), acc0[i]);
        acc1[i] = _mm512_fmadd_ps(vw1, _mm512_loadu_ps(v1 + 16 * i), acc1[i]);
      });
    }
    if (p < hi) {
      const float w = row[p] *= inv;
      const float* v = cached(p) + value_offset;
      avx512::unrolled<4>(
          [&](auto i) { acc0[i] = _mm512_fmadd_ps(_mm512_set1_ps(w), _mm512_loadu_ps(v + 16 * i), acc0[i]); });
    }
    avx512::unrolled<4>([&](auto i) { _mm512_storeu_ps(out + 16 * i, _mm512_add_ps(acc0[i], acc1[i])); });
    return;
  }
#endif
  if constexpr (D > 0) {
    float acc[D] = {};
    for (int p = lo; p < hi; ++p) {
      const float w = row[p] *= inv;
      const float* v = cached(p) + value_offset;
#pragma omp simd
      for (int i = 0; i < D; ++i) acc[i] += w * v[i];
    }
    std::copy(acc, acc + D, out);
  } else {
    for (int p = lo; p < hi; ++p) {
      const float w = row[p] *= inv;
      const float* v = cached(p) + value_offset;
#pragma omp simd
      for (int i = 0; i < d_v; ++i) out[i] += w * v[i];
    }
  }
}

}  // namespace

void cached_attention(const CachedAttention& a, float* probs, float* ctx) {
  const std::int64_t tasks = static_cast<std::int64_t>(a.rows) * a.heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.d_k));
  const int ld_ctx = a.heads * a.d_v;
  const std::int64_t work = tasks * a.keys * (a.d_k + a.d_v);
  const bool d64 = a.d_k == 64 && a.d_v == 64;
#pragma omp parallel for schedule(static) if (work > (1 << 15))
  for (std::int64_t task = 0; task < tasks; ++task) {
    const int r = static_cast<int>(task / a.heads), h = static_cast<int>(task % a.heads);
    float* row = probs + task * a.keys;
    float* out = ctx + static_cast<std::int64_t>(r) * ld_ctx + h * a.d_v;
    if (d64)
      one_head<64>(a, r, h, scale, row, out);
    else
      one_head<0>(a, r, h, scale, row, out);
  }
}

}  // namespace attn::cpu
