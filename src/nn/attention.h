#pragma once
// Scaled dot-product attention over h heads: softmax(Q·Kᵀ/√d_k)·V, on projected queries, keys
// and values whose heads sit side by side in each row ([.., h·d_k]). The projections live in
// the layers that use this; incremental decoding reuses it with keys and values from a cache.
#include <cstdint>

#include "kernels/backend.h"
#include "nn/activations.h"

namespace attn::nn {

// Rows of sentence b start at rows + b·batch_stride; consecutive rows are ld elements apart;
// head i of a row starts at i·d_k (or i·d_v). The elements are floats, or bf16 (Activations).
struct HeadsView {
  Activations rows;
  int ld = 0;
  std::int64_t batch_stride = 0;
  // All of it as a batched product's operand (GemmBatch strides pick the sentence and head).
  MatrixRef matrix(Trans trans = Trans::No) const { return rows.matrix(ld, trans); }
};

// A dense [batch·length, width] matrix of heads (consecutive rows width elements apart).
inline HeadsView dense_heads(Activations rows, int width, int length) {
  return {rows, width, static_cast<std::int64_t>(length) * width};
}

struct AttentionShape {
  int batch = 0, heads = 0, d_k = 0, d_v = 0;
  int queries = 0, keys = 0;  // per sentence
  std::int64_t probs_size() const { return static_cast<std::int64_t>(batch) * heads * queries * keys; }
};

// Backend::attention's operands: q, k and v as their heads views say.
AttentionBlocks attention_blocks(const AttentionShape& s, HeadsView q, HeadsView k, HeadsView v);

// probs [batch, heads, queries, keys] (kept for backward); ctx [batch·queries, heads·d_v]. Where
// the workspace shares probs and ctx among layers (a cache's own_probs false), the backward pass
// calls it again: the same kernel on the same inputs gives the same bits as keeping them. Given
// ctx_rounded, ctx is written there in bf16 only (ctx itself is then scratch).
inline void attention_forward(Backend& be, const AttentionShape& s, HeadsView q, HeadsView k, HeadsView v,
                              const AttentionMask& mask, float* probs, float* ctx, Bf16* ctx_rounded = nullptr) {
  be.attention(attention_blocks(s, q, k, v), mask, probs, ctx, ctx_rounded);
}

// Given probs (from attention_forward) and ∂L/∂ctx, writes ∂L/∂q, ∂L/∂k, ∂L/∂v into float buffers
// laid out like q, k and v (same ld and batch stride, in elements; overwritten). dprobs is scratch
// of probs' size.
// Given rounded, the gradients go there in bf16 with the biases' gradients summed
// (RoundedAttentionGradients; the float buffers then scratch).
inline void attention_backward(Backend& be, const AttentionShape& s, HeadsView q, HeadsView k, HeadsView v,
                               const float* probs, const float* dctx, float* dprobs, float* dq, float* dk, float* dv,
                               const RoundedAttentionGradients* rounded = nullptr) {
  be.attention_backward(attention_blocks(s, q, k, v), probs, dctx, dprobs, dq, dk, dv, rounded);
}

}  // namespace attn::nn
