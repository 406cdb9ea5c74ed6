// Many small products at once (attention's per-sentence, per-head blocks: 32 × 32 × 64 each, a
// few hundred per call). oneDNN's per-block overhead is as large as such a block's work; a
// register-tiled AVX-512 loop with float operands read in place
// (a transposed B is copied into the k × n order the tile reads, a bf16 block widened) runs them faster
// (bench/gemm_bench, "batched" lines).
#include <algorithm>
#include <cstdint>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/cpu/avx512_blocks.h"
#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/small_product.h"

namespace attn::cpu {

#if defined(__AVX512F__)
namespace {

using avx512::transpose32;
using avx512::unrolled;

// Operand A read element by element: A(i, p) = a[i·row + p·col].
struct Strided {
  const float* a;
  std::int64_t row, col;
};

// C[R rows, up to 32 columns] = alpha·A·B + beta·C with B's rows contiguous (b + p·ldb).
template <int R>
void tile(int k, Strided a, const float* b, std::int64_t ldb, __mmask16 m0, __mmask16 m1, float alpha, float beta,
          float* c, std::int64_t ldc) {
  __m512 acc0[R], acc1[R];
  unrolled<R>([&](auto r) { acc0[r] = acc1[r] = _mm512_setzero_ps(); });
  for (int p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, bp), b1 = _mm512_maskz_loadu_ps(m1, bp + 16);
    const float* ap = a.a + p * a.col;
    unrolled<R>([&](auto r) {
      const __m512 x = _mm512_set1_ps(ap[r * a.row]);
      acc0[r] = _mm512_fmadd_ps(x, b0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(x, b1, acc1[r]);
    });
  }
  avx512::store_tile<R>(acc0, acc1, m0, m1, alpha, beta, c, ldc);
}

using TileFn = void (*)(int, Strided, const float*, std::int64_t, __mmask16, __mmask16, float, float, float*,
                        std::int64_t);
constexpr TileFn kTiles[avx512::kTileRows + 1] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>,
                                                  tile<5>, tile<6>, tile<7>, tile<8>};

void one_product(Trans ta, int m, int n, int k, float alpha, const float* a, int lda, const float* b, std::int64_t ldb,
                 float beta, float* c, int ldc) {
  const Strided sa = ta == Trans::Yes ? Strided{a, 1, lda} : Strided{a, lda, 1};
  avx512::for_each_tile(m, n, [&](int i, int j, int rows, __mmask16 m0, __mmask16 m1) {
    kTiles[rows](k, Strided{sa.a + i * sa.row, sa.row, sa.col}, b + j, ldb, m0, m1, alpha, beta,
                 c + static_cast<std::int64_t>(i) * ldc + j, ldc);
  });
}

}  // namespace

void small_product_f32(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                       int ldc, SmallProductScratch& w) {
  const Trans ta = a.trans, tb = b.trans;
  // Stored shapes: A is m×k (k×m transposed), B is k×n (n×k transposed).
  const int a_rows = ta == Trans::Yes ? k : m, a_cols = ta == Trans::Yes ? m : k;
  const int b_rows = tb == Trans::Yes ? n : k, b_cols = tb == Trans::Yes ? k : n;
  // A bf16 operand's block widened to float (attention's: 8 KB, in L1 for the product), a
  // transposed B's block in the k × n order the tile reads.
  const FloatBlock ai = float_block(a, 0, a_rows, a_cols, w.a_wide);
  FloatBlock bi = float_block(b, 0, b_rows, b_cols, w.b_wide);
  if (tb == Trans::Yes) {
    w.packed.resize(static_cast<std::size_t>(k) * n);
    transpose32(bi.data, n, k, bi.ld, w.packed.data(), n);
    bi = {w.packed.data(), n};
  }
  one_product(ta, m, n, k, alpha, ai.data, ai.ld, bi.data, bi.ld, beta, c, ldc);
}

bool small_gemm_batched(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                        int ldc, const GemmBatch& batch) {
  if (m > kMaxSmallGemm || n > kMaxSmallGemm || k > kMaxSmallGemm) return false;
  const int count = batch.outer * batch.inner;
#pragma omp parallel
  {
    thread_local SmallProductScratch scratch;
#pragma omp for schedule(static)
    for (int i = 0; i < count; ++i) {
      const int o = i / batch.inner, h = i % batch.inner;
      small_product_f32(m, n, k, alpha, advanced(a, o * batch.a_outer + h * batch.a_inner),
                        advanced(b, o * batch.b_outer + h * batch.b_inner), beta,
                        c + o * batch.c_outer + h * batch.c_inner, ldc, scratch);
    }
  }
  return true;
}

#else

bool small_gemm_batched(int, int, int, float, const MatrixRef&, const MatrixRef&, float, float*, int,
                        const GemmBatch&) {
  return false;  // built without AVX-512: the caller takes oneDNN
}

#endif

}  // namespace attn::cpu
