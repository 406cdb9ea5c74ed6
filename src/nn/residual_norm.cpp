#include "nn/residual_norm.h"

namespace attn::nn {

void residual_norm_forward(Backend& be, const LayerNormParams& norm, const float* x, float* sublayer_out,
                           std::int64_t rows, float dropout, std::uint64_t dropout_seed, const ResidualNormCache& cache,
                           float* y, Bf16* y_rounded) {
  be.dropout(sublayer_out, sublayer_out, rows * norm.dim, dropout, dropout_seed);
  be.layernorm(x, sublayer_out, norm.gamma, norm.beta, cache.sum ? cache.sum : sublayer_out, y, y_rounded, cache.mean,
               cache.rstd, rows, norm.dim, norm.eps);
}

void residual_norm_output(Backend& be, const LayerNormParams& norm, const ResidualNormCache& cache, std::int64_t rows,
                          float* y) {
  be.layernorm(cache.sum, nullptr, norm.gamma, norm.beta, nullptr, y, nullptr, nullptr, nullptr, rows, norm.dim,
               norm.eps);
}

Activations residual_norm_backward(Backend& be, const LayerNormParams& norm, float* dy, std::int64_t rows,
                                   float dropout, std::uint64_t dropout_seed, const ResidualNormCache& cache,
                                   float* d_sublayer_out, RowBuffer rounded, float* bias_grad) {
  SublayerGradient sublayer{nullptr, nullptr, nullptr, dropout, dropout_seed};
  const bool in_bf16 = rounded.dtype == DType::bf16 && rounded.data;
  if (in_bf16) {
    sublayer.bf16 = static_cast<Bf16*>(rounded.data);
    sublayer.bias_grad = bias_grad;
  } else {
    sublayer.f32 = d_sublayer_out;
  }
  be.layernorm_backward(dy, cache.sum, cache.mean, cache.rstd, norm.gamma, dy, sublayer, norm.gamma_grad,
                        norm.beta_grad, rows, norm.dim);
  return in_bf16 ? rounded.read() : Activations(d_sublayer_out);
}

}  // namespace attn::nn
