// Layer normalisation y = gamma · (x - mean) · rstd + beta over each row, and its gradient.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/dropout_mask.h"
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
                        float* dx, const SublayerGradient& sublayer, float* dgamma, float* dbeta, std::int64_t rows,
                        int cols) {
  // dgamma and dbeta are sums over rows: each of a fixed number of row chunks sums into its own
  // partial, then the partials are added in order (same result on any thread count). The
  // sublayer's bias gradient is summed the same way, in bias_grad's chunks and order (a third
  // partial per chunk), so that it has the bits bias_grad's own pass over s would give.
  // Reused across calls (no allocation per step); workers use the raw pointer, not the vector.
  const bool bias_sum = sublayer.bias_grad != nullptr;
  const int sums_per_chunk = bias_sum ? 3 : 2;
  static thread_local std::vector<float> partial_buffer;
  partial_buffer.assign(static_cast<std::size_t>(kReductionChunks) * sums_per_chunk * cols, 0.0f);
  float* const partial = partial_buffer.data();
  const std::int64_t chunk = (rows + kReductionChunks - 1) / kReductionChunks;
  const bool drop = sublayer.dropout > 0.0f;
  const DropoutMask mask(drop ? sublayer.dropout : 0.0f, sublayer.seed);
#pragma omp parallel
  {
    // s's row where dropout makes it differ from dx's and no float row is asked for.
    std::vector<float> row_buffer(drop && !sublayer.f32 ? cols : 0);
#pragma omp for schedule(static)
    for (int ch = 0; ch < kReductionChunks; ++ch) {
      float* pg = partial + static_cast<std::size_t>(ch) * sums_per_chunk * cols;
      float* pb = pg + cols;
      float* ps = bias_sum ? pb + cols : nullptr;
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
        // The sublayer's gradient from the row while it is in L1 (with dropout, masked into its
        // float row where asked, else into the thread's own).
        float* const s32 = sublayer.f32 ? sublayer.f32 + r * cols : nullptr;
        const float* s = dxr;
        if (drop) {
          float* const masked = s32 ? s32 : row_buffer.data();
          mask.row(dxr, masked, r * cols, cols);
          s = masked;
        }
        if (s32 && s != s32) std::copy(s, s + cols, s32);
        if (sublayer.bf16) round_to_bf16(s, cols, sublayer.bf16 + r * cols);
        if (ps) {
#pragma omp simd
          for (int c = 0; c < cols; ++c) ps[c] += s[c];
        }
      }
    }
  }
  for (int ch = 0; ch < kReductionChunks; ++ch) {
    const float* pg = partial + static_cast<std::size_t>(ch) * sums_per_chunk * cols;
    const float* pb = pg + cols;
    for (int c = 0; c < cols; ++c) {
      dgamma[c] += pg[c];
      dbeta[c] += pb[c];
    }
  }
  if (!bias_sum) return;
  // bias_grad's chunks: min(kReductionChunks, rows) of them, the same rows each (ceil(rows /
  // chunks) = chunk), summed in its order.
  const int chunks = static_cast<int>(std::min<std::int64_t>(kReductionChunks, rows));
  if (chunks == 0) return;
  add_chunk_sums(partial + 2 * cols, static_cast<std::int64_t>(sums_per_chunk) * cols, chunks, cols,
                 sublayer.bias_grad);
}

}  // namespace attn::cpu
