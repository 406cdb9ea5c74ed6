#include "nn/attention.h"

#include <cmath>

namespace attn::nn {
namespace {

// C = op(A)·op(B) over the batch, A and B float or bf16 (views of kept projections); what the
// product computes in follows from their types and the backend's precision (Backend::matmul).
void batched(Backend& be, int m, int n, int k, const MatrixRef& a, const MatrixRef& b, float* c, int ldc,
             const GemmBatch& batch) {
  be.matmul(m, n, k, 1.0f, a, b, 0.0f, c, ldc, &batch);
}

}  // namespace

void attention_forward(Backend& be, const AttentionShape& s, HeadsView q, HeadsView k, HeadsView v,
                       const AttentionMask& mask, float* probs, float* ctx) {
  attention_probs(be, s, q, k, mask, probs);
  attention_context(be, s, probs, v, ctx);
}

void attention_probs(Backend& be, const AttentionShape& s, HeadsView q, HeadsView k, const AttentionMask& mask,
                     float* probs) {
  const std::int64_t block = static_cast<std::int64_t>(s.queries) * s.keys;
  // scores[b, h] = Q_bh · K_bhᵀ
  batched(be, s.queries, s.keys, s.d_k, q.matrix(), k.matrix(Trans::Yes), probs, s.keys,
          GemmBatch{s.batch, s.heads, q.batch_stride, s.d_k, k.batch_stride, s.d_k, s.heads * block, block});
  be.attention_softmax(probs, s.batch, s.heads, s.queries, s.keys, mask, 1.0f / std::sqrt(static_cast<float>(s.d_k)));
}

void attention_context(Backend& be, const AttentionShape& s, const float* probs, HeadsView v, float* ctx) {
  const std::int64_t block = static_cast<std::int64_t>(s.queries) * s.keys;
  const int ld_ctx = s.heads * s.d_v;
  // ctx[b, :, h] = P_bh · V_bh
  batched(be, s.queries, s.d_v, s.keys, f32_matrix(probs, s.keys), v.matrix(), ctx, ld_ctx,
          GemmBatch{s.batch, s.heads, s.heads * block, block, v.batch_stride, s.d_v,
                    static_cast<std::int64_t>(s.queries) * ld_ctx, s.d_v});
}

void attention_backward(Backend& be, const AttentionShape& s, HeadsView q, HeadsView k, HeadsView v, const float* probs,
                        const float* dctx, float* dprobs, float* dq, float* dk, float* dv) {
  const std::int64_t block = static_cast<std::int64_t>(s.queries) * s.keys;
  const int ld_ctx = s.heads * s.d_v;
  const std::int64_t ctx_stride = static_cast<std::int64_t>(s.queries) * ld_ctx;
  const GemmBatch probs_by_head{s.batch, s.heads, s.heads * block, block, 0, 0, 0, 0};
  // dV_bh = P_bhᵀ · dctx_bh
  GemmBatch b = probs_by_head;
  b.b_outer = ctx_stride, b.b_inner = s.d_v, b.c_outer = v.batch_stride, b.c_inner = s.d_v;
  batched(be, s.keys, s.d_v, s.queries, f32_matrix(probs, s.keys, Trans::Yes), f32_matrix(dctx, ld_ctx), dv, v.ld, b);
  // dP_bh = dctx_bh · V_bhᵀ
  batched(be, s.queries, s.keys, s.d_v, f32_matrix(dctx, ld_ctx), v.matrix(Trans::Yes), dprobs, s.keys,
          GemmBatch{s.batch, s.heads, ctx_stride, s.d_v, v.batch_stride, s.d_v, s.heads * block, block});
  // dS = P ⊙ (dP - rowsum(dP ⊙ P)) / √d_k
  be.attention_softmax_backward(dprobs, probs, s.probs_size() / s.keys, s.keys,
                                1.0f / std::sqrt(static_cast<float>(s.d_k)));
  // dQ_bh = dS_bh · K_bh ; dK_bh = dS_bhᵀ · Q_bh
  b = probs_by_head;
  b.b_outer = k.batch_stride, b.b_inner = s.d_k, b.c_outer = q.batch_stride, b.c_inner = s.d_k;
  batched(be, s.queries, s.d_k, s.keys, f32_matrix(dprobs, s.keys), k.matrix(), dq, q.ld, b);
  b = probs_by_head;
  b.b_outer = q.batch_stride, b.b_inner = s.d_k, b.c_outer = k.batch_stride, b.c_inner = s.d_k;
  batched(be, s.keys, s.d_k, s.queries, f32_matrix(dprobs, s.keys, Trans::Yes), q.matrix(), dk, k.ld, b);
}

}  // namespace attn::nn
