// Element-wise kernels. Small inputs stay on one thread: a parallel region costs microseconds,
// which matters in incremental decoding where rows are few.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "core/error.h"
#include "kernels/cpu/avx512_blocks.h"
#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {

static constexpr std::int64_t kParallelMin = 1 << 15;

void copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memmove(dst, src, bytes);
}

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

namespace {

// x + bias (then ReLU) into x, or into y in bf16, rounded as to_bf16 rounds: 16 at a time with
// AVX512-BF16, else (and the rest) in blocks of 256 computed in float on the stack and rounded by
// round_to_bf16.
template <bool kRelu>
void bias_pass(float* x, const float* bias, std::int64_t rows, int cols, Bf16* y) {
  constexpr int kBlock = 256;
#pragma omp parallel for schedule(static) if (rows * cols > kParallelMin)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
    if (!y) {
#pragma omp simd
      for (int c = 0; c < cols; ++c) {
        const float v = row[c] + bias[c];
        row[c] = kRelu ? (v > 0.0f ? v : 0.0f) : v;
      }
      continue;
    }
    int from = 0;
#if defined(__AVX512BF16__)  // 16 at a time, rounded by the CPU's own instruction as round_to_bf16 does
    const __m512 zero = _mm512_setzero_ps();
    for (; from + 16 <= cols; from += 16) {
      __m512 v = _mm512_add_ps(_mm512_loadu_ps(row + from), _mm512_loadu_ps(bias + from));
      if constexpr (kRelu) v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ), v);  // v > 0 ? v : 0
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + r * cols + from), (__m256i)_mm512_cvtneps_pbh(v));
    }
#endif
    alignas(64) float block[kBlock];
    for (int c0 = from; c0 < cols; c0 += kBlock) {
      const int n = std::min(kBlock, cols - c0);
#pragma omp simd
      for (int c = 0; c < n; ++c) {
        const float v = row[c0 + c] + bias[c0 + c];
        block[c] = kRelu ? (v > 0.0f ? v : 0.0f) : v;
      }
      round_to_bf16(block, n, y + r * cols + c0);
    }
  }
}

}  // namespace

void add_bias(float* x, const float* bias, std::int64_t rows, int cols, Bf16* y) {
  bias_pass<false>(x, bias, rows, cols, y);
}

void add_bias_relu(float* x, const float* bias, std::int64_t rows, int cols, Bf16* y) {
  bias_pass<true>(x, bias, rows, cols, y);
}

void relu_backward(float* dy, const void* y_data, DType y_dtype, std::int64_t n) {
  ATTN_CHECK(y_dtype != DType::s8, "relu_backward reads a ReLU output in f32 or bf16, not s8");
  if (y_dtype == DType::f32) {
    const float* y = static_cast<const float*>(y_data);
#pragma omp parallel for simd schedule(static) if (n > kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    return;
  }
  // y > 0: sign bit clear and not zero (a bf16 ReLU output is never NaN).
  const Bf16* y = static_cast<const Bf16*>(y_data);
#pragma omp parallel for simd schedule(static) if (n > kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) dy[i] = (y[i] & 0x8000u) == 0 && y[i] != 0 ? dy[i] : 0.0f;
}

namespace {

// Rows [lo, hi) of dy [rows, cols] summed per column into sum[0, cols) (overwritten: 0 + row lo +
// row lo+1 + ..., in row order), each row also copied where asked (bf16: rounded). Where relu_y is
// given (a ReLU output, Y = float or Bf16), an element of dy counts only where relu_y > 0, as
// relu_backward leaves it (a bf16 y > 0: the 16 bits as a signed integer > 0).
template <typename Y>
void sum_rows(const float* dy, std::int64_t lo, std::int64_t hi, int cols, float* sum, Bf16* dy_bf16, float* dy_f32,
              const Y* relu_y) {
#if defined(__AVX512F__) && defined(__AVX512BF16__)
  // 128 columns at a time down all the rows, their sums in eight registers (eight chains of adds
  // in flight: each column's sum keeps its row order): summing into memory row after row
  // (acc[c] += row[c]) made every row wait on the last one's stores to the same addresses, and ran
  // at a fraction of the cache's rate. The copy is made from the same loads.
  constexpr int kVectors = 8;
  for (int c = 0; c < cols; c += 16 * kVectors) {
    __mmask16 m[kVectors];
    __m512 acc[kVectors];
    for (int j = 0; j < kVectors; ++j) {
      m[j] = avx512::first_lanes(cols - c - 16 * j);
      acc[j] = _mm512_setzero_ps();
    }
    for (std::int64_t r = lo; r < hi; ++r) {
      const std::int64_t at = r * cols + c;
      for (int j = 0; j < kVectors; ++j) {
        __m512 x = _mm512_maskz_loadu_ps(m[j], dy + at + 16 * j);
        if constexpr (std::is_same_v<Y, float>) {
          if (relu_y) {
            const __m512 y = _mm512_maskz_loadu_ps(m[j], relu_y + at + 16 * j);
            x = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_GT_OQ), x);
          }
        } else {
          if (relu_y) {
            const __m256i y = _mm256_maskz_loadu_epi16(m[j], relu_y + at + 16 * j);
            x = _mm512_maskz_mov_ps(_mm256_cmpgt_epi16_mask(y, _mm256_setzero_si256()), x);
          }
        }
        acc[j] = _mm512_add_ps(acc[j], x);
        if (dy_bf16) _mm256_mask_storeu_epi16(dy_bf16 + at + 16 * j, m[j], (__m256i)_mm512_cvtneps_pbh(x));
        if (dy_f32) _mm512_mask_storeu_ps(dy_f32 + at + 16 * j, m[j], x);
      }
    }
    for (int j = 0; j < kVectors; ++j) _mm512_mask_storeu_ps(sum + c + 16 * j, m[j], acc[j]);
  }
