// Attention's many small products (32 × 32 × 64 blocks, a few hundred per call) in bf16, as
// PyTorch's autocast runs its bmm: every operand rounded to bf16, products summed in float32 by
// AVX512-BF16's dot-product instruction (vdpbf16ps: 32 multiply-adds in one instruction, twice
// the float32 FMA's). The instruction multiplies pairs of consecutive bf16 along k, so each block
// is first laid out in pairs: A's pair (A(i, 2q), A(i, 2q+1)) as one 32-bit word, broadcast; B's
// pairs (B(2q, j), B(2q+1, j)) side by side over j, loaded 16 at a time. A row-major bf16 A (the
// kept queries and keys) is read in place; everything else is rounded / interleaved / transposed
// into per-thread scratch that stays in L1.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__AVX512BF16__)
#include <immintrin.h>
#endif

#include "kernels/cpu/avx512_blocks.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/small_product.h"

namespace attn::cpu {

#if defined(__AVX512BF16__)
namespace {

using avx512::first_lanes;
using avx512::unrolled;

// An operand block as stored: float or bf16, rows × cols, leading dimension ld.
struct Stored {
  const void* data;
  bool bf16;
  int rows, cols;
  std::int64_t ld;
};

// Sixteen elements of a stored row from column c (lanes past `count` zero), rounded to bf16.
inline __m256i load16_bf16(const Stored& s, std::int64_t row, int c, int count) {
  const __mmask16 mask = first_lanes(count);
  if (s.bf16) return _mm256_maskz_loadu_epi16(mask, static_cast<const Bf16*>(s.data) + row * s.ld + c);
  return (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(mask, static_cast<const float*>(s.data) + row * s.ld + c));
}

// Each stored row in bf16, padded with a zero to an even length: dst holds rows × 2·pairs.
void rows_as_bf16(const Stored& s, int pairs, Bf16* dst) {
  for (int r = 0; r < s.rows; ++r)
    for (int c = 0; c < 2 * pairs; c += 16)
      _mm256_mask_storeu_epi16(dst + static_cast<std::int64_t>(r) * 2 * pairs + c, first_lanes(2 * pairs - c),
                               load16_bf16(s, r, c, s.cols - c));
}

// Thirty-two elements of a stored row from column c (lanes past `count` zero), in bf16.
inline __m512i load32_bf16(const Stored& s, std::int64_t row, int c, int count) {
  if (s.bf16) {
    const __mmask32 mask = count >= 32 ? ~__mmask32(0) : count <= 0 ? __mmask32(0) : (__mmask32(1) << count) - 1;
    return _mm512_maskz_loadu_epi16(mask, static_cast<const Bf16*>(s.data) + row * s.ld + c);
  }
  const float* x = static_cast<const float*>(s.data) + row * s.ld + c;
  return (__m512i)_mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(first_lanes(count - 16), x + 16),
                                      _mm512_maskz_loadu_ps(first_lanes(count), x));
}

// Stored rows 2q and 2q+1 interleaved (a zero row past the end): dst word (q, j) holds the pair
// (s(2q, j), s(2q+1, j)), the low half from row 2q. dst holds pairs × s.cols words. Thirty-two
// columns at a time: two loads, and two word permutes that take both rows' words in pair order.
void interleave_rows(const Stored& s, int pairs, std::uint32_t* dst) {
  alignas(64) static constexpr std::uint16_t kLow[32] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                         8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  const __m512i low = _mm512_load_si512(kLow);
  const __m512i high = _mm512_add_epi16(low, _mm512_set1_epi16(16));
  for (int q = 0; q < pairs; ++q)
    for (int c = 0; c < s.cols; c += 32) {
      const int count = s.cols - c;
      const __m512i r0 = load32_bf16(s, 2 * q, c, count);
      const __m512i r1 = 2 * q + 1 < s.rows ? load32_bf16(s, 2 * q + 1, c, count) : _mm512_setzero_si512();
      std::uint32_t* d = dst + static_cast<std::int64_t>(q) * s.cols + c;
      _mm512_mask_storeu_epi32(d, first_lanes(count), _mm512_permutex2var_epi16(r0, low, r1));
      if (count > 16)
        _mm512_mask_storeu_epi32(d + 16, first_lanes(count - 16), _mm512_permutex2var_epi16(r0, high, r1));
    }
}

// A as pairs: the word (A(i, 2q), A(i, 2q+1)) starts at a + i·row + q·col (in bf16 elements).
struct Pairs {
  const Bf16* a;
  std::int64_t row, col;
};

// C[R rows, up to 32 columns] = alpha·A·B + beta·C, with B's pairs in words b + q·ldb + j.
template <int R>
void tile(int pairs, Pairs a, const std::uint32_t* b, std::int64_t ldb, __mmask16 m0, __mmask16 m1, float alpha,
          float beta, float* c, std::int64_t ldc) {
  __m512 acc0[R], acc1[R];
  unrolled<R>([&](auto r) { acc0[r] = acc1[r] = _mm512_setzero_ps(); });
  for (int q = 0; q < pairs; ++q) {
    const std::uint32_t* bq = b + q * ldb;
    const __m512bh b0 = (__m512bh)_mm512_maskz_loadu_epi32(m0, bq);
    const __m512bh b1 = (__m512bh)_mm512_maskz_loadu_epi32(m1, bq + 16);
    const Bf16* aq = a.a + q * a.col;
    unrolled<R>([&](auto r) {
      std::uint32_t word;
      std::memcpy(&word, aq + r * a.row, sizeof word);
      const __m512bh x = (__m512bh)_mm512_set1_epi32(static_cast<int>(word));
      acc0[r] = _mm512_dpbf16_ps(acc0[r], x, b0);
      acc1[r] = _mm512_dpbf16_ps(acc1[r], x, b1);
    });
  }
  avx512::store_tile<R>(acc0, acc1, m0, m1, alpha, beta, c, ldc);
}

using TileFn = void (*)(int, Pairs, const std::uint32_t*, std::int64_t, __mmask16, __mmask16, float, float, float*,
                        std::int64_t);
constexpr TileFn kTiles[avx512::kTileRows + 1] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>,
                                                  tile<5>, tile<6>, tile<7>, tile<8>};

