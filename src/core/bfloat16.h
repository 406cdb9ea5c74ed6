#pragma once
// bfloat16: the top 16 bits of a float32. One rounding rule for every floor that makes them (the
// CPU kernels' conversion, the gradient on the wire): to nearest, ties to even, as the
// AVX512-BF16 instruction rounds; a NaN stays a NaN (its quiet bit set, so that cutting the
// payload cannot make it an infinity). Widening back is exact.
#include <bit>
#include <cstdint>

namespace attn {

inline std::uint16_t bf16_nearest_even(float x) {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

inline float float_of_bf16(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

}  // namespace attn
