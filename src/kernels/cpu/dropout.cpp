// Dropout with a counter-based random stream: element i's fate is hash(seed, i), so the mask
// can be recomputed in the backward pass instead of stored, and it does not depend on threads.
#include <algorithm>

#include "kernels/cpu/ops.h"

namespace attn::cpu {

static inline std::uint32_t mix32(std::uint32_t x) {
  // "lowbias32" integer hash (Chris Wellons): good avalanche with two multiplies.
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

constexpr std::int64_t kCopyBlock = 4096;

void dropout(const float* x, float* y, std::int64_t n, float p, std::uint64_t seed) {
  if (p <= 0.0f) {  // a copy (a residual's gradient passed on to its sublayer), both cores' share
    if (x == y) return;
#pragma omp parallel for schedule(static) if (n > (1 << 15))
    for (std::int64_t i = 0; i < n; i += kCopyBlock) std::copy(x + i, x + std::min(n, i + kCopyBlock), y + i);
    return;
  }
  const float keep_scale = 1.0f / (1.0f - p);
  // Keep when the 24-bit uniform is >= p·2^24.
  const auto threshold = static_cast<std::uint32_t>(static_cast<double>(p) * (1u << 24));
  const auto key_lo = static_cast<std::uint32_t>(seed), key_hi = static_cast<std::uint32_t>(seed >> 32);
#pragma omp parallel for simd schedule(static) if (n > (1 << 15))
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint32_t lo = static_cast<std::uint32_t>(i), hi = static_cast<std::uint32_t>(i >> 32);
    const std::uint32_t h = mix32(mix32(lo ^ key_lo) + (hi ^ key_hi) * 0x9E3779B9U);
    y[i] = (h >> 8) >= threshold ? x[i] * keep_scale : 0.0f;
  }
}

}  // namespace attn::cpu
