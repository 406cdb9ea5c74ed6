// Fused log-softmax + label-smoothed cross-entropy, writing the gradient over the logits so that
// the [rows, vocab] logits buffer is the only large buffer of the output layer.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/fast_exp.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {
namespace {

struct RowStats {
  float max;
  float log_sum_exp;  // log Σ exp(x - max)
  double sum;         // Σ x
};

RowStats row_stats(const float* x, int n) {
  float max = x[0];
  for (int j = 1; j < n; ++j) max = std::max(max, x[j]);
  float sum_exp = 0, sum = 0;
#pragma omp simd reduction(+ : sum_exp, sum)
  for (int j = 0; j < n; ++j) {
    sum_exp += fast_exp(x[j] - max);
    sum += x[j];
  }
  return {max, std::log(sum_exp), sum};
}

}  // namespace

LossSums cross_entropy(float* logits, const std::int32_t* targets, std::int64_t rows, int vocab,
                       float smoothing, int ignore_id, float grad_scale, float* out_row_nll) {
  // Per-row results, summed in row order afterwards so the total does not depend on threads.
  // (Reused across calls; the raw pointers are what the worker threads see.)
  static thread_local std::vector<double> row_loss_buffer, row_nll_buffer;
  row_loss_buffer.assign(rows, 0.0);
  row_nll_buffer.assign(rows, 0.0);
  double* row_loss = row_loss_buffer.data();
  double* row_nll = row_nll_buffer.data();
  const float off_target = smoothing / vocab;
  const float on_target = 1.0f - smoothing + off_target;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* x = logits + r * vocab;
    const int y = targets[r];
    if (y == ignore_id) {
      std::fill(x, x + vocab, 0.0f);
      continue;
    }
    const RowStats s = row_stats(x, vocab);
    const double lse = static_cast<double>(s.max) + s.log_sum_exp;
    const double nll = lse - x[y];
    // Σ_j q_j · (-log p_j) with q = (1-ε)·onehot + ε/V: (1-ε)·nll + ε·(lse - mean x).
    row_nll[r] = nll;
    row_loss[r] = (1.0 - smoothing) * nll + smoothing * (lse - s.sum / vocab);
    // ∂/∂x_j = p_j - q_j
    const float shift = s.max + s.log_sum_exp;
#pragma omp simd
    for (int j = 0; j < vocab; ++j) x[j] = grad_scale * (fast_exp(x[j] - shift) - off_target);
    x[y] -= grad_scale * (on_target - off_target);
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
    const RowStats s = row_stats(row, cols);
    const float shift = s.max + s.log_sum_exp;
#pragma omp simd
    for (int j = 0; j < cols; ++j) row[j] -= shift;
  }
}

}  // namespace attn::cpu
