// Matrix products with bfloat16 inputs and float32 accumulation and output (mixed precision, as
// PyTorch's autocast does it), through oneDNN's bf16 matmul on a CPU with AVX512-BF16; its rate against
// float32's is bench/gemm_bench's to measure (the "bf16 converting" and "operands in bf16" columns beside
// "matmul"). The inputs are rounded to bf16 (8 significant bits) on the way in.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/matmul_primitive.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {
namespace {

// A product's summed dimension (k) is cut at a multiple of kShapeStep, the rest zero-padded to it:
// a weight gradient sums over a batch's rows, whose count is new in every batch, and each new shape
// JIT-compiles a primitive (run_matmul cuts the rows, m, the same way for bf16 and int8 products;
// the step's size is explained with kMatmulShapeStep, matmul_primitive.h).
constexpr int kShapeStep = kMatmulShapeStep;
std::int64_t steps_of(std::int64_t n) { return (n + kShapeStep - 1) / kShapeStep * kShapeStep; }

// An operand as bf16: in place, its rounded copy (MatrixRef::rounded), or (float) converted into
// `packed`, whose rows are a multiple of kShapeStep apart (a leading dimension is part of a
// primitive's shape too).
struct Bf16Block {
  const Bf16* data;
  std::int64_t ld;
};
Bf16Block bf16_block(const MatrixRef& x, std::int64_t rows, std::int64_t cols, std::vector<Bf16>& packed) {
  if (x.dtype == DType::bf16) return {static_cast<const Bf16*>(x.data), x.ld};
  if (x.rounded) return {x.rounded, x.ld};
  const std::int64_t ld = steps_of(cols);
  packed.resize(static_cast<std::size_t>(rows * ld));
  convert_to_bf16(static_cast<const float*>(x.data), rows, cols, x.ld, packed.data(), ld);
  return {packed.data(), ld};
}

// Rows [from, from + count) of a stored block (or columns, with `columns`), zero-padded to
// kShapeStep of them, as a bf16 block (rows a multiple of kShapeStep apart); `across` is the
// length of the other side. Only the padding is zeroed.
Bf16Block padded_part(Bf16Block x, bool columns, std::int64_t from, std::int64_t count, std::int64_t across,
                      std::vector<Bf16>& out) {
  if (!columns) {
    const std::int64_t ld = steps_of(across);
    out.resize(static_cast<std::size_t>(kShapeStep * ld));
    for (std::int64_t r = 0; r < count; ++r) std::copy_n(x.data + (from + r) * x.ld, across, out.data() + r * ld);
    std::fill(out.begin() + count * ld, out.end(), Bf16{0});
    return {out.data(), ld};
  }
  out.resize(static_cast<std::size_t>(across * kShapeStep));
  for (std::int64_t r = 0; r < across; ++r) {
    Bf16* row = out.data() + r * kShapeStep;
    std::copy_n(x.data + r * x.ld + from, count, row);
    std::fill(row + count, row + kShapeStep, Bf16{0});
  }
  return {out.data(), kShapeStep};
}

// C = alpha·op(A)·op(B) + beta·C, A and B in bf16, with k cut as above.
void product(bool at, bool bt, int m, int n, int k, float alpha, Bf16Block a, Bf16Block b, float beta, float* c,
             std::int64_t ldc) {
  const int k_head = k - k % kShapeStep;
  if (k_head > 0 && k_head < k) {
    product(at, bt, m, n, k_head, alpha, a, b, beta, c, ldc);
    // The last k of A (its columns; rows when transposed) and of B (its rows; columns when
    // transposed), padded with zeros that add nothing, summed onto the head's result.
    thread_local std::vector<Bf16> a_part, b_part;
    const int tail = k - k_head;
    const Bf16Block a_tail = padded_part(a, !at, k_head, tail, m, a_part);
    const Bf16Block b_tail = padded_part(b, bt, k_head, tail, n, b_part);
    product(at, bt, m, n, kShapeStep, alpha, a_tail, b_tail, 1.0f, c, ldc);
    return;
  }
  MatmulDesc d =
      matmul_desc(at ? Trans::Yes : Trans::No, bt ? Trans::Yes : Trans::No, m, n, k, a.ld, b.ld, ldc, alpha, beta);
  d.input = MatmulInput::bf16;
  run_matmul(d, a.data, b.data, c);
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
  product(at, bt, m, n, k, alpha, ab, bb, beta, c, ldc);
}

bool gemm_mixed_bias(int m, int n, int k, const MatrixRef& a, const MatrixRef& b, const float* bias, bool relu,
                     float* c, Bf16* rounded) {
  // Only where the product runs as one oneDNN product in bf16 (its summed length not cut: a cut
  // product's parts would add the bias to the first part's sums, not to the whole).
  if (m < kMinBf16Dim || n < kMinBf16Dim || k < kMinBf16Dim || k % kShapeStep != 0) return false;
  const bool at = a.trans == Trans::Yes, bt = b.trans == Trans::Yes;
  thread_local std::vector<Bf16> a16, b16;
  const Bf16Block ab = bf16_block(a, at ? k : m, at ? m : k, a16);
  const Bf16Block bb = bf16_block(b, bt ? n : k, bt ? k : n, b16);
  MatmulDesc d = matmul_desc(a.trans, b.trans, m, n, k, ab.ld, bb.ld, n, 1.0f, 0.0f);
  d.input = MatmulInput::bf16;
  d.epilogue = !bias ? kNoEpilogue : relu ? kBiasRelu : kBias;
  d.output = rounded ? MatmulOutput::bf16 : MatmulOutput::f32;
  run_matmul(d, ab.data, bb.data, rounded ? static_cast<void*>(rounded) : static_cast<void*>(c), bias);
  return true;
}

}  // namespace attn::cpu