// A (m × k as used) in pairs: a row-major bf16 block with k even in place, otherwise rounded
// into a_rows (row-major) or interleaved into a_pairs (stored transposed, k × m).
Pairs a_in_pairs(const Stored& s, bool transposed, int k, SmallProductScratch& w) {
  const int pairs = (k + 1) / 2;
  if (transposed) {
    w.a_pairs.resize(static_cast<std::size_t>(pairs) * s.cols);
    interleave_rows(s, pairs, w.a_pairs.data());
    return {reinterpret_cast<const Bf16*>(w.a_pairs.data()), 2, 2 * static_cast<std::int64_t>(s.cols)};
  }
  if (s.bf16 && k % 2 == 0) return {static_cast<const Bf16*>(s.data), s.ld, 2};
  w.a_rows.resize(static_cast<std::size_t>(s.rows) * 2 * pairs);
  rows_as_bf16(s, pairs, w.a_rows.data());
  return {w.a_rows.data(), 2 * static_cast<std::int64_t>(pairs), 2};
}

// B (k × n as used) in pairs, pairs × n words: rows interleaved, or (stored transposed, n × k)
// the words of each stored row transposed into columns.
const std::uint32_t* b_in_pairs(const Stored& s, bool transposed, int k, int n, SmallProductScratch& w) {
  const int pairs = (k + 1) / 2;
  w.b_pairs.resize(static_cast<std::size_t>(pairs) * n);
  if (!transposed) {
    interleave_rows(s, pairs, w.b_pairs.data());
    return w.b_pairs.data();
  }
  const bool words_in_place = s.bf16 && k % 2 == 0 && s.ld % 2 == 0;  // each row a whole number of words
  const void* words = s.data;
  std::int64_t ld_words = s.ld / 2;
  if (!words_in_place) {
    w.b_rows.resize(static_cast<std::size_t>(n) * 2 * pairs);
    rows_as_bf16(s, pairs, w.b_rows.data());
    words = w.b_rows.data(), ld_words = pairs;
  }
  avx512::transpose32(words, n, pairs, ld_words, w.b_pairs.data(), n);
  return w.b_pairs.data();
}

// x's block (rows × cols as stored) from its data on.
Stored stored(const MatrixRef& x, int rows, int cols) { return {x.data, x.dtype == DType::bf16, rows, cols, x.ld}; }

}  // namespace

void small_product_bf16(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                        int ldc, SmallProductScratch& scratch) {
  const bool at = a.trans == Trans::Yes, bt = b.trans == Trans::Yes;
  const int pairs = (k + 1) / 2;
  // Stored shapes: A is m×k (k×m transposed), B is k×n (n×k transposed).
  const Pairs ap = a_in_pairs(stored(a, at ? k : m, at ? m : k), at, k, scratch);
  const std::uint32_t* bp = b_in_pairs(stored(b, bt ? n : k, bt ? k : n), bt, k, n, scratch);
  avx512::for_each_tile(m, n, [&](int r, int j, int rows, __mmask16 m0, __mmask16 m1) {
    kTiles[rows](pairs, Pairs{ap.a + r * ap.row, ap.row, ap.col}, bp + j, n, m0, m1, alpha, beta,
                 c + static_cast<std::int64_t>(r) * ldc + j, ldc);
  });
}

bool small_gemm_batched_bf16(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta,
                             float* c, int ldc, const GemmBatch& batch) {
  if (m > kMaxSmallGemm || n > kMaxSmallGemm || k > kMaxSmallGemm) return false;
  const int count = batch.outer * batch.inner;
#pragma omp parallel
  {
    thread_local SmallProductScratch scratch;
#pragma omp for schedule(static)
    for (int i = 0; i < count; ++i) {
      const int o = i / batch.inner, h = i % batch.inner;
      small_product_bf16(m, n, k, alpha, advanced(a, o * batch.a_outer + h * batch.a_inner),
                         advanced(b, o * batch.b_outer + h * batch.b_inner), beta,
                         c + o * batch.c_outer + h * batch.c_inner, ldc, scratch);
    }
  }
  return true;
}

#else

bool small_gemm_batched_bf16(int, int, int, float, const MatrixRef&, const MatrixRef&, float, float*, int,
                             const GemmBatch&) {
  return false;  // built without AVX512-BF16: the caller computes in float32
}

#endif

}  // namespace attn::cpu
