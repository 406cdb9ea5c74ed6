#include "nn/cross_attention.h"

namespace attn::nn {

HeadsView CrossAttention::keys(Activations kv_rows, int length) const { return dense_heads(kv_rows, kv.out, length); }

HeadsView CrossAttention::values(Activations kv_rows, int length) const {
  return dense_heads(kv_rows.offset(heads * d_k), kv.out, length);
}

AttentionShape CrossAttention::forward(Backend& be, Activations x, Activations memory, int batch, int length,
                                       int memory_length, const AttentionMask& mask, const Cache& cache, float* y,
                                       const KeyValueCache* memory_kv) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const std::int64_t memory_rows = static_cast<std::int64_t>(batch) * memory_length;
  if (memory_kv) {
    q.forward(be, x, rows, cache.q);
    CachedAttention a;
    a.rows = static_cast<int>(rows), a.heads = heads, a.d_k = d_k, a.d_v = d_v;
    a.q = cache.q, a.ld_q = q.out;
    a.cache = memory_kv->data, a.row_stride = memory_kv->row_stride, a.ld_cache = kv.out;
    a.rows_of = memory_kv->rows_of, a.rows_of_stride = memory_kv->rows_of_stride;
    a.keys = memory_length, a.key_lengths = mask.key_lengths;
    be.cached_attention(a, cache.probs, cache.ctx);
    out.forward(be, cache.ctx, rows, y);
    return shape(static_cast<int>(rows), 1, memory_length);
  }
  const Activations queries = q.forward_kept(be, x, rows, cache.q, cache.kept_q);
  const Activations projected = kv.forward_kept(be, memory, memory_rows, cache.kv, cache.kept_kv);
  const AttentionShape s = shape(batch, length, memory_length);
  attention_forward(be, s, dense_heads(queries, q.out, length), keys(projected, memory_length),
                    values(projected, memory_length), mask, cache.probs, cache.ctx, cache.ctx_rounded);
  out.forward(be, cache.ctx_rounded ? Activations(cache.ctx_rounded) : Activations(cache.ctx), rows, y);
  return s;
}

void CrossAttention::backward(Backend& be, Activations x, Activations memory, int batch, int length, int memory_length,
                              const AttentionMask& mask, const Cache& cache, Activations dy,
                              const AttentionScratch& scratch, float* dx, float* d_memory) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const std::int64_t memory_rows = static_cast<std::int64_t>(batch) * memory_length;
  const AttentionShape s = shape(batch, length, memory_length);
  const Activations kept_q = cache.kept_q.read(), memory_kv = cache.kept_kv.read();
  const HeadsView queries = dense_heads(kept_q, q.out, length);
  const HeadsView k = keys(memory_kv, memory_length), v = values(memory_kv, memory_length);
  if (!cache.own_probs) attention_forward(be, s, queries, k, v, mask, cache.probs, cache.ctx);
  const Activations ctx = cache.own_probs && cache.ctx_rounded ? Activations(cache.ctx_rounded) : cache.ctx;
  out.backward(be, ctx, dy, rows, scratch.d_ctx, /*accumulate_dx=*/false, scratch.dy_read, {}, scratch.rounded_d_ctx());
  const int hk = heads * d_k;
  if (scratch.rounded()) {
    // In bf16 as the products read them, the biases' gradients summed on the way (∂Q then ∂KV in
    // scratch.dy_read, as in the float scratch; the float ones are never written).
    Bf16* const g_q = static_cast<Bf16*>(scratch.dy_read.data);
    Bf16* const g_kv = g_q + rows * hk;
    float* const db_q = q.bias ? q.bias_grad : nullptr;
    float* const db_kv = kv.bias ? kv.bias_grad : nullptr;
    const RoundedAttentionGradients rounded{
        g_q, g_kv, g_kv + hk, db_q, db_kv, db_kv ? db_kv + hk : nullptr, scratch.d_ctx_rounded};
    attention_backward(be, s, queries, k, v, cache.probs, scratch.d_ctx, scratch.d_probs, scratch.d_q, scratch.d_kv,
                       scratch.d_kv + hk, &rounded);
    q.weight_backward(be, x, Activations(g_q), rows);
    q.input_backward(be, Activations(g_q), rows, dx, /*accumulate_dx=*/true);
    kv.weight_backward(be, memory, Activations(g_kv), memory_rows);
    kv.input_backward(be, Activations(g_kv), memory_rows, d_memory, /*accumulate_dx=*/true);
    return;
  }
  attention_backward(be, s, queries, k, v, cache.probs, scratch.d_ctx, scratch.d_probs, scratch.d_q, scratch.d_kv,
                     scratch.d_kv + hk);
  q.backward(be, x, scratch.d_q, rows, dx, /*accumulate_dx=*/true, scratch.dy_read);
  kv.backward(be, memory, scratch.d_kv, memory_rows, d_memory, /*accumulate_dx=*/true, scratch.dy_read);
}

}  // namespace attn::nn
