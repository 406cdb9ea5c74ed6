#include "nn/attention.h"

#include <cmath>

namespace attn::nn {
namespace {

// C = op(A)·op(B) over the batch, with A and B float or bf16 (views of kept projections). Where
// the projections are kept in bf16 (training under precision bf16) the products run in bf16.
void batched(Backend& be, bool bf16, Trans ta, Trans tb, int m, int n, int k, const void* a, bool a_bf16, int lda,
             const void* b, bool b_bf16, int ldb, float* c, int ldc, const GemmBatch& batch) {
  GemmBatch in_bf16 = batch;
  in_bf16.bf16 = bf16;
  be.matmul(m, n, k, 1.0f, float_or_bf16_matrix(a, a_bf16, lda, ta), float_or_bf16_matrix(b, b_bf16, ldb, tb), 0.0f, c,
            ldc, &in_bf16);
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
  batched(be, q.bf16 || k.bf16, Trans::No, Trans::Yes, s.queries, s.keys, s.d_k, q.data, q.bf16, q.ld, k.data, k.bf16,
          k.ld, probs, s.keys,
          GemmBatch{s.batch, s.heads, q.batch_stride, s.d_k, k.batch_stride, s.d_k, s.heads * block, block});
  be.attention_softmax(probs, s.batch, s.heads, s.queries, s.keys, mask, 1.0f / std::sqrt(static_cast<float>(s.d_k)));
}

void attention_context(Backend& be, const AttentionShape& s, const float* probs, HeadsView v, float* ctx) {
  const std::int64_t block = static_cast<std::int64_t>(s.queries) * s.keys;
  const int ld_ctx = s.heads * s.d_v;
  // ctx[b, :, h] = P_bh · V_bh
  batched(be, v.bf16, Trans::No, Trans::No, s.queries, s.d_v, s.keys, probs, false, s.keys, v.data, v.bf16, v.ld, ctx,
          ld_ctx,
          GemmBatch{s.batch, s.heads, s.heads * block, block, v.batch_stride, s.d_v,
                    static_cast<std::int64_t>(s.queries) * ld_ctx, s.d_v});
}

void attention_backward(Backend& be, const AttentionShape& s, HeadsView q, HeadsView k, HeadsView v, const float* probs,
                        const float* dctx, float* dprobs, float* dq, float* dk, float* dv) {
  const std::int64_t block = static_cast<std::int64_t>(s.queries) * s.keys;
  const int ld_ctx = s.heads * s.d_v;
  const std::int64_t ctx_stride = static_cast<std::int64_t>(s.queries) * ld_ctx;
  const GemmBatch probs_by_head{s.batch, s.heads, s.heads * block, block, 0, 0, 0, 0};
  const bool bf16 = q.bf16 || k.bf16 || v.bf16;
  // dV_bh = P_bhᵀ · dctx_bh
  GemmBatch b = probs_by_head;
  b.b_outer = ctx_stride, b.b_inner = s.d_v, b.c_outer = v.batch_stride, b.c_inner = s.d_v;
  batched(be, bf16, Trans::Yes, Trans::No, s.keys, s.d_v, s.queries, probs, false, s.keys, dctx, false, ld_ctx, dv,
          v.ld, b);
  // dP_bh = dctx_bh · V_bhᵀ
  batched(be, bf16, Trans::No, Trans::Yes, s.queries, s.keys, s.d_v, dctx, false, ld_ctx, v.data, v.bf16, v.ld, dprobs,
          s.keys, GemmBatch{s.batch, s.heads, ctx_stride, s.d_v, v.batch_stride, s.d_v, s.heads * block, block});
  // dS = P ⊙ (dP - rowsum(dP ⊙ P)) / √d_k
  be.attention_softmax_backward(dprobs, probs, s.probs_size() / s.keys, s.keys,
                                1.0f / std::sqrt(static_cast<float>(s.d_k)));
  // dQ_bh = dS_bh · K_bh ; dK_bh = dS_bhᵀ · Q_bh
  b = probs_by_head;
  b.b_outer = k.batch_stride, b.b_inner = s.d_k, b.c_outer = q.batch_stride, b.c_inner = s.d_k;
  batched(be, bf16, Trans::No, Trans::No, s.queries, s.d_k, s.keys, dprobs, false, s.keys, k.data, k.bf16, k.ld, dq,
          q.ld, b);
  b = probs_by_head;
  b.b_outer = q.batch_stride, b.b_inner = s.d_k, b.c_outer = k.batch_stride, b.c_inner = s.d_k;
  batched(be, bf16, Trans::Yes, Trans::No, s.keys, s.d_k, s.queries, dprobs, false, s.keys, q.data, q.bf16, q.ld, dk,
          k.ld, b);
}

}  // namespace attn::nn
