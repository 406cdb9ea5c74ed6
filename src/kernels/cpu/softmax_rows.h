#pragma once
// One row of attention's masked, scaled softmax and of its gradient: attention_softmax.cpp runs
// them over every row of a batch, the fused attention kernel (attention.cpp) over one (sentence,
// head) block at a time; the same code, so both give the same bits.
#include <cstdint>

#include "kernels/backend.h"
#include "kernels/cpu/avx512_blocks.h"
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

#if defined(__AVX512F__)
// The three passes of one softmax row over its keys [lo, hi), sixteen keys at a time under lane
// masks (a 32-key row, the cpu-hour preset's, in two steps, where GCC's vectorised loops spent most
// of their time in their scalar prologues and tails): the row's sixteen lanes of largest scores
// (the keys outside the range set to exactly 0 on the way), exp((score - max)·scale) in place with
// its sixteen lanes of sums, and the products by 1 / sum. softmax_row and softmax_16_rows both run
// them; they differ only in how the lanes are reduced between the passes.
inline __m512 row_lanes_max(float* row, int tk, int lo, int hi) {
  for (int k = 0; k < lo; ++k) row[k] = 0.0f;
  for (int k = hi > lo ? hi : lo; k < tk; ++k) row[k] = 0.0f;
  if (lo >= hi) return _mm512_setzero_ps();
  __m512 vmax = _mm512_set1_ps(row[lo]);
  for (int k = lo; k < hi; k += 16) {
    const __mmask16 m = avx512::first_lanes(hi - k);
    vmax = _mm512_mask_max_ps(vmax, m, _mm512_maskz_loadu_ps(m, row + k), vmax);
  }
  return vmax;
}
inline __m512 row_exp_lanes_sum(float* row, int lo, int hi, float max, __m512 vscale) {
  const __m512 vmax = _mm512_set1_ps(max);
  __m512 vsum = _mm512_setzero_ps();
  for (int k = lo; k < hi; k += 16) {
    const __mmask16 m = avx512::first_lanes(hi - k);
    const __m512 e = fast_exp(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + k), vmax), vscale));
    _mm512_mask_storeu_ps(row + k, m, e);
    vsum = _mm512_mask_add_ps(vsum, m, vsum, e);
  }
  return vsum;
}
inline void row_times(float* row, int lo, int hi, float inv) {
  const __m512 vinv = _mm512_set1_ps(inv);
  for (int k = lo; k < hi; k += 16) {
    const __mmask16 m = avx512::first_lanes(hi - k);
    _mm512_mask_storeu_ps(row + k, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + k), vinv));
  }
}
#endif

// row[0, tk): scores in, probabilities out, over the keys [lo, hi) (exactly 0 elsewhere; all 0
// when the range is empty).
inline void softmax_row(float* row, int tk, KeyRange keys, float scale) {
  // Plain ints, not a structured binding: OpenMP's simd regions below cannot capture one.
  const int lo = keys.lo, hi = keys.hi;
#if defined(__AVX512F__)
  const __m512 vmax = row_lanes_max(row, tk, lo, hi);
  if (lo >= hi) return;
  const __m512 vsum = row_exp_lanes_sum(row, lo, hi, lanes_max(vmax), _mm512_set1_ps(scale));
  row_times(row, lo, hi, 1.0f / lanes_sum(vsum));
#else
  for (int k = 0; k < lo; ++k) row[k] = 0.0f;
  for (int k = hi > lo ? hi : lo; k < tk; ++k) row[k] = 0.0f;
  if (lo >= hi) return;
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

#if defined(__AVX512F__)
// Lane j of each of sixteen rows of sixteen lanes (row r at lanes + 16·r): one vector over the rows.
inline __m512 lane_of_rows(const float* lanes, int j) {
  const __m512i rows = _mm512_setr_epi32(0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240);
  // (The masked forms, here and for max below: GCC 12 warns on the unmasked ones' undefined source.)
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xffff, rows, lanes + j, 4);
}

// lanes_sum of each of sixteen rows of sixteen lanes (row r at lanes + 16·r), in its order (s = 0,
// then s += x[j], j = 0 .. 15): one vector over the rows.
inline __m512 rows_lanes_sum(const float* lanes) {
  __m512 sum = _mm512_setzero_ps();
  for (int j = 0; j < 16; ++j) sum = _mm512_add_ps(sum, lane_of_rows(lanes, j));
  return sum;
}

// softmax_row on sixteen rows (row r at x + r·tk, its keys keys[r]), the same bits, the rows'
// reductions done together: each row's sixteen lanes of largest values (then of sums) are set
// side by side and reduced lane by lane in lanes_max's and lanes_sum's order, one vector
// operation for all sixteen rows. Row by row, each row's two reductions were a chain of sixteen
// dependent scalar operations that the next row waited behind: at 32 keys, half of the fused
// attention's forward time.
inline void softmax_16_rows(float* x, int tk, const KeyRange* keys, float scale) {
  alignas(64) float lanes[16 * 16], per_row[16];
  const auto row = [&](int r) { return x + static_cast<std::int64_t>(r) * tk; };
  for (int r = 0; r < 16; ++r) _mm512_store_ps(lanes + 16 * r, row_lanes_max(row(r), tk, keys[r].lo, keys[r].hi));
  __m512 max = lane_of_rows(lanes, 0);  // lanes_max: m = m > x[j] ? m : x[j], j = 1 .. 15
  for (int j = 1; j < 16; ++j) max = _mm512_mask_max_ps(max, 0xffff, max, lane_of_rows(lanes, j));
  _mm512_store_ps(per_row, max);
  const __m512 vscale = _mm512_set1_ps(scale);
  for (int r = 0; r < 16; ++r)
    _mm512_store_ps(lanes + 16 * r, row_exp_lanes_sum(row(r), keys[r].lo, keys[r].hi, per_row[r], vscale));
  _mm512_store_ps(per_row, _mm512_div_ps(_mm512_set1_ps(1.0f), rows_lanes_sum(lanes)));
  for (int r = 0; r < 16; ++r) row_times(row(r), keys[r].lo, keys[r].hi, per_row[r]);
}
#endif

