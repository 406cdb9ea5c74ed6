#pragma once
// The paper's post-LN sublayer connection: y = LayerNorm(x + Dropout(Sublayer(x))).
#include <cstdint>

#include "kernels/backend.h"
#include "nn/activations.h"

namespace attn::nn {

struct LayerNormParams {
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float* gamma_grad = nullptr;
  float* beta_grad = nullptr;
  int dim = 0;
  float eps = 1e-5f;
};

// What the backward pass needs from the forward one.
struct ResidualNormCache {
  float* sum = nullptr;   // x + dropout(sublayer(x)) [rows, dim]
  float* mean = nullptr;  // [rows]
  float* rstd = nullptr;  // [rows]
};

// sublayer_out [rows, dim] is consumed (overwritten); y receives the normalised sum, and where
// y_rounded is not null its bf16 rounding (what the next products read), on the same pass.
// cache.mean/rstd may be null when no backward pass follows (inference).
void residual_norm_forward(Backend& be, const LayerNormParams& norm, const float* x, float* sublayer_out,
                           std::int64_t rows, float dropout, std::uint64_t dropout_seed, const ResidualNormCache& cache,
                           float* y, Bf16* y_rounded = nullptr);

// y again, from the cache (the backward pass recomputes outputs instead of keeping them): the
// same kernel on the same sum gives the same bits.
void residual_norm_output(Backend& be, const LayerNormParams& norm, const ResidualNormCache& cache, std::int64_t rows,
                          float* y);

// On entry dy holds ∂L/∂y; on exit it holds ∂L/∂(x + ...) which is the residual path's ∂L/∂x.
// Returns ∂L/∂sublayer_out (through the same dropout mask), made on the layer norm's pass as the
// sublayer's output Linear reads it: rounded into `rounded` where that is a bf16 buffer, with its
// rows summed into bias_grad (that Linear's bias gradient, null where it has none), so that
// Linear::backward takes it as given; else in float into d_sublayer_out (the Linear sums its bias).
Activations residual_norm_backward(Backend& be, const LayerNormParams& norm, float* dy, std::int64_t rows,
                                   float dropout, std::uint64_t dropout_seed, const ResidualNormCache& cache,
                                   float* d_sublayer_out, RowBuffer rounded = {}, float* bias_grad = nullptr);

}  // namespace attn::nn
