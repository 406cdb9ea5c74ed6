// y = alpha · x·Wᵀ + beta · y with an s8 weight: the activations quantized per row
// (quantize.h), one oneDNN u8·s8 → s32 matmul (VNNI's vpdpbusd where the CPU has it, its AVX2
// integer kernel elsewhere; its rate per shape is bench/translate_bench --precision int8 --profile's to measure,
// the "matmul f32·s8" lines), and the exact integer sums scaled back per row and column:
//   x·Wᵀ[i, j] ≈ Σ_c xs_i (qx_ic - z_i) · ws_j qw_jc = xs_i ws_j (S_ij - z_i Σ_c qw_jc).
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/matmul_primitive.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/quantize.h"

namespace attn::cpu {

void gemm_s8(int m, int n, int k, float alpha, const float* x, std::int64_t ldx, const MatrixRef& w, float beta,
             float* c, int ldc) {
  ATTN_CHECK(w.scales && w.row_sums, "an s8 weight needs its row scales and row sums");
  if (m == 0 || n == 0) return;
  thread_local std::vector<std::uint8_t> qx;
  thread_local std::vector<float> x_scales;
  thread_local std::vector<std::int32_t> zero_points, sums;
  qx.resize(static_cast<std::size_t>(m) * k);
  x_scales.resize(m), zero_points.resize(m);
  sums.resize(static_cast<std::size_t>(m) * n);
  quantize_activation_rows(x, m, k, ldx, activation_levels(), qx.data(), x_scales.data(), zero_points.data());
  if (k > 0) {
    // qx [m, k] dense; W [n, k] read as its transpose (k × n, row stride 1, column stride ld).
    MatmulDesc d = matmul_desc(Trans::No, Trans::Yes, m, n, k, k, w.ld, n, 1.0f, 0.0f);
    d.input = MatmulInput::u8s8;
    run_matmul(d, qx.data(), w.data, sums.data());
  } else {
    std::fill(sums.begin(), sums.end(), 0);
  }
  // Plain pointers: thread_local vectors are other (empty) objects on the parallel region's threads.
  const float* ws = w.scales;
  const std::int32_t* wsum = w.row_sums;
  const std::int32_t* all_sums = sums.data();
  const float* row_scales = x_scales.data();
  const std::int32_t* zeros = zero_points.data();
#pragma omp parallel for schedule(static) if (static_cast <std::int64_t>(m) * n > (1 << 15))
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
