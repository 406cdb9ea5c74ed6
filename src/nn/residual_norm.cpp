#include "nn/residual_norm.h"

namespace attn::nn {

void residual_norm_forward(Backend& be, const LayerNormParams& norm, const float* x, float* sublayer_out,
                           std::int64_t rows, float dropout, std::uint64_t dropout_seed, const ResidualNormCache& cache,
                           float* y) {
  const std::int64_t n = rows * norm.dim;
  be.dropout(sublayer_out, sublayer_out, n, dropout, dropout_seed);
  float* sum = cache.sum ? cache.sum : sublayer_out;
  be.add(x, sublayer_out, sum, n);
  be.layernorm(sum, norm.gamma, norm.beta, y, cache.mean, cache.rstd, rows, norm.dim, norm.eps);
}

void residual_norm_output(Backend& be, const LayerNormParams& norm, const ResidualNormCache& cache, std::int64_t rows,
                          float* y) {
  be.layernorm(cache.sum, norm.gamma, norm.beta, y, nullptr, nullptr, rows, norm.dim, norm.eps);
}

void residual_norm_backward(Backend& be, const LayerNormParams& norm, float* dy, std::int64_t rows, float dropout,
                            std::uint64_t dropout_seed, const ResidualNormCache& cache, float* d_sublayer_out) {
  be.layernorm_backward(dy, cache.sum, cache.mean, cache.rstd, norm.gamma, dy, norm.gamma_grad, norm.beta_grad, rows,
                        norm.dim);
  be.dropout(dy, d_sublayer_out, rows * norm.dim, dropout, dropout_seed);
}

}  // namespace attn::nn
