#pragma once
// One small matrix product (m, n, k all at most kMaxSmallGemm) on the calling thread, its operands
// laid out in per-thread scratch that stays in L1: the block products of small_gemm_batched*.cpp,
// for kernels that run several of them on one block in turn (fused attention, attention.cpp).
#include <cstdint>
#include <vector>

#include "kernels/backend.h"

namespace attn::cpu {

// Whether this build has the kernels below: AVX-512 for small_product_f32, AVX512-BF16 for
// small_product_bf16 (otherwise calling them is a logic error).
#if defined(__AVX512F__)
inline constexpr bool kHasSmallProductF32 = true;
#else
inline constexpr bool kHasSmallProductF32 = false;
#endif
#if defined(__AVX512BF16__)
inline constexpr bool kHasSmallProductBf16 = true;
#else
inline constexpr bool kHasSmallProductBf16 = false;
#endif

// Where an operand's block is laid out for a product; one per thread (thread_local), reused.
struct SmallProductScratch {
  std::vector<float> a_wide, b_wide, packed;    // float arithmetic
  std::vector<Bf16> a_rows, b_rows;             // bf16 arithmetic
  std::vector<std::uint32_t> a_pairs, b_pairs;  // bf16 arithmetic
};

// x's storage `at` elements further on (its type's elements), the rest of x as it was.
inline MatrixRef advanced(const MatrixRef& x, std::int64_t at) {
  MatrixRef y = x;
  y.data = static_cast<const char*>(x.data) + at * static_cast<std::int64_t>(element_bytes(x.dtype));
  return y;
}

// C (m × n, row stride ldc) = alpha·op(A)·op(B) + beta·C, with A and B f32 or bf16 blocks
// starting at their data (ld and trans as MatrixRef says; not s8):
//   small_product_f32: float arithmetic on the operands' exact values (bf16 widened);
//   small_product_bf16: every operand rounded to bf16, products summed in float32 (vdpbf16ps).
// C is not read when beta is 0.
void small_product_f32(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                       int ldc, SmallProductScratch& scratch);
void small_product_bf16(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                        int ldc, SmallProductScratch& scratch);

}  // namespace attn::cpu
