#pragma once
// exp(x) for float, written so that GCC vectorises loops that call it (no libm call, no branch).
// Cody-Waite range reduction x = n·ln2 + r, |r| <= ln2/2, then a degree-7 Taylor polynomial:
// relative error below 2e-7 over the whole range; returns 0 below -87.3 (no denormals).
#include <bit>
#include <cstdint>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace attn::cpu {

inline float fast_exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // ln 2 split so that n·kLn2Hi is exact
  constexpr float kLn2Lo = 1.428606765330187045e-06f;
  constexpr float kRound = 12582912.0f;  // 1.5·2^23: adding it rounds to an integer
  x = x < -87.3f ? -87.3f : (x > 88.6f ? 88.6f : x);
  const float shifted = x * kLog2e + kRound;
  const float n = shifted - kRound;
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n built in the exponent field: the low bits of `shifted` hold n.
  const std::int32_t bits = (std::bit_cast<std::int32_t>(shifted) - 0x4B400000 + 127) << 23;
  const float result = p * std::bit_cast<float>(bits);
  return x <= -87.3f ? 0.0f : result;
}

#if defined(__AVX512F__)
// The same for sixteen floats at once, step by step as above (each a * b + c fused, as GCC
// contracts the scalar form under -march=native): for the kernels whose short rows GCC's
// vectorised loops take too slowly (a 32-key softmax row).
inline __m512 fast_exp(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.3f);
  // Clamped with NaN kept: max and min return their second operand where either is NaN.
  x = _mm512_maskz_min_ps(0xffff, _mm512_set1_ps(88.6f), _mm512_maskz_max_ps(0xffff, lo, x));
  const __m512 round = _mm512_set1_ps(12582912.0f);
  const __m512 shifted = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), round);
  const __m512 n = _mm512_sub_ps(shifted, round);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512i bits = _mm512_maskz_slli_epi32(
      0xffff,
      _mm512_add_epi32(_mm512_sub_epi32(_mm512_castps_si512(shifted), _mm512_set1_epi32(0x4B400000)),
                       _mm512_set1_epi32(127)),
      23);
  const __m512 result = _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
  return _mm512_mask_mov_ps(result, _mm512_cmp_ps_mask(x, lo, _CMP_LE_OQ), _mm512_setzero_ps());
}
#endif

}  // namespace attn::cpu
