// Many small products at once (attention's per-sentence, per-head blocks: 32 × 32 × 64 each, a
// few hundred per call). oneDNN runs them at 60-90 GFLOP/s here, its per-block overhead being
// as large as the block's work; a register-tiled AVX-512 loop with float operands read in place
// (a transposed B is copied into the k × n order the tile reads, a bf16 block widened) runs them faster
// (bench/gemm_bench, "batched" lines).
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {

#if defined(__AVX512F__)
namespace {

// Operand A read element by element: A(i, p) = a[i·row + p·col].
struct Strided {
  const float* a;
  std::int64_t row, col;
};

// Calls f(std::integral_constant<int, I>) for I = 0 .. N-1: indices known at compile time keep
// the accumulators in registers (with a runtime loop GCC keeps them in memory).
template <int N, typename F>
inline void unrolled(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I>{}), ...); }(
      std::make_integer_sequence<int, N>{});
}

// C[R rows, up to 32 columns] = alpha·A·B + beta·C with B's rows contiguous (b + p·ldb).
template <int R>
void tile(int k, Strided a, const float* b, std::int64_t ldb, __mmask16 m0, __mmask16 m1, float alpha,
          float beta, float* c, std::int64_t ldc) {
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
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  unrolled<R>([&](auto r) {
    float* cr = c + r * ldc;
    __m512 y0 = _mm512_mul_ps(va, acc0[r]), y1 = _mm512_mul_ps(va, acc1[r]);
    if (beta != 0.0f) {  // C may hold NaN garbage when beta is 0: never read it then
      y0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), y0);
      y1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cr + 16), y1);
    }
    _mm512_mask_storeu_ps(cr, m0, y0);
    _mm512_mask_storeu_ps(cr + 16, m1, y1);
  });
}

using TileFn = void (*)(int, Strided, const float*, std::int64_t, __mmask16, __mmask16, float, float, float*,
                        std::int64_t);
constexpr int kRows = 8;  // 8 rows × 2 vectors: 16 accumulators of the 32 registers
constexpr TileFn kTiles[kRows + 1] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>, tile<7>, tile<8>};

__mmask16 first_lanes(int count) {
  return count >= 16 ? __mmask16(0xffff) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}

void one_product(Trans ta, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                 std::int64_t ldb, float beta, float* c, int ldc) {
  const Strided sa = ta == Trans::Yes ? Strided{a, 1, lda} : Strided{a, lda, 1};
  for (int j = 0; j < n; j += 32) {
    const __mmask16 m0 = first_lanes(n - j), m1 = first_lanes(n - j - 16);
    for (int i = 0; i < m; i += kRows) {
      const int rows = std::min(kRows, m - i);
      kTiles[rows](k, Strided{sa.a + i * sa.row, sa.row, sa.col}, b + j, ldb, m0, m1, alpha, beta,
                   c + static_cast<std::int64_t>(i) * ldc + j, ldc);
    }
  }
}

