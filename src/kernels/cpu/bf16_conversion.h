#pragma once
// float32 <-> bfloat16 blocks for the mixed-precision kernels (bf16_conversion.cpp).
#include <bit>
#include <cstdint>
#include <vector>

#include "kernels/backend.h"

namespace attn::cpu {

// n floats rounded to bf16 on the calling thread (round to nearest even).
void round_to_bf16(const float* src, std::int64_t n, Bf16* dst);
// A rows × cols block stored with leading dimension ld, rounded to nearest even (as the
// AVX512-BF16 instructions do) into a packed bf16 block.
// (dst's rows dst_ld apart; 0: packed, cols apart)
void convert_to_bf16(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, Bf16* dst,
                     std::int64_t dst_ld = 0);
// A bf16 block (leading dimension ld) back to float, exactly, packed, on the calling thread: for
// the small blocks of a batched product, where even an OpenMP region that decides not to fork
// would cost more than the block.
inline void widen_bf16(const Bf16* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, float* dst) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const Bf16* s = src + r * ld;
    float* d = dst + r * cols;
#pragma omp simd
    for (std::int64_t c = 0; c < cols; ++c) d[c] = std::bit_cast<float>(static_cast<std::uint32_t>(s[c]) << 16);
  }
}

// An operand (or one block of a batched product) as float: in place, or (bf16) widened into `wide`.
struct FloatBlock {
  const float* data;
  int ld;
};
// x is f32 or bf16; its block starts `at` elements in and is rows × cols of stored elements.
inline FloatBlock float_block(const MatrixRef& x, std::int64_t at, int rows, int cols, std::vector<float>& wide) {
  const int ld = static_cast<int>(x.ld);
  if (x.dtype == DType::f32) return {static_cast<const float*>(x.data) + at, ld};
  wide.resize(static_cast<std::size_t>(rows) * cols);
  widen_bf16(static_cast<const Bf16*>(x.data) + at, rows, cols, ld, wide.data());
  return {wide.data(), cols};
}

}  // namespace attn::cpu
