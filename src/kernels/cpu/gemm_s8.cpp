// y = alpha · x·Wᵀ + beta · y with an s8 weight: the activations quantized per row
// (quantize.h), one oneDNN u8·s8 → s32 matmul (VNNI's vpdpbusd where the CPU has it, its AVX2
// integer kernel elsewhere; its rate per shape is bench/translate_bench --precision int8 --profile's to measure,
// the "matmul f32·s8" lines), and the exact integer sums scaled back per row and column:
//   x·Wᵀ[i, j] ≈ Σ_c xs_i (qx_ic - z_i) · ws_j qw_jc = xs_i ws_j (S_ij - z_i Σ_c qw_jc).
// A decoding step of one to four rows (batch 1, greedy or beam up to 4) is a kernel of its own,
// quantization, sums and scaling in one parallel region, where the build targets AVX512-VNNI and
// oneDNN uses it too (8-bit activations; a run with ONEDNN_MAX_CPU_ISA below VNNI keeps oneDNN's
// kernel, as CTest's 7-bit run checks): oneDNN's matmul spends most of such a call outside the
// multiply-adds (the "matmul f32·s8 NT 4x..." lines of bench/translate_bench --profile --precision
// int8 show the rate).
#include <algorithm>
#include <vector>
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include "kernels/cpu/avx512_blocks.h"
#endif

#include "core/error.h"
#include "kernels/cpu/matmul_primitive.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/quantize.h"

