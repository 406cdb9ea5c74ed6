// Symmetric per-row int8 quantization of weights (Backend::quantize_rows) and the per-row 8-bit
// (7-bit without VNNI) quantization of activations that gemm_s8 applies on the fly.
#include <algorithm>
#include <cmath>
#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/cpu/ops.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/reductions.h"

namespace attn::cpu {

void quantize_rows(const float* x, std::int64_t rows, int cols, std::int64_t ld, std::int8_t* q, float* scales,
                   std::int32_t* sums) {
#pragma omp parallel for schedule(static) if (rows * cols > (1 << 16))
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ld;
    std::int8_t* qr = q + r * cols;
    float max_abs = 0;
    for (int c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(xr[c]));
    const float scale = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    std::int32_t sum = 0;
    for (int c = 0; c < cols; ++c) {
      // round half away from zero; the clamp only guards against x / scale rounding past 127
      const float v = std::clamp(std::round(xr[c] / scale), -127.0f, 127.0f);
      qr[c] = static_cast<std::int8_t>(v);
      sum += qr[c];
    }
    scales[r] = scale;
    sums[r] = sum;
  }
}

int activation_levels() {
  static const int levels = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::avx512_core_vnni:
      case dnnl::cpu_isa::avx512_core_bf16:
      case dnnl::cpu_isa::avx512_core_amx:
        return 255;
      default:
        return 127;
    }
  }();
  return levels;
}

void quantize_activation_row(const float* x, int cols, int levels, std::uint8_t* q, float& scale,
                             std::int32_t& zero_point) {
  const float top = static_cast<float>(levels);
  float lo, hi;  // the range always holds 0, so the zero point is an integer in [0, levels]
  range_with_zero(x, cols, lo, hi);
  scale = hi > lo ? (hi - lo) / top : 1.0f;
  const float inverse = 1.0f / scale;
  const float zero = std::clamp(std::round(-lo * inverse), 0.0f, top);
  // std::clamp's rule written on values: GCC 12 vectorised std::clamp (which returns a reference)
  // here as gathers from the addresses of its arguments, eight lanes at a time.
#pragma omp simd
  for (int c = 0; c < cols; ++c) {
    const float v = std::nearbyint(x[c] * inverse) + zero;
    q[c] = static_cast<std::uint8_t>(v < 0.0f ? 0.0f : (top < v ? top : v));
  }
  zero_point = static_cast<std::int32_t>(zero);
}

void quantize_activation_rows(const float* x, std::int64_t rows, int cols, std::int64_t ld, int levels, std::uint8_t* q,
                              float* scales, std::int32_t* zero_points) {
#pragma omp parallel for schedule(static) if (rows * cols > (1 << 15))
  for (std::int64_t r = 0; r < rows; ++r)
    quantize_activation_row(x + r * ld, cols, levels, q + r * cols, scales[r], zero_points[r]);
}

}  // namespace attn::cpu
