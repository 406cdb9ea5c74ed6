#include "nn/cross_attention.h"

namespace attn::nn {

HeadsView CrossAttention::keys(const float* kv_rows, int length) const {
  return {kv_rows, kv.out, static_cast<std::int64_t>(length) * kv.out};
}

HeadsView CrossAttention::values(const float* kv_rows, int length) const {
  return {kv_rows + heads * d_k, kv.out, static_cast<std::int64_t>(length) * kv.out};
}

namespace {

// The cache's dense K and V: memory_rows rows each, one after the other.
struct KeysValues {
  Linear k, v;
  std::int64_t v_offset;
  HeadsView keys(const float* kv, int length) const { return dense_heads(kv, k.out, length); }
  HeadsView values(const float* kv, int length) const { return dense_heads(kv + v_offset, v.out, length); }
};

KeysValues split(const Linear& kv, int hk, std::int64_t memory_rows) {
  return {kv.rows(0, hk), kv.rows(hk, kv.out - hk), memory_rows * hk};
}

}  // namespace

void CrossAttention::forward(Backend& be, const float* x, const float* memory, int batch, int length,
                             int memory_length, const AttentionMask& mask, const Cache& cache,
                             float* y) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const std::int64_t memory_rows = static_cast<std::int64_t>(batch) * memory_length;
  const KeysValues m = split(kv, heads * d_k, memory_rows);
  q.forward(be, x, rows, cache.q);
  m.k.forward(be, memory, memory_rows, cache.kv);
  m.v.forward(be, memory, memory_rows, cache.kv + m.v_offset);
  attention_forward(be, shape(batch, length, memory_length), dense_heads(cache.q, q.out, length),
                    m.keys(cache.kv, memory_length), m.values(cache.kv, memory_length), mask,
                    cache.probs, cache.ctx);
  out.forward(be, cache.ctx, rows, y);
}

void CrossAttention::backward(Backend& be, const float* x, const float* memory, int batch, int length,
                              int memory_length, const AttentionMask& mask, const Cache& cache, const float* dy,
                              const AttentionScratch& scratch, float* dx, float* d_memory) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const std::int64_t memory_rows = static_cast<std::int64_t>(batch) * memory_length;
  const KeysValues m = split(kv, heads * d_k, memory_rows);
  const AttentionShape s = shape(batch, length, memory_length);
  const HeadsView queries = dense_heads(cache.q, q.out, length);
  const HeadsView keys = m.keys(cache.kv, memory_length), values = m.values(cache.kv, memory_length);
  attention_probs(be, s, queries, keys, mask, cache.probs);
  attention_context(be, s, cache.probs, values, cache.ctx);
  out.backward(be, cache.ctx, dy, rows, scratch.d_ctx, /*accumulate_dx=*/false);
  attention_backward(be, s, queries, keys, values, cache.probs, scratch.d_ctx, scratch.d_probs, scratch.d_q,
                     scratch.d_kv, scratch.d_kv + m.v_offset);
  q.backward(be, x, scratch.d_q, rows, dx, /*accumulate_dx=*/true);
  m.k.backward(be, memory, scratch.d_kv, memory_rows, d_memory, /*accumulate_dx=*/true);
  m.v.backward(be, memory, scratch.d_kv + m.v_offset, memory_rows, d_memory, /*accumulate_dx=*/true);
}

}  // namespace attn::nn