namespace attn::cpu {

namespace {

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
// The whole product for M rows (1 to 4) in one parallel region: each thread quantizes the rows on
// its own (a few hundred nanoseconds, less than a second parallel region costs), takes its blocks'
// sums S[i, j] = Σ_c qx[i·k + c] · w[j·ldw + c] exactly (VNNI's vpdpbusd adds four u8 × s8
// products into each int32 lane, without saturation) and scales them straight into c: no sums in
// memory, no serial passes before and after. R = 16 / M weight rows at a time, so that the M·R
// accumulators stay in registers; their lanes are then summed all at once, lane i·R + r holding
// row i, column j0 + r. Two threads from 65536 multiply-adds: with a beam-4 step's 4 × 256 × 256
// products split, int8 decoding one verse at a time ran ~3% faster (best of 8 runs).
template <int M>
void few_rows_product(int n, int k, float alpha, const float* x, std::int64_t ldx, const MatrixRef& w, float beta,
                      float* c, int ldc) {
  constexpr int R = 16 / M;
  const int blocks = (n + R - 1) / R, chunks = (k + 63) / 64;
  const __mmask64 last = k % 64 ? ~__mmask64(0) >> (64 - k % 64) : ~__mmask64(0);
  const auto* wq = static_cast<const std::int8_t*>(w.data);
  const float* w_scales = w.scales;
  const std::int32_t* w_sums = w.row_sums;
  const std::int64_t ldw = w.ld;
  const auto add = [](__m512 a, __m512 b) {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  };
  // Lane l of a block belongs to row l / R and column j0 + l % R (M = 3 leaves lane 15 unused).
  alignas(64) std::int32_t columns[16];
  for (int l = 0; l < 16; ++l) columns[l] = l % R;
  const __m512i column_of_lane = _mm512_load_si512(columns);
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
#pragma omp parallel if (static_cast <std::int64_t>(n) * k * M > (1 << 16))
  {
    thread_local std::vector<std::uint8_t> qx_buffer;
    if (qx_buffer.size() < static_cast<std::size_t>(M) * k) qx_buffer.resize(static_cast<std::size_t>(M) * k);
    std::uint8_t* qx = qx_buffer.data();
    float row_scale[M];
    std::int32_t row_zero[M];
    for (int i = 0; i < M; ++i)
      quantize_activation_row(x + i * ldx, k, 255, qx + static_cast<std::int64_t>(i) * k, row_scale[i], row_zero[i]);
    // Per lane: alpha · its row's scale, and its row's zero point.
    alignas(64) float scales[16];
    alignas(64) std::int32_t zeros[16];
    for (int l = 0; l < 16; ++l) {
      const int i = std::min(l / R, M - 1);
      scales[l] = alpha * row_scale[i], zeros[l] = row_zero[i];
    }
    const __m512 lane_scale = _mm512_load_ps(scales);
    const __m512i lane_zero = _mm512_load_si512(zeros);
#pragma omp for schedule(static)
    for (int b = 0; b < blocks; ++b) {
      const int j0 = b * R, rows = std::min(R, n - j0);
      __m512i acc[16];
      avx512::unrolled<16>([&](auto a) { acc[a] = _mm512_setzero_si512(); });
      for (int ch = 0; ch < chunks; ++ch) {
        const __mmask64 mask = ch + 1 == chunks ? last : ~__mmask64(0);  // masked bytes read as 0
        __m512i xv[M];
        avx512::unrolled<M>([&](auto i) { xv[i] = _mm512_maskz_loadu_epi8(mask, qx + i * k + ch * 64); });
        avx512::unrolled<R>([&](auto r) {
          if (r >= rows) return;
          const __m512i wr = _mm512_maskz_loadu_epi8(mask, wq + (j0 + r) * ldw + ch * 64);
          avx512::unrolled<M>([&](auto i) { acc[i * R + r] = _mm512_dpbusd_epi32(acc[i * R + r], xv[i], wr); });
        });
      }
      __m512 bits[16];
      avx512::unrolled<16>([&](auto a) { bits[a] = _mm512_castsi512_ps(acc[a]); });
      const __m512i sums = _mm512_castps_si512(avx512::sum_lanes16(bits, add));
      // c = alpha · xs_i · ws_j · (S_ij − z_i Σ_c qw_jc) [+ beta · c], the columns' scales and sums
      // spread over the lanes of each row (the maskz forms: GCC 12 warns of the undefined vector
      // inside the plain ones).
      const __mmask16 block = avx512::first_lanes(rows);
      const __m512 ws =
          _mm512_maskz_permutexvar_ps(0xffff, column_of_lane, _mm512_maskz_loadu_ps(block, w_scales + j0));
      const __m512i wsum =
          _mm512_maskz_permutexvar_epi32(0xffff, column_of_lane, _mm512_maskz_loadu_epi32(block, w_sums + j0));
      const __m512 y =
          _mm512_mul_ps(_mm512_mul_ps(lane_scale, ws),
                        _mm512_maskz_cvtepi32_ps(0xffff, _mm512_sub_epi32(sums, _mm512_mullo_epi32(lane_zero, wsum))));
      avx512::unrolled<M>([&](auto i) {
        // Row i's lanes i·R .. i·R + R − 1 moved to the front, then stored to its columns.
        __m512 yi =
            i == 0 ? y : _mm512_maskz_permutexvar_ps(0xffff, _mm512_add_epi32(lane, _mm512_set1_epi32(i * R)), y);
        float* ci = c + static_cast<std::int64_t>(i) * ldc + j0;
        if (beta != 0.0f) yi = _mm512_add_ps(yi, _mm512_mul_ps(_mm512_set1_ps(beta), _mm512_maskz_loadu_ps(block, ci)));
        _mm512_mask_storeu_ps(ci, block, yi);
      });
    }
  }
}

// The product of m <= 4 rows, or false: from five rows on oneDNN's matmul was as fast or faster on
// Zen 4 (R = 16 / m leaves more of the work to the lane sums).
bool few_rows_product(int m, int n, int k, float alpha, const float* x, std::int64_t ldx, const MatrixRef& w,
                      float beta, float* c, int ldc) {
  switch (m) {
    case 1:
      return few_rows_product<1>(n, k, alpha, x, ldx, w, beta, c, ldc), true;
    case 2:
      return few_rows_product<2>(n, k, alpha, x, ldx, w, beta, c, ldc), true;
    case 3:
      return few_rows_product<3>(n, k, alpha, x, ldx, w, beta, c, ldc), true;
    case 4:
      return few_rows_product<4>(n, k, alpha, x, ldx, w, beta, c, ldc), true;
    default:
      return false;
  }
}
#else
bool few_rows_product(int, int, int, float, const float*, std::int64_t, const MatrixRef&, float, float*, int) {
  return false;
}
#endif

}  // namespace

void gemm_s8(int m, int n, int k, float alpha, const float* x, std::int64_t ldx, const MatrixRef& w, float beta,
             float* c, int ldc) {
  ATTN_CHECK(w.scales && w.row_sums, "an s8 weight needs its row scales and row sums");
  if (m == 0 || n == 0) return;
  if (k > 0 && activation_levels() == 255 && few_rows_product(m, n, k, alpha, x, ldx, w, beta, c, ldc)) return;
  // Scratch that only grows: a resize up zero-fills, and a decoding step alternates between widths
  // (its output layer's 4 × 8000 sums were 128 KB of memset a step).
  thread_local std::vector<std::uint8_t> qx;
  thread_local std::vector<float> x_scales;
  thread_local std::vector<std::int32_t> zero_points, sums;
  const auto at_least = [](auto& v, std::size_t count) {
    if (v.size() < count) v.resize(count);
  };
  at_least(qx, static_cast<std::size_t>(m) * k);
  at_least(x_scales, m), at_least(zero_points, m);
  at_least(sums, static_cast<std::size_t>(m) * n);
  quantize_activation_rows(x, m, k, ldx, activation_levels(), qx.data(), x_scales.data(), zero_points.data());
  if (k == 0) {
    std::fill_n(sums.begin(), static_cast<std::size_t>(m) * n, 0);
  } else {
    // qx [m, k] dense; W [n, k] read as its transpose (k × n, row stride 1, column stride ld).
    MatmulDesc d = matmul_desc(Trans::No, Trans::Yes, m, n, k, k, w.ld, n, 1.0f, 0.0f);
    d.input = MatmulInput::u8s8;
    run_matmul(d, qx.data(), w.data, sums.data());
  }
  // Plain pointers: thread_local vectors are other (empty) objects on the parallel region's threads.
  const float* ws = w.scales;
  const std::int32_t* wsum = w.row_sums;
  const std::int32_t* all_sums = sums.data();
  const float* row_scales = x_scales.data();
  const std::int32_t* zeros = zero_points.data();
#pragma omp parallel for schedule(static) if (static_cast <std::int64_t>(m) * n > (1 << 13))
  for (int i = 0; i < m; ++i) {
    const std::int32_t* si = all_sums + static_cast<std::int64_t>(i) * n;
    float* ci = c + static_cast<std::int64_t>(i) * ldc;
    const float xs = alpha * row_scales[i];
    const std::int32_t z = zeros[i];
    if (beta == 0.0f) {
#pragma omp simd
      for (int j = 0; j < n; ++j) ci[j] = xs * ws[j] * static_cast<float>(si[j] - z * wsum[j]);
    } else {
#pragma omp simd
      for (int j = 0; j < n; ++j) ci[j] = xs * ws[j] * static_cast<float>(si[j] - z * wsum[j]) + beta * ci[j];
    }
  }
}

}  // namespace attn::cpu
