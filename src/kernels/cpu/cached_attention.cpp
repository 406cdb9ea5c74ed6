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
#include "kernels/cpu/prefetch.h"
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

// Where row r's cached positions live (position p in cached row rows_of[p], or rows_of[0] for
// all of them) and the range of them its query attends to: the cache holds the keys up to the
// query (causal by construction). previous: row r - 1's table (null for row 0).
struct RowKeys {
  const CachedAttention* a;
  const std::int32_t *rows_of, *previous;
  int lo, hi;
  std::int32_t cached_row(const std::int32_t* table, int p) const { return table[a->rows_of_stride ? p : 0]; }
  const float* at(int p) const {
    return a->cache + cached_row(rows_of, p) * a->row_stride + static_cast<std::int64_t>(p) * a->ld_cache;
  }
  // Whether row r - 1 read position p somewhere else: the hypotheses of a sentence's beam lie in
  // rows next to each other and share their source (cross-attention) and most of their history
  // (self-attention), so that what the row before read is mostly in the cache already.
  bool fresh(int p) const { return !previous || cached_row(previous, p) != cached_row(rows_of, p); }
};

RowKeys row_keys(const CachedAttention& a, int r) {
  const auto table = [&](int row) { return a.rows_of + (a.rows_of_stride ? row * a.rows_of_stride : row); };
  const std::int32_t* rows_of = table(r);
  const KeyRange keys = key_range(a.keys, a.key_lengths ? static_cast<int>(a.key_lengths[rows_of[0]]) : a.keys,
                                  a.query_position, false, a.window);
  return {&a, rows_of, r > 0 ? table(r - 1) : nullptr, keys.lo, keys.hi};
}

// Asks for one head's keys (offset h·d_k) or values (heads·d_k + h·d_v) at each of a row's
// positions that the row before did not read: 256 bytes a position at d_k = 64, the positions a
// cached row (2 KB at the small preset) or more apart and a few dozen of them, which the
// hardware's prefetchers do not follow (a step's keys and values come from memory: the caches of
// a batch's layers outgrow L3). Into L2, not L1 (prefetch_to_l2).
[[gnu::always_inline]] inline void prefetch_head(const RowKeys& keys, std::int64_t offset, int d) {
  const std::int64_t bytes = static_cast<std::int64_t>(d) * sizeof(float);
  if (keys.a->rows_of_stride == 0) {  // one cached row for all positions: fresh for all or none
    if (keys.fresh(0))
      for (int p = keys.lo; p < keys.hi; ++p) prefetch_to_l2(keys.at(p) + offset, bytes);
    return;
  }
  for (int p = keys.lo; p < keys.hi; ++p)
    if (keys.fresh(p)) prefetch_to_l2(keys.at(p) + offset, bytes);
}

// One row and head. D > 0: d_k = d_v = D known at compile time (the presets' 64), so the dot
// products and the weighted sum of values unroll into registers; D = 0: any sizes.
template <int D>
void one_head(const CachedAttention& a, const RowKeys& keys, int r, int h, float scale, float* row, float* out) {
  const int d_k = D ? D : a.d_k, d_v = D ? D : a.d_v;
  const int lo = keys.lo, hi = keys.hi;  // plain ints: OpenMP's simd regions cannot capture members
  std::fill(row, row + a.keys, 0.0f);
  std::fill(out, out + d_v, 0.0f);
  if (lo >= hi) return;
  const std::int64_t value_offset = static_cast<std::int64_t>(a.heads) * d_k + h * d_v;
  // The values are read after the scores: asked for now, they arrive while the scores are taken.
  prefetch_head(keys, value_offset, d_v);
  const float* q = a.q + static_cast<std::int64_t>(r) * a.ld_q + h * d_k;
  float max = -INFINITY;
#if defined(__AVX512F__)
  if constexpr (D == 64) {
    scores64(
        q, [&](int p) { return keys.at(p) + h * D; }, lo, hi, row);
    max = row_max(row + lo, hi - lo);
  } else
#endif
  {
    for (int p = lo; p < hi; ++p) {
      const float* k = keys.at(p) + h * d_k;
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
#if defined(__AVX512F__)
  if constexpr (D == 64) {
    // Two keys at a time into two sets of accumulators: one set's chain of dependent
    // multiply-adds would wait on each other's latency.
    __m512 acc0[4], acc1[4];
    avx512::unrolled<4>([&](auto i) { acc0[i] = acc1[i] = _mm512_setzero_ps(); });
    int p = lo;
    for (; p + 2 <= hi; p += 2) {
      const float w0 = row[p] *= inv, w1 = row[p + 1] *= inv;
      const float *v0 = keys.at(p) + value_offset, *v1 = keys.at(p + 1) + value_offset;
      const __m512 vw0 = _mm512_set1_ps(w0), vw1 = _mm512_set1_ps(w1);
      avx512::unrolled<4>([&](auto i) {
        acc0[i] = _mm512_fmadd_ps(vw0, _mm512_loadu_ps(v0 + 16 * i), acc0[i]);
        acc1[i] = _mm512_fmadd_ps(vw1, _mm512_loadu_ps(v1 + 16 * i), acc1[i]);
      });
    }
    if (p < hi) {
      const float w = row[p] *= inv;
      const float* v = keys.at(p) + value_offset;
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
      const float* v = keys.at(p) + value_offset;
#pragma omp simd
      for (int i = 0; i < D; ++i) acc[i] += w * v[i];
    }
    std::copy(acc, acc + D, out);
  } else {
    for (int p = lo; p < hi; ++p) {
      const float w = row[p] *= inv;
      const float* v = keys.at(p) + value_offset;
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
    const RowKeys keys = row_keys(a, r);
    // The next task's keys, asked for while this one runs (its values: at its start, above).
    if (task + 1 < tasks) {
      const int next_r = static_cast<int>((task + 1) / a.heads), next_h = static_cast<int>((task + 1) % a.heads);
      prefetch_head(next_r == r ? keys : row_keys(a, next_r), static_cast<std::int64_t>(next_h) * a.d_k, a.d_k);
    }
    float* row = probs + task * a.keys;
    float* out = ctx + static_cast<std::int64_t>(r) * ld_ctx + h * a.d_v;
    if (d64)
      one_head<64>(a, keys, r, h, scale, row, out);
    else
      one_head<0>(a, keys, r, h, scale, row, out);
  }
}

}  // namespace attn::cpu
