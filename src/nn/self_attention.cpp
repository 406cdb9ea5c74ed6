#include "nn/self_attention.h"

namespace attn::nn {

SelfAttention::Views SelfAttention::views(Projected qkv_rows, int length) const {
  const std::int64_t stride = static_cast<std::int64_t>(length) * qkv.out;
  const std::size_t element = qkv_rows.bf16 ? sizeof(Bf16) : sizeof(float);
  auto at = [&](int column) { return static_cast<const char*>(qkv_rows.data) + column * element; };
  return {{at(0), qkv.out, stride, qkv_rows.bf16}, {at(heads * d_k), qkv.out, stride, qkv_rows.bf16},
          {at(2 * heads * d_k), qkv.out, stride, qkv_rows.bf16}};
}

void SelfAttention::forward(Backend& be, const float* x, int batch, int length,
                            const AttentionMask& mask, const Cache& cache, float* y) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  qkv.forward(be, x, rows, cache.qkv);
  const Views v = views(project_kept(be, cache.qkv, rows * qkv.out, cache.qkv_bf16), length);
  attention_forward(be, shape(batch, length), v.q, v.k, v.v, mask, cache.probs, cache.ctx);
  out.forward(be, cache.ctx, rows, y);
}

void SelfAttention::backward(Backend& be, const float* x, int batch, int length, const AttentionMask& mask,
                             const Cache& cache,
                             const float* dy, const AttentionScratch& scratch, float* dx) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const Views v = views(kept_or(cache.qkv_bf16, cache.qkv), length);
  attention_probs(be, shape(batch, length), v.q, v.k, mask, cache.probs);
  attention_context(be, shape(batch, length), cache.probs, v.v, cache.ctx);
  out.backward(be, cache.ctx, dy, rows, scratch.d_ctx, /*accumulate_dx=*/false, scratch.dy_bf16);
  // ∂Q, ∂K and ∂V side by side like Q, K and V: one product each for ∂W_qkv and ∂x.
  float* dq = scratch.d_q;
  attention_backward(be, shape(batch, length), v.q, v.k, v.v, cache.probs, scratch.d_ctx,
                     scratch.d_probs, dq, dq + heads * d_k, dq + 2 * heads * d_k);
  qkv.backward(be, x, dq, rows, dx, /*accumulate_dx=*/true, scratch.dy_bf16);
}

}  // namespace attn::nn
