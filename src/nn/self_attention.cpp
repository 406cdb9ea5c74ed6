#include "nn/self_attention.h"

namespace attn::nn {

SelfAttention::Views SelfAttention::views(Activations qkv_rows, int length) const {
  const std::int64_t stride = static_cast<std::int64_t>(length) * qkv.out;
  return {{qkv_rows, qkv.out, stride},
          {qkv_rows.offset(heads * d_k), qkv.out, stride},
          {qkv_rows.offset(2 * heads * d_k), qkv.out, stride}};
}

AttentionShape SelfAttention::forward(Backend& be, Activations x, int batch, int length, const AttentionMask& mask,
                                      const Cache& cache, float* y, const KeyValueCache* kv) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  AttentionShape s = shape(batch, length);
  if (kv) {
    qkv.forward(be, x, rows, cache.qkv);
    // Each row is its own sequence: append its key and value, attend to positions 0..position.
    const int hk = heads * d_k;
    const int width = heads * (d_k + d_v);
    float* at = kv->data + static_cast<std::int64_t>(kv->position) * width;
    be.gather_rows(cache.qkv + hk, qkv.out, nullptr, rows, width, at, kv->row_stride);
    s = {static_cast<int>(rows), heads, d_k, d_v, 1, kv->position + 1};
    CachedAttention a;
    a.rows = static_cast<int>(rows), a.heads = heads, a.d_k = d_k, a.d_v = d_v;
    a.q = cache.qkv, a.ld_q = qkv.out;
    a.cache = kv->data, a.row_stride = kv->row_stride, a.ld_cache = width;
    a.rows_of = kv->rows_of, a.rows_of_stride = kv->rows_of_stride;
    a.keys = kv->position + 1;
    a.query_position = mask.query_offset, a.window = mask.window;
    be.cached_attention(a, cache.probs, cache.ctx);
  } else {
    const Views v = views(qkv.forward_kept(be, x, rows, cache.qkv, cache.kept), length);
    attention_forward(be, s, v.q, v.k, v.v, mask, cache.probs, cache.ctx, cache.ctx_rounded);
    out.forward(be, cache.ctx_rounded ? Activations(cache.ctx_rounded) : Activations(cache.ctx), rows, y);
    return s;
  }
  out.forward(be, cache.ctx, rows, y);
  return s;
}

void SelfAttention::backward(Backend& be, Activations x, int batch, int length, const AttentionMask& mask,
                             const Cache& cache, Activations dy, const AttentionScratch& scratch, float* dx) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const Views v = views(cache.kept.read(), length);
  if (!cache.own_probs) attention_forward(be, shape(batch, length), v.q, v.k, v.v, mask, cache.probs, cache.ctx);
  const Activations ctx = cache.own_probs && cache.ctx_rounded ? Activations(cache.ctx_rounded) : cache.ctx;
  out.backward(be, ctx, dy, rows, scratch.d_ctx, /*accumulate_dx=*/false, scratch.dy_read, {}, scratch.rounded_d_ctx());
  // ∂Q, ∂K and ∂V side by side like Q, K and V: one product each for ∂W_qkv and ∂x.
  float* dq = scratch.d_q;
  const int hk = heads * d_k;
  if (scratch.rounded()) {
    // In bf16 as both products read them, the bias's gradient summed on the way (scratch.dy_read
    // holds them; the float ones are never written).
    Bf16* const g = static_cast<Bf16*>(scratch.dy_read.data);
    float* const db = qkv.bias ? qkv.bias_grad : nullptr;
    const RoundedAttentionGradients rounded{
        g, g + hk, g + 2 * hk, db, db ? db + hk : nullptr, db ? db + 2 * hk : nullptr, scratch.d_ctx_rounded};
    attention_backward(be, shape(batch, length), v.q, v.k, v.v, cache.probs, scratch.d_ctx, scratch.d_probs, dq,
                       dq + hk, dq + 2 * hk, &rounded);
    qkv.weight_backward(be, x, Activations(g), rows);
    qkv.input_backward(be, Activations(g), rows, dx, /*accumulate_dx=*/true);
    return;
  }
  attention_backward(be, shape(batch, length), v.q, v.k, v.v, cache.probs, scratch.d_ctx, scratch.d_probs, dq, dq + hk,
                     dq + 2 * hk);
  qkv.backward(be, x, dq, rows, dx, /*accumulate_dx=*/true, scratch.dy_read);
}

}  // namespace attn::nn
