// Adam with bias correction (Kingma & Ba, 2015, Algorithm 1), as the paper trains with it.
#include <cmath>

#include "kernels/cpu/ops.h"

namespace attn::cpu {

void adam(float* params, const float* grads, float* m, float* v, std::int64_t n, const AdamHyper& h) {
  const float b1 = h.beta1, b2 = h.beta2;
  const auto t = static_cast<double>(h.step);
  // Folding both bias corrections into the step size and epsilon:
  // p -= lr · m̂ / (sqrt(v̂) + eps) with m̂ = m / (1 - b1^t), v̂ = v / (1 - b2^t).
  const float c1 = static_cast<float>(1.0 - std::pow(static_cast<double>(b1), t));
  const float c2 = static_cast<float>(1.0 - std::pow(static_cast<double>(b2), t));
  const float step = h.lr / c1;
  const float inv_sqrt_c2 = 1.0f / std::sqrt(c2);
  const float gs = h.grad_scale, eps = h.eps;
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const float g = grads[i] * gs;
    const float mi = b1 * m[i] + (1.0f - b1) * g;
    const float vi = b2 * v[i] + (1.0f - b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    params[i] -= step * mi / (std::sqrt(vi) * inv_sqrt_c2 + eps);
  }
}

}  // namespace attn::cpu
