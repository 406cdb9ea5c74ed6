#include "nn/self_attention.h"

namespace attn::nn {
namespace {

struct QkvViews {
  HeadsView q, k, v;
};

QkvViews split_qkv(const float* qkv, int width, int length, int heads, int d_k) {
  const std::int64_t stride = static_cast<std::int64_t>(length) * width;
  return {{qkv, width, stride}, {qkv + heads * d_k, width, stride}, {qkv + 2 * heads * d_k, width, stride}};
}

}  // namespace

void SelfAttention::forward(Backend& be, const float* x, int batch, int length,
                            const AttentionMask& mask, const Cache& cache, float* y) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  qkv.forward(be, x, rows, cache.qkv);
  const QkvViews v = split_qkv(cache.qkv, qkv.out, length, heads, d_k);
  attention_forward(be, shape(batch, length), v.q, v.k, v.v, mask, cache.probs, cache.ctx);
  out.forward(be, cache.ctx, rows, y);
}

void SelfAttention::backward(Backend& be, const float* x, int batch, int length, const Cache& cache,
                             const float* dy, const AttentionScratch& scratch, float* dx) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  out.backward(be, cache.ctx, dy, rows, scratch.d_ctx, /*accumulate_dx=*/false);
  const QkvViews v = split_qkv(cache.qkv, qkv.out, length, heads, d_k);
  float* dq = scratch.d_q;
  attention_backward(be, shape(batch, length), v.q, v.k, v.v, cache.probs, scratch.d_ctx,
                     scratch.d_probs, dq, dq + heads * d_k, dq + 2 * heads * d_k);
  qkv.backward(be, x, dq, rows, dx, /*accumulate_dx=*/true);
}

}  // namespace attn::nn
