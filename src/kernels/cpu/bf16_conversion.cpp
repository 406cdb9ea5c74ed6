// float32 <-> bfloat16 conversion: the blocks the mixed-precision products read, and the
// activations kept in bf16 (Backend::to_bf16).
#if defined(__AVX512BF16__)
#include <immintrin.h>
#endif

#include "kernels/cpu/bf16_conversion.h"

#include <bit>

#include "core/bfloat16.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {
namespace {

// Round to nearest even (core/bfloat16.h), subnormal inputs to ±0 as the AVX512-BF16 conversion
// instruction does (it treats them as zero): a value converts the same wherever it sits in an
// array and on any CPU.
inline Bf16 round_scalar(float x) {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7f800000u) == 0) return static_cast<Bf16>((bits >> 16) & 0x8000u);
  return bf16_nearest_even(x);
}

// Rows of 4096 so that the threads share a long vector, then the rest.
constexpr std::int64_t kVectorRow = 4096;

}  // namespace

void round_to_bf16(const float* src, std::int64_t n, Bf16* dst) {
  std::int64_t c = 0;
#if defined(__AVX512BF16__)  // 16 at a time with the CPU's own rounding instruction
  for (; c + 16 <= n; c += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + c), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + c)));
#endif
  for (; c < n; ++c) dst[c] = round_scalar(src[c]);
}

void convert_to_bf16(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, Bf16* dst,
                     std::int64_t dst_ld) {
  if (dst_ld == 0) dst_ld = cols;
#pragma omp parallel for schedule(static) if (rows * cols > (1 << 16))
  for (std::int64_t r = 0; r < rows; ++r) round_to_bf16(src + r * ld, cols, dst + r * dst_ld);
}

void to_bf16(const float* x, std::int64_t n, Bf16* y) {
  const std::int64_t rows = n / kVectorRow, done = rows * kVectorRow;
  convert_to_bf16(x, rows, kVectorRow, kVectorRow, y);
  if (done < n) convert_to_bf16(x + done, 1, n - done, n - done, y + done);
}

}  // namespace attn::cpu
