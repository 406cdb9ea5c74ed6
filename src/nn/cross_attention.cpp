#include "nn/cross_attention.h"

namespace attn::nn {

HeadsView CrossAttention::keys(const float* kv_rows, int length) const {
  return {kv_rows, kv.out, static_cast<std::int64_t>(length) * kv.out};
}

HeadsView CrossAttention::values(const float* kv_rows, int length) const {
  return {kv_rows + heads * d_k, kv.out, static_cast<std::int64_t>(length) * kv.out};
}

void CrossAttention::forward(Backend& be, const float* x, const float* memory, int batch, int length,
                             int memory_length, const AttentionMask& mask, const Cache& cache,
                             float* y) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const std::int64_t memory_rows = static_cast<std::int64_t>(batch) * memory_length;
  q.forward(be, x, rows, cache.q);
  keep_in_bf16(be, cache.q, rows * q.out, cache.q_bf16);
  kv.forward(be, memory, memory_rows, cache.kv);
  keep_in_bf16(be, cache.kv, memory_rows * kv.out, cache.kv_bf16);
  attention_forward(be, shape(batch, length, memory_length), dense_heads(cache.q, q.out, length),
                    keys(cache.kv, memory_length), values(cache.kv, memory_length), mask, cache.probs,
                    cache.ctx);
  out.forward(be, cache.ctx, rows, y);
}

void CrossAttention::backward(Backend& be, const float* x, const float* memory, int batch, int length,
                              int memory_length, const AttentionMask& mask, const Cache& cache, const float* dy,
                              const AttentionScratch& scratch, float* dx, float* d_memory) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const std::int64_t memory_rows = static_cast<std::int64_t>(batch) * memory_length;
  restore_from_bf16(be, cache.q_bf16, rows * q.out, cache.q);
  restore_from_bf16(be, cache.kv_bf16, memory_rows * kv.out, cache.kv);
  const AttentionShape s = shape(batch, length, memory_length);
  const HeadsView queries = dense_heads(cache.q, q.out, length);
  const HeadsView k = keys(cache.kv, memory_length), v = values(cache.kv, memory_length);
  attention_probs(be, s, queries, k, mask, cache.probs);
  attention_context(be, s, cache.probs, v, cache.ctx);
  out.backward(be, cache.ctx, dy, rows, scratch.d_ctx, /*accumulate_dx=*/false, scratch.dy_bf16);
  attention_backward(be, s, queries, k, v, cache.probs, scratch.d_ctx, scratch.d_probs, scratch.d_q,
                     scratch.d_kv, scratch.d_kv + heads * d_k);
  q.backward(be, x, scratch.d_q, rows, dx, /*accumulate_dx=*/true, scratch.dy_bf16);
  kv.backward(be, memory, scratch.d_kv, memory_rows, d_memory, /*accumulate_dx=*/true, scratch.dy_bf16);
}

}  // namespace attn::nn
