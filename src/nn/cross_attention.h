#pragma once
// Encoder-decoder attention: queries from the decoder, keys and values from the encoder's output
// (the "memory"); W_k and W_v are stored stacked as one matrix.
#include <cstdint>

#include "nn/attention.h"
#include "nn/linear.h"
#include "nn/self_attention.h"

namespace attn::nn {

struct CrossAttention {
  Linear q;    // [h·d_k, d_model]
  Linear kv;   // [h·d_k + h·d_v, d_model]
  Linear out;  // [d_model, h·d_v]
  int heads = 0, d_k = 0, d_v = 0;

  struct Cache {
    float* q = nullptr;           // [B·T, h·d_k]
    float* kv = nullptr;          // [B·S, h·d_k + h·d_v]: K and V side by side, as SelfAttention's Q, K, V
    float* probs = nullptr;       // [B, h, T, S]; may be shared, like ctx
    float* ctx = nullptr;         // [B·T, h·d_v]; may be shared: backward recomputes it from probs and V
    RowBuffer kept_q;             // what attention reads in both passes: q and kv, or their bf16 copies
    RowBuffer kept_kv;            // (nn::keep)
    bool own_probs = false;       // probs and ctx are this layer's alone: backward reads them as forward left them
    Bf16* ctx_rounded = nullptr;  // as SelfAttention::Cache's
  };

  AttentionShape shape(int batch, int queries, int keys) const { return {batch, heads, d_k, d_v, queries, keys}; }
  // Views of memory projected by the fused kv product ([rows, h·(d_k + d_v)], as incremental
  // decoding keeps it), for `length` memory rows per sentence.
  HeadsView keys(Activations kv_rows, int length) const;
  HeadsView values(Activations kv_rows, int length) const;

  // memory_kv: the memory already projected by kv (incremental decoding projects it once per
  // sentence and gives each of the batch·length rows, one query each, its sentence's cached row;
  // mask.key_lengths is then per cached row), or null to project memory here into cache.kv.
  // Returns the shape of cache.probs.
  AttentionShape forward(Backend& be, Activations x, Activations memory, int batch, int length, int memory_length,
                         const AttentionMask& mask, const Cache& cache, float* y,
                         const KeyValueCache* memory_kv = nullptr) const;
  // dx += ∂L/∂x and d_memory += ∂L/∂memory. The mask is the forward pass's; dy as the output
  // projection's Linear::backward takes it.
  void backward(Backend& be, Activations x, Activations memory, int batch, int length, int memory_length,
                const AttentionMask& mask, const Cache& cache, Activations dy, const AttentionScratch& scratch,
                float* dx, float* d_memory) const;
};

}  // namespace attn::nn
