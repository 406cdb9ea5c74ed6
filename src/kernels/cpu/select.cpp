// Row selection for decoding: top-k per row, gathering rows (KV-cache writes and beam
// reordering) and a weight matrix's rows (the output layer restricted to a shortlist).
#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/cpu/ops.h"

namespace attn::cpu {

void topk(const float* x, std::int64_t rows, int cols, int k, float* values, std::int32_t* indices) {
  if (k <= 0) return;  // nothing to write (best_v[k - 1] below needs one)
#pragma omp parallel for schedule(static) if (rows * cols > (1 << 16))
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    // A sorted buffer of the best k so far, ties kept in column order; once it is full, an element
    // enters only above its last value.
    float* best_v = values + r * k;
    std::int32_t* best_i = indices + r * k;
    int filled = 0;
    auto consider = [&](float v, int j) {
      if (filled == k && !(v > best_v[k - 1])) return;
      int pos = filled < k ? filled++ : k - 1;
      while (pos > 0 && v > best_v[pos - 1]) {
        best_v[pos] = best_v[pos - 1];
        best_i[pos] = best_i[pos - 1];
        --pos;
      }
      best_v[pos] = v;
      best_i[pos] = j;
    };
    int j = 0;
    for (; j < cols && filled < k; ++j) consider(row[j], j);
#if defined(__AVX512F__)
    // Most elements fail the comparison: 16 are compared at once, and only those above the
    // threshold (as it stood before the block) go through `consider`, in column order.
    for (; j + 16 <= cols; j += 16) {
      __mmask16 above = _mm512_cmp_ps_mask(_mm512_loadu_ps(row + j), _mm512_set1_ps(best_v[k - 1]), _CMP_GT_OQ);
      for (; above; above &= static_cast<__mmask16>(above - 1)) {
        const int lane = std::countr_zero(static_cast<unsigned>(above));
        consider(row[j + lane], j + lane);
      }
    }
#endif
    for (; j < cols; ++j) consider(row[j], j);
  }
}

void gather_rows(const float* src, std::int64_t src_stride, const std::int32_t* indices, std::int64_t rows,
                 std::int64_t row_floats, float* dst, std::int64_t dst_stride) {
#pragma omp parallel for schedule(static) if (rows * row_floats > (1 << 16))
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t from = indices ? indices[r] : r;
    std::memcpy(dst + r * dst_stride, src + from * src_stride, static_cast<std::size_t>(row_floats) * sizeof(float));
  }
}

void gather_weight_rows(const MatrixRef& src, const std::int32_t* indices, std::int64_t rows, std::int64_t cols,
                        void* dst, float* dst_scales, std::int32_t* dst_row_sums) {
  const std::size_t element = element_bytes(src.dtype);
  const auto* from = static_cast<const char*>(src.data);
  auto* to = static_cast<char*>(dst);
  const std::size_t row_bytes = static_cast<std::size_t>(cols) * element;
#pragma omp parallel for schedule(static) if (rows * cols > (1 << 16))
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t i = indices[r];
    std::memcpy(to + static_cast<std::size_t>(r) * row_bytes, from + static_cast<std::size_t>(i * src.ld) * element,
                row_bytes);
    if (src.dtype == DType::s8) {
      dst_scales[r] = src.scales[i];
      dst_row_sums[r] = src.row_sums[i];
    }
  }
}

}  // namespace attn::cpu
