// Layer normalisation y = gamma · (x - mean) · rstd + beta over each row, and its gradient.
#include <cmath>
#include <vector>

#include "kernels/cpu/ops.h"

namespace attn::cpu {

void layernorm(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
               std::int64_t rows, int cols, float eps) {
#pragma omp parallel for schedule(static) if (rows > 16)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < cols; ++c) sum += xr[c];
    const float mu = sum / cols;
    float var = 0;
#pragma omp simd reduction(+ : var)
    for (int c = 0; c < cols; ++c) var += (xr[c] - mu) * (xr[c] - mu);
    const float rs = 1.0f / std::sqrt(var / cols + eps);
#pragma omp simd
    for (int c = 0; c < cols; ++c) yr[c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = rs;
  }
}

void layernorm_backward(const float* dy, const float* x, const float* mean, const float* rstd, const float* gamma,
                        float* dx, float* dgamma, float* dbeta, std::int64_t rows, int cols) {
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
