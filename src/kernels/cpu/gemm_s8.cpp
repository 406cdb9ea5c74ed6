// y = alpha · x·Wᵀ + beta · y with an s8 weight: the activations quantized per row
// (quantize.h), one oneDNN u8·s8 → s32 matmul (VNNI's vpdpbusd where the CPU has it, its AVX2
// integer kernel elsewhere; its rate per shape is bench/translate_bench --precision int8 --profile's to measure,
// the "matmul f32·s8" lines), and the exact integer sums scaled back per row and column:
//   x·Wᵀ[i, j] ≈ Σ_c xs_i (qx_ic - z_i) · ws_j qw_jc = xs_i ws_j (S_ij - z_i Σ_c qw_jc).
// A decoding step of one to four rows (batch 1, greedy or beam up to 4) takes the integer sums from
// a kernel of its own where the build targets AVX512-VNNI and oneDNN uses it too (8-bit
// activations; a run with ONEDNN_MAX_CPU_ISA below VNNI keeps oneDNN's kernel, as CTest's 7-bit
// run checks): oneDNN's matmul spends most of such a call outside the multiply-adds (the "matmul
// f32·s8 NT 4x..." lines of bench/translate_bench --profile --precision int8 show the rate).
#include <algorithm>
#include <cstring>
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
// sums[i·n + j] = Σ_c qx[i·k + c] · w[j·ldw + c] for M rows (1 to 4), exactly: VNNI's vpdpbusd adds
// four u8 × s8 products into each int32 lane, without saturation. R = 16 / M weight rows at a time,
// so that the M·R accumulators stay in registers; their lanes are then summed all at once.
// Two threads from 65536 multiply-adds: a beam-4 step's 4 × 256 × 256 products are ~10% faster
// split than on one core (int8 one verse at a time, 100 dev verses, best of 8 runs).
template <int M>
void few_rows_sums(int n, int k, const std::uint8_t* qx, const std::int8_t* w, std::int64_t ldw, std::int32_t* sums) {
  constexpr int R = 16 / M;
  const int blocks = (n + R - 1) / R, chunks = (k + 63) / 64;
  const __mmask64 last = k % 64 ? ~__mmask64(0) >> (64 - k % 64) : ~__mmask64(0);
  const auto add = [](__m512 x, __m512 y) {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(x), _mm512_castps_si512(y)));
  };
#pragma omp parallel for schedule(static) if (static_cast <std::int64_t>(n) * k * M > (1 << 16))
  for (int b = 0; b < blocks; ++b) {
    const int j0 = b * R, rows = std::min(R, n - j0);
    __m512i acc[16];
    avx512::unrolled<16>([&](auto a) { acc[a] = _mm512_setzero_si512(); });
    for (int ch = 0; ch < chunks; ++ch) {
      const __mmask64 mask = ch + 1 == chunks ? last : ~__mmask64(0);  // masked bytes read as 0
      __m512i x[M];
      avx512::unrolled<M>([&](auto i) { x[i] = _mm512_maskz_loadu_epi8(mask, qx + i * k + ch * 64); });
      avx512::unrolled<R>([&](auto r) {
        if (r >= rows) return;
        const __m512i wr = _mm512_maskz_loadu_epi8(mask, w + (j0 + r) * ldw + ch * 64);
        avx512::unrolled<M>([&](auto i) { acc[i * R + r] = _mm512_dpbusd_epi32(acc[i * R + r], x[i], wr); });
      });
    }
    __m512 bits[16];
    avx512::unrolled<16>([&](auto a) { bits[a] = _mm512_castsi512_ps(acc[a]); });
    std::int32_t total[16];
    _mm512_storeu_si512(total, _mm512_castps_si512(avx512::sum_lanes16(bits, add)));
    // A whole block's rows as one fixed-size copy each (a loop to `rows` became a memcpy call).
    if (rows == R)
      for (int i = 0; i < M; ++i)
        std::memcpy(sums + static_cast<std::int64_t>(i) * n + j0, total + i * R, sizeof total / M);
    else
      for (int i = 0; i < M; ++i)
        for (int r = 0; r < rows; ++r) sums[static_cast<std::int64_t>(i) * n + j0 + r] = total[i * R + r];
  }
}

// The sums of m <= 4 rows, or false: from five rows on oneDNN's matmul was as fast or faster on
// Zen 4 (R = 16 / m leaves more of the work to the lane sums).
bool few_rows_sums(int m, int n, int k, const std::uint8_t* qx, const std::int8_t* w, std::int64_t ldw,
                   std::int32_t* sums) {
  switch (m) {
    case 1:
      return few_rows_sums<1>(n, k, qx, w, ldw, sums), true;
    case 2:
      return few_rows_sums<2>(n, k, qx, w, ldw, sums), true;
    case 3:
      return few_rows_sums<3>(n, k, qx, w, ldw, sums), true;
    case 4:
      return few_rows_sums<4>(n, k, qx, w, ldw, sums), true;
    default:
      return false;
  }
}
#else
bool few_rows_sums(int, int, int, const std::uint8_t*, const std::int8_t*, std::int64_t, std::int32_t*) {
  return false;
}
#endif

}  // namespace

void gemm_s8(int m, int n, int k, float alpha, const float* x, std::int64_t ldx, const MatrixRef& w, float beta,
             float* c, int ldc) {
  ATTN_CHECK(w.scales && w.row_sums, "an s8 weight needs its row scales and row sums");
  if (m == 0 || n == 0) return;
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
  } else if (activation_levels() != 255 ||
             !few_rows_sums(m, n, k, qx.data(), static_cast<const std::int8_t*>(w.data), w.ld, sums.data())) {
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