// softmax_row on rows [0, count) of a block (row r at x + r·tk, its keys keys_of(r)): sixteen at a
// time where AVX-512 allows (softmax_16_rows), the rest one by one; the same bits either way.
template <typename KeysOf>
inline void softmax_rows(float* x, int count, int tk, KeysOf&& keys_of, float scale) {
  int r = 0;
#if defined(__AVX512F__)
  for (; r + 16 <= count; r += 16) {
    KeyRange keys[16];
    for (int i = 0; i < 16; ++i) keys[i] = keys_of(r + i);
    softmax_16_rows(x + static_cast<std::int64_t>(r) * tk, tk, keys, scale);
  }
#endif
  for (; r < count; ++r) softmax_row(x + static_cast<std::int64_t>(r) * tk, tk, keys_of(r), scale);
}

#if defined(__AVX512F__)
// The sixteen lanes of one row's Σ d·p: lane j sums the products of keys j, j + 16, ... over the
// whole sixteens, then lane 0 the products of the keys left, one by one (all fused multiply-adds),
// and the lanes are summed in order (lanes_sum): the order in which GCC's vectorised `omp simd`
// reduction summed them in the Release build (-O3), written out so that sixteen rows can be
// reduced together (softmax_backward_rows) with the same bits, whatever the optimisation level.
inline __m512 row_dot_lanes(const float* d, const float* p, int tk) {
  __m512 acc = _mm512_setzero_ps();
  int k = 0;
  for (; k + 16 <= tk; k += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(d + k), _mm512_loadu_ps(p + k), acc);
  if (k == tk) return acc;
  __m128 lane0 = _mm_set_ss(_mm512_cvtss_f32(acc));
  for (; k < tk; ++k) lane0 = _mm_fmadd_ss(_mm_set_ss(d[k]), _mm_set_ss(p[k]), lane0);
  return _mm512_mask_broadcastss_ps(acc, 1, lane0);
}
// d = scale·p·(d - dot) over one row.
inline void row_backward_times(float* d, const float* p, int tk, float scale, float dot) {
  const __m512 vscale = _mm512_set1_ps(scale), vdot = _mm512_set1_ps(dot);
  for (int k = 0; k < tk; k += 16) {
    const __mmask16 m = avx512::first_lanes(tk - k);
    const __m512 sp = _mm512_mul_ps(vscale, _mm512_maskz_loadu_ps(m, p + k));
    _mm512_mask_storeu_ps(d + k, m, _mm512_mul_ps(sp, _mm512_sub_ps(_mm512_maskz_loadu_ps(m, d + k), vdot)));
  }
}
#endif

// In place: d (∂L/∂probs of one row) becomes ∂L/∂scores, scale included, given the row's probabilities.
inline void softmax_backward_row(float* d, const float* p, int tk, float scale) {
#if defined(__AVX512F__)
  row_backward_times(d, p, tk, scale, lanes_sum(row_dot_lanes(d, p, tk)));
#else
  float dot = 0;
#pragma omp simd reduction(+ : dot)
  for (int k = 0; k < tk; ++k) dot += d[k] * p[k];
#pragma omp simd
  for (int k = 0; k < tk; ++k) d[k] = scale * p[k] * (d[k] - dot);
#endif
}

// softmax_backward_row on rows [0, count) (row r at d + r·tk, p + r·tk), the same bits: sixteen
// rows at a time where AVX-512 allows, their sums reduced side by side as softmax_16_rows reduces
// its own (row by row, each row's sum was a chain of sixteen dependent additions).
inline void softmax_backward_rows(float* d, const float* p, int count, int tk, float scale) {
  int r = 0;
#if defined(__AVX512F__)
  for (; r + 16 <= count; r += 16) {
    alignas(64) float lanes[16 * 16], dots[16];
    float* d16 = d + static_cast<std::int64_t>(r) * tk;
    const float* p16 = p + static_cast<std::int64_t>(r) * tk;
    for (int i = 0; i < 16; ++i) _mm512_store_ps(lanes + 16 * i, row_dot_lanes(d16 + i * tk, p16 + i * tk, tk));
    _mm512_store_ps(dots, rows_lanes_sum(lanes));
    for (int i = 0; i < 16; ++i) row_backward_times(d16 + i * tk, p16 + i * tk, tk, scale, dots[i]);
  }
#endif
  for (; r < count; ++r)
    softmax_backward_row(d + static_cast<std::int64_t>(r) * tk, p + static_cast<std::int64_t>(r) * tk, tk, scale);
}

// The keys query row r (of tq per sentence and head) of sentence b may see.
inline KeyRange query_keys(const AttentionMask& mask, int b, int r, int tk) {
  return key_range(tk, mask.key_lengths ? static_cast<int>(mask.key_lengths[b]) : tk, r + mask.query_offset,
                   mask.causal, mask.window);
}

}  // namespace attn::cpu