// dst (cols × rows, leading dimension ldd) = the transpose of src (rows × cols, leading dimension
// lds): 16 × 16 tiles transposed in registers (unpack, shuffle within and across 128-bit lanes),
// the edges one by one. Scores Q·Kᵀ need K's block this way round, once per block.
void transpose(const float* src, int rows, int cols, std::int64_t lds, float* dst, std::int64_t ldd) {
  int i = 0;
  for (; i + 16 <= rows; i += 16) {
    int j = 0;
    for (; j + 16 <= cols; j += 16) {
      __m512 r[16], t[16];
      unrolled<16>([&](auto q) { r[q] = _mm512_loadu_ps(src + (i + q) * lds + j); });
      // (Zero-masked forms throughout: GCC 12 warns about the plain ones' undefined source.)
      unrolled<8>([&](auto q) {
        t[2 * q] = _mm512_maskz_unpacklo_ps(0xffff, r[2 * q], r[2 * q + 1]);
        t[2 * q + 1] = _mm512_maskz_unpackhi_ps(0xffff, r[2 * q], r[2 * q + 1]);
      });
      // r[4q + c] then holds, in 128-bit lane L, column 4L + c of rows 4q .. 4q + 3.
      unrolled<4>([&](auto q) {
        r[4 * q + 0] = _mm512_maskz_shuffle_ps(0xffff, t[4 * q], t[4 * q + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * q + 1] = _mm512_maskz_shuffle_ps(0xffff, t[4 * q], t[4 * q + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[4 * q + 2] = _mm512_maskz_shuffle_ps(0xffff, t[4 * q + 1], t[4 * q + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * q + 3] = _mm512_maskz_shuffle_ps(0xffff, t[4 * q + 1], t[4 * q + 3], _MM_SHUFFLE(3, 2, 3, 2));
      });
      unrolled<4>([&](auto c) {
        const __m512 u0 = _mm512_maskz_shuffle_f32x4(0xffff, r[c], r[4 + c], 0x44);
        const __m512 u1 = _mm512_maskz_shuffle_f32x4(0xffff, r[c], r[4 + c], 0xee);
        const __m512 u2 = _mm512_maskz_shuffle_f32x4(0xffff, r[8 + c], r[12 + c], 0x44);
        const __m512 u3 = _mm512_maskz_shuffle_f32x4(0xffff, r[8 + c], r[12 + c], 0xee);
        _mm512_storeu_ps(dst + (j + c) * ldd + i, _mm512_maskz_shuffle_f32x4(0xffff, u0, u2, 0x88));
        _mm512_storeu_ps(dst + (j + c + 4) * ldd + i, _mm512_maskz_shuffle_f32x4(0xffff, u0, u2, 0xdd));
        _mm512_storeu_ps(dst + (j + c + 8) * ldd + i, _mm512_maskz_shuffle_f32x4(0xffff, u1, u3, 0x88));
        _mm512_storeu_ps(dst + (j + c + 12) * ldd + i, _mm512_maskz_shuffle_f32x4(0xffff, u1, u3, 0xdd));
      });
    }
    for (; j < cols; ++j)
      for (int q = i; q < i + 16; ++q) dst[j * ldd + q] = src[q * lds + j];
  }
  for (; i < rows; ++i)
    for (int j = 0; j < cols; ++j) dst[j * ldd + i] = src[i * lds + j];
}

}  // namespace

bool small_gemm_batched(Trans ta, Trans tb, int m, int n, int k, float alpha, const void* a, bool a_bf16, int lda,
                        const void* b, bool b_bf16, int ldb, float beta, float* c, int ldc, const GemmBatch& batch) {
  if (m > kMaxSmallGemm || n > kMaxSmallGemm || k > kMaxSmallGemm) return false;
  const int count = batch.outer * batch.inner;
  // Stored shapes: A is m×k (k×m transposed), B is k×n (n×k transposed).
  const int a_rows = ta == Trans::Yes ? k : m, a_cols = ta == Trans::Yes ? m : k;
  const int b_rows = tb == Trans::Yes ? n : k, b_cols = tb == Trans::Yes ? k : n;
#pragma omp parallel
  {
    // A bf16 operand's block widened to float (attention's: 8 KB, in L1 for the product), a
    // transposed B's block in the k × n order the tile reads.
    thread_local std::vector<float> a_wide, b_wide, packed;
    if (tb == Trans::Yes) packed.resize(static_cast<std::size_t>(k) * n);
#pragma omp for schedule(static)
    for (int i = 0; i < count; ++i) {
      const int o = i / batch.inner, h = i % batch.inner;
      const std::int64_t a_at = o * batch.a_outer + h * batch.a_inner, b_at = o * batch.b_outer + h * batch.b_inner;
      const FloatBlock ai = float_block(a, a_bf16, a_at, a_rows, a_cols, lda, a_wide);
      FloatBlock bi = float_block(b, b_bf16, b_at, b_rows, b_cols, ldb, b_wide);
      if (tb == Trans::Yes) {
        transpose(bi.data, n, k, bi.ld, packed.data(), n);
        bi = {packed.data(), n};
      }
      one_product(ta, m, n, k, alpha, ai.data, ai.ld, bi.data, bi.ld, beta, c + o * batch.c_outer + h * batch.c_inner,
                  ldc);
    }
  }
  return true;
}

#else

bool small_gemm_batched(Trans, Trans, int, int, int, float, const void*, bool, int, const void*, bool, int, float,
                        float*, int, const GemmBatch&) {
  return false;  // built without AVX-512: the caller takes oneDNN
}

#endif

}  // namespace attn::cpu
