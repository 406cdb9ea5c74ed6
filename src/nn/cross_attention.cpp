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
  q.forward(be, x, rows, cache.q);
  kv.forward(be, memory, static_cast<std::int64_t>(batch) * memory_length, cache.kv);
  const HeadsView qv{cache.q, q.out, static_cast<std::int64_t>(length) * q.out};
  attention_forward(be, shape(batch, length, memory_length), qv, keys(cache.kv, memory_length),
                    values(cache.kv, memory_length), mask, cache.probs, cache.ctx);
  out.forward(be, cache.ctx, rows, y);
}

void CrossAttention::backward(Backend& be, const float* x, const float* memory, int batch, int length,
                              int memory_length, const Cache& cache, const float* dy,
                              const AttentionScratch& scratch, float* dx, float* d_memory) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  out.backward(be, cache.ctx, dy, rows, scratch.d_ctx, /*accumulate_dx=*/false);
  const HeadsView qv{cache.q, q.out, static_cast<std::int64_t>(length) * q.out};
  attention_backward(be, shape(batch, length, memory_length), qv, keys(cache.kv, memory_length),
                     values(cache.kv, memory_length), cache.probs, scratch.d_ctx, scratch.d_probs,
                     scratch.d_q, scratch.d_kv, scratch.d_kv + heads * d_k);
  q.backward(be, x, scratch.d_q, rows, dx, /*accumulate_dx=*/true);
  kv.backward(be, memory, scratch.d_kv, static_cast<std::int64_t>(batch) * memory_length, d_memory,
              /*accumulate_dx=*/true);
}

}  // namespace attn::nn
