// Embedding lookup (scaled, plus positions) and its scatter-add gradient.
#include <algorithm>
#include <string>

#include "core/error.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {

void embedding(const std::int32_t* ids, std::int64_t n, const MatrixRef& table, int dim, float scale,
               const float* positions, int seq_len, float* out) {
  ATTN_CHECK(table.trans == Trans::No && (table.dtype == DType::f32 || table.dtype == DType::s8),
             std::string("an embedding table must be f32 or s8, not ") + to_string(table.dtype));
  const bool s8 = table.dtype == DType::s8;
#pragma omp parallel for schedule(static) if (n * dim > (1 << 15))
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t id = ids[r];
    float* o = out + r * dim;
    const float* p = positions ? positions + (r % seq_len) * dim : nullptr;
    if (s8) {  // E[id] = scales[id] · q[id]
      const std::int8_t* q = static_cast<const std::int8_t*>(table.data) + id * table.ld;
      const float s = scale * table.scales[id];
      if (p) {
#pragma omp simd
        for (int c = 0; c < dim; ++c) o[c] = static_cast<float>(q[c]) * s + p[c];
      } else {
#pragma omp simd
        for (int c = 0; c < dim; ++c) o[c] = static_cast<float>(q[c]) * s;
      }
      continue;
    }
    const float* e = static_cast<const float*>(table.data) + id * table.ld;
    if (p) {
#pragma omp simd
      for (int c = 0; c < dim; ++c) o[c] = e[c] * scale + p[c];
    } else {
#pragma omp simd
      for (int c = 0; c < dim; ++c) o[c] = e[c] * scale;
    }
  }
}

void embedding_backward(const std::int32_t* ids, std::int64_t n, const float* dout, int dim, float scale,
                        float* dtable) {
  // Several rows may share an id: each thread owns a slice of the columns instead of rows, so
  // there are no races and the summation order is fixed.
  constexpr int kSlice = 32;
  const int slices = (dim + kSlice - 1) / kSlice;
#pragma omp parallel for schedule(static) if (n * dim > (1 << 15))
  for (int s = 0; s < slices; ++s) {
    const int c0 = s * kSlice, c1 = std::min(dim, c0 + kSlice);
    for (std::int64_t r = 0; r < n; ++r) {
      float* t = dtable + static_cast<std::int64_t>(ids[r]) * dim;
      const float* d = dout + r * dim;
#pragma omp simd
      for (int c = c0; c < c1; ++c) t[c] += d[c] * scale;
    }
  }
}

void positions_backward(const float* dout, int batch, int seq_len, int dim, float* dpositions) {
#pragma omp parallel for schedule(static) if (static_cast <std::int64_t>(batch) * seq_len * dim > (1 << 15))
  for (int t = 0; t < seq_len; ++t) {
    float* p = dpositions + static_cast<std::int64_t>(t) * dim;
    for (int b = 0; b < batch; ++b) {
      const float* d = dout + (static_cast<std::int64_t>(b) * seq_len + t) * dim;
#pragma omp simd
      for (int c = 0; c < dim; ++c) p[c] += d[c];
    }
  }
}

}  // namespace attn::cpu
