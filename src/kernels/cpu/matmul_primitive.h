#pragma once
// oneDNN matmul primitives for C = alpha·A·B + beta·C over up to two batch dimensions with any
// strides (attention's per-sentence, per-head blocks inside [tokens, heads·d] matrices), kept in a
// per-thread cache: building one JIT-compiles code, which costs far more than running it.
#include <cstdint>

#include "kernels/backend.h"

namespace attn::cpu {

// f32 and bf16: A and B of that type, C float32. u8s8: A unsigned 8-bit, B signed 8-bit, C int32
// (exact integer sums; alpha and beta must be 1 and 0).
enum class MatmulInput { f32, bf16, u8s8 };

// What a product does with its sums before it stores them (f32 and bf16 products): add a bias row
// (run_matmul's bias, [n]), then ReLU; and the type of C (bf16: rounded to nearest even, as
// to_bf16 rounds). The same operations in the same order as a separate pass over a float C.
enum MatmulEpilogue : int { kNoEpilogue = 0, kBias = 1, kBiasRelu = 3 };
enum class MatmulOutput { f32, bf16 };

// Strides are in elements. A is [outer, inner, m, k], B is [outer, inner, k, n] and C is
// [outer, inner, m, n]; a transposed operand simply has its row and column strides swapped.
struct MatmulDesc {
  MatmulInput input = MatmulInput::f32;
  int outer = 1, inner = 1, m = 0, n = 0, k = 0;
  std::int64_t a_outer = 0, a_inner = 0, a_row = 0, a_col = 0;
  std::int64_t b_outer = 0, b_inner = 0, b_row = 0, b_col = 0;
  std::int64_t c_outer = 0, c_inner = 0, c_row = 0;
  float alpha = 1, beta = 0;
  int epilogue = kNoEpilogue;
  MatmulOutput output = MatmulOutput::f32;
  bool operator==(const MatmulDesc&) const = default;
};

// The description of C = alpha·op(A)·op(B) + beta·C for row-major A, B, C with leading dimensions
// lda, ldb, ldc (BLAS conventions); batch fields left at one matrix.
MatmulDesc matmul_desc(Trans ta, Trans tb, int m, int n, int k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc,
                       float alpha, float beta);

// The step of the shapes bf16 and int8 products are built for: run_matmul cuts a product's rows
// (beyond the first kMatmulShapeStep) at a multiple of it and runs the rest padded to it, and gemm_bf16
// cuts a product's summed length (k) the same way, so that a run's hundreds of row counts and batch
// lengths share a few JIT-compiled primitives. 64, not 32: oneDNN 2.6's AMX kernels run some row counts
// 2-10x slower than their neighbours (944, 976 or 992 rows against 960 or 1024, Xeon with AMX, 2
// cores), and multiples of 64 were all at speed (docs/benchmarks.md).
inline constexpr int kMatmulShapeStep = 64;

// Runs the product described by desc on a, b and c (of the types desc.input and desc.output say),
// with bias ([n] floats) where desc.epilogue asks for one.
void run_matmul(const MatmulDesc& desc, const void* a, const void* b, void* c, const float* bias = nullptr);

// Runs a float32 product (desc.input f32) only if oneDNN has its fast (brgemm) kernel for this
// layout, and says whether it did.
// Batched products need each batch entry's rows to lie densely: attention over a fused QKV
// matrix (row stride 3·heads·d_k) gets oneDNN's generic batched gemm, slower than a loop of sgemm.
bool run_matmul_if_fast(const MatmulDesc& desc, const void* a, const void* b, float* c);

// How many primitives this thread's cache has built (each one JIT-compiled code).
std::int64_t matmul_primitives_built();

}  // namespace attn::cpu
