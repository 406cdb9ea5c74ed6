#pragma once
// Multi-head self-attention: Q, K and V projected from the same rows (W_q, W_k, W_v stored
// stacked as one matrix), attention, then the output projection W_o.
#include <cstdint>

#include "nn/attention.h"
#include "nn/linear.h"

namespace attn::nn {

struct AttentionScratch {         // backward-pass temporaries, shared by all layers
  float* d_ctx = nullptr;         // [rows, h·d_v]
  Bf16* d_ctx_rounded = nullptr;  // the same in bf16, where dy_read is bf16 (attention's products read it so)
  float* d_probs = nullptr;       // [batch, h, queries, keys]
  float* d_q = nullptr;           // like the cache's q (or qkv)
  float* d_kv = nullptr;          // like the cross-attention cache's kv
  RowBuffer dy_read;              // the type a projection's output gradient is read in (Linear::backward)

  // Whether attention's gradients are read in bf16 (dy_read is bf16): then ∂Q, ∂K, ∂V and ∂ctx are
  // rounded where they are made, and ∂ctx goes to d_ctx_rounded (null otherwise).
  bool rounded() const { return dy_read.dtype == DType::bf16 && dy_read.data; }
  Bf16* rounded_d_ctx() const { return rounded() ? d_ctx_rounded : nullptr; }
};

// Incremental decoding: the keys and values of the positions already decoded, kept per cached
// row. Cached row c's position p sits at data + c·row_stride + p·(h·d_k + h·d_v): its key [h·d_k]
// followed by its value [h·d_v]. Row r's position p is in cached row rows_of[r·rows_of_stride + p]
// (device memory; rows_of_stride 0: all of row r's positions are in cached row rows_of[r]), so
// reordering hypotheses rewrites rows_of and moves nothing. New positions go to cached row r.
struct KeyValueCache {
  float* data = nullptr;
  std::int64_t row_stride = 0;
  int position = 0;  // positions cached; the rows given now are at this position
  const std::int32_t* rows_of = nullptr;
  std::int64_t rows_of_stride = 0;
};

struct SelfAttention {
  Linear qkv;  // [h·d_k + h·d_k + h·d_v, d_model]
  Linear out;  // [d_model, h·d_v]
  int heads = 0, d_k = 0, d_v = 0;

  struct Cache {
    // [B·T, h·d_k + h·d_k + h·d_v]: each row's Q, K and V side by side, from one product over the
    // fused W_qkv; the batched attention products read each head's block in place (any row stride).
    float* qkv = nullptr;
    float* probs = nullptr;  // [B, h, T, T]; may be shared, like ctx
    float* ctx = nullptr;    // [B·T, h·d_v]; may be shared: backward recomputes it from probs and V
    RowBuffer kept;          // what attention reads in both passes: qkv, or its bf16 copy (nn::keep)
    bool own_probs = false;  // probs and ctx are this layer's alone: backward reads them as forward left them
    // With own_probs and bf16 activations: the context in bf16 as the output product reads it, in
    // both passes (attention writes it there only: ctx is then scratch, its contents unspecified);
    // null otherwise.
    Bf16* ctx_rounded = nullptr;
  };

  struct Views {
    HeadsView q, k, v;
  };
  Views views(Activations qkv_rows, int length) const;  // of rows laid out like Cache::qkv

  AttentionShape shape(int batch, int length) const { return {batch, heads, d_k, d_v, length, length}; }
  // y [B·T, d_model] = W_o · Attention(x). With a key/value cache (incremental decoding), each of
  // the batch·length rows is one sequence's next position: its key and value are appended to the
  // cache and it attends to the cached ones (mask.query_offset must be kv->position). Returns the
  // shape of the probabilities written to cache.probs.
  AttentionShape forward(Backend& be, Activations x, int batch, int length, const AttentionMask& mask,
                         const Cache& cache, float* y, const KeyValueCache* kv = nullptr) const;
  // dx += ∂L/∂x. The mask is the forward pass's; dy as the output projection's Linear::backward takes it.
  void backward(Backend& be, Activations x, int batch, int length, const AttentionMask& mask, const Cache& cache,
                Activations dy, const AttentionScratch& scratch, float* dx) const;
};

}  // namespace attn::nn
