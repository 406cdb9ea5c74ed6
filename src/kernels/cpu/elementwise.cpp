// Element-wise kernels. Small inputs stay on one thread: a parallel region costs microseconds,
// which matters in incremental decoding where rows are few.
#include <cstring>
#include <vector>

#include "kernels/cpu/ops.h"

namespace attn::cpu {

static constexpr std::int64_t kParallelMin = 1 << 15;

void fill(float* x, std::int64_t n, float value) {
#pragma omp parallel for simd schedule(static) if (n > kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) x[i] = value;
}

void add(const float* a, const float* b, float* y, std::int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void accumulate(const float* x, float* y, std::int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void scale(float* x, std::int64_t n, float s) {
#pragma omp parallel for simd schedule(static) if (n > kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) x[i] *= s;
}

void add_bias(float* x, const float* bias, std::int64_t rows, int cols) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelMin)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
#pragma omp simd
    for (int c = 0; c < cols; ++c) row[c] += bias[c];
  }
}

void add_bias_relu(float* x, const float* bias, std::int64_t rows, int cols) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelMin)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
#pragma omp simd
    for (int c = 0; c < cols; ++c) {
      const float v = row[c] + bias[c];
      row[c] = v > 0.0f ? v : 0.0f;
    }
  }
}

void relu_backward(float* dy, const float* y, std::int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void relu_backward(float* dy, const Bf16* y, std::int64_t n) {
  // y > 0: sign bit clear and not zero (a bf16 ReLU output is never NaN).
#pragma omp parallel for simd schedule(static) if (n > kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) dy[i] = (y[i] & 0x8000u) == 0 && y[i] != 0 ? dy[i] : 0.0f;
}

void bias_grad(const float* dy, std::int64_t rows, int cols, float* dbias) {
  // Each thread owns a slice of columns and walks all rows: no reduction across threads, so the
  // result does not depend on the thread count.
  constexpr int kSlice = 64;
  const int slices = (cols + kSlice - 1) / kSlice;
#pragma omp parallel for schedule(static) if (rows * cols > kParallelMin)
  for (int s = 0; s < slices; ++s) {
    const int c0 = s * kSlice, c1 = std::min(cols, c0 + kSlice);
    float acc[kSlice] = {};
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* row = dy + r * cols;
#pragma omp simd
      for (int c = c0; c < c1; ++c) acc[c - c0] += row[c];
    }
    for (int c = c0; c < c1; ++c) dbias[c] += acc[c - c0];
  }
}

double sum_squares(const float* x, std::int64_t n) {
  double partial[kReductionChunks] = {};
  const std::int64_t chunk = (n + kReductionChunks - 1) / kReductionChunks;
#pragma omp parallel for schedule(static) if (n > kParallelMin)
  for (int c = 0; c < kReductionChunks; ++c) {
    const std::int64_t lo = c * chunk, hi = std::min(n, lo + chunk);
    double acc = 0;
#pragma omp simd reduction(+ : acc)
    for (std::int64_t i = lo; i < hi; ++i) acc += static_cast<double>(x[i]) * x[i];
    partial[c] = acc;
  }
  double total = 0;
  for (double p : partial) total += p;
  return total;
}

}  // namespace attn::cpu
