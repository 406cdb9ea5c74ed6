// Dropout with a counter-based random stream (dropout_mask.h).
#include <algorithm>

#include "kernels/cpu/dropout_mask.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {

// Elements a thread takes at a time, copied or masked.
constexpr std::int64_t kCopyBlock = 4096;

void dropout(const float* x, float* y, std::int64_t n, float p, std::uint64_t seed) {
  if (p <= 0.0f) {  // a copy (a residual's gradient passed on to its sublayer), both cores' share
    if (x == y) return;
#pragma omp parallel for schedule(static) if (n > (1 << 15))
    for (std::int64_t i = 0; i < n; i += kCopyBlock) std::copy(x + i, x + std::min(n, i + kCopyBlock), y + i);
    return;
  }
  const DropoutMask mask(p, seed);
#pragma omp parallel for schedule(static) if (n > (1 << 15))
  for (std::int64_t i = 0; i < n; i += kCopyBlock)
    mask.row(x + i, y + i, i, static_cast<int>(std::min(kCopyBlock, n - i)));
}

}  // namespace attn::cpu
