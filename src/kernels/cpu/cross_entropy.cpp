// Fused log-softmax + label-smoothed cross-entropy, writing the gradient over the logits so that
// the [rows, vocab] logits buffer is the only large buffer of the output layer.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/fast_exp.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/reductions.h"

namespace attn::cpu {
LossSums cross_entropy(float* logits, const std::int32_t* targets, std::int64_t rows, int vocab, float smoothing,
                       int ignore_id, float grad_scale, float* out_row_nll, void* grad, DType grad_dtype) {
  ATTN_CHECK(!grad || grad_dtype != DType::s8, "cross_entropy writes its gradient in f32 or bf16, not s8");
  Bf16* grad_bf16 = grad && grad_dtype == DType::bf16 ? static_cast<Bf16*>(grad) : nullptr;
  float* grad_f32 = grad && grad_dtype == DType::f32 ? static_cast<float*>(grad) : logits;
  // Per-row results, summed in row order afterwards so the total does not depend on threads.
  // (Reused across calls; the raw pointers are what the worker threads see.)
  static thread_local std::vector<double> row_loss_buffer, row_nll_buffer;
  row_loss_buffer.assign(rows, 0.0);
  row_nll_buffer.assign(rows, 0.0);
  double* row_loss = row_loss_buffer.data();
  double* row_nll = row_nll_buffer.data();
  const float off_target = smoothing / vocab;
  const float on_target = 1.0f - smoothing + off_target;
#pragma omp parallel
  {
    // With bf16, the gradient goes through a row buffer in L1 so that the row is read from memory once.
    std::vector<float> row_buffer(grad_bf16 ? vocab : 0);
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      float* x = logits + r * vocab;
      const int y = targets[r];
      if (y == ignore_id) {
        if (grad_bf16)
          std::fill(grad_bf16 + r * vocab, grad_bf16 + (r + 1) * vocab, Bf16{0});
        else
          std::fill(grad_f32 + r * vocab, grad_f32 + (r + 1) * vocab, 0.0f);
        continue;
      }
      // exp(x - max) is kept in the gradient's place: one exp per element.
      float* g = grad_bf16 ? row_buffer.data() : grad_f32 + r * vocab;
      const float target_logit = x[y];
      const float max = row_max(x, vocab);
      float sum_exp = 0, sum = 0;
#pragma omp simd reduction(+ : sum_exp, sum)
      for (int j = 0; j < vocab; ++j) {
        const float xj = x[j], e = fast_exp(xj - max);
        g[j] = e;
        sum_exp += e;
        sum += xj;
      }
      const double lse = static_cast<double>(max) + std::log(sum_exp);
      const double nll = lse - target_logit;
      // Σ_j q_j · (-log p_j) with q = (1-ε)·onehot + ε/V: (1-ε)·nll + ε·(lse - mean x).
      row_nll[r] = nll;
      row_loss[r] = (1.0 - smoothing) * nll + smoothing * (lse - static_cast<double>(sum) / vocab);
      // ∂/∂x_j = p_j - q_j
      const float p_scale = grad_scale / sum_exp, q_off = grad_scale * off_target;
#pragma omp simd
      for (int j = 0; j < vocab; ++j) g[j] = p_scale * g[j] - q_off;
      g[y] -= grad_scale * (on_target - off_target);
      if (grad_bf16) round_to_bf16(g, vocab, grad_bf16 + r * vocab);
    }
  }
  LossSums sums;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (out_row_nll) out_row_nll[r] = static_cast<float>(row_nll[r]);
    if (targets[r] == ignore_id) continue;
    sums.loss += row_loss[r];
    sums.nll += row_nll[r];
    ++sums.tokens;
  }
  return sums;
}

void log_softmax(float* x, std::int64_t rows, int cols) {
#pragma omp parallel for schedule(static) if (rows * cols > (1 << 15))
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
    const float max = row_max(row, cols);
    float sum_exp = 0;
#pragma omp simd reduction(+ : sum_exp)
    for (int j = 0; j < cols; ++j) sum_exp += fast_exp(row[j] - max);
    const float shift = max + std::log(sum_exp);
#pragma omp simd
    for (int j = 0; j < cols; ++j) row[j] -= shift;
  }
}

}  // namespace attn::cpu
