// Matrix products with bfloat16 inputs and float32 accumulation and output (mixed precision, as
// PyTorch's autocast does it), through oneDNN's bf16 matmul on a CPU with AVX512-BF16; its rate against
// float32's is bench/gemm_bench's to measure (the "bf16 converting" and "operands in bf16" columns beside
// "matmul"). The inputs are rounded to bf16 (8 significant bits) on the way in.
#include <cstdint>
#include <vector>

#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/matmul_primitive.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {
namespace {

// An operand as bf16: in place, its rounded copy (MatrixRef::rounded), or (float) converted into
// `packed`.
struct Bf16Block {
  const Bf16* data;
  std::int64_t ld;
};
Bf16Block bf16_block(const MatrixRef& x, std::int64_t rows, std::int64_t cols, std::vector<Bf16>& packed) {
  if (x.dtype == DType::bf16) return {static_cast<const Bf16*>(x.data), x.ld};
  if (x.rounded) return {x.rounded, x.ld};
  packed.resize(rows * cols);
  convert_to_bf16(static_cast<const float*>(x.data), rows, cols, x.ld, packed.data());
  return {packed.data(), cols};
}

}  // namespace

const int kMinBf16Dim = 128;

bool bf16_matmul_supported() {
  static const bool supported = __builtin_cpu_supports("avx512bf16");
  return supported;
}

void gemm_mixed(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                int ldc) {
  const Trans ta = a.trans, tb = b.trans;
  const bool at = ta == Trans::Yes, bt = tb == Trans::Yes;
  // Stored shapes: A is m×k (k×m transposed), B is k×n (n×k transposed).
  const std::int64_t a_rows = at ? k : m, a_cols = at ? m : k;
  const std::int64_t b_rows = bt ? n : k, b_cols = bt ? k : n;
  // Small products (a decoding step's few rows, k = 0) stay in float32: converting and building a
  // primitive for each new shape would cost more than the product.
  if (m < kMinBf16Dim || n < kMinBf16Dim || k < kMinBf16Dim) {
    thread_local std::vector<float> a32, b32;
    const FloatBlock af = float_block(a, 0, static_cast<int>(a_rows), static_cast<int>(a_cols), a32);
    const FloatBlock bf = float_block(b, 0, static_cast<int>(b_rows), static_cast<int>(b_cols), b32);
    return gemm(ta, tb, m, n, k, alpha, af.data, af.ld, bf.data, bf.ld, beta, c, ldc);
  }
  // Operands given in float are converted into packed blocks; bf16 ones are read in place.
  thread_local std::vector<Bf16> a16, b16;
  const Bf16Block ab = bf16_block(a, a_rows, a_cols, a16);
  const Bf16Block bb = bf16_block(b, b_rows, b_cols, b16);
  MatmulDesc d = matmul_desc(ta, tb, m, n, k, ab.ld, bb.ld, ldc, alpha, beta);
  d.input = MatmulInput::bf16;
  run_matmul(d, ab.data, bb.data, c);
}

}  // namespace attn::cpu