#else
  std::fill(sum, sum + cols, 0.0f);
  std::vector<float> masked(relu_y ? cols : 0);
  for (std::int64_t r = lo; r < hi; ++r) {
    const float* row = dy + r * cols;
    if (relu_y) {
      const Y* y = relu_y + r * cols;
      for (int c = 0; c < cols; ++c) {
        bool positive;
        if constexpr (std::is_same_v<Y, float>)
          positive = y[c] > 0.0f;
        else
          positive = static_cast<std::int16_t>(y[c]) > 0;
        masked[c] = positive ? row[c] : 0.0f;
      }
      row = masked.data();
    }
#pragma omp simd
    for (int c = 0; c < cols; ++c) sum[c] += row[c];
    if (dy_bf16) round_to_bf16(row, cols, dy_bf16 + r * cols);
    if (dy_f32) std::copy(row, row + cols, dy_f32 + r * cols);
  }
#endif
}

}  // namespace

void bias_grad(const float* dy, std::int64_t rows, int cols, float* dbias, void* dy_copy, DType copy_dtype,
               const void* relu, DType relu_type) {
  ATTN_CHECK(!dy_copy || copy_dtype != DType::s8, "bias_grad copies the gradient in f32 or bf16, not s8");
  ATTN_CHECK(!relu || relu_type != DType::s8, "bias_grad reads a ReLU output in f32 or bf16, not s8");
  Bf16* dy_bf16 = dy_copy && copy_dtype == DType::bf16 ? static_cast<Bf16*>(dy_copy) : nullptr;
  float* dy_f32 = dy_copy && copy_dtype == DType::f32 ? static_cast<float*>(dy_copy) : nullptr;
  const float* relu_f32 = relu && relu_type == DType::f32 ? static_cast<const float*>(relu) : nullptr;
  const Bf16* relu_bf16 = relu && relu_type == DType::bf16 ? static_cast<const Bf16*>(relu) : nullptr;
  // Rows in fixed chunks, each summed into its own partial row, the partials added in chunk
  // order: the result does not depend on the thread count, and each thread streams whole rows
  // (a slice of columns walking all rows would read memory with a stride). The rows are copied
  // (bf16: rounded) on the same pass where asked (a Linear's backward reads dy in bf16 next).
  const int chunks = static_cast<int>(std::min<std::int64_t>(kReductionChunks, rows));
  if (chunks == 0) return;
  const std::int64_t per_chunk = (rows + chunks - 1) / chunks;
  static thread_local std::vector<float> partial_buffer;  // (the raw pointer is what the workers see)
  partial_buffer.resize(static_cast<std::size_t>(chunks) * cols);
  float* partial = partial_buffer.data();
#pragma omp parallel for schedule(static) if (rows * cols > kParallelMin)
  for (int ch = 0; ch < chunks; ++ch) {
    const std::int64_t lo = std::min(rows, ch * per_chunk), hi = std::min(rows, (ch + 1) * per_chunk);
    float* sum = partial + static_cast<std::int64_t>(ch) * cols;
    if (relu_bf16)
      sum_rows(dy, lo, hi, cols, sum, dy_bf16, dy_f32, relu_bf16);
    else
      sum_rows(dy, lo, hi, cols, sum, dy_bf16, dy_f32, relu_f32);
  }
  add_chunk_sums(partial, cols, chunks, cols, dbias);
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
