// Layer normalisation y = gamma · (x - mean) · rstd + beta over each row, and its gradient.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {

void layernorm(const float* x, const float* residual, const float* gamma, const float* beta, float* sum, float* y,
               Bf16* rounded, float* mean, float* rstd, std::int64_t rows, int cols, float eps) {
  // The residual sum, the normalisation and the rounding on each row while it is in L1: three
  // passes over the rows (add, layernorm, to_bf16) in one.
#pragma omp parallel if (rows > 16)
  {
    // A row's sum where it is not kept (sum null): this thread's own row.
    std::vector<float> row_buffer(residual && !sum ? cols : 0);
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * cols;
      if (residual) {
        const float* rr = residual + r * cols;
        float* sr = sum ? sum + r * cols : row_buffer.data();
#pragma omp simd
        for (int c = 0; c < cols; ++c) sr[c] = xr[c] + rr[c];
        xr = sr;
      } else if (sum && sum != x) {
        std::copy(xr, xr + cols, sum + r * cols);
      }
      float* yr = y + r * cols;
      float total = 0;
#pragma omp simd reduction(+ : total)
      for (int c = 0; c < cols; ++c) total += xr[c];
      const float mu = total / cols;
      float var = 0;
#pragma omp simd reduction(+ : var)
      for (int c = 0; c < cols; ++c) var += (xr[c] - mu) * (xr[c] - mu);
      const float rs = 1.0f / std::sqrt(var / cols + eps);
#pragma omp simd
      for (int c = 0; c < cols; ++c) yr[c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
      if (rounded) round_to_bf16(yr, cols, rounded + r * cols);
      if (mean) mean[r] = mu;
      if (rstd) rstd[r] = rs;
    }
  }
}

void layernorm_backward(const float* dy, const float* x, const float* mean, const float* rstd, const float* gamma,
                        float* dx, float* dx_copy, float* dgamma, float* dbeta, std::int64_t rows, int cols) {
  // dgamma and dbeta are sums over rows: each of a fixed number of row chunks sums into its own
  // partial, then the partials are added in order (same result on any thread count).
  // Reused across calls (no allocation per step); workers use the raw pointer, not the vector.
  static thread_local std::vector<float> partial_buffer;
  partial_buffer.assign(static_cast<std::size_t>(kReductionChunks) * 2 * cols, 0.0f);
  float* const partial = partial_buffer.data();
  const std::int64_t chunk = (rows + kReductionChunks - 1) / kReductionChunks;
#pragma omp parallel for schedule(static)
  for (int ch = 0; ch < kReductionChunks; ++ch) {
    float* pg = partial + static_cast<std::size_t>(ch) * 2 * cols;
    float* pb = pg + cols;
    const std::int64_t lo = ch * chunk, hi = std::min(rows, lo + chunk);
    for (std::int64_t r = lo; r < hi; ++r) {
      const float* xr = x + r * cols;
      const float* dyr = dy + r * cols;
      float* dxr = dx + r * cols;
      const float mu = mean[r], rs = rstd[r];
      // dx = rstd · (g - mean(g) - xhat · mean(g · xhat)), g = dy · gamma
      float sum_g = 0, sum_gx = 0;
#pragma omp simd reduction(+ : sum_g, sum_gx)
      for (int c = 0; c < cols; ++c) {
        const float xhat = (xr[c] - mu) * rs;
        const float g = dyr[c] * gamma[c];
        sum_g += g;
        sum_gx += g * xhat;
        pg[c] += dyr[c] * xhat;
        pb[c] += dyr[c];
      }
      const float mean_g = sum_g / cols, mean_gx = sum_gx / cols;
#pragma omp simd
      for (int c = 0; c < cols; ++c) {
        const float xhat = (xr[c] - mu) * rs;
        dxr[c] = rs * (dyr[c] * gamma[c] - mean_g - xhat * mean_gx);
      }
      if (dx_copy) std::copy(dxr, dxr + cols, dx_copy + r * cols);
    }
  }
  for (int ch = 0; ch < kReductionChunks; ++ch) {
    const float* pg = partial + static_cast<std::size_t>(ch) * 2 * cols;
    const float* pb = pg + cols;
    for (int c = 0; c < cols; ++c) {
      dgamma[c] += pg[c];
      dbeta[c] += pb[c];
    }
  }
}

}  // namespace attn::cpu
