#pragma once
// bfloat16 rounding by a rule independent of the kernels' conversion: keep 8 significant bits,
// ties to even (needs the default FE_TONEAREST rounding mode).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/backend.h"

namespace attn::testing {

// x rounded to the nearest number with 8 significant bits (bfloat16's precision), ties to even.
inline double bf16_round(float x) {
  if (x == 0.0f) return 0.0;
  int e = 0;
  const double mantissa = std::frexp(static_cast<double>(x), &e);  // [0.5, 1)
  return std::ldexp(std::nearbyint(mantissa * 256.0) / 256.0, e);  // FE_TONEAREST: ties to even
}

// The bits of bf16_round(x) (exactly a bfloat16 value, so the float's low half is zero).
inline Bf16 bf16_bits(float x) {
  const float r = static_cast<float>(bf16_round(x));
  std::uint32_t bits;
  std::memcpy(&bits, &r, sizeof bits);
  return static_cast<Bf16>(bits >> 16);
}

}  // namespace attn::testing
