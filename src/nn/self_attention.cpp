#include "nn/self_attention.h"

namespace attn::nn {
namespace {

// Where K and V start in a buffer laid out like Cache::qkv.
struct Planes {
  std::int64_t k, v;
};

Planes planes(std::int64_t rows, int hk) { return {rows * hk, 2 * rows * hk}; }

struct Views {
  HeadsView q, k, v;
};

Views views(const float* qkv, const SelfAttention::Projections& p, const Planes& at, int length) {
  return {dense_heads(qkv, p.q.out, length), dense_heads(qkv + at.k, p.k.out, length),
          dense_heads(qkv + at.v, p.v.out, length)};
}

}  // namespace

SelfAttention::Projections SelfAttention::projections() const {
  const int hk = heads * d_k;
  return {qkv.rows(0, hk), qkv.rows(hk, hk), qkv.rows(2 * hk, heads * d_v)};
}

void SelfAttention::forward(Backend& be, const float* x, int batch, int length,
                            const AttentionMask& mask, const Cache& cache, float* y) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const Projections p = projections();
  const Planes at = planes(rows, heads * d_k);
  p.q.forward(be, x, rows, cache.qkv);
  p.k.forward(be, x, rows, cache.qkv + at.k);
  p.v.forward(be, x, rows, cache.qkv + at.v);
  const Views v = views(cache.qkv, p, at, length);
  attention_forward(be, shape(batch, length), v.q, v.k, v.v, mask, cache.probs, cache.ctx);
  out.forward(be, cache.ctx, rows, y);
}

void SelfAttention::backward(Backend& be, const float* x, int batch, int length, const AttentionMask& mask,
                             const Cache& cache,
                             const float* dy, const AttentionScratch& scratch, float* dx) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const Projections p = projections();
  const Planes at = planes(rows, heads * d_k);
  const Views v = views(cache.qkv, p, at, length);
  attention_probs(be, shape(batch, length), v.q, v.k, mask, cache.probs);
  attention_context(be, shape(batch, length), cache.probs, v.v, cache.ctx);
  out.backward(be, cache.ctx, dy, rows, scratch.d_ctx, /*accumulate_dx=*/false);
  float* dq = scratch.d_q;
  attention_backward(be, shape(batch, length), v.q, v.k, v.v, cache.probs, scratch.d_ctx,
                     scratch.d_probs, dq, dq + at.k, dq + at.v);
  p.q.backward(be, x, dq, rows, dx, /*accumulate_dx=*/true);
  p.k.backward(be, x, dq + at.k, rows, dx, /*accumulate_dx=*/true);
  p.v.backward(be, x, dq + at.v, rows, dx, /*accumulate_dx=*/true);
}

}  // namespace attn::nn
