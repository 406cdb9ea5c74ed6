#pragma once
// Dropout's counter-based mask: element i's fate is hash(seed, i), so the mask can be recomputed in
// the backward pass instead of stored, and it does not depend on threads. One rule for every pass
// that applies it (dropout, and layernorm_backward's sublayer gradient).
#include <cstdint>

namespace attn::cpu {

class DropoutMask {
 public:
  // 0 <= p < 1 (at 0 every element is kept, times 1).
  DropoutMask(float p, std::uint64_t seed)
      : keep_scale_(1.0f / (1.0f - p)),
        // Keep when the 24-bit uniform is >= p·2^24.
        threshold_(static_cast<std::uint32_t>(static_cast<double>(p) * (1u << 24))),
        key_lo_(static_cast<std::uint32_t>(seed)),
        key_hi_(static_cast<std::uint32_t>(seed >> 32)) {}

  // x at element i: x / (1 - p) where i is kept, else 0.
  float operator()(float x, std::int64_t i) const {
    const std::uint32_t lo = static_cast<std::uint32_t>(i), hi = static_cast<std::uint32_t>(i >> 32);
    return apply(x, lo, (hi ^ key_hi_) * 0x9E3779B9U);
  }

  // y[j] = the same for x[j] at element at + j, j < n (y may be x). Where the n indices share
  // their upper 32 bits (all but one row in 2^32 / n), the hash runs on 32-bit lanes: twice the
  // elements a vector of the 64-bit indices would hold.
  void row(const float* x, float* y, std::int64_t at, int n) const {
    const std::uint32_t lo = static_cast<std::uint32_t>(at);
    if (static_cast<std::uint64_t>(lo) + static_cast<std::uint64_t>(n) > (std::uint64_t{1} << 32)) {
      for (int j = 0; j < n; ++j) y[j] = (*this)(x[j], at + j);
      return;
    }
    const std::uint32_t hi_term = (static_cast<std::uint32_t>(at >> 32) ^ key_hi_) * 0x9E3779B9U;
#pragma omp simd
    for (int j = 0; j < n; ++j) y[j] = apply(x[j], lo + static_cast<std::uint32_t>(j), hi_term);
  }

 private:
  float apply(float x, std::uint32_t lo, std::uint32_t hi_term) const {
    const std::uint32_t h = mix32(mix32(lo ^ key_lo_) + hi_term);
    return (h >> 8) >= threshold_ ? x * keep_scale_ : 0.0f;
  }

  static std::uint32_t mix32(std::uint32_t x) {
    // "lowbias32" integer hash (Chris Wellons): good avalanche with two multiplies.
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
  }

  float keep_scale_;
  std::uint32_t threshold_, key_lo_, key_hi_;
};

}  // namespace attn::cpu
