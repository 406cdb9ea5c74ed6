// An exponential moving average of the weights (Polyak averaging; Marian's exponential smoothing,
// fairseq's EMA), kept beside them in float32 and updated after each optimizer step.
#include "kernels/cpu/ops.h"

namespace attn::cpu {

void moving_average(float* average, const float* x, std::int64_t n, float decay) {
  const float keep = decay, take = 1.0f - decay;
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < n; ++i) average[i] = keep * average[i] + take * x[i];
}

}  // namespace attn::cpu
