#pragma once
// exp(x) for float, written so that GCC vectorises loops that call it (no libm call, no branch).
// Cody-Waite range reduction x = n·ln2 + r, |r| <= ln2/2, then a degree-7 Taylor polynomial:
// relative error below 2e-7 over the whole range; returns 0 below -87.3 (no denormals).
#include <bit>
#include <cstdint>

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

}  // namespace attn::cpu
