#pragma once
// Building blocks of the AVX-512 small-block kernels (small_gemm_batched*.cpp): compile-time
// unrolling, lane masks, sixteen horizontal sums at once, and a 16 × 16 transpose of 32-bit
// elements in registers.
#if defined(__AVX512F__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace attn::cpu::avx512 {

// Calls f(std::integral_constant<int, I>) for I = 0 .. N-1: indices known at compile time keep
// the accumulators in registers (with a runtime loop GCC keeps them in memory).
template <int N, typename F>
inline void unrolled(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I>{}), ...); }
  (std::make_integer_sequence<int, N>{});
}

// The first `count` of 16 lanes (none for count <= 0).
inline __mmask16 first_lanes(int count) {
  return count >= 16 ? __mmask16(0xffff) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}

// The tiles of an m × n product, at most kTileRows rows by 32 columns each: tile(i, j, rows, m0,
// m1) for the one at row i, column j, with m0 / m1 the lanes of columns j .. j+15 / j+16 .. j+31
// inside n.
constexpr int kTileRows = 8;  // 8 rows × 2 vectors: 16 accumulators of the 32 registers
template <typename F>
inline void for_each_tile(int m, int n, F&& tile) {
  for (int j = 0; j < n; j += 32) {
    const __mmask16 m0 = first_lanes(n - j), m1 = first_lanes(n - j - 16);
    for (int i = 0; i < m; i += kTileRows) tile(i, j, std::min(kTileRows, m - i), m0, m1);
  }
}

// The end of an R-row, 32-column tile: C = alpha·acc + beta·C over the lanes of m0 (columns 0-15)
// and m1 (16-31). C is not read when beta is 0: it may hold NaN garbage then.
template <int R>
[[gnu::always_inline]] inline void store_tile(const __m512 (&acc0)[R], const __m512 (&acc1)[R], __mmask16 m0,
                                              __mmask16 m1, float alpha, float beta, float* c, std::int64_t ldc) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  unrolled<R>([&](auto r) {
    float* cr = c + r * ldc;
    __m512 y0 = _mm512_mul_ps(va, acc0[r]), y1 = _mm512_mul_ps(va, acc1[r]);
    if (beta != 0.0f) {
      y0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), y0);
      y1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cr + 16), y1);
    }
    _mm512_mask_storeu_ps(cr, m0, y0);
    _mm512_mask_storeu_ps(cr + 16, m1, y1);
  });
}

// Lane j of the result = the sum of the 16 lanes of v[j], through a tree of shuffles (the 16
// horizontal sums share their steps). `add` adds two vectors lane by lane: _mm512_add_ps for
// floats, or an integer addition of vectors whose bits are int32 lanes (the shuffles only move bits).
template <typename Add>
inline __m512 sum_lanes16(const __m512 (&v)[16], Add add) {
  __m512 b[8], c[4];
  // Within each 128-bit lane: b[i] interleaves v[2i]'s and v[2i+1]'s sums of lanes (0, 2) and (1, 3).
  unrolled<8>([&](auto i) {
    b[i] = add(_mm512_maskz_unpacklo_ps(0xffff, v[2 * i], v[2 * i + 1]),
               _mm512_maskz_unpackhi_ps(0xffff, v[2 * i], v[2 * i + 1]));
  });
  // c[i]'s 128-bit lane L holds the lane-L sums of v[4i .. 4i+3].
  unrolled<4>([&](auto i) {
    c[i] = add(_mm512_maskz_shuffle_ps(0xffff, b[2 * i], b[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
               _mm512_maskz_shuffle_ps(0xffff, b[2 * i], b[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  });
  // Add the four 128-bit lanes: 128-bit lane q of the result holds the totals of v[4q .. 4q+3].
  const __m512 d0 = add(_mm512_maskz_shuffle_f32x4(0xffff, c[0], c[1], _MM_SHUFFLE(2, 0, 2, 0)),
                        _mm512_maskz_shuffle_f32x4(0xffff, c[0], c[1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512 d1 = add(_mm512_maskz_shuffle_f32x4(0xffff, c[2], c[3], _MM_SHUFFLE(2, 0, 2, 0)),
                        _mm512_maskz_shuffle_f32x4(0xffff, c[2], c[3], _MM_SHUFFLE(3, 1, 3, 1)));
  return add(_mm512_maskz_shuffle_f32x4(0xffff, d0, d1, _MM_SHUFFLE(2, 0, 2, 0)),
             _mm512_maskz_shuffle_f32x4(0xffff, d0, d1, _MM_SHUFFLE(3, 1, 3, 1)));
}

// dst (cols × rows, leading dimension ldd) = the transpose of src (rows × cols, leading dimension
// lds), both of 32-bit elements (floats, or pairs of bf16): 16 × 16 tiles transposed in registers
// (unpack, shuffle within and across 128-bit lanes), the edges one by one.
inline void transpose32(const void* src_bytes, int rows, int cols, std::int64_t lds, void* dst_bytes,
                        std::int64_t ldd) {
  const char* src = static_cast<const char*>(src_bytes);
  char* dst = static_cast<char*>(dst_bytes);
  auto at = [](std::int64_t row, std::int64_t col, std::int64_t ld) { return 4 * (row * ld + col); };
  int i = 0;
  for (; i + 16 <= rows; i += 16) {
    int j = 0;
    for (; j + 16 <= cols; j += 16) {
      __m512 r[16], t[16];
      unrolled<16>([&](auto q) { r[q] = _mm512_loadu_ps(src + at(i + q, j, lds)); });
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
        _mm512_storeu_ps(dst + at(j + c, i, ldd), _mm512_maskz_shuffle_f32x4(0xffff, u0, u2, 0x88));
        _mm512_storeu_ps(dst + at(j + c + 4, i, ldd), _mm512_maskz_shuffle_f32x4(0xffff, u0, u2, 0xdd));
        _mm512_storeu_ps(dst + at(j + c + 8, i, ldd), _mm512_maskz_shuffle_f32x4(0xffff, u1, u3, 0x88));
        _mm512_storeu_ps(dst + at(j + c + 12, i, ldd), _mm512_maskz_shuffle_f32x4(0xffff, u1, u3, 0xdd));
      });
    }
    for (; j < cols; ++j)
      for (int q = i; q < i + 16; ++q) std::memcpy(dst + at(j, q, ldd), src + at(q, j, lds), 4);
  }
  for (; i < rows; ++i)
    for (int j = 0; j < cols; ++j) std::memcpy(dst + at(j, i, ldd), src + at(i, j, lds), 4);
}

}  // namespace attn::cpu::avx512

#endif
