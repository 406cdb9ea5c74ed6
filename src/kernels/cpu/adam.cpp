// Adam (Kingma & Ba, 2015, Algorithm 1) with bias correction, as the paper trains with it; in the
// same pass over memory, the gradient zeroed for the next update and the parameters rounded to
// bf16 for the next forward pass (where asked): each block of parameters is read and written once,
// where the zeroing and the rounding were passes of their own over the 30 MB of the cpu-hour
// preset's parameters or gradient.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {

void adam(float* params, float* grads, float* m, float* v, std::int64_t n, const AdamHyper& h, Bf16* rounded) {
  const float b1 = h.beta1, b2 = h.beta2;
  const auto t = static_cast<double>(h.step);
  // Folding both bias corrections into the step size and epsilon:
  // p -= lr · m̂ / (sqrt(v̂) + eps) with m̂ = m / (1 - b1^t), v̂ = v / (1 - b2^t).
  const float c1 = static_cast<float>(1.0 - std::pow(static_cast<double>(b1), t));
  const float c2 = static_cast<float>(1.0 - std::pow(static_cast<double>(b2), t));
  const float step = h.lr / c1;
  const float inv_sqrt_c2 = 1.0f / std::sqrt(c2);
  const float gs = h.grad_scale, eps = h.eps;
  // Blocks of 2048 parameters: the block's four 8 KB runs stay in L1 from the update to the
  // rounding and the zeroing.
  constexpr std::int64_t kBlock = 2048;
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t first = b * kBlock, end = std::min(n, first + kBlock);
#pragma omp simd
    for (std::int64_t i = first; i < end; ++i) {
      const float g = grads[i] * gs;
      const float mi = b1 * m[i] + (1.0f - b1) * g;
      const float vi = b2 * v[i] + (1.0f - b2) * g * g;
      m[i] = mi;
      v[i] = vi;
      params[i] -= step * mi / (std::sqrt(vi) * inv_sqrt_c2 + eps);
    }
    if (rounded) round_to_bf16(params + first, end - first, rounded + first);
    std::memset(grads + first, 0, sizeof(float) * static_cast<std::size_t>(end - first));
  }
}

}  // namespace attn::cpu
